"""A resumed `mjbot nn iterate` goes on from the weights state.json records, or not at all. A
current weights file replaced since (another network copied over it) was silently played and
trained from, and a damaged one was played by a whole self-play phase (mc falling back on every
decision) before the run failed; now either is refused in one line naming the file, exit 2,
before a game is played or state.json written."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.in_process import mjbot_here
from tests.test_nn_iterate import need_torch

ROOT = Path(__file__).resolve().parent.parent
GOLDEN = ROOT / "tests" / "data" / "nn" / "golden_riichi.npz"
OTHER = ROOT / "brain" / "data" / "nn_riichi.npz"  # a riichi network, not the run's


def _command(run: Path) -> list[str]:
    return [sys.executable, "-m", "adapter.cli", "nn", "iterate", "--variant", "riichi",
            "--dir", str(run), "--rounds", "1", "--hands", "40", "--opponents",
            "rulebased,greedy", "--selection-seed", "41", "--selection-hands", "1",
            "--workers", "1", "--init", str(GOLDEN), "--playouts", "2", "--epochs", "1",
            "--threads", "1", "--seed", "7"]


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(ROOT)}


@pytest.fixture(scope="module")
def stopped_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A run killed (its whole group, outright) once its first self-play has begun: state.json
    on record, round 1 to do. Killed, not sent SIGTERM: a stopped self-play played out its
    first wall set (22 hands of mc) first, which no test here reads."""
    need_torch()  # nn iterate refuses to start without torch
    run = tmp_path_factory.mktemp("iterate") / "run"
    proc = subprocess.Popen(_command(run), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env=_env(), start_new_session=True)
    try:
        deadline = time.monotonic() + 120
        while not (run / "round-001" / "selfplay-001").exists():
            assert time.monotonic() < deadline and proc.poll() is None, proc.stderr
            time.sleep(0.05)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate(timeout=60)
    (entry,) = json.loads((run / "state.json").read_text())["rounds"]
    assert not entry["done"], entry
    return run


@pytest.fixture
def resumed(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
            ) -> Callable[[Path], subprocess.CompletedProcess[str]]:
    """The run resumed through mjbot's main() in this process (tests/in_process.py): it is
    sent no signal, and a child paid Python's start and torch's import for one refusal."""
    monkeypatch.setenv("PYTHONPATH", str(ROOT))  # for the phases, were any to run
    return lambda run: mjbot_here(capsys, *_command(run)[3:])


def _replaced(weights: Path) -> None:
    shutil.copyfile(OTHER, weights)


def _damaged(weights: Path) -> None:
    weights.write_bytes(weights.read_bytes()[:1000])


@pytest.mark.parametrize("change", [_replaced, _damaged])
def test_a_resumed_run_refuses_current_weights_that_are_not_on_record(
        stopped_run: Path, tmp_path: Path, change: Callable[[Path], None],
        resumed: Callable[[Path], subprocess.CompletedProcess[str]]) -> None:
    run = tmp_path / "run"
    shutil.copytree(stopped_run, run)
    change(run / "gen-000.npz")
    state = (run / "state.json").read_bytes()
    r = resumed(run)
    assert r.returncode == 2, r.stderr
    assert "Traceback" not in r.stderr
    (line,) = r.stderr.strip().splitlines()
    assert f"{run / 'gen-000.npz'}: not the run's current weights" in line, line
    assert (run / "state.json").read_bytes() == state  # no phase ran, nothing recorded



def test_a_run_resumed_after_training_refuses_trained_weights_not_on_record(
        stopped_run: Path, tmp_path: Path,
        resumed: Callable[[Path], subprocess.CompletedProcess[str]]) -> None:
    """Round 1 trained (gen-001.npz and its SHA-256 on record), its selection to do; the file
    replaced since. Before, the selection played whatever lay there, and a replaced file that
    won became the run's current weights (every later resume refused as not on record)."""
    from replay.dataset.shards import sha256

    run = tmp_path / "run"
    shutil.copytree(stopped_run, run)
    trained = run / "round-001" / "gen-001.npz"
    shutil.copyfile(GOLDEN, trained)
    state = json.loads((run / "state.json").read_text())
    (entry,) = state["rounds"]
    entry["phases"] = {
        "selfplay": {"data": "round-001/selfplay-001", "seed": 8},
        "train": {"weights": "round-001/gen-001.npz", "sha256": sha256(trained),
                  "bytes": trained.stat().st_size}}
    (run / "state.json").write_text(json.dumps(state, indent=2) + "\n")
    _replaced(trained)
    before = (run / "state.json").read_bytes()
    r = resumed(run)
    assert r.returncode == 2, r.stdout + r.stderr
    assert "Traceback" not in r.stderr
    (line,) = r.stderr.strip().splitlines()
    assert f"{trained}: not the weights round 1's training wrote" in line, line
    assert not (run / "round-001" / "selection.json").exists()  # no selection played
    assert json.loads(before)["current"] == json.loads(
        (run / "state.json").read_text())["current"] == "gen-000.npz"
