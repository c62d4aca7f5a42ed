"""The status server through aiohttp's test client: /health, /metrics (parsed by
prometheus_client's own parser), the dashboard and its JSON, the token (missing, wrong,
right; required off loopback), and no secret in any response."""

from __future__ import annotations

import asyncio
import http.client
import re
import time
import urllib.parse
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from aiohttp import web
from aiohttp.test_utils import TestClient, TestServer
from prometheus_client.parser import text_string_to_metric_families

from adapter.hostport import parse_host_port
from adapter.serve.config import ConfigError, loads
from adapter.serve.runners import Outcome, RunContext
from adapter.serve.status import (
    StatusServer,
    TokenRequired,
    check_token,
    is_loopback,
)
from adapter.serve.supervisor import Supervisor
from tests.serve_helpers import ROOMY, ServeProcess, stop_process

TENHOU_ID = "ID5eC12e7A-s3cr3tXY"
CONFIG = ROOMY + f"""
[sessions.practice]
kind = "local"
[sessions.ladder]
kind = "tenhou"
enabled = false
id = "{TENHOU_ID}"
"""


async def played(spec: Any, ctx: RunContext) -> Outcome:
    """A run that reports what a practice game would, then waits for the stop."""
    for elapsed in (0.0004, 0.003, 0.2):
        ctx.probe.decision("rulebased", elapsed, "")
    ctx.probe.decision("greedy", 0.01, "rulebased answered an illegal action Pass()",
                       "illegal")
    ctx.probe.hands(5)
    ctx.probe.illegal(1)
    ctx.probe.live({"variant": "riichi", "round": "E2-0", "scores": [1, 2, 3, 4], "seat": 0,
                    "hand": "123m", "turn": 3, "wall": 50, "in_hand": True})
    ctx.probe.game_finished({"scores": [30000, 20000, 25000, 25000], "seat": 0,
                             "points": 5000, "ranks": [1, 4, 2, 3], "hands": 5, "log": None})
    await ctx.stop.event.wait()
    return Outcome("stopped")


@pytest.fixture
async def running() -> AsyncIterator[Supervisor]:
    sup = Supervisor(loads(CONFIG, environ={}), runners={"local": played, "tenhou": played},
                     log_dir="unused")
    sup.start()
    deadline = time.monotonic() + 5
    while sup.handles["practice"].games_played < 1:
        assert time.monotonic() < deadline
        await asyncio.sleep(0.01)
    yield sup
    await sup.stop(2)


async def client_for(server: StatusServer) -> TestClient[web.Request, web.Application]:
    client = TestClient(TestServer(server.app()))
    await client.start_server()
    return client


async def test_health_metrics_dashboard(running: Supervisor) -> None:
    client = await client_for(StatusServer(running, running.metrics))
    try:
        health = await client.get("/health")
        assert health.status == 200
        body = await health.json()
        assert body["status"] == "ok"
        practice = body["sessions"]["practice"]
        assert practice["state"] == "running" and practice["games"] == 1
        assert practice["last_game"]["scores"] == [30000, 20000, 25000, 25000]
        assert body["sessions"]["ladder"]["state"] == "disabled"

        metrics = await client.get("/metrics")
        assert metrics.headers["Content-Type"].startswith("text/plain; version=0.0.4")
        families = {f.name: f for f in text_string_to_metric_families(await metrics.text())}
        for name in ("mjbot_games", "mjbot_hands", "mjbot_decisions", "mjbot_decision_seconds",
                     "mjbot_fallbacks", "mjbot_illegal_actions", "mjbot_reconnects",
                     "mjbot_restarts", "mjbot_failures", "mjbot_uptime_seconds"):
            assert name in families, name
        samples = {(s.name, tuple(sorted(s.labels.items()))): s.value
                   for f in families.values() for s in f.samples}
        assert samples[("mjbot_games_total", (("kind", "local"), ("session", "practice")))] == 1
        assert samples[("mjbot_hands_total", (("kind", "local"), ("session", "practice")))] == 5
        assert samples[("mjbot_illegal_actions_total", (("session", "practice"),))] == 2
        assert samples[("mjbot_fallbacks_total", (("policy", "greedy"),
                                                  ("session", "practice")))] == 1
        buckets = [(s.labels["le"], s.value) for s in families["mjbot_decision_seconds"].samples
                   if s.name.endswith("_bucket") and s.labels["policy"] == "rulebased"]
        values = [v for _, v in buckets]
        assert values == sorted(values) and buckets[-1] == ("+Inf", 3)
        assert dict(buckets)["0.001"] == 1 and dict(buckets)["0.005"] == 2
        assert families["mjbot_decision_seconds"].type == "histogram"

        page = await client.get("/")
        assert page.status == 200 and "Points over time" in await page.text()
        assert page.headers["X-Content-Type-Options"] == "nosniff"
        assert "script-src 'self'" in page.headers["Content-Security-Policy"]
        status = await (await client.get("/api/status")).json()
        assert status["sessions"]["practice"]["current"]["round"] == "E2-0"
        assert status["sessions"]["practice"]["points"][-1][1] == 5000
        assert status["results"][0]["ranks"] == [1, 4, 2, 3]
        script = await client.get("/static/dashboard.js")
        assert script.status == 200 and "drawChart" in await script.text()
        for bad in ("/static/../status.py", "/static/%2e%2e/status.py", "/nothing"):
            assert (await client.get(bad)).status in (403, 404), bad
    finally:
        await client.close()


