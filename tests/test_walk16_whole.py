"""walk16: the merged whole as a new user meets it, one command at a time."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PY = sys.executable


def test_a_kept_running_botzone_bot_stopped_by_sigterm_says_it_plain_under_log_json(
        tmp_path: Path) -> None:
    """`mjbot --log-json botzone --keep-running`, sent SIGTERM while it waits for its next
    turn, said its stop as a JSON line ('"event": "stopped"') from the CLI's first handler,
    where `mjbot botzone` keeps its lines plain under --log-json (README, Commands) and its
    Ctrl-C says the plain 'mjbot botzone: interrupted': one stream, two formats."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen(
        [PY, "-m", "adapter.cli", "--log-json", "botzone", "--keep-running",
         "--log-dir", str(tmp_path)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        cwd=tmp_path, env=env)
    assert proc.stdin is not None and proc.stdout is not None
    try:
        proc.stdin.write("1\n0 1 1\n\n\n")  # the first turn; the pipe stays open
        proc.stdin.flush()
        answered = [proc.stdout.readline() for _ in range(4)]
        assert answered[0] == "PASS\n", answered
        assert answered[3] == ">>>BOTZONE_REQUEST_KEEP_RUNNING<<<\n", answered
        proc.send_signal(signal.SIGTERM)  # waiting for its next request
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert err.splitlines() == ["mjbot botzone: stopped (SIGTERM)"], err
    assert out == "", out  # nothing more on its answer channel
    assert proc.returncode == -signal.SIGTERM
