"""Which files the replay viewer may show, and their ids.

The viewer serves game logs from a few roots (the serve process's log folder; the folders or
files given to ``mjbot view``). A game's id is its root's number and its path below the root,
joined by ``~`` (``0~practice~local~2026-11-23~101500-practice-g3.mjlog.msgpack``, ``.gz``
once the serve process compressed it, and the id without it still finds it): one URL
segment, readable, and resolved only after every part is checked (no ``..``, no separators, no
hidden files, no symlink out of the root, a known suffix), so that no id reaches a file outside
the roots. A listing holds the newest MAX_FILES game files across every root and session (the
page says when older ones were left out). Day folders are taken newest first (_Walk), so an
old day is neither read nor stat'ed once the list is full; only the listed logs' header frames
are read, and the first bytes of the other files taken (an import is listed only if it starts
as a game format does, so a README.txt or LICENSE.txt in a served folder is not); games are
parsed when opened (and the viewer's BuildCache, viewcache.py, keeps the last few).

A filter (``listing(query)``) searches every game below the roots, not only the newest
MAX_FILES: the walk goes on past the unfiltered list's cut, and the cap and the cut apply to
the matching games. What it costs on a folder of many logs: every folder's names are read and
every game file stat'ed (as an unfiltered listing of them all would); a log whose path (session,
platform folder, day, name) holds every word is taken without being opened, an import whose
path does not is passed over without being opened, and only our logs whose path lacks a word
have their header searched: read once per version of the file and kept in the index
(logindex.py), so that a second filter opens only the logs new or changed since. A listing is
given a Cancel, asked before each file: the viewer gives up a scan whose client went away.
"""

from __future__ import annotations

import datetime as dt
import heapq
import math
import os
import re
import stat
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeGuard

import msgpack

from adapter.serve.logindex import NEVER, Cancel, Cancelled, LogIndex, Summary, reader_died
from adapter.serve.wholeread import read_here
from replay import formats, logzip
from replay.gcpause import collector_paused
from replay.log import GZ_SUFFIX, SUFFIX, is_log_name
from replay.replayer import footer_unfinished
from replay.timeline import Timeline, build

SEPARATOR = "~"
IMPORT_SUFFIXES = (".json", ".jsonl", ".xml", ".mjlog", ".sgf", ".log", ".txt")
MAX_FILES = 5000  # a listing holds the newest this many game files (and files given alone)
# how long after its folder last changed (a file created in it) a log may still be written: a
# folder older than the listing's oldest game by more than this holds no game newer than it
FOLDER_SLACK = 3600.0
DATE_FOLDER = re.compile(r"\d{4}-\d{2}-\d{2}")  # replay.log.log_path's day folders
STARTED = re.compile(r"\d{6}-")  # and its files' HHMMSS start
DAY = 86400.0
DST = 3600.0  # a local day's clock may be an hour off its midnight's epoch + seconds
MAX_DEPTH = 6
SNIFF_BYTES = 4096
# how every import format starts: mjlog XML, SGF, an NTPU log line, JSON (tenhou6, mjai,
# Botzone), a Tenhou client transcript's line; an NTPU log may open with "#" comment lines
FORMAT_STARTS = (b"<", b"(", b"/", b"[", b"{", b"Send:", b"Get:")
# the fields a filter's words are searched in (the path, then these of a log's header): what the
# list shows, not its sizes and times
SEARCHED = ("platform", "variant", "policy", "players", "started")
PAGE_SIZE = 50
MAX_PAGE = 500
MAX_OFFSET = 10**9 - 1  # a listing holds about MAX_FILES; nine digits is plenty
FOOTER_TAIL = 16 << 10  # a footer is read from this many bytes at the end of a log
FOOTER_MARK = b"\xa1k\xa6footer"  # msgpack for "k": "footer", the footer frame's first key


