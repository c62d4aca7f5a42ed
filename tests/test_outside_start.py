"""How an outside program is started. On Linux its keeper is started with no code of ours
between fork and exec (subprocess then uses vfork, not a fork that copied the seat's page
tables every start), and sets its parent-death signal itself, given the seat's pid: it still
ends the program's tree when the seat's process dies, a SIGKILL included, and one started
after the seat died starts nothing. `mjbot bench outsidestart` measures the start against a
bare subprocess.run in the same run."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from adapter.local.external.process import KEEPER, LineProcess
from tests.in_process import mjbot_here

ROOT = Path(__file__).resolve().parent.parent
linux_only = pytest.mark.skipif(not sys.platform.startswith("linux"),
                                reason="the keeper runs on Linux")

# Python's fork hooks run where subprocess runs code of ours in the child (a preexec_fn),
# which also makes it fork this process whole instead of vfork: counted while a test asks
_FORKS: list[int] = []
_COUNTING: list[bool] = []
if hasattr(os, "register_at_fork"):
    os.register_at_fork(before=lambda: _FORKS.append(1) if _COUNTING else None)


@linux_only
def test_a_seats_start_runs_no_code_of_ours_between_fork_and_exec() -> None:
    """A preexec_fn (the keeper's parent-death signal, set in the child before its exec)
    forked the seat's whole process at every start: 2 ms of its CPU at 45 MB resident, 12 ms
    at 545 MB (mjbot bench outsidestart), every request of a one-shot Botzone seat."""
    _FORKS.clear()
    _COUNTING.append(True)
    try:
        proc = LineProcess([sys.executable, "-S", "-c", "print('up')"])
    finally:
        _COUNTING.clear()
    try:
        assert proc.kept and proc.read_line(30) == "up"
    finally:
        assert proc.close() == 0
    assert _FORKS == []


def _ran(marker: Path, parent: int) -> int:
    """The keeper's exit status, run with ``parent`` given as the seat's pid, on a program
    that leaves ``marker``."""
    assert KEEPER is not None
    program = [sys.executable, "-S", "-c", f"open({str(marker)!r}, 'w').close()"]
    return subprocess.run([*KEEPER, str(parent), *program], timeout=60).returncode


@linux_only
def test_a_keeper_whose_seat_died_before_it_was_up_starts_nothing(tmp_path: Path) -> None:
    """The seat may die between the keeper's exec and its parent-death signal's setting (no
    signal would ever come): the keeper is then another process's child, sees it, and ends
    at once, its program never started. Given the pid of another live process (this one's
    parent), as it would be once handed to a subreaper or init."""
    marker = tmp_path / "ran"
    assert _ran(marker, os.getppid()) == -signal.SIGTERM
    assert not marker.exists()
    assert _ran(marker, os.getpid()) == 0 and marker.exists()  # given its own parent: it runs


# A program that starts a helper in a session of its own, records both pids (argv[1]), and
# waits; the seat's process that runs it under a keeper prints the keeper's pid and waits.
PROGRAM = textwrap.dedent("""
    import os, subprocess, sys, time
    helper = subprocess.Popen([sys.executable, "-S", "-c", "import time; time.sleep(600)"],
                              start_new_session=True)
    with open(sys.argv[1], "w") as f:
        f.write(f"{os.getpid()} {helper.pid}")
    print("ready", flush=True)
    time.sleep(600)
""")
SEAT = textwrap.dedent("""
    import sys, time
    from adapter.local.external.process import LineProcess
    proc = LineProcess([sys.executable, "-S", "-c", sys.argv[1], sys.argv[2]])
    assert proc.read_line(60) == "ready"
    print(proc.pid, flush=True)
    time.sleep(600)
""")


def _alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie only waits to be reaped: gone)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return False


@linux_only
def test_a_programs_tree_goes_when_the_process_that_seated_it_is_killed(tmp_path: Path) -> None:
    """SIGKILL to the seat's process: no code of ours runs, and its keeper's parent-death
    signal alone ends the program and a helper that left its group (its own session)."""
    pidfile = tmp_path / "pids"
    seat = subprocess.Popen([sys.executable, "-c", SEAT, PROGRAM, str(pidfile)], cwd=ROOT,
                            stdout=subprocess.PIPE, text=True,
                            env={**os.environ, "PYTHONPATH": str(ROOT)})
    pids: list[int] = []
    try:
        assert seat.stdout is not None
        keeper = seat.stdout.readline().strip()
        assert keeper.isdigit(), keeper
        pids = [int(keeper), *map(int, pidfile.read_text().split())]
        assert all(_alive(pid) for pid in pids)
        seat.kill()
        seat.wait(timeout=30)
        deadline = time.monotonic() + 30
        while any(_alive(pid) for pid in pids) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert [pid for pid in pids if _alive(pid)] == []
    finally:
        seat.kill()
        seat.wait(timeout=30)
        for pid in pids:
            if _alive(pid):
                os.kill(pid, signal.SIGKILL)


def test_bench_outsidestart_measures_the_seats_start_beside_a_bare_run(
        capsys: pytest.CaptureFixture[str]) -> None:
    done = mjbot_here(capsys, "bench", "outsidestart", "--starts", "2", "--rounds", "2",
                      "--ballast-mb", "8", "--json", "-")
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["starts"] == 4 and result["ballast_mb"] == 8
    assert result["rss_mb"] > 8  # the ballast is held, touched
    assert result["keeper"] is sys.platform.startswith("linux")
    assert result["reference_command"] == "subprocess.run(program)"
    for kind in ("seat", "reference"):
        row = result[kind]
        assert row["starts_per_second"] > 0 and row["parent_cpu_ms_per_start"] > 0, row
        assert row["parent_cpu_ms_per_run"] >= row["parent_cpu_ms_per_start"], row
        assert row["children_cpu_ms_per_start"] > 0, row  # every program ran, and was reaped
    # the reference's start is its start (the Popen), not its whole run: the seat's start
    # alone was put against the bare run's whole (1.08x, where it is about twice a bare start)
    reference = result["reference"]
    assert reference["parent_cpu_ms_per_start"] < reference["parent_cpu_ms_per_run"], reference
    ratios = result["ratios_vs_reference"]
    assert ratios["starts_per_second"] == pytest.approx(
        result["seat"]["starts_per_second"] / result["reference"]["starts_per_second"],
        abs=0.01)


def test_bench_outsidestart_prints_its_table(capsys: pytest.CaptureFixture[str]) -> None:
    done = mjbot_here(capsys, "bench", "outsidestart", "--starts", "1", "--rounds", "1")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith("Outside program start ('python -S -c pass')")
    assert lines[2].lstrip().startswith("seat (under its keeper)" if sys.platform.startswith(
        "linux") else "seat (in its own session)")
    assert lines[3].lstrip().startswith("subprocess.run(program)")
    assert "x the parent's CPU per start" in lines[4]


def test_bench_outsidestart_refuses_a_ballast_past_the_machines_memory_in_one_line(
        capsys: pytest.CaptureFixture[str]) -> None:
    """A ballast of a petabyte (a typo's zeros) was a MemoryError's traceback; one the
    machine does not hold but promises (overcommit) would have been touched till the OOM
    killer came."""
    done = mjbot_here(capsys, "bench", "outsidestart", "--starts", "1", "--rounds", "1",
                      "--ballast-mb", str(1 << 30))
    assert done.returncode == 2, done.stderr
    assert "--ballast-mb 1073741824: more than this machine's memory" in done.stderr
    assert "Traceback" not in done.stderr and done.stdout == ""
