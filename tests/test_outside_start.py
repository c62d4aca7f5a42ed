"""How an outside program is started: `mjbot bench outsidestart` (the seat's start against a
bare subprocess.run in the same run)."""

from __future__ import annotations

import json
import sys

import pytest

from tests.in_process import mjbot_here


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
