"""``mjbot bench outsidestart``: what starting an outside program costs the process that seats it.

A one-shot Botzone seat (``botzone:CMD``) starts its program for every request, hundreds of
times a match, and the arena's own thread pays each start: the time it is not playing. This
bench starts a seat's program as the arena does (:class:`LineProcess`: under its keeper on
Linux, in its own session, its stderr kept), on a program that exits at once (``python -S -c
pass``), reads it to its end and closes it; the reference, in the same run and interleaved
with it, is a bare ``subprocess.run`` of the same program. Per start: the CPU of this process's
thread (``time.thread_time``: the start alone, and the whole run from start to close), the CPU
of the processes started (keeper and program, reaped), and starts per second.

A start that forks this process copies its page tables, so its cost grows with its memory:
``--ballast-mb`` holds that much more, touched (an arena with nn weights or torch loaded).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from typing import Any

from adapter.bench.common import add_bench, report
from adapter.commands import UserInputError, at_least
from adapter.local.external.process import KEEPER, LineProcess

PROGRAM = [sys.executable, "-S", "-c", "pass"]
MB = 1 << 20


def _children_cpu() -> float:
    """CPU (user + system) of the reaped children so far (0 where there is no resource)."""
    try:
        import resource  # not at the top: Windows has none, and `mjbot bench -h` imports us
    except ImportError:
        return 0.0
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def _rss_mb() -> float:
    """This process's resident memory now (Linux's /proc), else its peak (getrusage)."""
    try:
        with open("/proc/self/statm", "rb") as statm:
            return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / MB
    except (OSError, ValueError, IndexError, AttributeError):
        pass
    try:
        import resource
    except ImportError:
        return 0.0
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _seat_run() -> tuple[float, float]:
    """This thread's CPU for one seat run's start, and for the whole run (start to close)."""
    begin = time.thread_time()
    proc = LineProcess(PROGRAM)
    started = time.thread_time()
    try:
        if proc.read_line(30) is not None:
            raise RuntimeError(f"{' '.join(PROGRAM)} printed something")
    finally:
        code = proc.close()
    if code != 0:
        raise RuntimeError(f"{' '.join(PROGRAM)} under the seat exited {code}: "
                           f"{proc.stderr_tail()!r}")
    return started - begin, time.thread_time() - begin


def _reference_run() -> tuple[float, float]:
    """This thread's CPU for one bare ``subprocess.run`` of the program, timed as the seat's
    run is: its start (the Popen), and the whole run (its output read to its end, the program
    reaped). Its whole run was once taken for its start too, and the seat's start alone put
    against it (1.08x, where a bare start costs this thread about half a bare run)."""
    begin = time.thread_time()
    with subprocess.Popen(PROGRAM, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE) as proc:  # subprocess.run's own steps
        started = time.thread_time()
        _, errors = proc.communicate()
    whole = time.thread_time() - begin
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(PROGRAM)} exited {proc.returncode}: {errors[-300:]!r}")
    return started - begin, whole


def _measure(run: Any, starts: int) -> dict[str, float]:
    """``starts`` runs of ``run`` in a row: its per-start medians and totals."""
    starting, whole = [], []
    children = _children_cpu()
    wall = time.perf_counter()
    for _ in range(starts):
        one, all_of_it = run()
        starting.append(one)
        whole.append(all_of_it)
    return {"wall": time.perf_counter() - wall, "children": _children_cpu() - children,
            "start": statistics.median(starting), "whole": statistics.median(whole)}


def _memory_mb() -> int | None:
    """This machine's memory in MB, where it can be asked (not Windows)."""
    try:
        return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE") // MB
    except (AttributeError, ValueError, OSError):
        return None


def _ballast(mb: int) -> bytearray:
    """``mb`` MB, not yet touched. More than this machine holds, or than it gives us, is the
    user's error in one line: it was a MemoryError's traceback (or, past what the machine
    holds but within what it promises, its pages touched until the OOM killer came)."""
    memory = _memory_mb()
    if memory is not None and mb > memory:
        raise UserInputError(f"--ballast-mb {mb}: more than this machine's memory "
                             f"({memory} MB)")
    try:
        return bytearray(mb * MB)
    except (MemoryError, OverflowError):
        raise UserInputError(f"--ballast-mb {mb}: this process cannot have that much "
                             "memory") from None


