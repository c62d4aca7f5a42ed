"""`mjbot bench selfplay`: the recording's cost as a ratio against the same table unrecorded,
measured in the same run (issue 26); the figure itself is never asserted."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.in_process import mjbot_here

ROOT = Path(__file__).resolve().parent.parent


def test_bench_selfplay_prints_its_ratio_and_writes_json(tmp_path: Path,
                                                        capsys: pytest.CaptureFixture[str],
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    out = tmp_path / "selfplay.json"
    r = mjbot_here(capsys, "bench", "selfplay", "--variant", "taiwan16", "--units", "1",
                   "--repeats", "1", "--json", str(out))
    assert r.returncode == 0, r.stderr
    (row,) = json.loads(out.read_text())["rows"]
    assert row["variant"] == "taiwan16" and row["hands"] > 0 and row["decisions"] > 0
    assert row["ratio_vs_arena"] > 0
    assert row["recording_share"] == pytest.approx(1 - row["ratio_vs_arena"], abs=0.002)
    assert f"{row['ratio_vs_arena']:>7.2f}x" in r.stdout


def test_bench_selfplay_refuses_an_unknown_variant(capsys: pytest.CaptureFixture[str]) -> None:
    r = mjbot_here(capsys, "bench", "selfplay", "--variant", "hk")
    assert r.returncode != 0 and "invalid choice: 'hk'" in r.stderr
    assert "Traceback" not in r.stderr
