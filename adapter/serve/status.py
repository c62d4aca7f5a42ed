"""The status server (aiohttp): ``/health`` (JSON), ``/metrics`` (Prometheus text), ``/`` (the
dashboard page) and ``/api/status`` (what the dashboard draws), plus the replay viewer's routes
(viewer.py). ``mjbot view`` runs the same server with the viewer only.

It listens on loopback unless told otherwise; any other address needs a token, which every
request then carries: ``Authorization: Bearer TOKEN`` (the scheme in any case), ``?token=TOKEN``,
or the HttpOnly, SameSite=Lax cookie that opening a page with ``?token=`` sets (that login
redirects to the same URL without the token, so it stays out of the history; the cookie holds
an HMAC of the token, not the token; Lax, not Strict, so a link to the dashboard followed
from a chat or a mail arrives logged in: every route is a read-only GET, so there is no
cross-site write to guard against). Everything is compared in constant time. The static
files (/static/...) hold nothing private and need no token, so pages load their style and
scripts; their data calls carry the cookie. The cookie is Secure where the request came over
TLS: behind a TLS proxy (nginx, caddy) the connection to us is plain HTTP, so the proxy's
``X-Forwarded-Proto`` decides, but only where the config trusts it (``trust_forwarded_proto``):
any client can send that header to a server reached directly. A token set for a loopback
server is required as well. Without a token, a request whose Host is not a loopback name is
a 403 (DNS rebinding). Responses hold no secret: the sessions' public config only (no Tenhou
ID), errors already scrubbed by the supervisor. Connections are timed out and capped
(connections.py).
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import re
import urllib.parse
from typing import Any

from aiohttp import web
from aiohttp.typedefs import Handler

from adapter.hostport import format_host_port
from adapter.serve.config import TOKEN_ENV
from adapter.serve.connections import ConnectionGuard
from adapter.serve.metrics import Metrics
from adapter.serve.supervisor import Supervisor
from adapter.serve.viewcache import serving
from adapter.serve.viewer import STATIC, VIEW_CACHE, add_routes

PROMETHEUS_TYPE = "text/plain; version=0.0.4; charset=utf-8"
SECURITY_HEADERS = {
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Content-Security-Policy": "default-src 'self'; img-src 'self' data:; "
                               "style-src 'self'; script-src 'self'; frame-ancestors 'none'",
}


COOKIE = "mjbot_status"
HOSTNAME_RE = re.compile(r"(?!-)[\w-]{1,63}(?<!-)(\.(?!-)[\w-]{1,63}(?<!-))*\.?", re.ASCII)


class TokenRequired(ValueError):
    """A status server on a non-loopback address without a token, or a token no header can
    carry."""


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def check_host(host: str) -> None:
    """ValueError unless ``host`` is an IP address or a well-formed host name (checked before
    the token, whose message would otherwise mislead about a mistyped address)."""
    bare = host.strip("[]") if host.startswith("[") else host
    try:
        ipaddress.ip_address(bare)
        return
    except ValueError:
        pass
    if (len(bare) > 253 or not HOSTNAME_RE.fullmatch(bare)
            or re.fullmatch(r"[0-9.]+", bare)):  # all digits and dots: a mistyped IPv4
        raise ValueError(f"{host!r} is not an IP address or host name to listen on")


def check_token(host: str, token: str, variable: str = TOKEN_ENV) -> None:
    """``variable``: where the token was looked for ([status] token_env), named in the error:
    a config that names its own was told to set $MJBOT_STATUS_TOKEN, which it does not read."""
    check_host(host)
    if token and token != token.strip():
        raise TokenRequired("the status token is blank or begins or ends with whitespace, "
                            "which a header cannot carry (value not shown)")
    if not token and not is_loopback(host):
        raise TokenRequired(
            f"the status server on {host} would be reachable from other machines: set a "
            f"token in ${variable} ("
            f"{'or ' if variable == TOKEN_ENV else ''}the variable [status] token_env names), "
            "or listen on 127.0.0.1")


def cookie_value(token: str) -> str:
    """What the login cookie holds: an HMAC of the token (a copied cookie does not give the
    token away, and the value is plain hex whatever the token's characters)."""
    return hmac.new(token.encode(), b"mjbot status cookie", hashlib.sha256).hexdigest()


def _same(given: str, expected: str) -> bool:
    """Constant-time equality of two texts. A header or cookie with bytes that are no UTF-8
    reaches us as lone surrogates (aiohttp decodes with surrogateescape), which a plain
    ``encode()`` refuses: that was a 500 and a logged traceback for anyone who sent one,
    without a token; ``surrogatepass`` turns them into bytes that simply do not match."""
    return hmac.compare_digest(given.encode("utf-8", "surrogatepass"),
                               expected.encode("utf-8", "surrogatepass"))


def _bearer(request: web.Request) -> str | None:
    scheme, _, value = request.headers.get("Authorization", "").strip().partition(" ")
    return value.strip() if scheme.lower() == "bearer" else None


def _authorized(request: web.Request, token: str) -> bool:
    """Any one valid credential: the Bearer header, ?token=, or the login cookie."""
    bearer = _bearer(request)
    return any((bearer is not None and _same(bearer, token),
                "token" in request.query and _same(request.query["token"], token),
                COOKIE in request.cookies and _same(request.cookies[COOKIE],
                                                    cookie_value(token))))


FOREIGN_HOST = ("this status server has no token, so it answers only requests addressed to "
                "localhost, 127.0.0.1 or [::1]; set $MJBOT_STATUS_TOKEN to reach it by another "
                "name")


def _addressed_to_loopback(request: web.Request) -> bool:
    """Whether the request's Host names loopback (a server without a token listens there
    only). A web page on another site can point its own name at 127.0.0.1 (DNS rebinding)
    and then read this server as same-origin: its requests still carry that name."""
    host = request.headers.get("Host")
    if host is None:  # HTTP/1.0 without one: no browser sends that
        return True
    try:
        name = urllib.parse.urlsplit("//" + host).hostname or ""
    except ValueError:
        return False
    return is_loopback(name) or name.endswith(".localhost")


def forwarded_scheme(request: web.Request) -> str | None:
    """The scheme the proxy next to us says the browser used: the last ``X-Forwarded-Proto``
    value (a proxy appends to what reached it, so the last one is its own), if it is http or
    https; None otherwise (no header, or one that names no scheme: the connection's own
    stands)."""
    values = request.headers.getall("X-Forwarded-Proto", [])
    last = ",".join(values).rsplit(",", 1)[-1].strip().lower() if values else ""
    return last if last in ("http", "https") else None


def client_address(request: web.Request, trust_forwarded_for: bool = False) -> str:
    """Whose share of the viewer's builds a request is (viewcache.py): the peer's address, or
    behind a proxy the config trusts (``trust_forwarded_for``) the last ``X-Forwarded-For``
    value, the address the proxy itself saw (the values before it are the client's to
    write). Every request through a proxy comes from the proxy's address: without the
    header, its users share one share."""
    if trust_forwarded_for:
        values = request.headers.getall("X-Forwarded-For", [])
        last = ",".join(values).rsplit(",", 1)[-1].strip() if values else ""
        address = forwarded_address(last)
        if address is not None:
            return address
    return request.remote or "unknown"


def forwarded_address(value: str) -> str | None:
    """The address in one ``X-Forwarded-For`` value: a bare IPv4 or IPv6 address, or one
    with the port the proxy saw (``1.2.3.4:5678``, ``[::1]:80``, as some proxies and load
    balancers write it; such a value fell back to the proxy's address, so every user behind
    it shared one share again); None for anything else."""
    host = value
    if value.startswith("["):  # [IPv6] or [IPv6]:port
        host, _, rest = value[1:].partition("]")
        if rest and not (rest.startswith(":") and rest[1:].isascii() and rest[1:].isdigit()):
            return None
    elif value.count(":") == 1:  # IPv4:port (an IPv6 address has two colons or more)
        host, _, port = value.partition(":")
        if not (port.isascii() and port.isdigit()):
            return None
    try:
        return str(ipaddress.ip_address(host))
    except ValueError:
        return None


def _route_name(request: web.Request) -> str:
    resource = request.match_info.route.resource
    return (resource.name or "") if resource is not None else ""


def _login(request: web.Request, token: str) -> web.StreamResponse:
    """A page opened with the right ?token=: set the cookie, show the same URL without it."""
    query = [(k, v) for k, v in request.query.items() if k != "token"]
    target = request.rel_url.with_query(query)
    response = web.Response(status=303, headers={"Location": str(target),
                                                 "Cache-Control": "no-store"})
    response.set_cookie(COOKIE, cookie_value(token), path="/", httponly=True,
                        samesite="Lax", secure=request.secure or None)
    return response


class StatusServer:
    """The aiohttp application and its site. ``supervisor`` None: the viewer alone."""

    def __init__(self, supervisor: Supervisor | None = None, metrics: Metrics | None = None,
                 roots: list[str] | None = None, token: str = "",
                 imports: list[str] | None = None, max_connections: int = 256,
                 request_timeout: float = 10.0, max_games: int | None = None,
                 trust_forwarded_proto: bool = False,
                 trust_forwarded_for: bool = False) -> None:
        from adapter.serve.games import MAX_FILES, GameIndex

        self.supervisor = supervisor
        self.metrics = metrics
        self.token = token
        self.trust_forwarded_proto = trust_forwarded_proto
        self.trust_forwarded_for = trust_forwarded_for
        self.index = GameIndex(roots or [], imports or [], max_games or MAX_FILES)
        self.runner: web.AppRunner | None = None
        self.guard = ConnectionGuard(max_connections, request_timeout)
        self.url = ""

    def app(self) -> web.Application:
        app = web.Application(middlewares=[self._guard])
        if self.supervisor is not None:
            app.router.add_get("/", self._page("dashboard.html"), name="page-dashboard")
            app.router.add_get("/health", self._health)
            app.router.add_get("/metrics", self._metrics)
            app.router.add_get("/api/status", self._status)
        else:
            app.router.add_get("/", self._to_games, name="page-home")
        add_routes(app, self.index)
        if self.metrics is not None:  # the viewer's counters, read from its cache when scraped
            self.metrics.add_viewer(app[VIEW_CACHE].counters)
        app.router.add_static("/static/", STATIC, follow_symlinks=False, name="static")
        return app

    @web.middleware
    async def _guard(self, request: web.Request, handler: Handler) -> web.StreamResponse:
        self.guard.busy(request.protocol)
        if self.trust_forwarded_proto and (scheme := forwarded_scheme(request)) is not None:
            request = request.clone(scheme=scheme)  # request.secure follows the proxy's word
        try:
            with serving(client_address(request, self.trust_forwarded_for)):
                response = await self._answer(request, handler)
        except web.HTTPException as exc:  # 404 and the like: raised, with the headers
            exc.headers.update(SECURITY_HEADERS)
            raise
        finally:
            self.guard.done(request.protocol)
        response.headers.update(SECURITY_HEADERS)
        return response

    async def _answer(self, request: web.Request, handler: Handler) -> web.StreamResponse:
        route = _route_name(request)
        if not self.token:
            if not _addressed_to_loopback(request):
                return web.json_response({"error": FOREIGN_HOST}, status=403)
            return await handler(request)
        if route == "static":
            return await handler(request)
        if not _authorized(request, self.token):
            return web.json_response(
                {"error": "a valid token is required (Authorization: Bearer TOKEN, or open "
                          "the page once with ?token=TOKEN)"},
                status=401, headers={"WWW-Authenticate": "Bearer"})
        if route.startswith("page-") and "token" in request.query \
                and _same(request.query["token"], self.token):
            return _login(request, self.token)
        return await handler(request)

    def _page(self, name: str) -> Any:
        async def page(request: web.Request) -> web.StreamResponse:
            return web.FileResponse(STATIC / name, headers={"Cache-Control": "no-cache"})
        return page

    async def _to_games(self, request: web.Request) -> web.StreamResponse:
        raise web.HTTPFound("/games" + (f"?{request.query_string}" if request.query_string
                                        else ""))

    async def _health(self, request: web.Request) -> web.StreamResponse:
        assert self.supervisor is not None
        return web.json_response({**self.supervisor.health(),
                                  "viewer": request.app[VIEW_CACHE].counters()})

    async def _status(self, request: web.Request) -> web.StreamResponse:
        assert self.supervisor is not None
        return web.json_response(self.supervisor.status())

    async def _metrics(self, request: web.Request) -> web.StreamResponse:
        assert self.metrics is not None
        return web.Response(body=self.metrics.render(),
                            headers={"Content-Type": PROMETHEUS_TYPE})

    async def start(self, host: str, port: int) -> str:
        """Listen; the URL (with the port picked when 0 was asked for)."""
        check_token(host, self.token)
        self.runner = web.AppRunner(self.app(), access_log=None,
                                    keepalive_timeout=2 * self.guard.request_timeout)
        await self.runner.setup()
        assert self.runner.server is not None
        self.guard.install(self.runner.server)
        site = web.TCPSite(self.runner, host, port)
        try:
            await site.start()
        except OSError:
            await self.stop()
            raise
        bound = self.runner.addresses[0][1] if self.runner.addresses else port
        self.url = f"http://{format_host_port(host, bound)}/"
        return self.url

    async def stop(self) -> None:
        await self.guard.close()
        if self.runner is not None:
            await self.runner.cleanup()
            self.runner = None
