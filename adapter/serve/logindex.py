"""What the game list and its filter need of each of our logs, read once per file version.

A filter read every log's header again on every request, every time a letter was typed (on
12,000 logs, `mjbot bench games`: 0.36 s a filter with the logs in the page cache, 1.1 s with
them out of it, where the index makes it 0.16 s and 0.14 s). The index keeps each log's header
fields (and, once the log was shown, its footer's result) under its path with the version
read, (mtime_ns, size, inode, ctime_ns): a changed file (a game still being written that
gains hands and then its footer, a file put in another's place, even with the same size and
mtime, as ``cp -p`` puts it) is read again, a removed or renamed one is
dropped at the next whole walk. It is built as filters and listings walk the folders (no
scan of its own) and lives in memory, bounded: once it holds ``max_entries`` logs the oldest
tenth (by mtime) is dropped, and logs older than those are read but not kept, so that a
filter over more logs than that still finds the newest ones kept rather than thrashing. In
memory rather than beside the logs: ``mjbot view`` may be given a folder it cannot write,
the retention of old logs renames and removes files under it, and a restart costs one
filter's reads, which the walk repeats anyway (it stats every file).

Once a log was read whole (its game page built, or the viewer's idle read of a finished log a
page listed: viewer.py's _read_listed) the index keeps where that read stops, for that version:
a frame damaged before the footer, which the footer alone cannot tell. A header the log
reader refuses (replay.log.header_refusal) makes the log unreadable here as it is there.
A log whose reading process died on it (READER_DIED) is kept as read, that verdict its cut.

A scan is given a :class:`Cancel`; it asks it before each file it reads and stops with
:class:`Cancelled` once set (the viewer sets it when the request's client went away).
"""

from __future__ import annotations

import math
import os
import threading
import zlib
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import msgpack

from replay import logzip
from replay.log import header_refusal

# a whole read's verdict where the reading process died on the log twice, each a fresh child
# (viewer.py's _read_listed): kept as the version's cut, so that the log is not read again at
# each page that shows it, and listed as what it is (``unchecked``), not as damaged
READER_DIED = "could not be read: the reader died"
MAX_ENTRIES = 200_000  # about 500 bytes each, path included (mjbot bench games)
MAX_UNCHECKED = 1000  # listed logs waiting to be read whole (the oldest asked dropped past it)
HEADER_BUFFER = 1 << 20  # the most a header frame may take
_STRINGS = 1 << 16  # the shared strings kept (player names, platforms, policies)


class Cancelled(Exception):
    """A scan given up: its requester went away."""


class Cancel:
    """A scan's cancel flag, set from the event loop, asked from the scan's thread."""

    def __init__(self) -> None:
        self._event = threading.Event()

    def set(self) -> None:
        self._event.set()

    def is_set(self) -> bool:
        return self._event.is_set()

    def check(self) -> None:
        """Raises :class:`Cancelled` once set."""
        if self._event.is_set():
            raise Cancelled("the request's client went away")


NEVER = Cancel()  # never set: a scan nobody can give up (tests, the bench's reference)


def _version_of(st: os.stat_result) -> tuple[int, int, int]:
    return st.st_mtime_ns, st.st_size, stamp(st)


def _version(summary: Summary) -> tuple[int, int, int]:
    return summary.mtime_ns, summary.size, summary.stamp


def stamp(st: os.stat_result) -> int:
    """The file's inode and ctime in one exact int (one object per log, not two). With the
    path, size and mtime alone a file replaced by another of the same size and mtime (``cp
    -p other.log game.log``) kept the old one's players, policy and result in the list;
    ``cp -p`` cannot keep the ctime, nor ``mv`` the inode."""
    return st.st_ctime_ns << 64 | st.st_ino


@dataclass(slots=True)
class Summary:
    """One log version's header fields, the lower-case text a filter searches in them, and
    the footer's result once read (None: not read yet). Slots and shared strings: the index
    holds many of these."""
    mtime_ns: int
    size: int
    stamp: int  # the inode and ctime (:func:`stamp`): a file replaced keeping size and mtime
    readable: bool  # False: no header frame (a cut or foreign file)
    platform: Any = None
    variant: Any = None
    policy: Any = None
    players: Any = None
    our_seat: int | None = None
    started: Any = None
    text: str = ""  # platform, variant, policy, players, lower case (shared between logs alike)
    result: dict[str, Any] | None = None
    # the whole log read (a game page built, or the list's check when the viewer is idle):
    # "" where it reads to its end, else where and why it stops (the outline's note); None:
    # not read whole yet; READER_DIED...: the reading process died on it (:func:`reader_died`)
    cut: str | None = None

    def fields(self) -> dict[str, Any]:
        """The header's fields as the list shows them."""
        if not self.readable:
            return {"unreadable": True}
        players = list(self.players) if isinstance(self.players, tuple) else self.players
        return {"platform": self.platform, "variant": self.variant, "started": self.started,
                "policy": self.policy, "players": players, "our_seat": self.our_seat}

    def matches(self, words: list[str]) -> bool:
        """Whether each (lower-case) word is in the searched fields: the start's text is
        lowered here, not kept twice."""
        started = None
        for w in words:
            if w in self.text:
                continue
            if started is None:
                started = "" if self.started is None else str(self.started).lower()
            if w not in started:
                return False
        return True


