"""``mjbot bench arena``: hands per second at the local table, per variant and policy.

Every policy plays the same wall sets, so that the figures compare like with like: run ``r`` of
``repeats`` plays units ``r * units ..`` of seed 0 (the runs with game logs the units after
those), and the figure is the best run. Each run plays walls the process has not played before,
after a warm-up on walls no run uses (five runs' worth): the table and the brain keep caches of
hand shapes, which a long self-play run fills, and replaying the very same games would find
every hand in them, which no run does. The reference in the same run is the table with
``tsumogiri`` players: the referee's own cost (dealing, events, four seat states and four brain
states, legality checks), which a policy can only add to.
"""

from __future__ import annotations

import tempfile
import time
from typing import Any

from adapter.local.arena import ArenaConfig, play_unit
from brain.rules.variant import variant_of
from brain.tally import FallbackTally

POLICIES = ("tsumogiri", "greedy", "rulebased")
HEADLINE = ("riichi", "greedy")  # the row the result's headline figure and target are for


WARM_UP_UNITS = 100_000  # the first unit of the warm-up walls: far from any measured run
WARM_UP_RUNS = 5  # warm-up walls per measured run's worth: a self-play run's caches are warmer


def _rate(variant: str, policy: str, units: int, repeats: int, seed: int,
          log_dir: str | None, first: int = 0,
          tally: FallbackTally | None = None) -> tuple[float, int]:
    """(best hands per second over ``repeats`` runs, each on its own units from ``first`` on,
    after a warm-up on other walls; hands in that run). The measured runs' fallbacks are
    added to ``tally``: a fast policy that falls back is not the policy measured."""
    config = ArenaConfig(variant, (policy,) * 4, seed=seed, log_dir=None)  # type: ignore[arg-type]
    for u in range(WARM_UP_UNITS, WARM_UP_UNITS + WARM_UP_RUNS * units):
        play_unit(config, u)
    config = ArenaConfig(variant, (policy,) * 4, seed=seed, log_dir=log_dir)  # type: ignore[arg-type]
    best, best_hands = 0.0, 0
    for run in range(repeats):
        start = time.perf_counter()
        start_unit = first + run * units
        results = [play_unit(config, u) for u in range(start_unit, start_unit + units)]
        rate = sum(r.hands for r in results) / (time.perf_counter() - start)
        if tally is not None:
            for r in results:
                tally.add(r.fallbacks[policy])
        if rate > best:
            best, best_hands = rate, sum(r.hands for r in results)
    return best, best_hands


def bench_arena(variants: list[str], repeats: int = 2, seed: int = 0,
                scale: float = 1.0) -> dict[str, Any]:
    rows = []
    tallies = {policy: FallbackTally() for policy in POLICIES}
    with tempfile.TemporaryDirectory() as tmp:
        for variant in variants:
            units = max(1, round(variant_of(variant).bench_units * scale))  # ~25-35 hands each
            reference, _ = _rate(variant, "tsumogiri", units, repeats, seed, None,
                                 tally=tallies["tsumogiri"])
            for policy in POLICIES:
                rate, hands = (reference, 0) if policy == "tsumogiri" else _rate(
                    variant, policy, units, repeats, seed, None, tally=tallies[policy])
                # with logs: walls after those of the runs above, not a replay of them
                logged, hands = _rate(variant, policy, units, repeats, seed, tmp,
                                      first=repeats * units, tally=tallies[policy])
                rows.append({"variant": variant, "policy": policy, "hands": hands,
                             "hands_per_s": round(rate, 2),
                             "logged_hands_per_s": round(logged, 2),
                             "ratio_vs_tsumogiri": round(rate / reference, 3)})
    riichi = [r for r in rows if (r["variant"], r["policy"]) == HEADLINE]
    return {"rows": rows, "repeats": repeats, "seed": seed,
            "riichi_greedy_hands_per_s": riichi[0]["hands_per_s"] if riichi else 0.0,
            "target_riichi_greedy_hands_per_s": 200,
            "fallbacks": {policy: t.as_dict() for policy, t in tallies.items()}}
