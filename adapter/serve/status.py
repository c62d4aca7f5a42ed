"""The status server (aiohttp): ``/health`` (JSON), ``/metrics`` (Prometheus text), ``/`` (the
dashboard page) and ``/api/status`` (what the dashboard draws), plus the replay viewer's routes
(viewer.py). ``mjbot view`` runs the same server with the viewer only.

It listens on loopback unless told otherwise; any other address needs a token, which every
request then carries (``Authorization: Bearer TOKEN`` or ``?token=TOKEN``, compared in constant
time). A token set for a loopback server is required as well. Responses hold no secret: the
sessions' public config only (no Tenhou ID), errors already scrubbed by the supervisor.
"""

from __future__ import annotations

import hmac
import ipaddress
from pathlib import Path
from typing import Any

from aiohttp import web

from adapter.serve.metrics import Metrics
from adapter.serve.supervisor import Supervisor

STATIC = Path(__file__).with_name("static")
PROMETHEUS_TYPE = "text/plain; version=0.0.4; charset=utf-8"
SECURITY_HEADERS = {
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Content-Security-Policy": "default-src 'self'; img-src 'self' data:; "
                               "style-src 'self'; script-src 'self'; frame-ancestors 'none'",
}


class TokenRequired(ValueError):
    """A status server on a non-loopback address without a token."""


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def check_token(host: str, token: str) -> None:
    if not token and not is_loopback(host):
        raise TokenRequired(
            f"the status server on {host} would be reachable from other machines: set a "
            "token in $MJBOT_STATUS_TOKEN (or the variable [status] token_env names), or "
            "listen on 127.0.0.1")


def parse_address(text: str) -> tuple[str, int]:
    """``HOST:PORT`` (``[::1]:PORT`` for IPv6) -> (host, port); port 0 picks a free one."""
    host, sep, port = text.rpartition(":")
    if not sep or not host or not port.isdigit() or int(port) > 65535:
        raise ValueError(f"--status needs HOST:PORT (port 0 picks a free one), got {text!r}")
    return host.strip("[]"), int(port)


def _authorized(request: web.Request, token: str) -> bool:
    given = request.query.get("token", "")
    header = request.headers.get("Authorization", "")
    if header.startswith("Bearer "):
        given = header[len("Bearer "):].strip()
    return hmac.compare_digest(given.encode(), token.encode())


class StatusServer:
    """The aiohttp application and its site. ``supervisor`` None: the viewer alone."""

    def __init__(self, supervisor: Supervisor | None = None, metrics: Metrics | None = None,
                 roots: list[str] | None = None, token: str = "",
                 imports: list[str] | None = None) -> None:
        from adapter.serve.games import GameIndex

        self.supervisor = supervisor
        self.metrics = metrics
        self.token = token
        self.index = GameIndex(roots or [], imports or [])
        self.runner: web.AppRunner | None = None
        self.url = ""

    def app(self) -> web.Application:
        from adapter.serve.viewer import add_routes

        app = web.Application(middlewares=[self._guard])
        if self.supervisor is not None:
            app.router.add_get("/", self._page("dashboard.html"))
            app.router.add_get("/health", self._health)
            app.router.add_get("/metrics", self._metrics)
            app.router.add_get("/api/status", self._status)
        else:
            app.router.add_get("/", self._to_games)
        add_routes(app, self.index)
        app.router.add_static("/static/", STATIC, follow_symlinks=False)
        return app

    @web.middleware
    async def _guard(self, request: web.Request, handler: Any) -> web.StreamResponse:
        if self.token and not _authorized(request, self.token):
            response: web.StreamResponse = web.json_response(
                {"error": "a valid token is required (Authorization: Bearer ... or ?token=)"},
                status=401, headers={"WWW-Authenticate": "Bearer"})
        else:
            try:
                response = await handler(request)
            except web.HTTPException as exc:  # 404 and the like: raised, with the headers
                exc.headers.update(SECURITY_HEADERS)
                raise
        response.headers.update(SECURITY_HEADERS)
        return response

    def _page(self, name: str) -> Any:
        async def page(request: web.Request) -> web.StreamResponse:
            return web.FileResponse(STATIC / name, headers={"Cache-Control": "no-cache"})
        return page

    async def _to_games(self, request: web.Request) -> web.StreamResponse:
        raise web.HTTPFound("/games" + (f"?{request.query_string}" if request.query_string
                                        else ""))

    async def _health(self, request: web.Request) -> web.StreamResponse:
        assert self.supervisor is not None
        return web.json_response(self.supervisor.health())

    async def _status(self, request: web.Request) -> web.StreamResponse:
        assert self.supervisor is not None
        return web.json_response(self.supervisor.status())

    async def _metrics(self, request: web.Request) -> web.StreamResponse:
        assert self.metrics is not None
        return web.Response(body=self.metrics.exposition().encode(),
                            headers={"Content-Type": PROMETHEUS_TYPE})

    async def start(self, host: str, port: int) -> str:
        """Listen; the URL (with the port picked when 0 was asked for)."""
        check_token(host, self.token)
        self.runner = web.AppRunner(self.app(), access_log=None)
        await self.runner.setup()
        site = web.TCPSite(self.runner, host, port)
        await site.start()
        bound = self.runner.addresses[0][1] if self.runner.addresses else port
        shown = f"[{host}]" if ":" in host else host
        self.url = f"http://{shown}:{bound}/"
        return self.url

    async def stop(self) -> None:
        if self.runner is not None:
            await self.runner.cleanup()
            self.runner = None
