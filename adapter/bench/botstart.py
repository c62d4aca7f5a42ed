"""``mjbot bench botstart``: what a one-shot Botzone turn of the upload zip costs to start.

Botzone starts the bot anew for every one-shot turn, with no options, under a Python that has
only numpy and MahjongGB; its clock counts the whole process. This bench runs the compiled
zip so, in such a runtime (a venv made here whose site-packages hold only those two, linked
from this Python's), on a late-game turn of a match played first under the local judge (seat
0's last draw), beside the reference measured in the same run: the same Python importing numpy
(one BLAS thread, as the bot loads it), the floor of any Python bot there. CPU (user + system)
moves less with what else the machine runs than the wall time does; both are printed.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
import venv
from pathlib import Path
from typing import Any

from adapter.bench.botzone import _history, keep_running_match, simple_input
from adapter.bench.common import add_bench, report
from adapter.commands import UserInputError, at_least, require_policy
from adapter.platforms.botzone_bundle import build_botzone_bundle, check_bundle_policy

REFERENCE = "import numpy"
# the runs' whole environment: none of ours (a PYTHONPATH to this checkout would let the zip
# import replay and write game logs, as Botzone's runtime cannot)
ENV = {"OPENBLAS_NUM_THREADS": "1"}


def bare_runtime(root: Path) -> str:
    """A Python at ``root`` whose site-packages hold numpy and MahjongGB only (this Python's,
    linked), as Botzone's: no msgpack, so the zip writes no game log, and none of this
    checkout's modules but what the zip carries."""
    try:
        import MahjongGB
        import numpy
    except ImportError as exc:  # the zip needs both
        raise UserInputError(f"bench botstart needs numpy and MahjongGB here ({exc}): "
                             "pip install numpy PyMahjongGB") from None
    venv.EnvBuilder(with_pip=False, symlinks=True).create(root)
    site = next((root / "lib").glob("python3*/site-packages"))
    numpy_dir = Path(numpy.__file__).parent
    for target in [numpy_dir, Path(MahjongGB.__file__), *numpy_dir.parent.glob("numpy.libs")]:
        (site / target.name).symlink_to(target)
    return str(root / "bin" / "python")


def late_turn(seed: int) -> str:
    """The simple-interaction input of seat 0's last draw in a keep-running match under the
    local judge: the longest history a one-shot turn that decides a discard reads."""
    requests, responses = _history(keep_running_match(seed, matches=1)["log"], "0")
    draws = [i for i, r in enumerate(requests) if r.startswith("2 ")]
    return simple_input(requests, responses, (draws[-1] if draws else len(requests) - 1) + 1)


def _cpu_wall(command: list[str], text: str) -> tuple[float, float]:
    """CPU (user + system) and wall seconds of ``command`` run to its end on ``text``."""
    import resource  # not at the top: Windows has none, and `mjbot bench -h` imports us

    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(command, input=text, capture_output=True, text=True, env=ENV)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(command)} exited {done.returncode}: "
                           f"{done.stderr.strip()[-300:]}")
    return after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime, wall


def bench_botstart(seed: int = 4, repeats: int = 15, policy: str = "rulebased"
                   ) -> dict[str, Any]:
    turn = late_turn(seed)
    with tempfile.TemporaryDirectory() as tmp:
        python = bare_runtime(Path(tmp) / "runtime")
        bundle = str(build_botzone_bundle(Path(tmp) / "zip", policy=policy))
        answer = subprocess.run([python, bundle], input=turn, capture_output=True, text=True,
                                env=ENV).stdout.split("\n")[0]
        runs: dict[str, list[tuple[float, float]]] = {"reference": [], "turn": []}
        for _ in range(repeats):  # interleaved: a busy spell of the machine touches both
            runs["reference"].append(_cpu_wall([python, "-c", REFERENCE], ""))
            runs["turn"].append(_cpu_wall([python, bundle], turn))
    cpu = {k: statistics.median(c for c, _ in v) for k, v in runs.items()}
    wall = {k: statistics.median(w for _, w in v) for k, v in runs.items()}
    return {
        "policy": policy,
        "turn_requests": int(turn.split("\n", 1)[0]),
        "answer": answer,
        "python": sys.version.split()[0],
        "repeats": repeats,
        "reference": f"python -c {REFERENCE!r}",
        "reference_cpu_seconds": round(cpu["reference"], 4),
        "reference_wall_seconds": round(wall["reference"], 4),
        "turn_cpu_seconds": round(cpu["turn"], 4),
        "turn_wall_seconds": round(wall["turn"], 4),
        "turn_cpu_ratio_vs_reference": round(cpu["turn"] / cpu["reference"], 2),
        "bot_own_cpu_seconds": round(cpu["turn"] - cpu["reference"], 4),
    }


def register(benches: Any) -> None:
    p = add_bench(benches, "botstart", run,
                  "a one-shot Botzone turn of the upload zip, started as Botzone starts it, "
                  "vs python + numpy")
    p.add_argument("--repeats", type=at_least(1), default=15,
                   help="runs of each, interleaved; their medians count")
    p.add_argument("--policy", default="rulebased", help="what the zip plays (rulebased, mc, nn)")
    p.add_argument("--seed", type=int, default=4, help="the local judge's match")


def run(args: argparse.Namespace) -> int:
    require_policy(args.policy)
    try:
        check_bundle_policy(args.policy)
    except ValueError as exc:
        raise UserInputError(str(exc)) from None
    report(args, bench_botstart(args.seed, args.repeats, args.policy), text)
    return 0


def text(result: dict[str, Any]) -> str:
    return "\n".join([
        f"Botzone one-shot turn start, the upload zip ({result['policy']}), Python "
        f"{result['python']} with numpy and MahjongGB only, medians of {result['repeats']}",
        f"  turn {result['turn_requests']:>4} (seat 0's last draw, answered "
        f"{result['answer']!r})  CPU {result['turn_cpu_seconds']:.4f} s   wall "
        f"{result['turn_wall_seconds']:.4f} s",
        f"  reference {result['reference']:<24} CPU {result['reference_cpu_seconds']:.4f} s   "
        f"wall {result['reference_wall_seconds']:.4f} s",
        f"  ratio {result['turn_cpu_ratio_vs_reference']}x the reference's CPU; the bot's own "
        f"share {result['bot_own_cpu_seconds']:.4f} s",
    ])
