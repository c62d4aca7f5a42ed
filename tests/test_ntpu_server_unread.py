"""The fake NTPU server drops a client that stops reading what it is sent, as a server drops a
dead connection: its writes never block, so such a client (its pipe or socket full) cannot
hold the match for ever. A real subprocess over pipes, a real socket on loopback."""

from __future__ import annotations

import socket
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import pytest

from adapter.fakes.ntpu_server import CLIENT_COMMAND, Channel, NtpuServer, run_match
from replay.log import read_log

T = TypeVar("T")
HANG = 120.0  # seconds after which a write that blocks (the defect) fails the test, not CI


def _or_fail_if_hung(run: Callable[[], T]) -> T:
    """``run()`` in a daemon thread: a regression (a blocking write) fails the test after
    HANG seconds instead of hanging the suite."""
    done: list[T] = []
    thread = threading.Thread(target=lambda: done.append(run()), daemon=True)
    thread.start()
    thread.join(HANG)
    if not done:
        pytest.fail(f"still writing to a client that reads nothing after {HANG:.0f} s")
    return done[0]

# A client program: ``--policy unread`` answers the first /ready, then reads nothing more; its
# input pipe is full at once (it fills the pipe itself, through a second write end opened on
# /proc, as the match's lines would after some hands). It exits once the server has closed
# its output (poll's POLLERR). Any other policy runs our client.
UNREAD_OR_CLIENT = r"""
import os, select, sys
argv = sys.argv[1:]
if argv[argv.index("--policy") + 1] != "unread":
    os.execv(argv[0], argv)
sys.stdin.buffer.readline()
os.write(1, b"/ready\n")
pipe = os.open("/proc/self/fd/0", os.O_WRONLY | os.O_NONBLOCK)
try:
    while True:
        os.write(pipe, b"x" * 4096)
except BlockingIOError:
    pass
os.close(pipe)
poller = select.poll()
poller.register(1, 0)  # POLLERR: the reader of our output went away
poller.poll()
"""


def test_a_client_that_stops_reading_its_pipe_is_dropped_and_the_match_goes_on(
        tmp_path: Path) -> None:
    """Client 1 stops reading its stdin: the server's blocking write to its full pipe held
    the whole match for ever. It is dropped after the time limit and its seat is played
    safely; the other three play every hand cleanly."""
    command = (sys.executable, "-c", UNREAD_OR_CLIENT, *CLIENT_COMMAND)
    result = _or_fail_if_hung(lambda: run_match(
        2, ["unread", "greedy", "greedy", "greedy"], seed=5, transport="stdio", time_limit=1.0,
        client_args=["--no-log"], log_dir=str(tmp_path), command=command))
    unread, *good = result.stats
    assert unread.dropped
    assert "left its input unread for 1.0 s: dropped" in unread.problems
    assert all(s.hands == 2 for s in result.stats)
    for stats in good:
        assert (stats.illegal, stats.timeouts, stats.dropped) == (0, 0, False), stats.problems
    assert sum(s.points for s in result.stats) == 0
    assert result.exit_codes == [0, 0, 0, 0]  # the dropped client saw its output closed
    assert result.log_path is not None and read_log(result.log_path).complete


def test_a_client_that_stops_reading_its_socket_is_dropped() -> None:
    """Over TCP: a client that never reads fills the server's socket (sendall then blocked for
    ever); the send that cannot go out within the time limit drops the client, and every
    later send to it returns at once."""
    with socket.create_server(("127.0.0.1", 0)) as listener:
        client = socket.create_connection(listener.getsockname())
        conn, _ = listener.accept()
    client.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    server = NtpuServer([Channel.for_socket("c1", conn)], ["c1"], time_limit=0.2)
    line = "/throw 1 " + "1" * 1000  # the size of the lines is all that matters here
    with client, conn:
        def fill() -> int:
            sent = 0
            while not server.stats[0].dropped and sent < 100_000:
                server.send(0, line)
                sent += 1
            return sent

        assert _or_fail_if_hung(fill) < 100_000, "the socket never filled"
        assert server.stats[0].problems == ["left its input unread for 0.2 s: dropped"]
        assert server.channels[0].dead
        server.send(0, line)  # a dropped client is not written to
        assert server.request(0, "throw") is None
    assert server.stats[0].timeouts == 0  # its ask found it gone, not silent
