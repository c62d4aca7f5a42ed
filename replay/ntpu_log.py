"""A per-seat NTPU command log (the protocol lines one client received and sent) to events.

The NYCU lab's client prints every protocol line, received ones after ``[ << ]`` and sent ones
after ``[ >> ]``; a bare list of the server's lines (no markers) reads the same. The received
lines go through the NTPU codec exactly as a client reads them live, so the record is that
seat's own view: its own tiles, the others' discards and calls, their hands unknown except
where a ``/hu`` shows one. Sent lines are the client's replies; the server echoes every move it
accepts, so they add nothing to the record and are only counted.
"""

from __future__ import annotations

import re
from typing import Any

from protocols import events as ev
from protocols import tiles as T
from protocols.ntpu import NtpuCodec, NtpuError
from replay.record import GameRecord, RecordError

SOURCE = "ntpu_log"
_MARK = re.compile(r"\[\s*(<<|>>)\s*\]\s*")


def loads(text: str, tiles: T.NtpuTiles | None = None) -> GameRecord:
    """One seat's games from its command log; ``tiles``: the id mapping the client ran with."""
    codec = NtpuCodec(tiles)
    events: list[Any] = []
    received = sent = 0
    for n, line in enumerate(text.splitlines(), 1):
        body = line.strip()
        if not body or body.startswith("#"):
            continue
        mark = _MARK.match(body)
        if mark is not None:
            body = body[mark.end():].strip()
        if not body.startswith("/"):
            raise RecordError(f"ntpu log: line {n} is not a protocol line: {_short(line)!r}")
        if mark is not None and mark.group(1) == ">>":
            sent += 1
            continue
        received += 1
        try:
            out = codec.parse(body)
        except NtpuError as exc:
            raise RecordError(f"ntpu log: line {n}: {exc}") from None
        events += [e for e in out if type(e) in ev.EVENT_TYPES]
    starts = [e for e in events if isinstance(e, ev.GameStarted)]
    if not starts:
        raise RecordError("ntpu log: no /start line (not a client's command log)")
    meta = {"players": 4, "view_seat": starts[0].seat, "received": received, "sent": sent,
            "cut_in_hand": codec.in_hand and not codec.won}
    return GameRecord("taiwan16", SOURCE, events, meta)


def _short(line: str, limit: int = 60) -> str:
    return line if len(line) <= limit else line[:limit] + "..."