async def test_no_secret_in_any_response(running: Supervisor) -> None:
    client = await client_for(StatusServer(running, running.metrics))
    try:
        for path in ("/health", "/metrics", "/api/status", "/", "/games", "/api/games"):
            text = await (await client.get(path)).text()
            assert TENHOU_ID not in text and "s3cr3t" not in text, path
        status = await (await client.get("/api/status")).json()
        assert status["sessions"]["ladder"]["config"]["login"] == "ID (hidden)"
    finally:
        await client.close()


async def test_the_token_is_required_and_checked(running: Supervisor) -> None:
    client = await client_for(StatusServer(running, running.metrics, token="tok-123"))
    try:
        for headers, query, expected in (
                ({}, "", 401),
                ({"Authorization": "Bearer wrong"}, "", 401),
                ({"Authorization": "Bearer tok-1234"}, "", 401),
                ({}, "?token=tok-12", 401),
                ({"Authorization": "Basic tok-123"}, "", 401),
                ({"Authorization": "Bearer tok-123"}, "", 200),
                ({}, "?token=tok-123", 200)):
            for path in ("/health", "/metrics", "/games", "/api/status", "/"):
                response = await client.get(path + query, headers=headers)
                assert response.status == expected, (path, headers, query)
                if expected == 401:
                    assert "tok-123" not in await response.text()
    finally:
        await client.close()


async def test_token_mode_serves_static_files_and_logs_in_with_a_cookie(
        running: Supervisor) -> None:
    """The pages' style and scripts load without a token; ``?token=`` on a page sets an
    HttpOnly SameSite=Lax cookie (not the token itself) and redirects to the URL without
    the token; the cookie then authorizes the data calls; the scheme is case-insensitive."""
    server = StatusServer(running, running.metrics, token="tok-123")
    client = await client_for(server)
    try:
        for path in ("/static/style.css", "/static/common.js", "/static/viewer.js"):
            response = await client.get(path)
            assert response.status == 200, path
        assert (await client.get("/static/nothing.css")).status == 404
        for scheme in ("bearer", "BEARER", "Bearer"):
            headers = {"Authorization": f"{scheme} tok-123"}
            assert (await client.get("/health", headers=headers)).status == 200, scheme
        assert (await client.get("/api/status")).status == 401  # no cookie yet

        login = await client.get("/games?sort=new&token=tok-123", allow_redirects=False)
        client.session.cookie_jar.clear()  # the jar took it: each check starts without
        assert login.status == 303 and login.headers["Location"] == "/games?sort=new"
        cookie = login.headers["Set-Cookie"]
        assert "HttpOnly" in cookie and "SameSite=Lax" in cookie and "Path=/" in cookie
        assert "tok-123" not in cookie and "tok-123" not in login.headers["Location"]
        game = await client.get("/games/0~x?token=tok-123", allow_redirects=False)
        client.session.cookie_jar.clear()
        assert game.status == 303 and game.headers["Location"] == "/games/0~x"
        wrong = await client.get("/games?token=tok-12", allow_redirects=False)
        assert wrong.status == 401 and "Set-Cookie" not in wrong.headers

        client.session.cookie_jar.update_cookies(login.cookies)
        for path in ("/api/status", "/api/games", "/games", "/", "/health"):
            assert (await client.get(path)).status == 200, path
        # the data calls keep ?token= as it is (monitoring), without a redirect
        client.session.cookie_jar.clear()
        health = await client.get("/health?token=tok-123", allow_redirects=False)
        assert health.status == 200
        client.session.cookie_jar.update_cookies({"mjbot_status": "0" * 64})
        assert (await client.get("/api/status")).status == 401
    finally:
        await client.close()


