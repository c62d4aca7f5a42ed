"""``mjbot bench selfplay``: what recording a dataset costs (issue 26: a round's self-play must
fit a 2-core machine), as self-play hands per second against the same table's without recording.

Both sides play the same policies on walls of the same seed, in one process: the reference is
``mjbot arena``'s unit (the table and the policies), the measured side is ``mjbot selfplay``'s
(the same games, every decision written with its view and hidden truth: waits, their values,
shanten). ``ratio`` is self-play's rate over the arena's, ``recording share`` the part of a
self-play second spent writing the dataset. As in ``bench arena``, each run plays walls of its
own after a warm-up on walls no run uses, and the best run counts.
"""

from __future__ import annotations

import argparse
import functools
import time
from collections.abc import Callable
from typing import Any

from adapter.bench.common import VARIANTS, add_bench, report
from adapter.commands import add_variant_option, at_least, four_policies
from adapter.local.arena import ArenaConfig, play_unit
from adapter.local.selfplay import SelfPlayConfig, play_selfplay_unit
from brain.rules.variant import variant_of

POLICIES = "rulebased,greedy,rulebased,greedy"  # `mjbot selfplay`'s default
WARM_UP_UNITS = 100_000  # the warm-up walls' first unit: far from any measured run


def _plain(arena: ArenaConfig, unit: int) -> tuple[int, int]:
    return play_unit(arena, unit).hands, 0


def _recorded(config: SelfPlayConfig, unit: int) -> tuple[int, int]:
    data = play_selfplay_unit(config, unit)
    if data.errors:
        raise RuntimeError(f"self-play unit {unit}: {data.errors[0]}")
    return data.hands, sum(b.decisions for b in data.games)


def _best(play: Callable[[int], tuple[int, int]], units: int, repeats: int,
          first: int) -> tuple[float, int, int]:
    """(best hands per second over ``repeats`` runs of ``units`` units each, from unit
    ``first`` on; that run's hands and decisions). ``play(unit)``: (hands, decisions)."""
    best = (0.0, 0, 0)
    for run in range(repeats):
        start = time.perf_counter()
        done = [play(u) for u in range(first + run * units, first + (run + 1) * units)]
        hands, decisions = sum(h for h, _ in done), sum(d for _, d in done)
        rate = hands / (time.perf_counter() - start)
        if rate > best[0]:
            best = (rate, hands, decisions)
    return best


def bench_selfplay(variants: list[str], repeats: int = 3, seed: int = 0,
                   units: int | None = None) -> dict[str, Any]:
    rows = []
    for variant in variants:
        count = units or variant_of(variant).bench_units
        arena = ArenaConfig(variant, four_policies(POLICIES), seed=seed, log_dir=None)
        config = SelfPlayConfig(arena, out="-")  # units return arrays: nothing is written

        plain = functools.partial(_plain, arena)
        recorded = functools.partial(_recorded, config)
        for u in range(WARM_UP_UNITS, WARM_UP_UNITS + count):
            plain(u)
            recorded(u)
        # self-play on the walls after the reference's, not a replay of them (the brain's
        # caches of hand shapes would find every hand of a replay), as bench arena's logs
        reference, _, _ = _best(plain, count, repeats, 0)
        rate, hands, decisions = _best(recorded, count, repeats, repeats * count)
        rows.append({"variant": variant, "hands": hands, "decisions": decisions,
                     "arena_hands_per_s": round(reference, 2),
                     "selfplay_hands_per_s": round(rate, 2),
                     "ratio_vs_arena": round(rate / reference, 3),
                     "recording_share": round(1 - rate / reference, 3)})
    return {"rows": rows, "repeats": repeats, "seed": seed, "policies": POLICIES}


def register(benches: Any) -> None:
    p = add_bench(benches, "selfplay", run, "self-play hands/s vs the same games unrecorded")
    add_variant_option(p, "all", also=("all",))
    p.add_argument("--repeats", type=at_least(1), default=3,
                   help="runs, each on walls of its own, the best counts")
    p.add_argument("--units", type=at_least(1), default=None, metavar="N",
                   help="wall sets per run (default: the variant's own, ~25-35 hands)")
    p.add_argument("--seed", type=int, default=0)


def run(args: argparse.Namespace) -> int:
    variants = list(VARIANTS) if args.variant == "all" else [args.variant]
    report(args, bench_selfplay(variants, args.repeats, args.seed, args.units), text)
    return 0


def text(result: dict[str, Any]) -> str:
    lines = [f"self-play vs the same games unrecorded, one process, {result['policies']}",
             f"  {'variant':<10}{'hands':>6}{'decisions':>10}{'arena/s':>9}{'selfplay/s':>11}"
             f"{'ratio':>8}{'recording':>11}"]
    for row in result["rows"]:
        lines.append(f"  {row['variant']:<10}{row['hands']:>6}{row['decisions']:>10}"
                     f"{row['arena_hands_per_s']:>9.1f}{row['selfplay_hands_per_s']:>11.1f}"
                     f"{row['ratio_vs_arena']:>7.2f}x{row['recording_share']:>10.0%}")
    return "\n".join(lines)
