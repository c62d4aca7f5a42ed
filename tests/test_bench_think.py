"""`mjbot bench think`: a thinking policy's answers through its worker process, idle and under
busy loops the bench starts and ends itself. Nothing here bounds a time (the figures are the
bench's, on whatever machine runs it): each answer is counted once, under one source, and no
busy loop outlives the bench."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from adapter.bench.think import BUSY_LOOP
from brain.policies import POLICIES
from protocols import events as ev
from tests.anytime_policies import NeverReturns
from tests.in_process import mjbot_here


def _busy_loops_of_ours(parent: int | None = None) -> list[int]:
    """Children of this process (or of ``parent``) running the bench's busy loop."""
    parent = os.getpid() if parent is None else parent
    found = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            ppid = int((proc / "stat").read_text().rsplit(")", 1)[1].split()[1])
            cmdline = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode()
        except (OSError, ValueError, IndexError):
            continue
        if ppid == parent and BUSY_LOOP in cmdline:
            found.append(int(proc.name))
    return found


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc")
def test_bench_think_counts_each_answer_once_and_ends_its_busy_loops(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "think.json"
    done = mjbot_here(capsys, "bench", "think", "--load", "1", "--games", "1",
                      "--decisions", "12", "--limit", "0.4", "--json", str(out))
    assert done.returncode == 0, done.stderr
    result = json.loads(out.read_text())
    assert (result["policy"], result["limit_s"], result["load"]) == ("mc", 0.4, 1)
    for run in ("idle", "loaded"):
        row = result[run]
        assert 0 < row["decisions"] <= 12
        assert row["policy"] + row["best_so_far"] + row["fallbacks"] == row["decisions"]
        assert row["not_ready"] <= row["fallbacks"] and row["late"] <= row["decisions"]
        assert row["worst_vs_limit"] == pytest.approx(row["worst_s"] / 0.4, abs=0.005)
    assert result["idle"]["decisions"] == result["loaded"]["decisions"]  # the same ones
    assert "1 busy loops" in done.stdout and "worst/limit" in done.stdout
    for run, label in (("idle", "idle"), ("loaded", "1 busy loops")):
        row = result[run]
        assert row["failed"] == 0 and row["first_failure"] is None  # mc played
        # the README's "a replacement is ready in ... ms": the bench prints it
        # and the run's first answer: what a fresh worker still does at its first decision
        assert 0 < row["first_decision_s"] <= row["worst_s"] + 0.0005
        said = (f"  {label:<16}first {1000 * row['ready_s']:.0f} ms; its first decision "
                f"{1000 * row['first_decision_s']:.1f} ms; ")
        median, worst = row["replacement_ready_median_s"], row["replacement_ready_worst_s"]
        if row["replaced"] and median is not None:
            assert 0 < median <= worst
            said += f"replacements median {1000 * median:.0f} ms, worst {1000 * worst:.0f} ms"
        elif row["replaced"]:  # replaced at the last decisions, not ready before the end
            said += f"{row['replaced']} replaced, none ready before the run ended"
        else:
            said += "no replacement"
        assert said in done.stdout.splitlines()
    assert result["failures"]["mc"]["fallbacks"] == 0
    assert _busy_loops_of_ours() == []


def test_a_policy_that_fails_at_every_decision_fails_the_bench_in_one_line(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """mc with models it cannot read publishes its fast move, then raises: every answer was
    a fallback, yet the bench printed its table and exited 0, as if mc had been measured."""
    out = tmp_path / "think.json"
    policy = f"mc@models={tmp_path / 'nonexistent'}"
    done = mjbot_here(capsys, "bench", "think", "--policy", policy, "--load", "1", "--games",
                      "1", "--decisions", "6", "--json", str(out))
    assert done.returncode == 1
    assert "Traceback" not in done.stderr
    line = f"mjbot bench think: policy {policy} fell back in 12 of 12 decisions (100.0% > 1%); " \
           f"first: mc raised MissingModels: mc: no opponent models for 'riichi'"
    assert [e for e in done.stderr.splitlines() if e.startswith(line)], done.stderr
    result = json.loads(out.read_text())  # the figures are still written
    assert result["idle"]["failed"] == result["loaded"]["failed"] == 6
    assert _busy_loops_of_ours() == []


def test_a_late_policy_whose_best_so_far_cannot_be_played_fails_the_bench(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The bench told the clock's fallbacks from a policy's failing by the reason's text, and
    a late answer whose best so far could not be played read 'missed its budget': counted as
    the clock's, a policy that published nothing playable at any decision passed the bench.
    Each answer now carries its kind, and a best so far that cannot be played is the
    policy's failing."""
    illegal = ev.Discard(999)  # a tile no table holds
    monkeypatch.setitem(POLICIES, NeverReturns.name,
                        lambda: NeverReturns(tmp_path / "n", times=10**6, publish_action=illegal))
    out = tmp_path / "think.json"
    done = mjbot_here(capsys, "bench", "think", "--policy", NeverReturns.name, "--load", "1",
                      "--games", "1", "--decisions", "3", "--json", str(out))
    assert done.returncode == 1, done.stdout + done.stderr
    assert "Traceback" not in done.stderr
    result = json.loads(out.read_text())
    failed = result["idle"]["failed"] + result["loaded"]["failed"]
    assert failed >= 1  # each late answer (its worker then replaced: the next may not be ready)
    assert result["idle"]["late"] == result["loaded"]["late"] == 0  # none of the clock's alone
    first = f"first: test-never missed its 0.250s budget; its best so far {illegal!r} is not legal"
    assert first in done.stderr, done.stderr
    assert _busy_loops_of_ours() == []


def test_bench_think_measures_spawned_workers_too(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Where Python has no fork server (Windows) every worker is a fresh interpreter: the
    bench starts them so on any platform (--start-method spawn), to measure what that costs;
    whatever comes of the clock, nothing fails."""
    out = tmp_path / "think.json"
    done = mjbot_here(capsys, "bench", "think", "--start-method", "spawn", "--load", "1",
                      "--games", "1", "--decisions", "4", "--json", str(out))
    assert done.returncode == 0, done.stderr
    result = json.loads(out.read_text())
    assert result["start_method"] == "spawn"
    assert "through its worker process (spawn)" in done.stdout.splitlines()[0]
    for run in ("idle", "loaded"):
        row = result[run]
        assert row["decisions"] > 0 and row["failed"] == 0, row
        assert row["ready_s"] > 0
    assert _busy_loops_of_ours() == []


def test_a_worker_not_ready_in_its_time_ends_the_bench_in_one_line(
        capsys: pytest.CaptureFixture[str]) -> None:
    """A worker that did not start within its time ended the bench in a RuntimeError
    traceback."""
    done = mjbot_here(capsys, "bench", "think", "--load", "1", "--games", "1",
                      "--ready-within", "0.000001")
    assert done.returncode == 1
    assert done.stderr.strip() == ("mjbot bench think: mc's worker process was not ready "
                                   "within 1e-06 s"), done.stderr
    assert _busy_loops_of_ours() == []


@pytest.mark.parametrize("policy, said", [
    ("greedy", "--policy greedy: answers inline, with no worker process to measure"),
    ("nosuch", "--policy: unknown policy 'nosuch'"),
])
def test_bench_think_refuses_a_policy_with_no_worker_in_one_line(
        capsys: pytest.CaptureFixture[str], policy: str, said: str) -> None:
    done = mjbot_here(capsys, "bench", "think", "--policy", policy)
    assert done.returncode == 2
    assert said in done.stderr and "Traceback" not in done.stderr
    assert _busy_loops_of_ours() == []


def _cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _gone(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z"
    except OSError:
        return True


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc")
def test_ctrl_c_under_load_is_one_line_and_ends_the_busy_loops() -> None:
    """Ctrl-C reaches the terminal's whole process group, the busy loops too: each printed a
    KeyboardInterrupt traceback under the bench's one line ("mjbot bench think: interrupted"),
    twelve of them with ``--load 12``. The first 60 of the two games' 175 decisions: the
    idle run before the loaded one asked all of them (some 4 s of mc's search), and the
    loaded run is stopped as soon as its loops spin."""
    root = Path(__file__).resolve().parents[1]
    bench = subprocess.Popen(
        [sys.executable, "-m", "adapter.cli", "bench", "think", "--load", "2", "--games", "2",
         "--decisions", "60"],
        cwd=root, env={**os.environ, "PYTHONPATH": str(root)}, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True, start_new_session=True,  # its own "terminal" group
        # SIGINT live, as from a terminal: a suite run as a background job ignores it, and the
        # bench would inherit that and play on to exit 0
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        loops: list[int] = []
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and bench.poll() is None:
            loops = _busy_loops_of_ours(bench.pid)
            # each past Python's start (a Ctrl-C in it is Python's own), into the loop
            if len(loops) == 2 and all(_cpu_seconds(pid) > 0.2 for pid in loops):
                break
            time.sleep(0.02)
        assert len(loops) == 2, "the loaded run never began"
        os.killpg(bench.pid, signal.SIGINT)  # what Ctrl-C in its terminal does
        _out, err = bench.communicate(timeout=60)
    finally:
        if bench.poll() is None:
            bench.kill()
            bench.communicate()
    assert bench.returncode == 130, err
    assert "Traceback" not in err and "KeyboardInterrupt" not in err, err
    assert "mjbot bench think: interrupted" in err
    assert all(_gone(pid) for pid in loops)


def test_a_replacement_not_ready_before_the_run_ended_is_not_no_replacement() -> None:
    """A run whose worker was replaced at its last decision ended before the replacement
    said it was ready (`mjbot bench think --decisions 3 --limit 0.1` under load: `replaced 1`
    in the table, `replacement_ready_median_s` null in the JSON), and its 'workers ready'
    line said 'no replacement' beside the table's 1. It now says the worker was replaced and
    that none was ready before the run ended; a run that replaced none says so as before."""
    from adapter.bench.think import text

    def run(replaced: int) -> dict[str, object]:
        return {"decisions": 3, "policy": 1, "best_so_far": 1, "fallbacks": 1,
                "not_ready": 1, "failed": 0, "late": replaced, "replaced": replaced,
                "p99_s": 0.024, "worst_s": 0.024, "worst_vs_limit": 0.237, "ready_s": 0.028,
                "first_decision_s": 0.0237, "replacement_ready_median_s": None,
                "replacement_ready_worst_s": None}

    result = {"policy": "mc", "limit_s": 0.1, "start_method": "forkserver",
              "variant": "riichi", "games": 2, "load": 6, "idle": run(0), "loaded": run(1)}
    lines = text(result).splitlines()
    assert lines[-2].endswith("; no replacement")
    assert lines[-1].startswith("  6 busy loops") and lines[-1].endswith(
        "; 1 replaced, none ready before the run ended")
