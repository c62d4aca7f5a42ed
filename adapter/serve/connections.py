"""Bounds on the status server's connections, which aiohttp leaves open-ended.

A client that connects and never finishes its request (no bytes, half a header, a body
announced and never sent) used to hold its socket for ever, and needed no token to do so:
a few hundred of them used up the process's file descriptors, /health stopped answering and
asyncio logged a traceback for every refused accept. Here:

- ``request_timeout``: a connection that has no request in a handler is closed once it has
  been quiet that long since it opened or since its last response (header, body and idle
  keep-alive timeouts in one); a response still being written gets ``send_timeout``;
- ``max_connections`` (lowered to a quarter of the soft ``RLIMIT_NOFILE`` where that is less): at
  the cap a new connection closes the oldest one that has no request in a handler, or is
  itself refused with a 503 when every connection is busy, so /health still answers a flood;
- each condition is logged once per ``LOG_INTERVAL`` with a count, never once per socket
  (an idle keep-alive that is closed after its responses is not logged at all), and
  asyncio's "accept out of file descriptors" error gets the same treatment;
- a request aiohttp's parser refuses (a header or URL over 8190 bytes, too many headers, bad
  chunked framing: a 400) is counted the same way: aiohttp logged each with its traceback
  and up to 100 bytes of what the client sent, plain lines in the JSON log, for anyone who
  reached the port, token or not.

aiohttp has no public hook for a connection's start and end, so :meth:`install` wraps the
``connection_made`` / ``connection_lost`` methods of the runner's ``web.Server`` instance
(called by every aiohttp RequestHandler); the status server's middleware reports when a
request is in a handler.
"""

from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import dataclass
from typing import Any

import structlog
from aiohttp import web
from aiohttp.http_exceptions import HttpProcessingError

from adapter.tasks import cancel_and_wait

log = structlog.get_logger("mjbot.serve")

LOG_INTERVAL = 60.0  # seconds between two log lines about the same condition
_BUSY = b"too many connections to the status server, try again\n"
REFUSAL = (b"HTTP/1.1 503 Service Unavailable\r\nConnection: close\r\nRetry-After: 1\r\n"
           b"Content-Type: text/plain\r\nContent-Length: %d\r\n\r\n%s" % (len(_BUSY), _BUSY))
ACCEPT_ERROR = "socket.accept() out of system resource"
MESSAGES = {
    "timeout": "status server: closed connections that sent no complete request (or did not "
               "read their response) in time",
    "evicted": "status server: connection cap reached, closed the oldest idle connections",
    "refused": "status server: connection cap reached with every connection busy, refused "
               "new ones",
    "accept": "status server: accept failed, the process is out of file descriptors",
    "malformed": "status server: refused requests it could not parse (400: a header or URL "
                 "too long, too many headers, bad framing)",
}
SERVER_LOG = "aiohttp.server"  # where aiohttp logs a request it could not parse


