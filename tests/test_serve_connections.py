"""Connections that never finish a request, against `mjbot serve` as a subprocess on real
loopback sockets: they are closed after ``request_timeout``, the connection cap (and the file
descriptor limit) keep /health answering through a flood, and the log says so in a few lines,
not one (or a traceback) per socket."""

from __future__ import annotations

import asyncio
import signal
import socket
import time
import urllib.parse
from pathlib import Path
from typing import Any

import aiohttp
from aiohttp import web

from adapter.serve.connections import ConnectionGuard
from tests.serve_helpers import ROOMY, ServeProcess

# a request's start and no end, a body announced and never sent, nothing at all
HALF_OPEN = (b"GET /health HTTP/1.1\r\nHost: x\r\nX-Slow: ",
             b"POST /health HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\n\r\nab", b"")


def open_half(url: str, count: int) -> list[socket.socket]:
    address = urllib.parse.urlsplit(url)
    sockets = []
    for i in range(count):
        sock = socket.create_connection((address.hostname, address.port), 5)
        if HALF_OPEN[i % 3]:
            sock.sendall(HALF_OPEN[i % 3])
        sockets.append(sock)
    return sockets


def closed_by_server(sock: socket.socket) -> bool:
    """True once the server has closed it (EOF or reset; a 503 or 405 may come first)."""
    sock.settimeout(0.01)
    try:
        while True:
            if sock.recv(65536) == b"":
                return True
    except TimeoutError:
        return False
    except OSError:
        return True


def wait_all_closed(sockets: list[socket.socket], within: float) -> None:
    deadline = time.monotonic() + within
    open_ = list(sockets)
    while open_:
        open_ = [s for s in open_ if not closed_by_server(s)]
        assert time.monotonic() < deadline, f"{len(open_)} of {len(sockets)} still open"
        time.sleep(0.1)


def stop(serve: ServeProcess) -> str:
    serve.signal(signal.SIGTERM)
    assert serve.proc.wait(30) == 0
    serve._reader.join(10)
    return "".join(serve.raw)


def connection_lines(serve: ServeProcess) -> list[dict[str, Any]]:
    return [e for e in serve.lines if str(e.get("event", "")).startswith("status server:")]


