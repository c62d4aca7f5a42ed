"""An MCR entrant studying games offline: the Botzone bot's own logs, the judge's logs and
the tools that read them (`mjbot replay`, `review`, `view`), as the README tells them."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.in_process import mjbot_here

# a one-shot turn after our own concealed kong: the judge's `3 0 GANG` names no tile, only
# our earlier answer `GANG W1` does
KONG_TURN = "\n".join([
    "5", "0 0 1", "PASS", "1 0 0 0 0 W1 W1 W1 W2 W3 B4 B5 B6 T7 T8 T9 F1 F1", "PASS",
    "2 W1", "GANG W1", "3 0 GANG", "PASS", "2 B5", "", ""]) + "\n"


def _bot_log(tmp_path: Path, turn: str) -> Path:
    """The game log a real `mjbot botzone` one-shot process writes for ``turn``."""
    done = subprocess.run([sys.executable, "-m", "adapter.cli", "botzone", "--no-keep-running",
                           "--log-dir", str(tmp_path / "logs")], input=turn,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    (log,) = (tmp_path / "logs").rglob("*.mjlog.msgpack")
    return log


def test_reparse_reads_the_botzone_bots_own_log_with_its_concealed_kong(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # --reparse said "no codec for platform 'botzone'" for every log the Botzone bot wrote,
    # and a codec not told our answers could not read our own concealed kong again
    log = _bot_log(tmp_path, KONG_TURN)
    done = mjbot_here(capsys, "replay", str(log), "--reparse")
    assert done.returncode == 0, done.stderr
    assert "reparse: 5/5 events, identical: True" in done.stdout
