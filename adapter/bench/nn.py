"""``mjbot bench nn``: the ``nn`` policy's decision time on one core, beside ``rulebased``'s
on the same positions in the same run (issue 17's goal: p99 <= 5 ms).

The positions are seat 0's decisions with a choice in seeded games of four ``rulebased``
players (those of ``bench mc``). The measurement runs in a child process pinned to one CPU with
the BLAS thread pools set to one thread before numpy loads: a tiny matrix product otherwise
wakes every core, which the figure would not show and a shared machine would pay for.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import time
from typing import Any

import numpy as np

from adapter.bench.common import add_bench, child_figures, report
from adapter.commands import add_variant_option, at_least, require_networks
from adapter.commands.models import BLAS_THREADS
from adapter.own_python import own_python

ONE_THREAD = dict.fromkeys(BLAS_THREADS, "1")


def bench_nn(variant: str, model: str = "", games: int = 2, repeats: int = 3,
             seed: int = 3) -> dict[str, Any]:
    """Run :func:`measure` in a one-core child process; its figures."""
    env = {**os.environ, **ONE_THREAD}
    if model:
        env["MJBOT_NN_WEIGHTS"] = model
    code = ("import json, sys; from adapter.bench.nn import measure; "
            f"print(json.dumps(measure({variant!r}, {games}, {repeats}, {seed})))")
    proc = subprocess.run(own_python("-c", code), env=env, capture_output=True,
                          text=True, check=False)
    if proc.returncode != 0:
        raise RuntimeError(proc.stderr.strip().splitlines()[-1] if proc.stderr.strip()
                           else f"bench child exited {proc.returncode}")
    return child_figures(proc.stdout.strip().splitlines()[-1], "the nn bench's child")


def _pin() -> int | None:
    if not hasattr(os, "sched_setaffinity"):
        return None
    cpu = min(os.sched_getaffinity(0))
    os.sched_setaffinity(0, {cpu})
    return cpu


def _ms(samples: list[float]) -> dict[str, float]:
    a = np.asarray(samples) * 1000.0
    return {"p50": round(float(np.percentile(a, 50)), 3),
            "p99": round(float(np.percentile(a, 99)), 3),
            "mean": round(float(a.mean()), 3)}


def measure(variant: str, games: int = 2, repeats: int = 3, seed: int = 3) -> dict[str, Any]:
    """Time every decision of the positions ``repeats`` times with each policy."""
    from adapter.bench.mc import positions
    from brain.nn.encoding import encode
    from brain.policies.nn import NnPolicy, require_network
    from brain.policies.rulebased import RuleBasedPolicy

    cpu = _pin()
    net = require_network(variant)
    found = positions(variant, games, seed)
    nn, rb = NnPolicy(net), RuleBasedPolicy()
    for state, request, legal in found[:20]:  # warm caches (shanten tables, BLAS)
        nn.decide(state, request, legal)
        rb.decide(state, request, legal)
    times: dict[str, list[float]] = {"nn": [], "rulebased": [], "encode": [], "forward": []}
    for _ in range(repeats):
        for state, request, legal in found:
            t0 = time.perf_counter()
            nn.decide(state, request, legal)
            t1 = time.perf_counter()
            rb.decide(state, request, legal)
            t2 = time.perf_counter()
            x = encode(state, request, net.encoding)
            t3 = time.perf_counter()
            net.forward(x)
            t4 = time.perf_counter()
            times["nn"].append(t1 - t0)
            times["rulebased"].append(t2 - t1)
            times["encode"].append(t3 - t2)
            times["forward"].append(t4 - t3)
    figures = {k: _ms(v) for k, v in times.items()}
    return {"variant": variant, "positions": len(found), "repeats": repeats, "cpu": cpu,
            "network": {k: net.meta[k] for k in ("channels", "blocks", "planes")},
            "ms": figures,
            "p99_ratio_vs_rulebased": round(figures["nn"]["p99"]
                                            / max(figures["rulebased"]["p99"], 1e-9), 2),
            "target_p99_ms": 5.0}


def text(result: dict[str, Any]) -> str:
    ms = result["ms"]
    net = result["network"]
    lines = [f"nn decisions, {result['variant']}: {result['positions']} positions x "
             f"{result['repeats']}, one core (cpu {result['cpu']}), network {net['channels']} "
             f"channels x {net['blocks']} blocks over {net['planes']} planes"]
    for name in ("nn", "encode", "forward", "rulebased"):
        m = ms[name]
        lines.append(f"  {name:<10} p50 {m['p50']:>7.3f} ms   p99 {m['p99']:>7.3f} ms   "
                     f"mean {m['mean']:>7.3f} ms")
    lines.append(f"  nn p99 / rulebased p99: {result['p99_ratio_vs_rulebased']}x   "
                 f"(target: nn p99 <= {result['target_p99_ms']} ms)")
    return "\n".join(lines)


def register(benches: Any) -> None:
    p = add_bench(benches, "nn", run, "nn decision time (p50/p99) beside rulebased, one core")
    add_variant_option(p, also=("all",), help="the rules (all: riichi)")
    p.add_argument("--model", default="", metavar="FILE",
                   help="network weights (default: the shipped ones)")
    p.add_argument("--games", type=at_least(1), default=2, help="seeded games of positions")
    p.add_argument("--repeats", type=at_least(1), default=3)
    p.add_argument("--seed", type=int, default=0)


def run(args: argparse.Namespace) -> int:
    variant = "riichi" if args.variant == "all" else args.variant
    # no weights: one line, before the child starts (which gets the file by its environment;
    # this process's own stays as it was, for a caller that runs commands in process)
    require_networks([f"nn@{args.model}" if args.model else "nn"], variant)
    result = bench_nn(variant, args.model, games=args.games, repeats=args.repeats,
                      seed=args.seed)
    report(args, result, text)
    return 0