def bench_outsidestart(starts: int = 50, rounds: int = 4, ballast_mb: int = 0) -> dict[str, Any]:
    ballast = _ballast(ballast_mb)
    for at in range(0, len(ballast), 4096):  # touched: resident, as loaded weights are
        ballast[at] = 1
    runs: dict[str, list[dict[str, float]]] = {"reference": [], "seat": []}
    _reference_run()
    _seat_run()  # the keeper's bytecode cached, the program's pages warm
    for _ in range(rounds):  # interleaved: a busy spell of the machine touches both
        runs["reference"].append(_measure(_reference_run, starts))
        runs["seat"].append(_measure(_seat_run, starts))
    total = rounds * starts
    figures: dict[str, Any] = {
        "python": sys.version.split()[0], "platform": sys.platform,
        "keeper": KEEPER is not None, "starts": total, "rounds": rounds,
        "ballast_mb": ballast_mb, "rss_mb": round(_rss_mb(), 1),
        "program": " ".join(["python", *PROGRAM[1:]]),
        "reference_command": "subprocess.run(program)",
    }
    for kind, measured in runs.items():
        wall = sum(m["wall"] for m in measured)
        figures[kind] = {
            "starts_per_second": round(total / wall, 1),
            "parent_cpu_ms_per_start": round(statistics.median(m["start"] for m in measured)
                                             * 1000, 3),
            "parent_cpu_ms_per_run": round(statistics.median(m["whole"] for m in measured)
                                           * 1000, 3),
            "children_cpu_ms_per_start": round(sum(m["children"] for m in measured) / total
                                               * 1000, 3),
        }
    del ballast
    seat, ref = figures["seat"], figures["reference"]
    figures["ratios_vs_reference"] = {
        "starts_per_second": round(seat["starts_per_second"] / ref["starts_per_second"], 2),
        "parent_cpu_per_start": round(seat["parent_cpu_ms_per_start"]
                                      / max(ref["parent_cpu_ms_per_start"], 1e-6), 2),
        "children_cpu_per_start": round(seat["children_cpu_ms_per_start"]
                                        / max(ref["children_cpu_ms_per_start"], 1e-6), 2),
    }
    return figures


def register(benches: Any) -> None:
    p = add_bench(benches, "outsidestart", run,
                  "an outside program's start as a seat starts it (keeper, session) vs a "
                  "bare subprocess.run: starts/s and CPU per start")
    p.add_argument("--starts", type=at_least(1), default=50,
                   help="starts of each in a round; the rounds interleave the two")
    p.add_argument("--rounds", type=at_least(1), default=4, help="rounds of each")
    p.add_argument("--ballast-mb", type=at_least(0), default=0,
                   help="MB more this process holds, touched (loaded weights): a start that "
                        "forks it costs more")


def run(args: argparse.Namespace) -> int:
    report(args, bench_outsidestart(args.starts, args.rounds, args.ballast_mb), text)
    return 0


def text(result: dict[str, Any]) -> str:
    seat, ref, ratio = result["seat"], result["reference"], result["ratios_vs_reference"]
    under = "under its keeper" if result["keeper"] else "in its own session"
    rows = [
        f"Outside program start ({result['program']!r}), Python {result['python']} on "
        f"{result['platform']}, {result['starts']} starts of each in {result['rounds']} "
        f"rounds; this process {result['rss_mb']:.0f} MB resident "
        f"({result['ballast_mb']} MB ballast)",
        f"  {'':<26}{'starts/s':>9}{'parent CPU ms/start':>21}{'/run':>8}"
        f"{'children CPU ms/start':>23}",
    ]
    for label, row in ((f"seat ({under})", seat), (result["reference_command"], ref)):
        rows.append(f"  {label:<26}{row['starts_per_second']:>9.1f}"
                    f"{row['parent_cpu_ms_per_start']:>21.3f}{row['parent_cpu_ms_per_run']:>8.3f}"
                    f"{row['children_cpu_ms_per_start']:>23.3f}")
    rows.append(f"  seat vs reference: {ratio['starts_per_second']}x the starts/s, "
                f"{ratio['parent_cpu_per_start']}x the parent's CPU per start, "
                f"{ratio['children_cpu_per_start']}x the children's")
    return "\n".join(rows)