def descriptor_cap(wanted: int) -> int:
    """``wanted``, or a quarter of the soft RLIMIT_NOFILE where that is less: the rest is for
    game logs, session sockets, and the up to 128 sockets (the listen backlog) asyncio accepts
    in one burst before the cap can close them."""
    try:
        import resource

        soft, _hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    except (ImportError, OSError, ValueError):
        return wanted
    if soft == resource.RLIM_INFINITY or soft <= 0:
        return wanted
    return max(1, min(wanted, soft // 4))


@dataclass
class _Conn:
    transport: asyncio.Transport
    quiet_since: float
    busy: int = 0  # requests of this connection now in a handler
    served: int = 0  # requests answered: once one is, a quiet close is a keep-alive's end


class Tally:
    """Counts events per condition and logs one line per condition per interval: the first
    event at once, the rest as a count when the interval has passed."""

    def __init__(self, interval: float = LOG_INTERVAL) -> None:
        self.interval = interval
        self.pending: dict[str, int] = {}
        self.next_line: dict[str, float] = {}
        self.totals: dict[str, int] = {}

    def add(self, condition: str, **fields: Any) -> None:
        self.pending[condition] = self.pending.get(condition, 0) + 1
        self.totals[condition] = self.totals.get(condition, 0) + 1
        self.flush(condition, **fields)

    def flush(self, condition: str | None = None, force: bool = False, **fields: Any) -> None:
        now = time.monotonic()
        for name in [condition] if condition else list(self.pending):
            count = self.pending.get(name, 0)
            if count and (force or now >= self.next_line.get(name, 0.0)):
                log.warning(MESSAGES[name], count=count, **fields)
                self.pending[name] = 0
                self.next_line[name] = now + self.interval


class ConnectionGuard:
    """Times out and caps the connections of one aiohttp server (see the module's doc)."""

    def __init__(self, max_connections: int, request_timeout: float,
                 send_timeout: float | None = None, log_interval: float = LOG_INTERVAL) -> None:
        self.wanted = max_connections
        self.cap = descriptor_cap(max_connections)
        self.request_timeout = request_timeout
        self.send_timeout = max(send_timeout or 6 * request_timeout, request_timeout)
        self.tally = Tally(log_interval)
        self.conns: dict[Any, _Conn] = {}  # handler -> state, oldest first
        self._sweeper: asyncio.Task[None] | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._previous_handler: Any = None
        self._malformed = _Malformed(self.tally)

    def install(self, server: web.Server) -> None:
        made, lost = server.connection_made, server.connection_lost

        def connection_made(handler: Any, transport: asyncio.Transport) -> None:
            made(handler, transport)
            self._opened(handler, transport)

        def connection_lost(handler: Any, exc: BaseException | None = None) -> None:
            self.conns.pop(handler, None)
            lost(handler, exc)

        server.connection_made = connection_made  # type: ignore[method-assign]
        server.connection_lost = connection_lost  # type: ignore[method-assign]
        self._loop = asyncio.get_running_loop()
        self._previous_handler = self._loop.get_exception_handler()
        self._loop.set_exception_handler(self._loop_error)
        self._sweeper = asyncio.create_task(self._sweep())
        logging.getLogger(SERVER_LOG).addFilter(self._malformed)
        if self.cap < self.wanted:
            log.info("status server: connection cap lowered to a quarter of the file "
                     "descriptor limit", cap=self.cap, configured=self.wanted)

    async def close(self) -> None:
        """Stop the sweeps and close every connection with no request in a handler (a stop
        does not wait on a client that never finishes its request)."""
        for handler, conn in list(self.conns.items()):
            if not conn.busy:
                self.conns.pop(handler, None)
                conn.transport.abort()
        if self._sweeper is not None:
            await cancel_and_wait(self._sweeper)
            self._sweeper = None
        if self._loop is not None:
            self._loop.set_exception_handler(self._previous_handler)
            self._loop = None
        logging.getLogger(SERVER_LOG).removeFilter(self._malformed)
        self.tally.flush(force=True)

    # ------------------------------------------------------------------ requests

    def busy(self, handler: Any) -> None:
        conn = self.conns.get(handler)
        if conn is not None:
            conn.busy += 1

    def done(self, handler: Any) -> None:
        conn = self.conns.get(handler)
        if conn is not None:
            conn.busy = max(0, conn.busy - 1)
            conn.served += 1
            conn.quiet_since = time.monotonic()

    # ------------------------------------------------------------------ connections

    def _opened(self, handler: Any, transport: asyncio.Transport) -> None:
        if len(self.conns) >= self.cap:
            idle = [h for h, c in self.conns.items() if not c.busy]
            # the oldest one not still receiving a response, else the oldest idle one
            oldest = next((h for h in idle
                           if not self.conns[h].transport.get_write_buffer_size()),
                          idle[0] if idle else None)
            if oldest is None:
                self.tally.add("refused", cap=self.cap)
                transport.write(REFUSAL)
                transport.close()
                return
            self.tally.add("evicted", cap=self.cap)
            self.conns.pop(oldest).transport.abort()
        self.conns[handler] = _Conn(transport, time.monotonic())

    async def _sweep(self) -> None:
        period = min(1.0, self.request_timeout / 4)
        while True:
            await asyncio.sleep(period)
            now = time.monotonic()
            for handler, conn in list(self.conns.items()):
                if conn.busy:
                    continue
                sending = conn.transport.get_write_buffer_size() > 0
                limit = self.send_timeout if sending else self.request_timeout
                if now - conn.quiet_since >= limit:
                    self.conns.pop(handler, None)
                    conn.transport.abort()
                    if sending or not conn.served:  # (an idle keep-alive is no news)
                        self.tally.add("timeout", timeout=self.request_timeout)
            self.tally.flush()

    def _loop_error(self, loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
        if context.get("message") == ACCEPT_ERROR:
            self.tally.add("accept", error=str(context.get("exception")))
        elif self._previous_handler is not None:
            self._previous_handler(loop, context)
        else:
            loop.default_exception_handler(context)



class _Malformed(logging.Filter):
    """Takes aiohttp's record of a request its parser refused out of the log and into the
    tally (its kind only: the message quotes what the client sent). Any other record of
    aiohttp's (a fault in a handler, a 500) is logged as before."""

    def __init__(self, tally: Tally) -> None:
        super().__init__()
        self.tally = tally

    def filter(self, record: logging.LogRecord) -> bool:
        error = record.exc_info[1] if record.exc_info else None
        if isinstance(error, HttpProcessingError):
            self.tally.add("malformed", kind=type(error).__name__)
            return False
        return True