@dataclass
class Counts:
    """What the index did: the filter's cost in reads, observable (tests, the bench)."""
    headers_read: int = 0
    hits: int = 0
    footers_read: int = 0
    dropped: int = 0  # entries dropped to keep within the bound
    gone: int = 0  # entries of files no longer there
    cancelled: int = 0  # pages given up (GameIndex.page)
    read_whole: int = 0  # logs read whole (a page built, or the list's idle reads)


class LogIndex:
    def __init__(self, max_entries: int = MAX_ENTRIES) -> None:
        if max_entries < 10:
            raise ValueError(f"max_entries must be at least 10, not {max_entries}")
        self.max_entries = max_entries
        self.counts = Counts()
        self._entries: dict[str, Summary] = {}
        self._floor = -1  # logs modified before this (ns) are read, not kept
        self._strings: dict[str, str] = {}
        self._unread: OrderedDict[str, tuple[os.stat_result, Summary]] = OrderedDict()
        # where the whole read of a log the index does not keep (older than its bound's
        # floor) stops, by path and version: the last MAX_UNCHECKED of them
        self._cuts: OrderedDict[str, tuple[tuple[int, int, int], str]] = OrderedDict()
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._entries)

    def summary(self, path: str, st: os.stat_result) -> Summary | None:
        """The log's summary for this version (``st``), read if the index lacks it; None when
        the file is gone."""
        with self._lock:
            known = self._entries.get(path)
            if known is not None and _version(known) == _version_of(st):
                self.counts.hits += 1
                return known
        summary = self._read(path, st)
        if summary is not None:
            self._keep(path, summary)
            with self._lock:
                cut = self._cuts.get(path)
                if cut is not None and cut[0] == _version(summary):
                    summary.cut = cut[1]
        return summary

    def result(self, summary: Summary, read: Callable[[], dict[str, Any]]) -> dict[str, Any]:
        """The footer's result of this version: ``read()`` once, then kept with the header."""
        if summary.result is not None:
            return summary.result
        result = read()
        with self._lock:
            self.counts.footers_read += 1
            summary.result = result
        return result

    def read_whole(self, path: str, st: os.stat_result, cut: str) -> None:
        """The log at ``path``, version ``st``, was read whole (a game page was built): ``cut``
        is where and why the read stopped before its end ("": it did not). Kept with that
        version's summary, where the index has it; else (a log older than the index keeps,
        past its bound) among the last MAX_UNCHECKED such reads, which a summary read again
        of that version takes: without them such a log was never known read, asked for and
        read again at each page that showed it, and the list's ``unread`` never reached 0."""
        with self._lock:
            known = self._entries.get(path)
            self.counts.read_whole += 1
            if known is not None and _version(known) == _version_of(st):
                known.cut = cut
            else:
                self._cuts[path] = (_version_of(st), cut)
                self._cuts.move_to_end(path)
                while len(self._cuts) > MAX_UNCHECKED:
                    self._cuts.popitem(last=False)

    def ask_whole(self, path: str, st: os.stat_result, summary: Summary) -> None:
        """Queue a listed log to be read whole (:meth:`next_unread`), once per version: its
        footer says the game finished, but only a whole read finds a frame damaged before
        it."""
        with self._lock:
            if summary.cut is not None:
                return
            self._unread[path] = (st, summary)
            self._unread.move_to_end(path)
            while len(self._unread) > MAX_UNCHECKED:
                self._unread.popitem(last=False)

    def next_unread(self) -> tuple[str, os.stat_result, Summary] | None:
        """The log asked longest ago (:meth:`ask_whole`) not read whole since; None: none."""
        with self._lock:
            while self._unread:
                path, (st, summary) = self._unread.popitem(last=False)
                if summary.cut is None:
                    return path, st, summary
            return None

    def forget_others(self, seen: set[str], under: tuple[str, ...]) -> None:
        """After a whole walk of the folders ``under``: drop what it did not see there (files
        removed or renamed since, by the log retention or by hand)."""
        with self._lock:
            gone = [p for p in self._entries if p.startswith(under) and p not in seen]
            for path in gone:
                del self._entries[path]
            self.counts.gone += len(gone)
            if gone and len(self._entries) < self.max_entries * 9 // 10:
                self._floor = -1  # room again for older logs

    # ------------------------------------------------------------------ internals

    def _read(self, path: str, st: os.stat_result) -> Summary | None:
        head: Any = None
        try:
            with logzip.open_stream(path) as f:
                unpacker = msgpack.Unpacker(f, raw=False, strict_map_key=False,
                                            max_buffer_size=HEADER_BUFFER,
                                            read_size=4096)
                head = next(unpacker, None)
        except FileNotFoundError:
            return None  # removed since its folder was read
        except (OSError, EOFError, ValueError, zlib.error, msgpack.UnpackException):
            head = None  # a damaged compressed log too (gzip's errors)
        with self._lock:
            self.counts.headers_read += 1
        if not (isinstance(head, dict) and head.get("k") == "header") \
                or header_refusal(head) is not None:  # the game opens as a 422: not listed
            return Summary(st.st_mtime_ns, st.st_size, stamp(st), False)  # as one that opens
        extra = head.get("extra")
        extra = extra if isinstance(extra, dict) else {}
        seat = extra.get("our_seat", head.get("seat"))
        players = extra.get("players")
        if isinstance(players, list):
            players = tuple(self._maybe(p) for p in players)  # a tuple: smaller
        summary = Summary(st.st_mtime_ns, st.st_size, stamp(st), True,
                          self._maybe(head.get("platform")),
                          self._maybe(head.get("variant")), self._maybe(head.get("policy")),
                          _finite(players),
                          seat if isinstance(seat, int) and 0 <= seat < 4 else None,
                          _finite(head.get("started")))
        words: list[str] = []
        for value in (summary.platform, summary.variant, summary.policy, players):
            if isinstance(value, list | tuple):
                words.extend(str(v) for v in value)
            elif value is not None:
                words.append(str(value))
        summary.text = self._shared(" ".join(words).lower())
        return summary

    def _maybe(self, value: Any) -> Any:
        return self._shared(value) if isinstance(value, str) else _finite(value)

    def _shared(self, text: str) -> str:
        """One string object for texts alike (many logs have the same players and policy)."""
        with self._lock:
            kept = self._strings.get(text)
            if kept is None:
                if len(self._strings) >= _STRINGS:
                    self._strings.clear()
                self._strings[text] = kept = text
            return kept

    def _keep(self, path: str, summary: Summary) -> None:
        with self._lock:
            if summary.mtime_ns < self._floor:
                return
            self._entries[path] = summary
            if len(self._entries) > self.max_entries:
                self._prune()

    def _prune(self) -> None:
        """Drop the oldest tenth; logs older than the newest dropped are not kept after."""
        by_age = sorted(self._entries.items(), key=lambda item: item[1].mtime_ns)
        cut = len(by_age) - self.max_entries * 9 // 10
        for path, _summary in by_age[:cut]:
            del self._entries[path]
        self._floor = by_age[cut - 1][1].mtime_ns + 1
        self.counts.dropped += cut


def reader_died(cut: str | None) -> bool:
    """Whether a whole read's verdict is that its reading process died (no word on damage)."""
    return cut is not None and cut.startswith(READER_DIED)


def _finite(value: Any) -> Any:
    """``value`` as JSON can hold it: a NaN or an infinity (a damaged header's field) put as
    None, as is a value JSON has no form for (bytes, a msgpack extension, a map keyed by
    bytes). The list sent NaN as ``NaN``, which is no JSON, and the page could not read the
    list; bytes in a header's start or players made every list request a 500 with a
    traceback. A value nested past the recursion limit (a crafted log's) is left as it is."""
    try:
        return _finite_in(value)
    except RecursionError:
        return value


def _finite_in(value: Any) -> Any:
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if value is None or isinstance(value, str | int):
        return value
    if isinstance(value, list | tuple):
        return type(value)(_finite_in(v) for v in value)
    if isinstance(value, dict):
        if not all(isinstance(k, str | int) for k in value):
            return None  # (a float key could be a NaN; none is written)
        return {k: _finite_in(v) for k, v in value.items()}
    return None