def test_a_blank_token_or_a_bad_host_is_refused_at_start() -> None:
    for blank in (" ", "\t \n", " Zq9secret", "Zq9secret\n"):
        with pytest.raises(TokenRequired, match="whitespace"):
            check_token("127.0.0.1", blank)
        with pytest.raises(ConfigError) as caught:
            loads("[status]\nport = 1\n", "s.toml", environ={"MJBOT_STATUS_TOKEN": blank})
        assert "MJBOT_STATUS_TOKEN" in str(caught.value) and "line 1" in str(caught.value)
        assert "Zq9" not in str(caught.value)
    for bad in ("no such host", "999.1.1.1", "10.0.0", "-x.org", "a..b", "host:name", ""):
        with pytest.raises(ValueError, match="not an IP address or host name") as refused:
            check_token(bad, "")
        assert not isinstance(refused.value, TokenRequired), bad
    for good in ("localhost", "::1", "0.0.0.0", "example.org", "my-box"):
        check_token(good, "a-token")


def test_addresses_and_when_a_token_is_needed() -> None:
    assert parse_host_port("127.0.0.1:0", "--status", any_port=True) == ("127.0.0.1", 0)
    assert parse_host_port("[::1]:8750", "--status", any_port=True) == ("::1", 8750)
    for bad in ("8750", "host:", ":80", "h:99999", "h:x", "h:\u00b2", "h:\u0663",
                "h:" + "1" * 5000):
        with pytest.raises(ValueError, match="--status needs HOST:PORT"):
            parse_host_port(bad, "--status", any_port=True)
    assert all(is_loopback(h) for h in ("127.0.0.1", "127.3.2.1", "::1", "localhost"))
    assert not any(is_loopback(h) for h in ("0.0.0.0", "::", "10.0.0.1", "example.org"))
    check_token("127.0.0.1", "")
    check_token("0.0.0.0", "a-token")
    with pytest.raises(TokenRequired):
        check_token("0.0.0.0", "")


async def test_port_zero_picks_a_free_port_and_serves(running: Supervisor) -> None:
    server = StatusServer(running, running.metrics)
    url = await server.start("127.0.0.1", 0)
    try:
        assert url.startswith("http://127.0.0.1:") and not url.endswith(":0/")
        async with aiohttp.ClientSession() as session, session.get(url + "health") as r:
            assert r.status == 200 and (await r.json())["status"] == "ok"
        with pytest.raises(TokenRequired):
            await StatusServer(running, running.metrics).start("0.0.0.0", 0)
    finally:
        await server.stop()


async def raw_request(url: str, head: bytes) -> tuple[int, bytes]:
    """``head`` (a request line and headers, sent as these bytes) to the server at ``url``
    over a loopback socket: the response's status and body."""
    address = urllib.parse.urlsplit(url)
    reader, writer = await asyncio.open_connection(address.hostname, address.port)
    try:
        writer.write(head + b"Connection: close\r\n\r\n")
        response = await reader.read()
    finally:
        writer.close()
    status_line, _, rest = response.partition(b"\r\n")
    return int(status_line.split()[1]), rest.partition(b"\r\n\r\n")[2]


async def test_credentials_that_are_no_utf8_are_refused_not_a_500(
        running: Supervisor, caplog: pytest.LogCaptureFixture) -> None:
    """A Bearer header or login cookie holding bytes that are no UTF-8 (anyone can send one,
    no token needed) is a 401 like any wrong token, not a 500 with a traceback in the log."""
    server = StatusServer(running, running.metrics, token="tok-123")
    url = await server.start("127.0.0.1", 0)
    try:
        for header in (b"Authorization: Bearer tok-\xff\xfe", b"Authorization: Bearer \xed\xa0\x80",
                       b"Cookie: mjbot_status=\xff" + b"0" * 63, b"Cookie: mjbot_status=\xc3("):
            for path in (b"/health", b"/", b"/api/games"):
                status, body = await raw_request(
                    url, b"GET " + path + b" HTTP/1.1\r\nHost: x\r\n" + header + b"\r\n")
                assert status == 401 and b"a valid token is required" in body, (path, header)
        good = b"GET /health HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer tok-123\r\n"
        assert (await raw_request(url, good))[0] == 200
        assert "Error handling request" not in caplog.text
    finally:
        await server.stop()


