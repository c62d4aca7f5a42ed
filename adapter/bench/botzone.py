"""``mjbot bench botzone``: what a Botzone turn costs.

One-shot: wall time from process start to the printed answer with the history of turn 1, 50
and the last turn of a long match (the match is played first under the local judge, four
keep-running bots). Start: the same bot, installed and zipped, made and ended before it reads
a turn (imports, tables, the policy's weights), what every one-shot turn pays before its
answer. Keep-running: time per later turn of that match. Reference in the same run: starting
the same Python with numpy imported (on one BLAS thread, as the bot loads it), the floor of
any Python bot on Botzone.
The upload zip is timed too at the last turn, with and without the compiled modules it ships,
beside the installed command. ``policy`` picks what the bot plays (the zip is built for it, the
installed command is started with it); ``late_turns`` N also times the compiled zip once at
each of the match's last N turns and reports the slowest, the figure Botzone's limit is about.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from adapter.bench.common import add_bench, report
from adapter.commands import UserInputError, at_least, require_policy
from adapter.fakes.botzone_judge import DEFAULT_COMMAND, BotzoneJudge
from adapter.own_python import own_python
from adapter.platforms.botzone import FALLBACK_NOTE
from adapter.platforms.botzone_bundle import build_botzone_bundle, check_bundle_policy
from brain.policies.mc.config import ENV as MC_ENV
from brain.tally import one_line

COMMAND = own_python("-m", "adapter.platforms.botzone_main")
# A bot's start, no turn read: what the entry points import before reading stdin, and the
# brain made for the policy (its tables and weights loaded); {path}: the zip put first on
# sys.path, as `python3 bot.zip` does, or nothing for the installed command
START = ("import sys\n{path}"
         "from adapter.platforms.botzone_options import one_blas_thread\n"
         "one_blas_thread()\n"
         "from adapter.platforms.botzone import BotzoneBot\n"
         "BotzoneBot(policy={policy!r}).brain.close()\n")
KEEP_RUNNING_POLICY = "rulebased"  # what the match's four bots play (`mjbot botzone`'s default)
MATCHES = 4  # keep-running matches played; the longest is timed


class FellBack(Exception):
    """A timed turn's answer was the brain's, not the policy's: the time is not the
    policy's."""


def keep_running_match(seed: int, policy: str = KEEP_RUNNING_POLICY,
                       matches: int = MATCHES) -> dict[str, Any]:
    """The longest of ``matches`` keep-running matches under the local judge (four bots
    playing ``policy``): its judge log, every bot's turn times, and the answers its bots said
    (on stderr, the only place a later keep-running turn says it) the brain gave in the
    policy's place: the figures of a match whose bots fell back are not the policy's."""
    longest: tuple[int, Any] | None = None
    for s in range(seed, seed + matches):
        # a benchmark's matches are measurements: not logged as the user's games
        result = BotzoneJudge(["keep"] * 4, s, (*DEFAULT_COMMAND, "--no-log", "--policy",
                                                policy)).play()
        turns = len(_history(result.log, "0")[0])
        if longest is None or turns > longest[0]:
            longest = (turns, result)
    assert longest is not None
    result = longest[1]
    said = [why for per_seat in result.fallbacks for why in per_seat]
    return {"log": result.log, "seconds": result.turn_seconds,
            "fallbacks": {"turns": sum(len(t) for t in result.turn_seconds),
                          "fallbacks": sum(result.fallback_counts),
                          "first_fallback": said[0] if said else None}}


def _history(log: dict[str, Any], seat: str) -> tuple[list[str], list[str]]:
    requests, responses = [], []
    entries = log["log"]
    for request, answers in zip(entries[0::2], entries[1::2], strict=False):
        content = request.get("output", {}).get("content", {})
        if seat in content and seat in answers:
            requests.append(content[seat])
            responses.append(answers[seat]["response"])
    return requests, responses


def simple_input(requests: list[str], responses: list[str], n: int) -> str:
    """The simple-interaction input of turn ``n``: its first ``n`` requests, each earlier one
    with our response, and empty data and globaldata."""
    lines = [str(n)]
    for i in range(n):
        lines.append(requests[i])
        if i < n - 1:
            lines.append(responses[i])
    return "\n".join([*lines, "", ""]) + "\n"


