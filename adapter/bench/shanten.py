"""`mjbot bench shanten`: the brain's hot path, single and batched shanten against the
``mahjong`` library, measured in the same run.

Performance is never asserted by timed tests; it is measured here and reported as a ratio, so a
slow or busy machine slows both sides alike.
"""

from __future__ import annotations

import argparse
import platform
import random
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from adapter.bench.common import add_bench, report
from adapter.commands import at_least, positive_seconds
from brain.shanten import shanten, shanten_batch, useful_tiles


def random_hands(n: int, sizes: tuple[int, ...], seed: int) -> list[list[int]]:
    """``n`` random hands dealt from a full 136-tile wall, sizes drawn from ``sizes``."""
    rng = random.Random(seed)
    wall = [k for k in range(34) for _ in range(4)]
    hands = []
    for _ in range(n):
        counts = [0] * 34
        for k in rng.sample(wall, rng.choice(sizes)):
            counts[k] += 1
        hands.append(counts)
    return hands


def random_hand_array(n: int, size: int, seed: int) -> np.ndarray:
    """An (n, 34) uint8 array of random ``size``-tile hands, built without a Python loop."""
    rng = np.random.default_rng(seed)
    kinds = np.repeat(np.arange(34), 4)
    picks = np.argpartition(rng.random((n, 136), dtype=np.float32), size, axis=1)[:, :size]
    out = np.zeros((n, 34), np.uint8)
    np.add.at(out, (np.arange(n)[:, None], kinds[picks]), 1)
    return out


def _rate(fn: Callable[[], int], min_seconds: float) -> float:
    """Items per second of ``fn`` (which returns how many items it processed), repeated until
    ``min_seconds`` have passed; the best repetition counts (least disturbed by other load)."""
    best = 0.0
    spent = 0.0
    while spent < min_seconds:
        start = time.perf_counter()
        items = fn()
        elapsed = time.perf_counter() - start
        spent += elapsed
        best = max(best, items / elapsed)
    return best


def bench_shanten(hands: int = 20_000, batch: int = 1_000_000, seconds: float = 1.0,
                  seed: int = 0) -> dict[str, Any]:
    """Single-call and batched shanten vs the ``mahjong`` library's calculate_shanten."""
    from mahjong.shanten import Shanten

    sample = random_hands(hands, (13, 14), seed)
    lib_sample = sample[: max(1, hands // 10)]

    def ours() -> int:
        for counts in sample:
            shanten(counts)
        return len(sample)

    def reference() -> int:
        for counts in lib_sample:
            Shanten.calculate_shanten(counts)
        return len(lib_sample)

    ready_to_draw = [h for h in lib_sample if sum(h) == 13] or lib_sample

    def useful() -> int:
        for counts in ready_to_draw:
            useful_tiles(counts)
        return len(ready_to_draw)

    array = random_hand_array(batch, 13, seed)

    def batched() -> int:
        shanten_batch(array)
        return len(array)

    single = _rate(ours, seconds)
    lib = _rate(reference, seconds)
    batch_rate = _rate(batched, seconds)
    return {
        "benchmark": "shanten",
        "python": platform.python_version(),
        "hands": hands,
        "batch_size": batch,
        "single_calls_per_s": round(single),
        "mahjong_calls_per_s": round(lib),
        "single_ratio_vs_mahjong": round(single / lib, 2),
        "useful_tiles_13_calls_per_s": round(_rate(useful, seconds)),
        "batched_hands_per_s": round(batch_rate),
        "batched_ratio_vs_mahjong": round(batch_rate / lib, 1),
        "targets": {"single_ratio_vs_mahjong": 10, "batched_hands_per_s": 5_000_000},
    }


def register(benches: Any) -> None:
    p = add_bench(benches, "shanten", run, "single and batched shanten vs the mahjong library")
    p.add_argument("--hands", type=at_least(1), default=20_000, help="hands for single calls")
    p.add_argument("--batch", type=at_least(1), default=1_000_000,
                   help="hands per batched call")
    p.add_argument("--seconds", type=positive_seconds, default=1.0, help="time per measurement")
    p.add_argument("--seed", type=int, default=0)


def run(args: argparse.Namespace) -> int:
    result = bench_shanten(hands=args.hands, batch=args.batch, seconds=args.seconds,
                           seed=args.seed)
    report(args, result, text)
    return 0


def text(result: dict[str, Any]) -> str:
    return "\n".join([
        f"shanten, random 13/14-tile hands (Python {result['python']})",
        f"  single calls   {result['single_calls_per_s']:>12,} /s",
        f"  mahjong lib    {result['mahjong_calls_per_s']:>12,} /s",
        f"  ratio          {result['single_ratio_vs_mahjong']:>12} x   (target >= 10)",
        f"  useful_tiles   {result['useful_tiles_13_calls_per_s']:>12,} /s   (13-tile hands)",
        f"  batched        {result['batched_hands_per_s']:>12,} hands/s   (target >= 5M)",
        f"  batched ratio  {result['batched_ratio_vs_mahjong']:>12} x"])
