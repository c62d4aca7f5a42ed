"""``mjbot bench think``: a thinking policy's answers on time through the worker process that
the Tenhou, NTPU and mjai-over-TCP sessions think in (adapter/thinking/thinker.py), on an idle
machine (the reference) and then under a load of busy-loop processes the bench starts itself
and ends by their pids, the same decisions in the same run.

The decisions are seat 0's of seeded ``rulebased`` games (``bench mc``'s positions), asked one
after another with no pause between them, the harshest pace a session meets: each is counted
by where its answer came from (the policy; its best so far when it ran late; a fallback: the
worker not ready in time, or late with nothing published), with the workers replaced and the
worst answer time against the limit. Each run waits for its worker before the first decision:
a session starts its worker when it starts, long before its first request. How soon each run's
workers were ready is the last lines, with the run's first answer time: what a fresh worker
still does at its first decision that the fork server did not do for it.

A bench whose policy did not really play measures nothing: fallbacks other than the clock's,
by each answer's kind (brain/tally.py: the policy raised, its worker died, its answer or its
best so far when it ran late cannot be played) over
``--max-fallback-share`` exit 1 with one line naming the policy and the first reason, as
``mjbot arena`` does; a worker that never starts ends it in one line too.
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing
import subprocess
import sys
import time
from typing import Any

from adapter.bench.common import VARIANTS, add_bench, report
from adapter.bench.mc import positions
from adapter.commands import (
    UserInputError,
    add_fallback_argument,
    at_least,
    fallback_verdict,
    log,
    positive_seconds,
)
from adapter.local.timing import percentile
from adapter.thinking.thinker import Thinker
from adapter.thinking.worker_process import START_METHODS, default_start_method
from brain import anytime
from brain.brain import Brain
from brain.tally import FallbackKind, FallbackTally

READY_WITHIN = 120.0  # seconds a worker may take to start, however loaded the machine
# Ctrl-C reaches the terminal's whole process group: a loop ends at it as a C program would,
# with no KeyboardInterrupt traceback under the bench's one line (the bench kills it anyway)
BUSY_LOOP = "import signal\nsignal.signal(signal.SIGINT, signal.SIG_DFL)\nwhile True: pass"


class NotStarted(Exception):
    """The policy's worker process did not start, or was not ready in its time."""


