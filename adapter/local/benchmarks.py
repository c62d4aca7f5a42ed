"""``mjbot bench arena``: hands per second at the local table, per variant and policy.

The reference in the same run is the table with ``tsumogiri`` players: the referee's own cost
(dealing, events, four seat states, legality checks), which a policy can only add to.
"""

from __future__ import annotations

import tempfile
import time
from typing import Any

from adapter.local.arena import ArenaConfig, play_unit

POLICIES = ("tsumogiri", "greedy", "rulebased")


def _rate(variant: str, policy: str, seconds: float, seed: int, log_dir: str | None) -> float:
    config = ArenaConfig(variant, (policy,) * 4, seed=seed, log_dir=log_dir)  # type: ignore[arg-type]
    hands, spent, unit = 0, 0.0, 0
    while spent < seconds or hands == 0:
        start = time.perf_counter()
        hands += play_unit(config, unit).hands
        spent += time.perf_counter() - start
        unit += 1
    return hands / spent


def bench_arena(variants: list[str], seconds: float = 1.0, seed: int = 0) -> dict[str, Any]:
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for variant in variants:
            reference = _rate(variant, "tsumogiri", seconds, seed, None)
            for policy in POLICIES:
                rate = reference if policy == "tsumogiri" else _rate(
                    variant, policy, seconds, seed, None)
                logged = _rate(variant, policy, seconds, seed, tmp)
                rows.append({"variant": variant, "policy": policy,
                             "hands_per_s": round(rate, 2),
                             "logged_hands_per_s": round(logged, 2),
                             "ratio_vs_tsumogiri": round(rate / reference, 3)})
    riichi = [r for r in rows if r["variant"] == "riichi" and r["policy"] == "greedy"]
    return {"rows": rows, "seconds_per_measurement": seconds,
            "riichi_greedy_hands_per_s": riichi[0]["hands_per_s"] if riichi else 0.0,
            "target_riichi_greedy_hands_per_s": 200}
