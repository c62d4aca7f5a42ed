"""``mjbot tenhou-server``: the fake Tenhou server for external clients (any program that
speaks Tenhou's protocol), ``games`` games, each table waiting for ``humans`` clients with
mjbot's ``policy`` in the other seats; several clients at one table compare two programs on
the same deals. The figures per client come from Tenhou's own game points (``owari``)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from adapter.fakes.tenhou_server import (
    DEFAULT_ABSENT,
    WRITE_LIMIT,
    FakeTenhouServer,
    ServerStats,
)
from adapter.local.game import placement

CLOSE_GRACE = 5.0  # seconds the clients get after the last game to say BYE before we hang up


@dataclass
class ServeResult:
    stats: ServerStats
    seconds: float

    def table(self) -> str:
        """One line per game (who sat where, final score and points), then per login (a
        client's games at any seat) and policy."""
        lines: list[str] = []
        totals: dict[str, list[tuple[float, int, int, int]]] = {}
        for report in self.stats.reports:
            ranks = placement(report.scores)
            seats = []
            for i in range(4):
                seats.append(f"{report.players[i]} {report.scores[i]} "
                             f"({report.points[i]:+z.1f})")
                totals.setdefault((report.logins or report.players)[i], []).append(
                    (report.points[i], ranks[i], report.illegal[i], report.timeouts[i]))
            lines.append(f"game {report.index}: " + " | ".join(seats))
        lines.append(f"{'player':<16} games  points  mean rank  illegal  timeouts")
        for name, rows in sorted(totals.items()):
            lines.append(f"{name:<16} {len(rows):>5} {sum(r[0] for r in rows):>+7.1f} "
                         f"{sum(r[1] for r in rows) / len(rows):>10.2f} "
                         f"{sum(r[2] for r in rows):>8} {sum(r[3] for r in rows):>9}")
        s = self.stats
        lines.append(f"{s.games} games, {s.hands} hands in {self.seconds:.1f} s; illegal "
                     f"{s.illegal}, timeouts {s.timeouts}, played for absent clients "
                     f"{s.absent}, reconnects {s.reconnects}, answers dropped {s.dropped}")
        if s.stalled:
            lines.append(f"lines cut for reading nothing (a write waited {WRITE_LIMIT:g} s): "
                         f"{s.stalled}")
        if s.probes:
            lines.append(f"keep-alive probes {s.probes}: answered {len(s.keepalive_delays)}"
                         f"{_worst(s.keepalive_delays)}, unanswered {s.probes_unanswered}"
                         + (f"; WebSocket pings answered {len(s.ws_ping_delays)}"
                            f"{_worst(s.ws_ping_delays)}" if s.ws_ping_delays else ""))
        return "\n".join(lines)

    def as_json(self) -> dict[str, Any]:
        s = self.stats
        out = {"games": [vars(r) for r in s.reports], "hands": s.hands, "illegal": s.illegal,
               "timeouts": s.timeouts, "absent": s.absent, "reconnects": s.reconnects,
               "dropped": s.dropped, "byes": s.byes, "stalled": s.stalled,
               "seconds": round(self.seconds, 3)}
        if s.probes:
            out["keepalive"] = {
                "probes": s.probes, "answered": len(s.keepalive_delays),
                "unanswered": s.probes_unanswered,
                "max_ms": round(1000 * max(s.keepalive_delays, default=0.0), 3),
                "ws_pings": len(s.ws_ping_delays),
                "ws_ping_max_ms": round(1000 * max(s.ws_ping_delays, default=0.0), 3)}
        return out


def _worst(delays: list[float]) -> str:
    return f" (slowest {1000 * max(delays):.1f} ms)" if delays else ""


def serve(games: int, humans: int, policy: str, seed: int = 0, host: str = "127.0.0.1",
          port: int = 0, transport: str = "tcp", length: str = "east",
          time_limit: float = 10.0, absent: float = DEFAULT_ABSENT, log_dir: str | None = None,
          on_listening: Callable[[int], None] | None = None,
          keepalive_every: float | None = None, close_grace: float = CLOSE_GRACE) -> ServeResult:
    """Serve until ``games`` games have ended; ``on_listening`` gets the port (``port`` 0:
    any free one). ``log_dir`` None: no game logs. ``keepalive_every``: the keep-alive probe
    (adapter/fakes/tenhou_server.py). ``close_grace``: seconds the clients still connected
    after the last game get to say BYE."""
    return asyncio.run(_serve(games, humans, policy, seed, host, port, transport, length,
                              time_limit, absent, log_dir, on_listening, keepalive_every,
                              close_grace))


async def _serve(games: int, humans: int, policy: str, seed: int, host: str, port: int,
                 transport: str, length: str, time_limit: float, absent: float,
                 log_dir: str | None, on_listening: Callable[[int], None] | None,
                 keepalive_every: float | None = None,
                 close_grace: float = CLOSE_GRACE) -> ServeResult:
    server = FakeTenhouServer(seed=seed, length=length, opponents=(policy, policy, policy),
                              time_limit=time_limit, absent=absent, humans=humans,
                              games=games, log_dir=log_dir, keepalive_every=keepalive_every)
    start = time.monotonic()
    bound = await (server.start_tcp(host, port) if transport == "tcp"
                   else server.start_ws(host, port))
    if on_listening is not None:
        on_listening(bound)
    try:
        await server.wait_games(games)
    except BaseException:  # stopped: no waiting for goodbyes
        await server.close()
        raise
    await server.close(grace=close_grace)
    return ServeResult(server.stats, time.monotonic() - start)