def whole_number(text: str, digits: int = 9) -> int | None:
    """``text`` as a whole number written in ASCII digits, at most ``digits`` of them; None
    otherwise. ``str.isdigit`` alone also takes "²" or "٣", and ``int`` refuses the first and
    any text of more than 4300 digits: each was a 500 from a URL anyone could type."""
    if not text or len(text) > digits or not (text.isascii() and text.isdigit()):
        return None
    return int(text)


class GameNotFound(LookupError):
    """No game has this id (malformed, outside the roots, or missing)."""


@dataclass(frozen=True)
class Root:
    path: Path
    single: bool  # a file given on its own


def _allowed(name: str) -> bool:
    return is_log_name(name) or name.lower().endswith(IMPORT_SUFFIXES)


def looks_like_a_game(head: bytes) -> bool:
    """Whether an import file's first bytes start as one of the formats' do (prose does not)."""
    for line in head.removeprefix(b"\xef\xbb\xbf").splitlines():
        line = line.strip()
        if line and not line.startswith(b"#"):
            return line.startswith(FORMAT_STARTS)
    return False


@dataclass(frozen=True)
class Listing:
    games: list[dict[str, Any]]  # newest first
    cut: bool  # older game files exist that the cap (max_files) left out
    # our logs' paths as walked, versions and summaries, by game id: where results are read
    logs: dict[str, tuple[str, os.stat_result, Summary]]


@dataclass
class _Unread:
    """A date folder not read yet (an old day's names are read only if the cap needs them)."""
    root: int
    path: str
    relative: Path
    depth: int
    mtime: float


@dataclass
class _Files:
    """Files of a read folder, to be stat'ed together."""
    root: int
    relative: Path
    entries: list[os.DirEntry[str]]


@dataclass
class _Started:
    """A date folder's files named by their start time (``HHMMSS-``), newest name first: one
    is stat'ed at a time, so that a day of 400,000 practice games costs a stat of its newest
    ones only."""
    root: int
    relative: Path
    entries: list[os.DirEntry[str]]
    day: dt.date
    day_bound: float  # the folder's: none of its files is newer
    next: int = 0

    def bound(self) -> float:
        """The next file's start (the later one of an hour the clocks repeat), plus
        FOLDER_SLACK."""
        name = self.entries[self.next].name
        try:
            started = dt.datetime(self.day.year, self.day.month, self.day.day, int(name[0:2]),
                                  int(name[2:4]), int(name[4:6]), fold=1).timestamp()
        except (ValueError, OverflowError, OSError):
            return self.day_bound  # not a time of day
        return min(self.day_bound, started + FOLDER_SLACK)


def _day(name: str) -> tuple[dt.date, float] | None:
    """A folder named by a date (``log_path``'s ``YYYY-MM-DD``, local time): the date and the
    epoch of its end (an hour later, for a day the clocks go back); None for other names."""
    if not DATE_FOLDER.fullmatch(name):
        return None
    try:
        day = dt.date.fromisoformat(name)
        return day, dt.datetime.combine(day, dt.time()).timestamp() + DAY + DST
    except (ValueError, OverflowError, OSError):
        return None


