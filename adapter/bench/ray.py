"""``mjbot bench ray``: what Ray adds per unit of work, against the process pool, as a ratio
of the time one unit takes to play.

End-to-end runs on a shared machine measure its other load more than either engine (the
scaling table of deploy/ray.md swings both ways between runs), so this bench isolates the
dispatch: the same number of units of an empty task go through the process pool and through
Ray (the arena's own path, ``map_units``), and their cost per unit is set against the seconds
one real unit of each policy takes in this process. The ratio is what Ray's scheduling can
cost a run at most, whatever else runs on the machine.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import os
import time
from importlib.util import find_spec
from typing import Any

from adapter.bench.common import add_bench, report
from adapter.commands import UserInputError, at_least, require_mc_options
from adapter.local.arena import ArenaConfig, play_unit
from adapter.local.ray_pool import INSTALL_HINT

POLICIES = {"rulebased": ("rulebased", "greedy", "greedy", "greedy"),
            "mc": ("mc", "rulebased", "rulebased", "rulebased")}


def empty_unit(config: ArenaConfig, unit: int) -> int:
    """A unit that plays nothing: what is left is the dispatch."""
    return unit


def pool_dispatch(config: ArenaConfig, units: int, workers: int) -> float:
    """Seconds per unit of empty units through the process pool (workers started first)."""
    with concurrent.futures.ProcessPoolExecutor(max_workers=workers) as pool:
        list(pool.map(empty_unit, [config] * workers, range(workers)))  # start the workers
        start = time.perf_counter()
        futures = [pool.submit(empty_unit, config, u) for u in range(units)]
        for future in concurrent.futures.as_completed(futures):
            future.result()
        return (time.perf_counter() - start) / units


def ray_dispatch(config: ArenaConfig, units: int, workers: int) -> float:
    """Seconds per unit of empty units as Ray tasks on a local cluster (warmed first)."""
    from adapter.local.ray_pool import RayRun, connect

    cluster = connect("local", workers)
    try:
        run = RayRun(cluster, workers)
        list(run.map(empty_unit, lambda u: (config, u), 4 * workers))  # start the workers
        start = time.perf_counter()
        for _ in run.map(empty_unit, lambda u: (config, u), units):
            pass
        return (time.perf_counter() - start) / units
    finally:
        cluster.close()


def unit_seconds(policy: str, units: int, seed: int) -> float:
    """Seconds one riichi unit of ``policy`` takes to play here (after one to warm up)."""
    config = ArenaConfig("riichi", POLICIES[policy], seed=seed)
    play_unit(config, 10_000)
    start = time.perf_counter()
    for u in range(units):
        play_unit(config, u)
    return (time.perf_counter() - start) / units


def bench_ray(units: int = 2000, workers: int = 2, policy_units: int = 3,
              seed: int = 0) -> dict[str, Any]:
    config = ArenaConfig("riichi", POLICIES["rulebased"], seed=seed)
    pool = pool_dispatch(config, units, workers)
    ray = ray_dispatch(config, units, workers)
    played = {p: unit_seconds(p, policy_units, seed) for p in POLICIES}
    return {
        "workers": workers, "empty_units": units,
        "pool_ms_per_unit": 1000 * pool, "ray_ms_per_unit": 1000 * ray,
        "unit_seconds": played,
        # a unit's dispatch as a share of its play, per policy: Ray, the pool, and the ratio
        # of their whole per-unit times (play + dispatch over play + dispatch)
        "overhead": {p: {"ray": ray / s, "pool": pool / s, "ray_over_pool": (s + ray) / (s + pool)}
                     for p, s in played.items()},
    }


def text(result: dict[str, Any]) -> str:
    lines = [f"dispatch of {result['empty_units']} empty units on {result['workers']} workers: "
             f"process pool {result['pool_ms_per_unit']:.2f} ms/unit, Ray "
             f"{result['ray_ms_per_unit']:.2f} ms/unit"]
    for policy, seconds in result["unit_seconds"].items():
        o = result["overhead"][policy]
        lines.append(f"{policy}: a riichi unit plays in {seconds:.3f} s; dispatch adds "
                     f"{100 * o['ray']:.2f}% on Ray, {100 * o['pool']:.2f}% in the pool; "
                     f"Ray/pool time per unit {o['ray_over_pool']:.4f}")
    return "\n".join(lines)


def register(benches: Any) -> None:
    p = add_bench(benches, "ray", run, "Ray's dispatch per unit against the process pool's")
    p.add_argument("--units", type=int, default=2000,
                   help="empty units dispatched through the pool and Ray")
    p.add_argument("--workers", type=int, default=2, help="workers (CPUs)")
    p.add_argument("--repeats", type=at_least(1), default=3)
    p.add_argument("--seed", type=int, default=0)


def run(args: argparse.Namespace) -> int:
    if args.units < 1 or args.workers < 1 or args.repeats < 1:
        raise UserInputError("--units, --workers and --repeats must be at least 1")
    if find_spec("ray") is None:
        raise UserInputError(f"bench ray needs Ray: {INSTALL_HINT}")
    require_mc_options()
    # a tractable mc unit (mc's own default thinks up to 2 s a decision)
    os.environ.setdefault("MJBOT_MC", "playouts=16")
    result = bench_ray(args.units, args.workers, args.repeats, args.seed)
    result["mjbot_mc"] = os.environ["MJBOT_MC"]
    report(args, result, text)
    return 0