async def _answers(variant: str, policy: str, limit: float, found: list[Any],
                   ready_within: float = READY_WITHIN,
                   start_method: str | None = None) -> dict[str, Any]:
    """Every decision of ``found`` asked through a fresh thinker, counted."""
    thinker = Thinker(Brain(variant, policy, limit=limit), start_method,
                      ready_within=ready_within)
    counts = {"decisions": 0, "policy": 0, "best_so_far": 0, "fallbacks": 0, "not_ready": 0,
              "late": 0}
    failed = FallbackTally()  # fallbacks not of the clock: the policy raised, died, was illegal
    seconds: list[float] = []  # each answer's time, in the order asked
    try:
        started = time.monotonic()
        try:
            await thinker.ready(ready_within)
        except TimeoutError:
            raise NotStarted(f"{policy}'s worker process was not ready within "
                             f"{ready_within:g} s") from None
        except Exception as exc:
            raise NotStarted(f"{policy}'s worker process could not start "
                             f"({type(exc).__name__}: {exc})") from None
        ready = time.monotonic() - started
        for state, request, _legal in found:
            answer = await thinker.decide(state, request)
            if answer.source == anytime.FORCED:
                continue
            counts["decisions"] += 1
            seconds.append(answer.elapsed)
            # the clock's fallbacks are what the bench measures; any other is a policy that
            # failed (a late answer whose best so far cannot be played among them)
            failed.record("" if answer.kind.of_the_clock else answer.fallback)
            if answer.source == anytime.POLICY:
                counts["policy"] += 1
            elif answer.source == anytime.BEST_SO_FAR:
                counts["best_so_far"] += 1
            else:
                counts["fallbacks"] += 1
                counts["not_ready"] += answer.kind is FallbackKind.NOT_READY
            counts["late"] += answer.kind is FallbackKind.LATE
    finally:
        thinker.close()
    worst = max(seconds, default=0.0)
    later = sorted(thinker.later_ready)
    return {**counts, "failed": failed.fallbacks, "first_failure": failed.first or None,
            "replaced": thinker.replaced, "ready_s": round(ready, 3),
            "first_decision_s": round(seconds[0], 4) if seconds else None,
            "replacement_ready_median_s": round(later[len(later) // 2], 3) if later else None,
            "replacement_ready_worst_s": round(later[-1], 3) if later else None,
            "p99_s": round(percentile(seconds, 0.99), 3) if seconds else None,
            "worst_s": round(worst, 3), "worst_vs_limit": round(worst / limit, 3)}


def _loaded(load: int, variant: str, policy: str, limit: float, found: list[Any],
            ready_within: float = READY_WITHIN,
            start_method: str | None = None) -> dict[str, Any]:
    """The same decisions while ``load`` busy loops run (each ended by its pid after)."""
    busy = [subprocess.Popen([sys.executable, "-c", BUSY_LOOP]) for _ in range(load)]
    try:
        return asyncio.run(_answers(variant, policy, limit, found, ready_within, start_method))
    finally:
        for process in busy:
            process.kill()
            process.wait()


def bench_think(variant: str, policy: str, limit: float, load: int, games: int,
                seed: int, decisions: int | None = None,
                ready_within: float = READY_WITHIN,
                start_method: str | None = None) -> dict[str, Any]:
    start_method = start_method or default_start_method()
    found = positions(variant, games, seed)[:decisions]
    idle = asyncio.run(_answers(variant, policy, limit, found, ready_within, start_method))
    loaded = _loaded(load, variant, policy, limit, found, ready_within, start_method)
    failed = FallbackTally()
    for row in (idle, loaded):
        failed.add(FallbackTally(row["decisions"], row["failed"], row["first_failure"] or ""))
    return {"variant": variant, "policy": policy, "limit_s": limit, "games": games,
            "seed": seed, "load": load, "start_method": start_method,
            "idle": idle, "loaded": loaded,
            # what --max-fallback-share judges: the fallbacks not of the clock, both runs
            "failures": {policy: failed.as_dict()}}


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
    p.add_argument("--ready-within", type=positive_seconds, default=READY_WITHIN,
                   metavar="S", help="seconds each run's worker may take to start before the "
                                     "bench gives up, exit status 1 (default %(default)g)")
    methods = [m for m in START_METHODS if m in multiprocessing.get_all_start_methods()]
    p.add_argument("--start-method", choices=methods, default=default_start_method(),
                   help="how worker processes start: forked from a server that has the "
                        "policy loaded, or spawn, a fresh interpreter each, as where Python "
                        "has no fork server (Windows) (default here: %(default)s)")
    add_fallback_argument(p, "that it failed (raised, died or answered what cannot be "
                             "played; not the late ones, which the bench measures)")


def run(args: argparse.Namespace) -> int:
    from brain.policies import get_policy

    try:
        fast = bool(getattr(get_policy(args.policy), "fast", False))
    except ValueError as exc:
        raise UserInputError(f"--policy: {exc}") from None
    if fast:
        raise UserInputError(f"--policy {args.policy}: answers inline, with no worker "
                             f"process to measure; give a policy that thinks (mc)")
    try:
        result = bench_think(args.variant, args.policy, args.limit, args.load, args.games,
                             args.seed, args.decisions, args.ready_within, args.start_method)
    except NotStarted as exc:  # one line, as a fallback verdict's, no traceback
        if args.log_json:
            log().error("worker not started", command=args.command_path, error=str(exc))
        else:
            print(f"mjbot {args.command_path}: {exc}", file=sys.stderr)
        return 1
    report(args, result, text)
    return fallback_verdict(args, result["failures"])


def text(result: dict[str, Any]) -> str:
    head = (f"{result['policy']} at a {result['limit_s']:g} s limit through its worker "
            f"process ({result['start_method']}), {result['variant']}, seat 0 of "
            f"{result['games']} seeded rulebased game(s), back to back")
    lines = [head, f"  {'':<16}{'decisions':>10}{'policy':>8}{'best so far':>12}"
                   f"{'fallbacks':>10}{'not ready':>10}{'failed':>7}{'late':>6}"
                   f"{'replaced':>9}{'p99 s':>8}{'worst s':>8}{'worst/limit':>12}"]
    runs = (("idle", result["idle"]), (f"{result['load']} busy loops", result["loaded"]))
    for label, row in runs:
        lines.append(f"  {label:<16}{row['decisions']:>10}{row['policy']:>8}"
                     f"{row['best_so_far']:>12}{row['fallbacks']:>10}{row['not_ready']:>10}"
                     f"{row['failed']:>7}{row['late']:>6}{row['replaced']:>9}"
                     f"{row['p99_s'] or 0:>8.3f}{row['worst_s']:>8.3f}"
                     f"{row['worst_vs_limit']:>11.2f}x")
    lines.append("  workers ready (from their start to their first word), and the first "
                 "decision's answer:")
    for label, row in runs:
        later = (f"replacements median {1000 * row['replacement_ready_median_s']:.0f} ms, "
                 f"worst {1000 * row['replacement_ready_worst_s']:.0f} ms"
                 if row["replacement_ready_median_s"] is not None
                 # a worker replaced at the run's last decisions: the run ended before it
                 # said it was ready, so no time is known, but it was replaced
                 else f"{row['replaced']} replaced, none ready before the run ended"
                 if row["replaced"] else "no replacement")
        first = (f"; its first decision {1000 * row['first_decision_s']:.1f} ms"
                 if row["first_decision_s"] is not None else "")
        lines.append(f"  {label:<16}first {1000 * row['ready_s']:.0f} ms{first}; {later}")
    return "\n".join(lines)