class _Walk:
    """The files below the roots that may be games, taken newest first by an upper bound of
    their mtime: a folder's own mtime (it changes when a file is created in it), and for our
    logs' date folders the date and each file's start time in its name (``log_path``), plus
    FOLDER_SLACK. A date folder is read only when its bound comes up, so that once a listing
    is full the older days are neither read nor stat'ed (a folder of logs copied without their
    times is taken by the start times in the names). Other folders are read at once (a
    session's and a platform's hold a few folders)."""

    def __init__(self) -> None:
        self._heap: list[tuple[float, int, _Unread | _Files | _Started]] = []
        self._seq = 0

    def add_root(self, index: int, top: Path) -> None:
        try:
            st = top.stat()  # a root given as a link to a folder is followed
        except OSError:
            return
        if stat.S_ISDIR(st.st_mode):
            self._read(index, str(top), Path(), 0, st.st_mtime)

    def next_bound(self) -> float | None:
        """No file left in the walk was modified after this (None: the walk is done)."""
        return -self._heap[0][0] if self._heap else None

    def pop(self) -> list[tuple[int, Path, os.DirEntry[str]]]:
        """The files to stat next (none where a folder was read)."""
        _, _, item = heapq.heappop(self._heap)
        if isinstance(item, _Unread):
            self._read(item.root, item.path, item.relative, item.depth, item.mtime)
            return []
        if isinstance(item, _Files):
            return [(item.root, item.relative, entry) for entry in item.entries]
        entry = item.entries[item.next]
        item.next += 1
        if item.next < len(item.entries):
            self._push(item.bound(), item)
        return [(item.root, item.relative, entry)]

    def _push(self, bound: float, item: _Unread | _Files | _Started) -> None:
        heapq.heappush(self._heap, (-bound, self._seq, item))
        self._seq += 1

    def _read(self, root: int, folder: str, relative: Path, depth: int, mtime: float) -> None:
        """One folder's names: its subfolders (``MAX_DEPTH`` deep; no hidden or linked one,
        none with a name an id cannot hold) and the files a game may be in."""
        files: list[os.DirEntry[str]] = []
        try:
            with os.scandir(folder) as entries:
                for entry in entries:
                    name = entry.name
                    if name.startswith(".") or SEPARATOR in name:
                        continue  # hidden, or an id could not name it unambiguously
                    try:
                        if _allowed(name) and entry.is_file(follow_symlinks=False):
                            files.append(entry)  # an id never follows a link
                        elif depth < MAX_DEPTH and entry.is_dir(follow_symlinks=False):
                            sub = entry.stat(follow_symlinks=False).st_mtime
                            day = _day(name)
                            if day is None:
                                self._read(root, entry.path, relative / name, depth + 1, sub)
                            else:
                                self._push(max(day[1], sub) + FOLDER_SLACK,
                                           _Unread(root, entry.path, relative / name,
                                                   depth + 1, sub))
                    except OSError:
                        continue
        except OSError:
            return
        # a log being compressed (or whose compression a crash cut) is there twice for a
        # moment: the plain one is listed, the copy not yet
        names = {e.name for e in files}
        files = [e for e in files if not (e.name.endswith(GZ_SUFFIX)
                                          and e.name.removesuffix(logzip.GZ) in names)]
        day = _day(relative.name)
        bound = mtime + FOLDER_SLACK
        if day is not None:
            bound = max(bound, day[1] + FOLDER_SLACK)
            started = sorted((e for e in files if STARTED.match(e.name)),
                             key=lambda e: e.name, reverse=True)
            if started:
                files = [e for e in files if not STARTED.match(e.name)]
                cursor = _Started(root, relative, started, day[0], bound)
                self._push(cursor.bound(), cursor)
        if files:
            self._push(bound, _Files(root, relative, files))