def _one_shot_seconds(requests: list[str], responses: list[str], n: int, repeats: int,
                      command: tuple[str, ...] = COMMAND, policy: str = "rulebased") -> float:
    text = simple_input(requests, responses, n)
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        done = subprocess.run([*command, "--no-keep-running", "--no-log", "--policy", policy],
                              input=text, capture_output=True, text=True, check=True)
        if FALLBACK_NOTE in done.stderr:
            raise FellBack(f"one-shot turn {n}: {policy} fell back: "
                           f"{one_line(done.stderr.strip()[-300:])}")
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def _median_run(command: tuple[str, ...], repeats: int) -> tuple[float, float]:
    """Median wall and CPU (user + system) seconds of ``command`` run to its end (numpy on one
    BLAS thread, as the bot loads it, unless the environment says otherwise). The CPU moves
    less with what else the machine runs than the wall time does."""
    import resource  # not at the top: Windows has none, and `mjbot bench -h` imports us

    env = {**os.environ, "OPENBLAS_NUM_THREADS": os.environ.get("OPENBLAS_NUM_THREADS", "1")}
    walls, cpus = [], []
    for _ in range(repeats):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        subprocess.run(command, check=True, env=env, stdout=subprocess.DEVNULL)
        walls.append(time.perf_counter() - start)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpus.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    return statistics.median(walls), statistics.median(cpus)


def start_command(policy: str, bundle: Path | None = None) -> tuple[str, ...]:
    """The command that starts the bot (installed, or ``bundle``'s) and ends before reading a
    turn: the start every one-shot turn pays before its answer."""
    if bundle is None:
        return own_python("-c", START.format(path="", policy=policy))
    return (sys.executable, "-c",
            START.format(path=f"sys.path.insert(0, {str(bundle)!r})\n", policy=policy))


def bench_botzone(seed: int = 4, repeats: int = 3, policy: str = "rulebased",
                  late_turns: int = 0, matches: int = MATCHES) -> dict[str, Any]:
    match = keep_running_match(seed, matches=matches)
    log, seconds = match["log"], match["seconds"]
    requests, responses = _history(log, "0")
    ref, ref_cpu = _median_run((sys.executable, "-c", "import numpy"), repeats)
    start = {"installed": _median_run(start_command(policy), repeats)}
    one_shot = {str(n): round(_one_shot_seconds(requests, responses, n, repeats,
                                                policy=policy), 4)
                for n in sorted({1, min(50, len(requests)), len(requests)})}
    last = len(requests)
    late: dict[int, float] = {}
    with tempfile.TemporaryDirectory() as tmp:
        # the zip bakes in this run's MJBOT_MC, as an upload built with --mc-options does
        zips = {kind: build_botzone_bundle(Path(tmp) / kind, compiled=kind == "compiled",
                                           policy=policy,
                                           mc_options=os.environ.get(MC_ENV, ""))
                for kind in ("compiled", "source_only")}
        start["zip"] = _median_run(start_command(policy, zips["compiled"]), repeats)
        bundle = {kind: round(_one_shot_seconds(requests, responses, last, repeats,
                                                (sys.executable, str(path)), policy), 4)
                  for kind, path in zips.items()}
        for n in range(max(1, last - late_turns + 1), last + 1) if late_turns else ():
            late[n] = _one_shot_seconds(requests, responses, n, 1,
                                        (sys.executable, str(zips["compiled"])), policy)
    slowest = max(late, key=late.__getitem__) if late else None
    later = sorted(t for per_seat in seconds for t in per_seat[1:])
    p99 = later[min(len(later) - 1, int(0.99 * len(later)))] if later else None
    return {
        "policy": policy,
        "match_turns": len(requests),
        "one_shot_seconds": one_shot,
        "python_numpy_start_seconds": round(ref, 4),
        "python_numpy_start_cpu_seconds": round(ref_cpu, 4),
        # the bot made, no turn read: installed command and compiled zip, wall and CPU
        "start_seconds": {k: round(v[0], 4) for k, v in start.items()},
        "start_ratio_vs_python_start": {k: round(v[0] / ref, 2) for k, v in start.items()},
        "start_cpu_seconds": {k: round(v[1], 4) for k, v in start.items()},
        "start_cpu_ratio_vs_python_start": {k: round(v[1] / ref_cpu, 2)
                                            for k, v in start.items()},
        "one_shot_last_ratio_vs_python_start": round(one_shot[str(len(requests))] / ref, 2),
        "bundle_one_shot_last_seconds": bundle,
        "bundle_compiled_ratio_vs_installed": round(bundle["compiled"] / one_shot[str(last)], 2),
        "bundle_source_only_ratio_vs_installed": round(
            bundle["source_only"] / one_shot[str(last)], 2),
        "keep_running_turns": len(later),
        # the match's own bots, whatever ``policy`` is: the figures below are theirs
        "keep_running_policy": KEEP_RUNNING_POLICY,
        "keep_running_median_ms": round(1000 * statistics.median(later), 3) if later else None,
        "keep_running_p99_ms": round(1000 * p99, 3) if p99 is not None else None,
        # answers of the timed match's bots that the brain gave in their policy's place
        "keep_running_fallbacks": match["fallbacks"],
        "late_turns": len(late),
        "bundle_late_slowest_seconds": round(late[slowest], 4) if slowest else None,
        "bundle_late_slowest_turn": slowest,
        "bundle_late_median_seconds": round(statistics.median(late.values()), 4) if late
        else None,
        "targets": {"one_shot_last_seconds": 1.0, "keep_running_p99_ms": 50},
    }


