"""What an mjai user meets, walking the README (walk 12): the mjai.app upload, `mjbot mjai`
on stdin and over TCP, mjai bots as outside seats of `mjbot arena`."""

from __future__ import annotations

import socket

import pytest

from tests.in_process import mjbot_here


def test_a_listening_seat_whose_port_is_taken_ends_the_run_in_one_line(
        capsys: pytest.CaptureFixture[str]) -> None:
    """A port another program holds (an arena left running, an mjai server): the seat was
    counted crashed in every game and the arena played them all, printing a table of a bot
    that never sat, with a warning a game and a fallback share of 100%. Now the run ends
    before its table in one line naming the address and why, as where no bot came."""
    holder = socket.socket()
    holder.bind(("127.0.0.1", 0))
    holder.listen(1)
    port = holder.getsockname()[1]
    try:
        run = mjbot_here(capsys, "arena", "--policies",
                         f"mjai-tcp:127.0.0.1:{port},rulebased,rulebased,rulebased",
                         "--hands", "4", "--no-log", "--connect-wait", "1")
    finally:
        holder.close()
    assert run.returncode == 1, run
    assert run.stdout == ""
    assert run.stderr.splitlines() == [
        f"mjbot arena: cannot listen on 127.0.0.1:{port} for an mjai client: "
        "Address already in use"], run.stderr