class GameIndex:
    def __init__(self, roots: list[str], files: list[str] | None = None,
                 max_files: int = MAX_FILES, logs: LogIndex | None = None) -> None:
        if max_files < 1:
            raise ValueError(f"max_files must be at least 1, not {max_files}")
        self.roots = [Root(Path(r), False) for r in roots] + \
            [Root(Path(f), True) for f in files or []]
        self.max_files = max_files
        # our logs' headers and results, per file version
        self.logs = LogIndex() if logs is None else logs
        self._sniffed: dict[tuple[str, int, int, int, int], bool] = {}
        # the imports the previous listing sniffed: kept too, so that a filtered listing and
        # the unfiltered one of the same page do not forget each other's
        self._kept: set[str] = set()
        self._lock = threading.Lock()

    # ------------------------------------------------------------------ ids

    def game_id(self, root_index: int, relative: Path) -> str:
        return SEPARATOR.join([str(root_index), *relative.parts])

    def resolve(self, game_id: str) -> Path:
        """The file an id names; GameNotFound for anything else."""
        return self._locate(game_id)[1]

    def _locate(self, game_id: str) -> tuple[Path, Path]:
        """The path an id names as the listing walks to it (the index's key) and the file
        it resolves to; GameNotFound for anything else."""
        parts = game_id.split(SEPARATOR)
        root_number = whole_number(parts[0])
        if len(parts) < 2 or root_number is None or root_number >= len(self.roots):
            raise GameNotFound(game_id)
        for part in parts[1:]:
            if (not part or part in (".", "..") or part.startswith(".")
                    or any(c in part for c in "/\\\0:")):
                raise GameNotFound(game_id)
        root = self.roots[root_number]
        if root.single:
            if parts[1:] != [root.path.name]:
                raise GameNotFound(game_id)
            candidate = root.path
        else:
            candidate = root.path.joinpath(*parts[1:])
        if candidate.name.endswith(SUFFIX) and not root.single \
                and not os.path.lexists(candidate):
            # compressed since it was linked to (the dashboard's results, a bookmark)
            candidate = logzip.compressed_name(candidate)
        try:
            resolved = candidate.resolve(strict=True)
            base = (root.path.parent if root.single else root.path).resolve(strict=True)
        except (OSError, RuntimeError):
            raise GameNotFound(game_id) from None
        # a file given on its own is listed whatever its name (the user named it), so it opens
        # whatever its name; in a folder only game-like names are
        if not resolved.is_relative_to(base) or not resolved.is_file() \
                or not (root.single or _allowed(resolved.name)):
            raise GameNotFound(game_id)
        return candidate, resolved

    # ------------------------------------------------------------------ listing

    def listing(self, query: str = "", cancel: Cancel = NEVER) -> Listing:
        """The game files under the roots, newest first: the ``max_files`` last modified across
        every root, session and day, and every file given on its own; with a ``query``, the
        ``max_files`` newest of those that hold all its words (``matches``), searched among
        every game below the roots. Files are taken newest first by a bound of their mtime
        (_Walk) and the walk stops once the cap is full and nothing left can be newer. Walking
        sessions in name order cut whole sessions: one fast session filled the cap and every
        session named before it was not listed. A filter searched only the unfiltered list, so
        a matching game older than its newest ``max_files`` was never found. Our logs' headers
        come from :attr:`logs` (read once per file version); ``cancel`` is asked before each
        file (:class:`~adapter.serve.logindex.Cancelled` once set)."""
        words = query.lower().split()
        found: list[tuple[float, str, int, Path, str, os.stat_result, Summary | None]] = []
        games: list[dict[str, Any]] = []
        logs: dict[str, tuple[str, os.stat_result, Summary]] = {}
        walk = _Walk()
        for i, root in enumerate(self.roots):
            cancel.check()
            if not root.single:
                walk.add_root(i, root.path)
            elif (st := _stat(root.path)) is not None and stat.S_ISREG(st.st_mode):
                given, summary = self._entry(i, str(root.path), Path(root.path.name), st)
                if matches(given, words):
                    games.append(given)
                    if summary is not None:
                        logs[given["id"]] = (str(root.path), st, summary)
        # a min-heap: the mtimes of the newest games taken, one past the cap, so that ``cut``
        # is only said where an older game (matching one) was found, not wherever an older file
        # was left unread
        newest: list[float] = []
        keep = self.max_files + 1
        sniffed: set[str] = set()
        seen: set[str] = set()  # our logs walked: on a whole walk, the index forgets others
        # each folder's path as text, by its Path's id (the Path held, so that its id is not
        # another's)
        prefixes: dict[int, tuple[Path, str]] = {}
        cut = False
        while (bound := walk.next_bound()) is not None:
            if len(newest) >= keep and bound < newest[0]:
                cut = True  # what is left is older than a game taken past the cap
                break
            for root_index, relative, entry in walk.pop():
                cancel.check()
                try:
                    st = entry.stat(follow_symlinks=False)
                except OSError:
                    continue  # removed since its folder was read
                prefix = prefixes.get(id(relative))
                if prefix is None:  # the folder's path as text, once per folder
                    text = relative.as_posix().lower()
                    prefix = prefixes[id(relative)] = (relative,
                                                       "" if text == "." else text + "/")
                path_text = prefix[1] + entry.name.lower()
                missing = [w for w in words if w not in path_text]
                summary = None
                if not is_log_name(entry.name):
                    if missing:
                        continue  # an import's path is all a filter searches: not opened
                    sniffed.add(entry.path)
                    if not self._game_like(entry.path, st):
                        continue
                else:
                    seen.add(entry.path)
                    if missing:
                        summary = self.logs.summary(entry.path, st)
                        if summary is None or not summary.matches(missing):
                            continue
                found.append((st.st_mtime, entry.path, root_index, relative, entry.name, st,
                              summary))
                if len(newest) < keep:
                    heapq.heappush(newest, st.st_mtime)
                elif st.st_mtime > newest[0]:
                    heapq.heapreplace(newest, st.st_mtime)
        if not cut and walk.next_bound() is None:  # every folder walked: the rest are gone
            self.logs.forget_others(seen, tuple(
                os.path.join(str(r.path), "") for r in self.roots if not r.single))
        found.sort(key=lambda f: (f[0], f[1]), reverse=True)
        cut = cut or len(found) > self.max_files
        for _, path, i, relative, name, st, read in found[:self.max_files]:  # Paths for these
            cancel.check()
            listed, summary = self._entry(i, path, relative / name, st, read)
            games.append(listed)
            if summary is not None:
                logs[listed["id"]] = (path, st, summary)
        games.sort(key=lambda g: g["mtime"], reverse=True)
        with self._lock:  # forget the sniffs of files no longer listed
            kept_sniffed = sniffed | self._kept
            self._sniffed = {k: v for k, v in self._sniffed.items() if k[0] in kept_sniffed}
            self._kept = sniffed
        return Listing(games, cut, logs)

    def page(self, query: str = "", offset: int = 0, limit: int = PAGE_SIZE,
             cancel: Cancel = NEVER) -> dict[str, Any]:
        """One page of the listing, filtered by ``query`` (words that must all appear in a
        game's path or its header's SEARCHED fields, among every game below the roots); only
        the page's own logs have their footer read (the result: final scores, our rank and
        score). ``total`` is the unfiltered list's, and ``total_cut`` says that list was cut
        (more games exist: a filter searched them all, so its matches are not "of" ``total``
        alone); ``cut`` says older games (older matching ones, with a query) exist than the
        ``max_files`` listed. ``cancel``: as listing's."""
        try:
            listing = self.listing(cancel=cancel)
            matched = self.listing(query, cancel) if query.split() else listing
            shown = matched.games[offset:offset + limit]
            unread = 0
            for entry in shown:
                where = matched.logs.get(entry["id"])
                if where is not None:
                    cancel.check()
                    entry.update(self._result(entry, *where))
                    unread += self._damage(entry, *where)
        except Cancelled:
            self.logs.counts.cancelled += 1
            raise
        return {"games": shown, "total": len(listing.games), "total_cut": listing.cut,
                "matched": len(matched.games), "offset": offset, "limit": limit,
                "cut": matched.cut, "unread": unread,
                "max_files": self.max_files}

    def _damage(self, entry: dict[str, Any], path: str, st: os.stat_result,
                summary: Summary) -> int:
        """A finished log read whole is marked ``damaged`` (where and why the read stops)
        where a frame before its footer is damaged: the list reads only the footer, which
        said the game had ended as any other, and the game opened cut. One not read whole
        yet is asked for (1 is returned): the viewer reads it when idle (read_whole). One
        whose reading process died on it is ``unchecked``, with why: not known damaged, nor
        sound."""
        if not (summary.readable and entry.get("finished")):
            return 0  # (one still being written, or cut: no footer to mislead)
        if summary.cut is None:
            self.logs.ask_whole(path, st, summary)
            return 1
        if reader_died(summary.cut):
            entry["unchecked"] = summary.cut
        elif summary.cut:
            entry["damaged"] = summary.cut
        return 0

    def read_whole(self, path: str, st: os.stat_result,
                   read: Callable[[str], str] = read_here) -> None:
        """Read the log at ``path`` whole if it is still version ``st``, and keep in the
        index where it stops (:meth:`_damage`). A file changed or gone meanwhile is left to
        the next listing, which asks for its new version. ``read``: where a log stops, read
        here (the default) or by the viewer's low-priority child (wholeread.ChildReader)."""
        try:
            if _version(os.stat(path)) != _version(st):
                return
            # each frame checked and dropped (keep=False): all kept (53 MB for a 40-game
            # log), the collection after the read's collector pause walked them all and
            # their freeing was one call, the interpreter held throughout (0.3 s, then
            # 0.06 s; a 300-game log's: 0.4 s to free), the event loop and its sessions
            # stopped as long, once per log a list page showed, none of it asked for
            cut = read(path)
            if _version(os.stat(path)) != _version(st):
                return
        except (OSError, ValueError):
            return  # gone, or replaced by no log: the next listing says so
        self.logs.read_whole(path, st, cut)

    def _result(self, entry: dict[str, Any], path: str, st: os.stat_result,
                summary: Summary) -> dict[str, Any]:
        """The log's result as the list shows it, read from its footer once per version."""
        return self.logs.result(summary, lambda: self._read_result(entry, path, st))

    @staticmethod
    def _read_result(entry: dict[str, Any], path: str, st: os.stat_result) -> dict[str, Any]:
        from adapter.local.game import placement  # the table's rule; loaded only for a page

        footer = read_footer(Path(path), st.st_size)
        info: dict[str, Any] = {"finished": footer is not None}
        result = (footer or {}).get("result")
        scores = _four_numbers((footer or {}).get("scores"))
        seat = entry.get("our_seat")
        # a game stopped, abandoned or cut by its session's end: the footer's scores are where
        # it stopped, no final result (it was listed with a rank, as if played out)
        unfinished = footer_unfinished(result)
        if unfinished:
            info["unfinished"] = unfinished
        # a footer of another shape (a damaged or hand-edited log) shows no result; it took
        # the whole list down with a 500
        if scores is not None:
            info["scores"] = scores
            if isinstance(seat, int) and 0 <= seat < 4 and not unfinished:
                ranks = result.get("ranks") if isinstance(result, dict) else None
                info["our_score"] = scores[seat]
                info["our_rank"] = ranks[seat] if _ranks(ranks) else placement(scores)[seat]
        return info

    def _game_like(self, path: str, st: os.stat_result) -> bool:
        """An import's first bytes start as a game format's (remembered per file version)."""
        # the inode and ctime too: a file replaced keeping its size and mtime (``cp -p``)
        key = (path, st.st_mtime_ns, st.st_size, st.st_ino, st.st_ctime_ns)
        with self._lock:
            if key in self._sniffed:
                return self._sniffed[key]
        try:
            with open(path, "rb") as f:
                verdict = looks_like_a_game(f.read(SNIFF_BYTES))
        except OSError:
            return False
        with self._lock:
            self._sniffed[key] = verdict
        return verdict

    def _entry(self, index: int, path: str, relative: Path, st: os.stat_result,
               summary: Summary | None = None) -> tuple[dict[str, Any], Summary | None]:
        """The list's entry of a file and, for our logs, its summary (``summary``: the one a
        filter read already)."""
        name = relative.name
        entry: dict[str, Any] = {
            "id": self.game_id(index, relative), "name": name,
            "folder": str(relative.parent) if str(relative.parent) != "." else "",
            "session": relative.parts[0] if len(relative.parts) > 1 else "",
            "size": st.st_size, "mtime": st.st_mtime, "own": is_log_name(name)}
        if entry["own"]:
            summary = summary or self.logs.summary(path, st)
            entry.update(summary.fields() if summary else {"unreadable": True})
        return entry, summary

    # ------------------------------------------------------------------ games

    def timeline(self, game_id: str) -> Timeline:
        """The game's steps, parsed now (the viewer's BuildCache keeps the last few);
        GameNotFound, or the formats' UnknownFormat / LogError for a file no reader
        accepts. One of our logs, read whole here, tells the index where it stops (the
        list marks it damaged where that is before its footer)."""
        listed, path = self._locate(game_id)
        st = path.stat()
        with collector_paused():  # every object the read makes lives until the outline ends
            loaded = formats.read(path.read_bytes(), path)
            if loaded.log is not None and _version(path.stat()) == _version(st):
                truncated = loaded.log.truncated
                self.logs.read_whole(str(listed), st,
                                     "" if truncated is None else truncated.note())
            return build(loaded)

    def loaded(self, game_id: str) -> formats.Loaded:
        path = self.resolve(game_id)
        return formats.read(path.read_bytes(), path)