async def test_without_a_token_only_loopback_names_are_answered(running: Supervisor) -> None:
    """DNS rebinding: a page on another site points its own name at 127.0.0.1 and reads a
    tokenless loopback server as same-origin (the dashboard, every game log). Its requests
    still say ``Host: that.name``, which is refused; loopback names are served; with a token
    the token decides and the Host does not matter."""
    server = StatusServer(running, running.metrics, roots=["unused"])
    url = await server.start("127.0.0.1", 0)
    port = urllib.parse.urlsplit(url).port
    try:
        for host in (f"rebind.example:{port}", "rebind.example", f"10.0.0.7:{port}",
                     f"127.0.0.1.nip.io:{port}", "[bad", "localhost.example"):
            for path in ("/", "/health", "/api/status", "/api/games", "/games",
                         "/static/common.js"):
                status, body = await raw_request(
                    url, f"GET {path} HTTP/1.1\r\nHost: {host}\r\n".encode())
                assert status == 403 and b"only requests addressed to localhost" in body, \
                    (host, path, status)
        for host in (f"127.0.0.1:{port}", f"localhost:{port}", f"[::1]:{port}", "127.0.0.1",
                     f"app.localhost:{port}"):
            status, _ = await raw_request(url, f"GET /health HTTP/1.1\r\nHost: {host}\r\n"
                                          .encode())
            assert status == 200, host
        await server.stop()
        server = StatusServer(running, running.metrics, token="tok-123")
        url = await server.start("127.0.0.1", 0)
        head = b"GET /health HTTP/1.1\r\nHost: status.example.org\r\n"
        assert (await raw_request(url, head + b"Authorization: Bearer tok-123\r\n"))[0] == 200
        assert (await raw_request(url, head))[0] == 401
    finally:
        await server.stop()


@pytest.mark.parametrize("trusted", [False, True])
def test_the_login_cookie_is_secure_where_a_trusted_tls_proxy_says_https(
        tmp_path: Path, trusted: bool) -> None:
    """Behind a TLS proxy the connection to serve is plain HTTP, so the login cookie lacked
    the Secure flag whatever the browser used. With ``trust_forwarded_proto`` the proxy's
    ``X-Forwarded-Proto`` (its last value, the proxy's own) decides; without it the header,
    which anyone can send to a server reached directly, is ignored."""
    config = tmp_path / "serve.toml"
    config.write_text(f"[status]\ntrust_forwarded_proto = {str(trusted).lower()}\n")
    serve = ServeProcess(config, tmp_path / "logs", env={"MJBOT_STATUS_TOKEN": "tok-123"})
    address = urllib.parse.urlsplit(serve.url)

    def secure(forwarded: str | None) -> bool:
        """Whether logging in through a proxy that forwarded this sets a Secure cookie."""
        connection = http.client.HTTPConnection(address.hostname or "", address.port,
                                                timeout=10)
        try:
            connection.request("GET", "/games?token=tok-123",
                               headers={} if forwarded is None
                               else {"X-Forwarded-Proto": forwarded})
            response = connection.getresponse()
            assert response.status == 303
            cookie = response.getheader("Set-Cookie") or ""
        finally:
            connection.close()
        assert "HttpOnly" in cookie, cookie
        return re.search(r";\s*secure\b", cookie, re.IGNORECASE) is not None

    try:
        assert not secure(None) and not secure("http") and not secure("gopher")
        assert secure("https") is trusted and secure("HTTPS") is trusted
        assert secure("http, https") is trusted and not secure("https, http")
    finally:
        stop_process(serve.proc)


