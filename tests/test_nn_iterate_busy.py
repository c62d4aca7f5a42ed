"""Two `mjbot nn iterate` runs on one --dir at once (a user's mistake: the command run again in
a second terminal) are refused: the second says so in one line, exit 2, and touches nothing.
Before, both played on: the second deleted the first's self-play folder under way as "a killed
phase's partial folder" and each wrote state.json over the other's."""

from __future__ import annotations

import contextlib
import errno
import json
import os
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


def _command(run: Path, hands: int = 40) -> list[str]:
    """A tiny one-round run from the golden weights (its process never imports torch before
    its training phase, which these runs never reach)."""
    return [sys.executable, "-m", "adapter.cli", "nn", "iterate", "--variant", "riichi",
            "--dir", str(run), "--rounds", "1", "--hands", str(hands), "--opponents",
            "rulebased,greedy", "--selection-seed", "41", "--selection-hands", "1",
            "--workers", "1", "--init", str(GOLDEN), "--playouts", "2", "--epochs", "1",
            "--threads", "1", "--seed", "7"]


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(ROOT)}


Here = Callable[..., subprocess.CompletedProcess[str]]


@pytest.fixture
def here(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> Here:
    """A run through mjbot's main() in this process (tests/in_process.py), for the runs that
    are refused and sent no signal: a child paid Python's start and mjbot's imports for one
    line. The first run, which holds the folder, is a process of its own as ever."""
    monkeypatch.setenv("PYTHONPATH", str(ROOT))  # for the phases, were any to run

    def run(run: Path, hands: int = 40) -> subprocess.CompletedProcess[str]:
        return mjbot_here(capsys, *_command(run, hands)[3:])
    return run


def _started(run: Path) -> subprocess.Popen[str]:
    """A one-round run at ``run`` in a session of its own."""
    return subprocess.Popen(_command(run), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env=_env(), start_new_session=True)


def _in_self_play(first: subprocess.Popen[str], run: Path) -> Path:
    """The round's self-play folder, once the run ``first`` is in its self-play phase."""
    deadline = time.monotonic() + 120
    data = run / "round-001" / "selfplay-001"
    while not data.exists():
        assert time.monotonic() < deadline and first.poll() is None, first.stderr
        time.sleep(0.05)
    return data


def test_a_second_run_on_the_same_dir_is_refused_while_the_first_works(tmp_path: Path,
                                                                        here: Here) -> None:
    need_torch()  # nn iterate refuses to start without torch
    run = tmp_path / "run"
    first = _started(run)
    try:
        data = _in_self_play(first, run)
        state_before = (run / "state.json").read_bytes()
        second = here(run)
        assert second.returncode == 2, second.stderr
        assert "Traceback" not in second.stderr
        (line,) = second.stderr.strip().splitlines()
        assert "another nn iterate run is working in this folder" in line, line
        assert str(run) in line
        assert data.exists()  # the first's data under way was left alone
        assert (run / "state.json").read_bytes() == state_before
        assert first.poll() is None  # and the first works on
        os.kill(first.pid, signal.SIGTERM)
        _, stderr = first.communicate(timeout=120)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(first.pid, signal.SIGKILL)
        first.communicate(timeout=60)
    assert first.returncode == 128 + signal.SIGTERM, stderr
    # the folder is free again once the first has ended: a third run gets past the lock
    # (refused here for its own reason, a different --hands, which is checked after it)
    third = here(run, hands=41)
    assert third.returncode == 2, third.stderr
    assert "--hands 41 differs from 40" in third.stderr, third.stderr
    assert json.loads((run / "state.json").read_text())["variant"] == "riichi"


@pytest.mark.skipif(sys.platform == "win32", reason="flock: the POSIX lock")
def test_a_folder_whose_filesystem_takes_no_lock_is_not_taken_for_a_busy_one(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An NFS mount without its lock service answers flock with ENOLCK (no process holds
    anything): the run goes on, told it is unguarded. Before, every run on such a --dir was
    refused as 'another nn iterate run is working in this folder'. A lock another holder
    has (a second open file, as a second process's) is still refused."""
    import fcntl

    from replay.learning.nn.iterate import StateError, holding_run

    run = tmp_path / "run"
    with holding_run(run) as lock:
        assert lock.unheld is None
        with pytest.raises(StateError, match="another nn iterate run is working"), \
                holding_run(run):
            pass

    def no_locks(fd: int, operation: int) -> None:
        raise OSError(errno.ENOLCK, os.strerror(errno.ENOLCK))

    monkeypatch.setattr(fcntl, "flock", no_locks)
    with holding_run(run) as lock:
        assert lock.unheld == os.strerror(errno.ENOLCK)


def _children(pid: int) -> list[int]:
    """The processes ``pid`` started (Linux's /proc)."""
    out = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        out += [int(p) for p in (task / "children").read_text().split()]
    return out


@pytest.mark.skipif(not Path("/proc/self/task").exists(), reason="reads /proc's children")
def test_a_killed_runs_phase_still_writing_keeps_the_folder_held(tmp_path: Path,
                                                                 here: Here) -> None:
    """A run killed outright (SIGKILL, the OOM killer) leaves its self-play phase to finish
    the wall set under way (SIGTERM from die_with_parent), writing in the round's folder.
    Before, the lock went with the run alone: a resume at once deleted that folder as a
    killed phase's and started its own self-play there, the old phase writing into it. The
    phase (held stopped here, as one still busy) now holds the lock too."""
    need_torch()  # nn iterate refuses to start without torch
    run = tmp_path / "run"
    first = _started(run)
    try:
        data = _in_self_play(first, run)
        (phase,) = _children(first.pid)
        os.kill(phase, signal.SIGSTOP)  # busy with its last wall set, however long it takes
        os.kill(first.pid, signal.SIGKILL)
        first.communicate(timeout=60)
        marker = data / "kept"
        marker.write_text("the old phase's")
        again = here(run)
        assert again.returncode == 2, again.stdout + again.stderr
        (line,) = again.stderr.strip().splitlines()
        assert "another nn iterate run is working in this folder" in line, line
        assert marker.exists()  # the phase's folder left alone
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(first.pid, signal.SIGKILL)
        with contextlib.suppress(NameError, ProcessLookupError):
            os.kill(phase, signal.SIGKILL)