def matches(entry: dict[str, Any], words: list[str]) -> bool:
    """Whether a listing entry holds every (lower-case) word in its path or header fields."""
    path = f"{entry['folder']}/{entry['name']}" if entry["folder"] else entry["name"]
    parts: list[str] = [path]
    for name in SEARCHED:
        value = entry.get(name)
        if isinstance(value, list):
            parts.extend(str(v) for v in value)
        elif value is not None:
            parts.append(str(value))
    text = " ".join(parts).lower()
    return all(w in text for w in words)


def _version(st: os.stat_result) -> tuple[int, int, int, int, int]:
    """A file's version: the fields the index and the build cache tell versions apart by
    (mtime, size, inode, ctime), and the device."""
    return st.st_mtime_ns, st.st_size, st.st_ino, st.st_ctime_ns, st.st_dev


def _stat(path: Path) -> os.stat_result | None:
    try:
        return path.stat()
    except OSError:
        return None


def _four_numbers(value: Any) -> list[Any] | None:
    """A footer's scores if they are four numbers, else None (a NaN or an infinity is none:
    the list sent it as ``NaN``, which is no JSON, and the page could not read the list)."""
    if isinstance(value, list) and len(value) == 4 and all(
            isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v)
            for v in value):
        return value
    return None


def _ranks(value: Any) -> TypeGuard[list[int]]:
    """Whether a footer's ranks are four places, 1 to 4."""
    return isinstance(value, list) and len(value) == 4 and all(
        type(v) is int and 1 <= v <= 4 for v in value)


def read_footer(path: Path, size: int | None = None) -> dict[str, Any] | None:
    """The footer frame at the end of one of our logs, read from its last bytes (``size``:
    the file's, else stat'ed; a compressed log is inflated whole, a fraction of a
    millisecond); None for a game still being written, stopped without one, or cut."""
    try:
        if path.name.endswith(GZ_SUFFIX):
            tail = logzip.read_bytes(path)[-FOOTER_TAIL:]
        else:
            with path.open("rb") as f:
                if size is None:
                    size = os.fstat(f.fileno()).st_size
                f.seek(max(0, size - FOOTER_TAIL))
                tail = f.read(FOOTER_TAIL)
    except (OSError, logzip.Unreadable):
        return None
    at = tail.rfind(FOOTER_MARK)
    while at > 0:
        for start in (at - 1, at - 3, at - 5):  # the map's header: fixmap, map 16, map 32
            if start < 0:
                continue
            try:
                frame = msgpack.unpackb(tail[start:], raw=False, strict_map_key=False)
            except (ValueError, msgpack.UnpackException):
                continue  # not the start of the last frame
            if isinstance(frame, dict) and frame.get("k") == "footer":
                return frame
        at = tail.rfind(FOOTER_MARK, 0, at)
    return None