def test_sighup_reloads_the_status_keys_a_request_reads_and_names_the_others(
        tmp_path: Path) -> None:
    """`[status]` was not read again by SIGHUP (the sessions and [logs] were), without a word:
    turning `trust_forwarded_proto` (or `trust_forwarded_for`) on behind a new proxy did
    nothing until a restart. A real `mjbot serve`: after the SIGHUP, a login through the
    proxy gets its Secure cookie, and the keys fixed at the start (here max_connections) are
    named in a warning as taking effect at the next restart."""
    import signal

    config = tmp_path / "serve.toml"
    config.write_text("[status]\ntrust_forwarded_proto = false\n")
    serve = ServeProcess(config, tmp_path / "logs", env={"MJBOT_STATUS_TOKEN": "tok-123"})
    address = urllib.parse.urlsplit(serve.url)

    def secure() -> bool:
        connection = http.client.HTTPConnection(address.hostname or "", address.port,
                                                timeout=10)
        try:
            connection.request("GET", "/games?token=tok-123",
                               headers={"X-Forwarded-Proto": "https"})
            cookie = connection.getresponse().getheader("Set-Cookie") or ""
        finally:
            connection.close()
        return re.search(r";\s*secure\b", cookie, re.IGNORECASE) is not None

    try:
        assert not secure()
        config.write_text("[status]\ntrust_forwarded_proto = true\ntrust_forwarded_for = true\n"
                          "max_connections = 100\nport = 9999\n")
        serve.signal(signal.SIGHUP)
        reloaded = serve.wait_for(lambda e: e.get("event") == "serve: [status] reloaded")
        assert reloaded["keys"] == ["trust_forwarded_proto", "trust_forwarded_for"]
        assert secure()
        later = serve.wait_for(lambda e: str(e.get("event")).startswith(
            "serve: [status] keys changed that take effect only at a restart"))
        assert later["keys"] == ["max_connections"]  # (the port: --status gave it)
        assert later["level"] == "warning"
    finally:
        stop_process(serve.proc)


async def test_a_restart_only_key_put_back_is_compared_with_what_the_server_runs(
        running: Supervisor) -> None:
    """SIGHUP's warning of [status] keys that wait for a restart compared the new config with
    the one loaded last, not with what the status server runs: ``port`` changed (warned: it
    waits for a restart), then put back, warned again that it changed, though the server had
    never left it. Now each reload is compared with what the server runs: the key put back
    is no warning, a key still changed is warned of again, and a live key applied counts as
    running."""
    from structlog.testing import capture_logs

    from adapter.serve.app import reload_status

    started = loads("[status]\nport = 8750\n", environ={}).status
    server = StatusServer(running, token="", trust_forwarded_proto=False)
    runs = started

    def reload(text: str) -> list[list[str]]:
        nonlocal runs
        with capture_logs() as logs:
            runs = reload_status(server, runs, loads(text, environ={}).status)
        return [e["keys"] for e in logs if e["log_level"] == "warning"]

    assert reload("[status]\nport = 9999\ntrust_forwarded_proto = true\n") == [["port"]]
    assert server.trust_forwarded_proto is True
    assert reload("[status]\nport = 9999\ntrust_forwarded_proto = true\n") == [["port"]]
    assert reload("[status]\nport = 8750\ntrust_forwarded_proto = true\n") == []
    assert runs.port == 8750 and runs.trust_forwarded_proto is True


def test_a_reload_that_the_next_start_would_refuse_is_refused(tmp_path: Path) -> None:
    """serve as the unit runs it (the config's own address): an operator sets host =
    "0.0.0.0" and sends SIGHUP. The reload was taken (status ok, no reload_error, a warning
    that the host waits for a restart), and the next start, with the same environment and no
    token, refused the file: exit 2, which the unit does not restart. Now the reload is
    refused with the line the start gives, shown in /health until a reload succeeds; a host
    that is no address at all the same."""
    import signal

    config = tmp_path / "serve.toml"
    config.write_text("[status]\nport = 0\n")
    serve = ServeProcess(config, tmp_path / "logs", status=None,
                         env={"MJBOT_STATUS_TOKEN": ""})  # none, whatever the caller's
    try:
        for host, said in (("0.0.0.0", "would be reachable from other machines: set a token"),
                           ("300.1.2.3", "'300.1.2.3' is not an IP address or host name")):
            config.write_text(f"[status]\nport = 0\nhost = '{host}'\n")
            serve.signal(signal.SIGHUP)
            refused = serve.wait_for(lambda e, h=host: str(e.get("event")).startswith(
                "serve: reload refused") and h in str(e.get("error")))
            assert said in refused["error"]
            health = serve.get("/health")
            assert health["status"] == "degraded" and said in health["reload_error"]["error"]
        config.write_text("[status]\nport = 0\nmax_connections = 99\n")
        serve.signal(signal.SIGHUP)
        serve.wait_for(lambda e: e.get("event") == "serve: config reloaded")
        health = serve.get("/health")
        assert health["reload_error"] is None and health["status"] == "ok"
    finally:
        stop_process(serve.proc)


