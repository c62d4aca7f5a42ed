"""Two `mjbot selfplay` runs at one --out at once (a user's mistake: the command started again
in a second terminal) are refused: the second says so in one line, exit 2, and leaves the
first's folder alone; the first writes its whole dataset. Before, both passed the empty-folder
check while no shard was written yet, and each wrote its shards and manifest over the other's:
the second said it wrote a dataset that was then the first's, or the folder held one run's
manifest and the other's shards."""

from __future__ import annotations

import contextlib
import errno
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _selfplay(out: Path, hands: int, seed: int) -> list[str]:
    """One worker, one shard written at the end (so the folder is empty while it plays; a
    SIGTERM ends it after the wall set under way, with a whole dataset)."""
    return [sys.executable, "-m", "adapter.cli", "selfplay", "--variant", "riichi",
            "--policies", "rulebased,greedy,rulebased,greedy", "--hands", str(hands),
            "--seed", str(seed), "--workers", "1", "--shard-decisions", "10000000",
            "--no-progress", "--out", str(out)]


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(ROOT)}


def test_a_second_selfplay_at_the_same_out_is_refused_while_the_first_writes(
        tmp_path: Path) -> None:
    out = tmp_path / "data" / "rb1"
    first = subprocess.Popen(_selfplay(out, 2000, 1), stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True, env=_env(),
                             start_new_session=True)
    try:
        deadline = time.monotonic() + 120
        while not out.is_dir():  # the first has made its folder and plays its games
            assert time.monotonic() < deadline and first.poll() is None, first.stderr
            time.sleep(0.02)
        # nothing of a dataset yet (at most the run's record of where it stands, or that
        # record's temporary file while it is written, before its rename)
        assert {p.name for p in out.iterdir()} <= {"progress.json", "progress.json.tmp"}
        second = subprocess.run(_selfplay(out, 4, 9), capture_output=True, text=True,
                                env=_env(), timeout=300)
        assert first.poll() is None  # still playing: asked to stop after its wall set
        os.kill(first.pid, signal.SIGTERM)
        first_out, first_err = first.communicate(timeout=300)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(first.pid, signal.SIGKILL)
    assert second.returncode == 2, second.stdout + second.stderr
    assert "Traceback" not in second.stderr
    (line,) = second.stderr.strip().splitlines()
    assert f"{out}: another run is writing a dataset there" in line, line
    assert first.returncode == 128 + signal.SIGTERM, first_err
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["config"]["seed"] == 1
    assert [s["file"] for s in manifest["shards"]] == sorted(
        p.name for p in out.iterdir() if p.name not in ("manifest.json", "progress.json"))
    stats = subprocess.run([sys.executable, "-m", "adapter.cli", "dataset", "stats", str(out),
                            "--json"], capture_output=True, text=True, env=_env(),
                           timeout=300)
    assert stats.returncode == 0, stats.stderr
    assert json.loads(stats.stdout)["decisions"] == manifest["decisions"]
    assert f"in {out}" in first_out


def test_a_refused_second_run_leaves_a_later_run_free_to_use_its_own_out(
        tmp_path: Path) -> None:
    """The lock goes with the run: an --out a finished (or killed) run held is no longer
    held; its contents alone decide (this dataset, complete: nothing to play; a dataset of
    another seed there: refused)."""
    out = tmp_path / "rb1"
    done = subprocess.run(_selfplay(out, 4, 1), capture_output=True, text=True, env=_env(),
                          timeout=300)
    assert done.returncode == 0, done.stderr
    again = subprocess.run(_selfplay(out, 4, 1), capture_output=True, text=True, env=_env(),
                           timeout=300)
    assert again.returncode == 0 and "already holds this dataset, complete" in again.stdout, (
        again.stderr)
    other = subprocess.run(_selfplay(out, 4, 2), capture_output=True, text=True, env=_env(),
                           timeout=300)
    assert other.returncode == 2 and "--seed 2 differs from 1" in other.stderr, other.stderr


@pytest.mark.skipif(sys.platform == "win32", reason="flock: the POSIX lock")
def test_an_out_whose_filesystem_takes_no_lock_is_not_taken_for_a_busy_one(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """flock answering ENOLCK (an NFS mount without its lock service; no process holds
    anything) lets the run write, told it is unguarded; before, it was refused as 'another
    run is writing a dataset there'. A lock another open file holds is still refused."""
    import fcntl

    from adapter.commands import UserInputError
    from adapter.commands.selfplay import holding_out

    out = tmp_path / "rb1"
    with holding_out(out, "selfplay"), pytest.raises(
            UserInputError, match="another run is writing a dataset there"), \
            holding_out(out, "selfplay"):
        pass
    assert capsys.readouterr().err == ""

    def no_locks(fd: int, operation: int) -> None:
        raise OSError(errno.ENOLCK, os.strerror(errno.ENOLCK))

    monkeypatch.setattr(fcntl, "flock", no_locks)
    with holding_out(out, "selfplay"):
        pass
    assert f"{out}: no lock taken" in capsys.readouterr().err
