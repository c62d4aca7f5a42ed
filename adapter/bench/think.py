"""``mjbot bench think``: a thinking policy's answers on time through the worker process that
the Tenhou, NTPU and mjai-over-TCP sessions think in (adapter/thinking/thinker.py), on an idle
machine (the reference) and then under a load of busy-loop processes the bench starts itself
and ends by their pids, the same decisions in the same run.

The decisions are seat 0's of seeded ``rulebased`` games (``bench mc``'s positions), asked one
after another with no pause between them, the harshest pace a session meets: each is counted
by where its answer came from (the policy; its best so far when it ran late; a fallback: the
worker not ready in time, or late with nothing published), with the workers replaced and the
worst answer time against the limit. Each run waits for its worker before the first decision:
a session starts its worker when it starts, long before its first request.
"""

from __future__ import annotations

import argparse
import asyncio
import subprocess
import sys
import time
from typing import Any

from adapter.bench.common import VARIANTS, add_bench, report
from adapter.bench.mc import positions
from adapter.commands import UserInputError, at_least, positive_seconds
from adapter.local.timing import percentile
from adapter.thinking.thinker import Thinker
from brain import anytime
from brain.brain import Brain

READY_WITHIN = 120.0  # seconds a worker may take to start, however loaded the machine
# Ctrl-C reaches the terminal's whole process group: a loop ends at it as a C program would,
# with no KeyboardInterrupt traceback under the bench's one line (the bench kills it anyway)
BUSY_LOOP = "import signal\nsignal.signal(signal.SIGINT, signal.SIG_DFL)\nwhile True: pass"


async def _answers(variant: str, policy: str, limit: float,
                   found: list[Any]) -> dict[str, Any]:
    """Every decision of ``found`` asked through a fresh thinker, counted."""
    thinker = Thinker(Brain(variant, policy, limit=limit))
    counts = {"decisions": 0, "policy": 0, "best_so_far": 0, "fallbacks": 0, "not_ready": 0,
              "late": 0}
    seconds: list[float] = []
    try:
        started = time.monotonic()
        thinker.warm()
        while thinker.worker is None or thinker.worker.pid is None:
            if time.monotonic() - started > READY_WITHIN:
                raise RuntimeError(f"{policy}'s worker process was not ready within "
                                   f"{READY_WITHIN:g} s")
            await asyncio.sleep(0.01)
        ready = time.monotonic() - started
        for state, request, _legal in found:
            answer = await thinker.decide(state, request)
            if answer.source == anytime.FORCED:
                continue
            counts["decisions"] += 1
            seconds.append(answer.elapsed)
            if answer.source == anytime.POLICY:
                counts["policy"] += 1
            elif answer.source == anytime.BEST_SO_FAR:
                counts["best_so_far"] += 1
            else:
                counts["fallbacks"] += 1
                if "not ready in time" in answer.fallback or "not started in " \
                        in answer.fallback:
                    counts["not_ready"] += 1
            if " missed its " in answer.fallback:
                counts["late"] += 1
    finally:
        thinker.close()
    worst = max(seconds, default=0.0)
    return {**counts, "replaced": thinker.replaced, "ready_s": round(ready, 3),
            "p99_s": round(percentile(seconds, 0.99), 3) if seconds else None,
            "worst_s": round(worst, 3), "worst_vs_limit": round(worst / limit, 3)}


def _loaded(load: int, variant: str, policy: str, limit: float,
            found: list[Any]) -> dict[str, Any]:
    """The same decisions while ``load`` busy loops run (each ended by its pid after)."""
    busy = [subprocess.Popen([sys.executable, "-c", BUSY_LOOP]) for _ in range(load)]
    try:
        return asyncio.run(_answers(variant, policy, limit, found))
    finally:
        for process in busy:
            process.kill()
            process.wait()


def bench_think(variant: str, policy: str, limit: float, load: int, games: int,
                seed: int, decisions: int | None = None) -> dict[str, Any]:
    found = positions(variant, games, seed)[:decisions]
    idle = asyncio.run(_answers(variant, policy, limit, found))
    loaded = _loaded(load, variant, policy, limit, found)
    return {"variant": variant, "policy": policy, "limit_s": limit, "games": games,
            "seed": seed, "load": load, "idle": idle, "loaded": loaded}


def register(benches: Any) -> None:
    p = add_bench(benches, "think", run, "a thinking policy's answers on time through its "
                                         "worker process, idle vs under a busy-loop load")
    p.add_argument("--variant", choices=VARIANTS, default="riichi")
    p.add_argument("--policy", default="mc", help="a policy that thinks (default: mc)")
    p.add_argument("--limit", type=positive_seconds, default=0.5, metavar="S",
                   help="the platform's seconds per decision (the policy gets it less "
                        "the brain's 0.25 s margin)")
    p.add_argument("--load", type=at_least(1), default=6, metavar="N",
                   help="busy-loop processes running through the loaded run")
    p.add_argument("--games", type=at_least(1), default=2,
                   help="seeded rulebased games whose seat 0 decisions are asked")
    p.add_argument("--seed", type=int, default=3)
    p.add_argument("--decisions", type=at_least(1), default=None, metavar="N",
                   help="only the first N of those decisions (default: all)")


def run(args: argparse.Namespace) -> int:
    from brain.policies import get_policy

    try:
        fast = bool(getattr(get_policy(args.policy), "fast", False))
    except ValueError as exc:
        raise UserInputError(f"--policy: {exc}") from None
    if fast:
        raise UserInputError(f"--policy {args.policy}: answers inline, with no worker "
                             f"process to measure; give a policy that thinks (mc)")
    report(args, bench_think(args.variant, args.policy, args.limit, args.load, args.games,
                             args.seed, args.decisions), text)
    return 0


def text(result: dict[str, Any]) -> str:
    head = (f"{result['policy']} at a {result['limit_s']:g} s limit through its worker "
            f"process, {result['variant']}, seat 0 of {result['games']} seeded rulebased "
            f"game(s), back to back")
    lines = [head, f"  {'':<16}{'decisions':>10}{'policy':>8}{'best so far':>12}"
                   f"{'fallbacks':>10}{'not ready':>10}{'late':>6}{'replaced':>9}"
                   f"{'p99 s':>8}{'worst s':>8}{'worst/limit':>12}"]
    for label, row in (("idle", result["idle"]), (f"{result['load']} busy loops",
                                                  result["loaded"])):
        lines.append(f"  {label:<16}{row['decisions']:>10}{row['policy']:>8}"
                     f"{row['best_so_far']:>12}{row['fallbacks']:>10}{row['not_ready']:>10}"
                     f"{row['late']:>6}{row['replaced']:>9}{row['p99_s'] or 0:>8.3f}"
                     f"{row['worst_s']:>8.3f}{row['worst_vs_limit']:>11.2f}x")
    return "\n".join(lines)
