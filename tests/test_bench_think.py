"""`mjbot bench think`: a thinking policy's answers through its worker process, idle and under
busy loops the bench starts and ends itself. Nothing here bounds a time (the figures are the
bench's, on whatever machine runs it): each answer is counted once, under one source, and no
busy loop outlives the bench."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from adapter.bench.think import BUSY_LOOP
from tests.in_process import mjbot_here


def _busy_loops_of_ours() -> list[int]:
    """Children of this process running the bench's busy loop."""
    found = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            ppid = int((proc / "stat").read_text().rsplit(")", 1)[1].split()[1])
            cmdline = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode()
        except (OSError, ValueError, IndexError):
            continue
        if ppid == os.getpid() and BUSY_LOOP in cmdline:
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
