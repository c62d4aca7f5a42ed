"""The NTPU and mjai clients' connect (adapter.session.open_connection_retrying) against a
server that never answers: a listener whose accept queue is full drops our SYNs, as a
black-holed address or a firewall does. An attempt waited for the kernel (about two minutes),
so `--connect-timeout 10` was not kept; each attempt is now bounded by what is left."""

import asyncio
import socket
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from adapter.hostport import parse_host_port
from adapter.session import open_connection_retrying
from tests.in_process import mjbot_here
from tests.line_faults import silent_server

ROOT = Path(__file__).resolve().parent.parent


def parse_server(text: str) -> tuple[str, int]:
    return parse_host_port(text, "--server")


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


@pytest.mark.parametrize(("text", "address"), [
    ("[::1]:2000", ("::1", 2000)), ("::1:2000", ("::1", 2000)),
    ("127.0.0.1:2000", ("127.0.0.1", 2000)), ("tournament.example.org:2000",
                                              ("tournament.example.org", 2000)),
])
def test_a_server_address_is_read_as_written(text: str, address: tuple[str, int]) -> None:
    """An IPv6 address is written in brackets before its port (`[::1]:2000`, as `--status`
    and the mjai-tcp seat take it); the brackets were kept in the host name, so every
    `--server` of one failed to connect with "Name or service not known"."""
    assert parse_server(text) == address


@pytest.mark.parametrize("text", ["[]:2000", "[::1]", "[::1:2000", "::1]:2000"])
def test_a_broken_bracketed_address_is_refused(text: str) -> None:
    with pytest.raises(ValueError, match="--server needs HOST:PORT"):
        parse_server(text)


@pytest.mark.parametrize(("text", "port"), [("host:99999", 99999), ("[::1]:0", 0)])
def test_a_port_out_of_range_is_named(text: str, port: int) -> None:
    """A port past 65535 (or 0) said only "needs host:port", which it has."""
    with pytest.raises(ValueError, match=f"port {port} is out of range \\(1..65535\\)"):
        parse_server(text)


def test_a_port_of_thousands_of_digits_is_out_of_range_not_pythons_limit() -> None:
    """A port of 5000 digits said Python's own "Exceeds the limit (4300 digits) for integer
    string conversion ... use sys.set_int_max_str_digits()" (read as a number first; no more
    than 5 digits were taken before ports out of range were named): it is out of range. Zeros
    before a port's digits are no digits of it."""
    with pytest.raises(ValueError, match=r"port 9{5000} is out of range \(1..65535\)"):
        parse_server("host:" + "9" * 5000)
    assert parse_server("host:" + "0" * 5000 + "80") == ("host", 80)


def test_the_ntpu_client_plays_a_server_at_a_bracketed_ipv6_address(
        capsys: pytest.CaptureFixture[str]) -> None:
    try:
        listener = socket.create_server(("::1", 0), family=socket.AF_INET6)
    except OSError as exc:
        pytest.skip(f"no IPv6 loopback here: {exc}")
    port = listener.getsockname()[1]
    heard: list[bytes] = []

    def serve() -> None:
        conn, _ = listener.accept()
        with conn:
            conn.sendall(b"/ready\n")
            heard.append(conn.recv(100))
            conn.sendall(b"/close\n")

    server = threading.Thread(target=serve, daemon=True)
    server.start()
    try:
        done = mjbot_here(capsys, "ntpu", "--server", f"[::1]:{port}", "--connect-timeout",
                          "5", "--no-log")
    finally:
        server.join(10)
        listener.close()
    assert done.returncode == 0, done.stderr
    assert heard == [b"/ready\n"]


async def test_tenhou_over_websocket_plays_a_server_at_a_bracketed_ipv6_address(
        tmp_path: Path) -> None:
    """`mjbot tenhou --transport ws --server [::1]:PORT` builds its ws:// URL from the parsed
    address: once the parser took the brackets off, the URL was `ws://::1:PORT` and the
    command ended in websockets' InvalidURI traceback ("hostname isn't provided"), where it
    had played. A whole game on the fake server at [::1]."""
    from adapter.fakes.tenhou_server import FakeTenhouServer
    from adapter.platforms.tenhou import TenhouSettings, run

    if not socket.has_ipv6:
        pytest.skip("no IPv6 here")
    server = FakeTenhouServer(seed=1, time_limit=5, absent=10, log_dir=str(tmp_path / "s"))
    try:
        port = await server.start_ws(host="::1")
    except OSError as exc:
        await server.close()
        pytest.skip(f"no IPv6 loopback here: {exc}")
    settings = TenhouSettings(server=f"[::1]:{port}", transport="ws", write_log=False,
                              budget=1.0)
    try:
        summary = await asyncio.wait_for(run(settings), 120)
    finally:
        await server.close()
    assert summary.finished and summary.games == 1 and not summary.errors, summary