def test_half_open_connections_time_out_and_health_answers(tmp_path: Path) -> None:
    config = tmp_path / "serve.toml"
    config.write_text(ROOMY + "[status]\nrequest_timeout = 1\nmax_connections = 500\n")
    serve = ServeProcess(config, tmp_path / "logs")
    sockets: list[socket.socket] = []
    try:
        sockets = open_half(serve.url, 60)
        assert serve.get("/health")["status"] == "ok"
        # a keep-alive connection, idle after its answer: closed as well, but not logged
        address = urllib.parse.urlsplit(serve.url)
        kept = socket.create_connection((address.hostname, address.port), 5)
        kept.sendall(b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        assert kept.recv(65536).startswith(b"HTTP/1.1 200 ")
        sockets.append(kept)
        wait_all_closed(sockets, within=20)
        assert serve.get("/health")["status"] == "ok"  # a fresh connection still answers
        log = stop(serve)
    finally:
        for sock in sockets:
            sock.close()
        serve.close()
    lines = connection_lines(serve)
    timeouts = [e for e in lines if "no complete request" in e["event"]]
    # the 40 that never sent a whole request; the 20 POSTs were answered (405), so their
    # close is a keep-alive's end, like the idle connection's
    assert 1 <= len(timeouts) <= 2 and sum(e["count"] for e in timeouts) == 40, lines
    assert all("cap" not in e["event"] for e in lines), lines
    assert "Traceback" not in log and len(log) < 8000, len(log)


def test_the_cap_and_the_descriptor_limit_keep_health_answering(tmp_path: Path) -> None:
    """100 half-open connections against a cap of 20, in a process allowed 256 files (the
    case that used to exhaust them: /health timed out, megabytes of accept tracebacks)."""
    config = tmp_path / "serve.toml"
    config.write_text(ROOMY + "[status]\nrequest_timeout = 30\nmax_connections = 20\n")
    serve = ServeProcess(config, tmp_path / "logs", open_files=256)
    sockets: list[socket.socket] = []
    try:
        sockets = open_half(serve.url, 100)
        assert serve.get("/health")["status"] == "ok"
        # the cap closed the oldest idle ones to make room: all but the last 20 at most
        deadline = time.monotonic() + 20
        while sum(not closed_by_server(s) for s in sockets) > 20:
            assert time.monotonic() < deadline
            time.sleep(0.1)
        assert serve.get("/api/status")["sessions"] == {}
        log = stop(serve)
    finally:
        for sock in sockets:
            sock.close()
        serve.close()
    lines = connection_lines(serve)
    evicted = [e for e in lines if "closed the oldest idle" in e["event"]]
    assert 1 <= len(evicted) <= 2 and sum(e["count"] for e in evicted) >= 80, lines
    assert not [e for e in lines if "accept failed" in e["event"]], lines
    assert "Traceback" not in log and len(log) < 8000, len(log)


# requests aiohttp's parser refuses: a header line over 8190 bytes, 20,000 headers, a URL over
# 8190 bytes, chunked framing that is none; each with the token, which the log must not quote
MALFORMED = (b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Long: TOKEN" + b"a" * 20000
             + b"\r\n\r\n",
             b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n"
             + b"".join(b"X%d: a\r\n" % i for i in range(20000)) + b"\r\n",
             b"GET /TOKEN" + b"a" * 20000 + b" HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n",
             b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n\r\n"
             b"TOKEN\r\n")


def test_requests_the_parser_refuses_are_counted_not_logged_with_tracebacks(
        tmp_path: Path) -> None:
    """A request aiohttp cannot parse is a 400, and was logged with its traceback and the
    first 100 bytes of the offending line: some 1 KB of plain (not JSON) lines in the log
    per request, from anyone who reached the port, no token needed. Now they are counted
    once a minute, like the other connection conditions, naming only the kind."""
    config = tmp_path / "serve.toml"
    config.write_text(ROOMY)
    token = "s3cret-" + "t" * 20
    serve = ServeProcess(config, tmp_path / "logs", env={"MJBOT_STATUS_TOKEN": token})
    address = urllib.parse.urlsplit(serve.url)
    try:
        statuses = []
        for head in MALFORMED * 5:
            with socket.create_connection((address.hostname, address.port), 5) as sock:
                sock.sendall(head.replace(b"TOKEN", token.encode()))
                statuses.append(sock.recv(65536).split(b"\r\n")[0])
        assert set(statuses) == {b"HTTP/1.0 400 Bad Request"}, statuses
        with socket.create_connection((address.hostname, address.port), 5) as sock:
            sock.sendall(b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                         b"Authorization: Bearer " + token.encode() + b"\r\n\r\n")
            assert sock.recv(65536).startswith(b"HTTP/1.1 200 ")
        log = stop(serve)
    finally:
        serve.close()
    lines = [e for e in connection_lines(serve) if "could not parse" in e["event"]]
    assert 1 <= len(lines) <= 2 and sum(e["count"] for e in lines) == 20, lines
    assert "Traceback" not in log and "aaaaaaaa" not in log and token not in log
    assert len(log) < 8000, len(log)


def test_the_descriptor_limit_lowers_the_cap(tmp_path: Path) -> None:
    config = tmp_path / "serve.toml"
    config.write_text(ROOMY + "[status]\nrequest_timeout = 30\nmax_connections = 1000\n")
    serve = ServeProcess(config, tmp_path / "logs", open_files=128)
    sockets: list[socket.socket] = []
    try:
        lowered = serve.wait_for(lambda e: "connection cap lowered" in str(e.get("event")))
        assert lowered["cap"] == 32 and lowered["configured"] == 1000
        sockets = open_half(serve.url, 60)
        assert serve.get("/health")["status"] == "ok"
        log = stop(serve)
    finally:
        for sock in sockets:
            sock.close()
        serve.close()
    assert not [e for e in connection_lines(serve) if "accept failed" in e["event"]]
    assert "Traceback" not in log


async def test_at_the_cap_with_every_connection_busy_a_new_one_gets_a_503() -> None:
    """The guard on an aiohttp app whose handler waits: two requests in a handler fill a cap
    of 2, so a third connection is answered 503 (and logged once), and the two finish."""
    guard = ConnectionGuard(max_connections=2, request_timeout=30)
    release, entered = asyncio.Event(), []

    @web.middleware
    async def track(request: web.Request, handler: Any) -> web.StreamResponse:
        guard.busy(request.protocol)  # as the status server's middleware does
        try:
            return await handler(request)
        finally:
            guard.done(request.protocol)

    async def slow(request: web.Request) -> web.StreamResponse:
        entered.append(1)
        await release.wait()
        return web.Response(text="done")

    app = web.Application(middlewares=[track])
    app.router.add_get("/slow", slow)
    runner = web.AppRunner(app)
    await runner.setup()
    assert runner.server is not None
    guard.install(runner.server)
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    url = f"http://127.0.0.1:{runner.addresses[0][1]}/slow"
    try:
        async with aiohttp.ClientSession() as session:
            async def get() -> str:
                async with session.get(url) as r:
                    return await r.text()

            waiting = [asyncio.create_task(get()) for _ in range(2)]
            for _ in range(500):
                if len(entered) == 2:
                    break
                await asyncio.sleep(0.01)
            assert len(entered) == 2
            reader, writer = await asyncio.open_connection("127.0.0.1", runner.addresses[0][1])
            writer.write(b"GET /slow HTTP/1.1\r\nHost: x\r\n\r\n")
            answer = await asyncio.wait_for(reader.read(), 10)
            writer.close()
            assert answer.startswith(b"HTTP/1.1 503 ") and b"too many connections" in answer
            assert guard.tally.totals == {"refused": 1}
            release.set()
            assert await asyncio.gather(*waiting) == ["done", "done"]
    finally:
        await guard.close()
        await runner.cleanup()