def test_a_reload_names_a_changed_log_folder_as_waiting_for_a_restart(tmp_path: Path) -> None:
    """[serve] log_dir edited and SIGHUP sent: 'serve: config reloaded', and the games went on
    into the old folder without a word (a changed [status] key is named); now a warning says
    it takes effect at the next restart. With --log-dir given (as the unit gives it) the
    config's folder is not used at all, and nothing is said."""
    import signal

    config = tmp_path / "serve.toml"
    config.write_text(f"[serve]\nlog_dir = '{tmp_path / 'a'}'\n")
    serve = ServeProcess(config, None)
    try:
        config.write_text(f"[serve]\nlog_dir = '{tmp_path / 'b'}'\nstop_deadline = 5\n")
        serve.signal(signal.SIGHUP)
        later = serve.wait_for(lambda e: str(e.get("event")).startswith(
            "serve: [serve] log_dir changed"))
        assert later["level"] == "warning" and later["log_dir"] == str(tmp_path / "a")
        assert later["config_log_dir"] == str(tmp_path / "b")
        assert (tmp_path / "a").is_dir() and not (tmp_path / "b").exists()
        # still changed at the next reload: said again, as a [status] key still changed is
        # (it was said once, and a later reload's lines read as if all of it was applied)
        config.write_text(f"[serve]\nlog_dir = '{tmp_path / 'b'}'\nstop_deadline = 6\n")
        serve.signal(signal.SIGHUP)
        serve.wait_for(lambda _: sum(e.get("event") == "serve: config reloaded"
                                     for e in serve.lines) == 2)
        time.sleep(0.3)
        assert sum(str(e.get("event")).startswith("serve: [serve] log_dir changed")
                   for e in serve.lines) == 2
    finally:
        stop_process(serve.proc)
    given = ServeProcess(config, tmp_path / "given")
    try:
        config.write_text(f"[serve]\nlog_dir = '{tmp_path / 'c'}'\n")
        given.signal(signal.SIGHUP)
        given.wait_for(lambda e: e.get("event") == "serve: config reloaded")
        time.sleep(0.5)
        assert not any("log_dir" in str(e.get("event")) for e in given.lines)
    finally:
        stop_process(given.proc)


async def test_a_reload_refused_for_want_of_a_token_says_a_restart_reads_it(
        tmp_path: Path) -> None:
    """The deploy notes' flow: the token put in the unit's EnvironmentFile, host = "0.0.0.0"
    in the config, `systemctl reload mjbot`. The running process never read that file, so
    the reload is refused, and it said only "set a token in $MJBOT_STATUS_TOKEN", which the
    operator had just done (the next start, which reads the file, takes the config). It now
    says the variable is read at the start, and a restart takes it."""
    from adapter.serve.app import _reload
    from adapter.serve.config import load

    config = tmp_path / "serve.toml"
    config.write_text("[status]\ntoken_env = 'MJBOT_TEST_NEVER_SET'\n")
    sup = Supervisor(load(str(config)), log_dir=str(tmp_path / "logs"))
    config.write_text("[status]\ntoken_env = 'MJBOT_TEST_NEVER_SET'\nhost = '0.0.0.0'\n")
    assert await _reload(sup) is None
    assert sup.reload_error is not None
    error = sup.reload_error["error"]
    assert "set a token in $MJBOT_TEST_NEVER_SET" in error
    assert "reads $MJBOT_TEST_NEVER_SET from the environment it was started with" in error
    assert "a restart takes it" in error


def test_a_renamed_token_variable_is_no_key_waiting_for_a_restart(
        running: Supervisor) -> None:
    """[status] token_env renamed, the token it reads the same (none on loopback, or the
    same value): every SIGHUP warned "token_env" waits for a restart, though the server
    runs with the token, not the variable's name, and a restart changes nothing. A token
    that differs is still named, as "token"."""
    from structlog.testing import capture_logs

    from adapter.serve.app import reload_status

    server = StatusServer(running, token="", trust_forwarded_proto=False)
    for environ in ({}, {"MJBOT_STATUS_TOKEN": "t0k", "TEAM_TOKEN": "t0k"}):
        started = loads("[status]\n", environ=environ).status
        renamed = loads("[status]\ntoken_env = 'TEAM_TOKEN'\n", environ=environ).status
        with capture_logs() as logs:
            reload_status(server, started, renamed)
        assert [e for e in logs if e["log_level"] == "warning"] == []
    with capture_logs() as logs:
        reload_status(server, started, loads("[status]\ntoken_env = 'TEAM_TOKEN'\n",
                                             environ={"TEAM_TOKEN": "other"}).status)
    assert [e["keys"] for e in logs if e["log_level"] == "warning"] == [["token"]]
