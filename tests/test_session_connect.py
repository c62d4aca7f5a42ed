"""The NTPU and mjai clients' connect (adapter.session.open_connection_retrying) against a
server that never answers: a listener whose accept queue is full drops our SYNs, as a
black-holed address or a firewall does. An attempt waited for the kernel (about two minutes),
so `--connect-timeout 10` was not kept; each attempt is now bounded by what is left."""

import asyncio
import subprocess
import sys
from pathlib import Path

import pytest

from adapter.session import open_connection_retrying
from tests.line_faults import silent_server

ROOT = Path(__file__).resolve().parent.parent


async def test_a_connect_that_gets_no_answer_is_given_up_after_the_timeout() -> None:
    with silent_server() as port, pytest.raises(
            ConnectionError, match=f"127.0.0.1:{port}: no answer in 1 s"):
        await asyncio.wait_for(open_connection_retrying("127.0.0.1", port, 1.0), 30)


@pytest.mark.parametrize("command", [["ntpu"], ["mjai"]])
def test_the_clients_give_a_silent_server_up_in_one_line(command: list[str],
                                                         tmp_path: Path) -> None:
    """`mjbot ntpu` / `mjbot mjai --server` against a server that never answers: exit 1 with
    one line naming the address, within the connect timeout (the test's guard is 60 s)."""
    with silent_server() as port:
        done = subprocess.run(
            [sys.executable, "-m", "adapter.cli", *command, "--server", f"127.0.0.1:{port}",
             "--connect-timeout", "1", "--no-log"],
            cwd=ROOT, capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert done.returncode == 1, done.stderr
    assert "no answer in 1 s" in done.stderr and "Traceback" not in done.stderr, done.stderr
