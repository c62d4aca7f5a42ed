"""Ctrl-C while mjbot asks git which build it is (replay/version.py: at the start of a command
that writes game logs, and for ``mjbot --version``, from a checkout) printed a traceback
through subprocess and selectors; it is one line and the usual exit of an interrupted
command (130), as a Ctrl-C anywhere else in the run. The git here is a real program on PATH
that does not answer, so that the signal comes while it is asked."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
GUARD = 60.0  # real seconds a test waits for the run to reach git (never a bound it tests)

pytestmark = pytest.mark.skipif(not (ROOT / "pyproject.toml").exists(),
                                reason="an installed tree asks git nothing")


def _interrupted_while_git_runs(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """``mjbot ARGS`` sent SIGINT once its git has started (and hangs). It starts with SIGINT
    live, as from a terminal: a suite run as a background job (a script's `make test &`)
    ignores SIGINT, which mjbot would inherit and rightly keep ignoring (its git then timed
    out and the command ran on, its stderr empty)."""
    started = tmp_path / "git-started"
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    git = bin_dir / "git"
    git.write_text(f"#!/bin/sh\ntouch '{started}'\nexec sleep {GUARD:g}\n")
    git.chmod(0o755)
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PATH": f"{bin_dir}:{os.environ['PATH']}"}
    proc = subprocess.Popen([sys.executable, "-m", "adapter.cli", *args], cwd=tmp_path,
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        give_up = time.monotonic() + GUARD
        while not started.exists():
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < give_up, "git was never asked"
            time.sleep(0.02)
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=GUARD)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)


def test_ctrl_c_while_a_logging_command_reads_its_build_is_one_line(tmp_path: Path) -> None:
    run = _interrupted_while_git_runs(
        tmp_path, "arena", "--policies", "rulebased,rulebased,rulebased,rulebased",
        "--hands", "1", "--log-dir", str(tmp_path / "logs"), "--no-progress")
    assert "Traceback" not in run.stderr, run.stderr
    assert run.stderr.splitlines() == ["mjbot arena: interrupted"], run.stderr
    assert run.returncode == 130 and run.stdout == ""


def test_ctrl_c_while_version_asks_git_is_one_line(tmp_path: Path) -> None:
    run = _interrupted_while_git_runs(tmp_path, "--version")
    assert run.stderr.splitlines() == ["mjbot --version: interrupted"], run.stderr
    assert run.returncode == 130 and run.stdout == ""