if __name__ == "__main__":
    print(json.dumps(bench_botzone(), indent=2))


def register(benches: Any) -> None:
    p = add_bench(benches, "botzone", run, "Botzone one-shot and keep-running turn times")
    p.add_argument("--repeats", type=at_least(1), default=3,
                   help="timings per turn, their median counts")
    p.add_argument("--policy", default="rulebased",
                   help="what the bot plays (rulebased, mc, nn)")
    p.add_argument("--late-turns", type=at_least(0), default=0, metavar="N",
                   help="also time the zip at each of the last N turns")
    p.add_argument("--matches", type=at_least(1), default=MATCHES, metavar="N",
                   help=f"keep-running matches played, the longest timed (default {MATCHES}; "
                        "fewer: a shorter run, maybe a shorter match)")


def run(args: argparse.Namespace) -> int:
    require_policy(args.policy)
    try:
        check_bundle_policy(args.policy)
    except ValueError as exc:
        raise UserInputError(str(exc)) from None
    try:
        result = bench_botzone(repeats=args.repeats, policy=args.policy,
                               late_turns=args.late_turns, matches=args.matches)
    except FellBack as exc:  # a time that is not the policy's is no figure to print
        print(f"mjbot bench botzone: {exc}", file=sys.stderr)
        return 1
    report(args, result, text)
    verdict = keep_running_verdict(result)
    if verdict:
        print(f"mjbot bench botzone: {verdict}", file=sys.stderr)
    return 1 if verdict else 0


def keep_running_verdict(result: dict[str, Any]) -> str:
    """One line when the timed keep-running match's bots fell back ("" when not): the run
    fails, as a one-shot turn that falls back does."""
    said = result["keep_running_fallbacks"]
    if not said["fallbacks"]:
        return ""
    return (f"the keep-running match's {result['keep_running_policy']} bots fell back "
            f"{said['fallbacks']} times in {said['turns']} turns; first: "
            f"{said['first_fallback']}")


def text(result: dict[str, Any]) -> str:
    lines = [f"Botzone turns, {result['policy']}, a {result['match_turns']}-turn match (seat "
             "0's requests)"]
    for n, seconds in result["one_shot_seconds"].items():
        lines.append(f"  one-shot turn {n:>4}  {seconds:>8.3f} s   (process start to answer)")
    lines.append(f"  python + numpy start {result['python_numpy_start_seconds']:>5.3f} s   "
                 f"(reference, CPU {result['python_numpy_start_cpu_seconds']:.3f} s; last turn "
                 f"ratio {result['one_shot_last_ratio_vs_python_start']}x)")
    starts, ratios = result["start_seconds"], result["start_ratio_vs_python_start"]
    cpus, cpu_ratios = result["start_cpu_seconds"], result["start_cpu_ratio_vs_python_start"]
    lines.append(f"  start          {starts['installed']:>8.3f} s   the installed command made, "
                 f"no turn read ({ratios['installed']}x python + numpy; CPU "
                 f"{cpus['installed']:.3f} s, {cpu_ratios['installed']}x)")
    lines.append(f"  start, zip     {starts['zip']:>8.3f} s   the upload zip's, compiled "
                 f"({ratios['zip']}x; CPU {cpus['zip']:.3f} s, {cpu_ratios['zip']}x)")
    zips = result["bundle_one_shot_last_seconds"]
    lines.append(f"  upload zip     {zips['compiled']:>8.3f} s   last turn, with compiled "
                 f"modules ({result['bundle_compiled_ratio_vs_installed']}x the installed "
                 "command)")
    lines.append(f"  zip, no .pyc   {zips['source_only']:>8.3f} s   last turn, sources only "
                 f"({result['bundle_source_only_ratio_vs_installed']}x)")
    lines.append(f"  keep running   median {result['keep_running_median_ms']} ms, p99 "
                 f"{result['keep_running_p99_ms']} ms over {result['keep_running_turns']} turns"
                 + ("" if result["keep_running_policy"] == result["policy"] else
                    f" (the match's {result['keep_running_policy']} bots, not "
                    f"{result['policy']})"))
    said = result["keep_running_fallbacks"]
    lines.append(f"  keep running   fallbacks {said['fallbacks']}" + (
        f" (first: {said['first_fallback']}): these times are not the policy's"
        if said["fallbacks"] else ""))
    if result["late_turns"]:
        lines.append(f"  upload zip, last {result['late_turns']} turns: slowest "
                     f"{result['bundle_late_slowest_seconds']:.3f} s (turn "
                     f"{result['bundle_late_slowest_turn']}), median "
                     f"{result['bundle_late_median_seconds']:.3f} s")
    lines.append("  targets: one-shot last turn < 1 s, keep-running p99 < 50 ms")
    return "\n".join(lines)
