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

import argparse
import tempfile
import time
from typing import Any

from adapter.bench.common import VARIANTS, add_bench, report
from adapter.commands import (
    add_fallback_argument,
    add_variant_option,
    at_least,
    fallback_verdict,
)
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
    config = ArenaConfig(variant, (policy,) * 4, seed=seed, log_dir=None)
    for u in range(WARM_UP_UNITS, WARM_UP_UNITS + WARM_UP_RUNS * units):
        play_unit(config, u)
    config = ArenaConfig(variant, (policy,) * 4, seed=seed, log_dir=log_dir)
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
                scale: float = 1.0, units: int | None = None) -> dict[str, Any]:
    """``units``: wall sets per run for every variant (None: the variant's own, times
    ``scale``), for a quick look that need not be a stable figure."""
    rows = []
    tallies = {policy: FallbackTally() for policy in POLICIES}
    with tempfile.TemporaryDirectory() as tmp:
        for variant in variants:
            # the variant's own: ~25-35 hands each run
            count = units or max(1, round(variant_of(variant).bench_units * scale))
            reference, _ = _rate(variant, "tsumogiri", count, repeats, seed, None,
                                 tally=tallies["tsumogiri"])
            for policy in POLICIES:
                rate, hands = (reference, 0) if policy == "tsumogiri" else _rate(
                    variant, policy, count, repeats, seed, None, tally=tallies[policy])
                # with logs: walls after those of the runs above, not a replay of them
                logged, hands = _rate(variant, policy, count, repeats, seed, tmp,
                                      first=repeats * count, tally=tallies[policy])
                rows.append({"variant": variant, "policy": policy, "hands": hands,
                             "hands_per_s": round(rate, 2),
                             "logged_hands_per_s": round(logged, 2),
                             "ratio_vs_tsumogiri": round(rate / reference, 3)})
    riichi = [r for r in rows if (r["variant"], r["policy"]) == HEADLINE]
    return {"rows": rows, "repeats": repeats, "seed": seed,
            # None where riichi was not measured (--variant mcr): not a 0.0 reached
            "riichi_greedy_hands_per_s": riichi[0]["hands_per_s"] if riichi else None,
            "target_riichi_greedy_hands_per_s": 200,
            "fallbacks": {policy: t.as_dict() for policy, t in tallies.items()}}


def register(benches: Any) -> None:
    p = add_bench(benches, "arena", run, "local-table hands/s per variant and policy")
    add_variant_option(p, "all", also=("all",))
    p.add_argument("--repeats", type=at_least(1), default=3,
                   help="runs, each on walls of its own, the best counts")
    p.add_argument("--units", type=at_least(1), default=None, metavar="N",
                   help="wall sets per run in every variant (default: the variant's own, "
                        "~25-35 hands; fewer for a quick look, a less steady figure)")
    p.add_argument("--seed", type=int, default=0)
    add_fallback_argument(p)


def run(args: argparse.Namespace) -> int:
    variants = list(VARIANTS) if args.variant == "all" else [args.variant]
    result = bench_arena(variants, repeats=args.repeats, seed=args.seed, units=args.units)
    report(args, result, text)
    return fallback_verdict(args, result["fallbacks"])


def text(result: dict[str, Any]) -> str:
    lines = ["local table, one worker process, four copies of a policy, the same walls for "
             "each; hands/s without and with game logs",
             f"  {'variant':<10}{'policy':<11}{'hands':>6}{'hands/s':>9}{'logged':>9}"
             f"{'vs tsumogiri':>14}"]
    for row in result["rows"]:
        lines.append(f"  {row['variant']:<10}{row['policy']:<11}{row['hands']:>6}"
                     f"{row['hands_per_s']:>9.1f}{row['logged_hands_per_s']:>9.1f}"
                     f"{row['ratio_vs_tsumogiri']:>13.2f}x")
    if result["riichi_greedy_hands_per_s"] is not None:
        lines.append(f"  target: >= 200 riichi hands/s per core with greedy; reached "
                     f"{result['riichi_greedy_hands_per_s']:.1f}")
    lines.append("  fallbacks: " + ", ".join(f"{name} {f['fallbacks']} of {f['decisions']}"
                                            for name, f in result["fallbacks"].items()))
    return "\n".join(lines)
