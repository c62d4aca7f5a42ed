"""Recorded Tenhou server streams played to a client: the ``Get:`` lines of a capture, sent in
order over a loopback TCP socket, waiting wherever the recorded client owed an answer. A
:data:`CUT` among them cuts the line there; the client's reconnect gets the rest."""

from __future__ import annotations

import asyncio
import re
import time
from dataclasses import dataclass, field
from typing import Any

from protocols import events as ev
from protocols.codec import ProtocolError
from protocols.tenhou import TagStream, TenhouCodec

# in a recorded stream: the server cuts the line here, and the next connection (the client's
# reconnect, after its HELO) is sent the tags after it
CUT = "(the line is cut)"


@dataclass
class ReplayStats:
    sent: int = 0
    owed: int = 0
    answered: int = 0
    replies: list[str] = field(default_factory=list)


def recorded_stream(text: str) -> list[str]:
    """The server's tags of a capture (``Get:`` lines), in order."""
    out: list[str] = []
    for line in text.splitlines():
        direction, _, rest = line.partition(": ")
        if direction == "Get":
            out.extend(TagStream().feed(rest.encode() + b"\0"))
    return out


async def serve_recording(tags: list[str], host: str = "127.0.0.1", port: int = 0,
                          reply_timeout: float = 10.0) -> tuple[Any, int, ReplayStats]:
    """A TCP server that plays a recorded server stream to the first client, waiting for the
    client's answer wherever the recorded client owed one (a draw, an offer, its own call).
    Returns (server, port, stats)."""
    stats = ReplayStats()
    owed_after = _owed_positions(tags)

    start = 0  # the tag the next connection is sent first

    async def client(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        nonlocal start
        if start >= len(tags) or (start and tags[start - 1] != CUT):
            writer.close()  # one recording, one client: a reconnect finds the line closed,
            return  # but where the recording cuts the line
        first, start = start, len(tags)
        stream = TagStream()
        await reader.read(65536)  # the client's HELO
        try:
            for index, text in enumerate(tags[first:], first):
                if text == CUT:
                    start = index + 1
                    return
                writer.write(text.encode() + b"\0")
                await writer.drain()
                stats.sent += 1
                if index not in owed_after:
                    continue
                stats.owed += 1
                deadline = time.monotonic() + reply_timeout
                while time.monotonic() < deadline:
                    try:
                        data = await asyncio.wait_for(reader.read(65536),
                                                      deadline - time.monotonic())
                    except TimeoutError:
                        break
                    if not data:
                        return
                    got = [t for t in stream.feed(data) if re.match(r"<(D|N)\b", t)]
                    stats.replies += got
                    if got:
                        stats.answered += 1
                        break
        finally:
            writer.close()

    server = await asyncio.start_server(client, host, port)
    return server, server.sockets[0].getsockname()[1], stats


def _owed_positions(tags: list[str]) -> set[int]:
    """Indexes of the tags after which the recorded client owed an answer."""
    codec = TenhouCodec()
    owed = set()
    for index, text in enumerate(tags):
        if text == CUT:
            continue
        try:
            items = codec.feed(text)
        except ProtocolError:
            continue
        if any(isinstance(i, ev.DecisionRequest) for i in items):
            owed.add(index)
    return owed
