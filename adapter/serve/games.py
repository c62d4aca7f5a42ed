"""Which files the replay viewer may show, and their ids.

The viewer serves game logs from a few roots (the serve process's log folder; the folders or
files given to ``mjbot view``). A game's id is its root's number and its path below the root,
joined by ``~`` (``0~practice~local~2026-11-23~101500-practice-g3.mjlog.msgpack``): one URL
segment, readable, and resolved only after every part is checked (no ``..``, no separators, no
hidden files, no symlink out of the root, a known suffix), so that no id reaches a file outside
the roots. Listing reads only our logs' header frames and the first bytes of the other files
(an import is listed only if it starts as a game format does, so a README.txt or LICENSE.txt
in a served folder is not); games are parsed when opened (and the viewer's BuildCache,
viewcache.py, keeps the last few).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import msgpack

from replay import formats
from replay.log import SUFFIX
from replay.replayer import footer_unfinished
from replay.timeline import Timeline, build

SEPARATOR = "~"
IMPORT_SUFFIXES = (".json", ".jsonl", ".xml", ".mjlog", ".sgf", ".log", ".txt")
MAX_FILES = 5000  # a listing stops here (newest first within each folder walked)
MAX_DEPTH = 6
SNIFF_BYTES = 4096
# how every import format starts: mjlog XML, SGF, an NTPU log line, JSON (tenhou6, mjai,
# Botzone); an NTPU log may open with "#" comment lines
FORMAT_STARTS = (b"<", b"(", b"/", b"[", b"{")
PAGE_SIZE = 50
MAX_PAGE = 500
MAX_OFFSET = 10**9 - 1  # a listing holds at most MAX_FILES; nine digits is plenty
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
    return name.endswith(SUFFIX) or name.lower().endswith(IMPORT_SUFFIXES)


def looks_like_a_game(head: bytes) -> bool:
    """Whether an import file's first bytes start as one of the formats' do (prose does not)."""
    for line in head.removeprefix(b"\xef\xbb\xbf").splitlines():
        line = line.strip()
        if line and not line.startswith(b"#"):
            return line.startswith(FORMAT_STARTS)
    return False


class GameIndex:
    def __init__(self, roots: list[str], files: list[str] | None = None) -> None:
        self.roots = [Root(Path(r), False) for r in roots] + \
            [Root(Path(f), True) for f in files or []]
        self._headers: dict[tuple[Any, ...], dict[str, Any]] = {}
        self._sniffed: dict[tuple[str, float, int], bool] = {}
        self._lock = threading.Lock()

    # ------------------------------------------------------------------ ids

    def game_id(self, root_index: int, relative: Path) -> str:
        return SEPARATOR.join([str(root_index), *relative.parts])

    def resolve(self, game_id: str) -> Path:
        """The file an id names; GameNotFound for anything else."""
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
        try:
            resolved = candidate.resolve(strict=True)
            base = (root.path.parent if root.single else root.path).resolve(strict=True)
        except (OSError, RuntimeError):
            raise GameNotFound(game_id) from None
        if not resolved.is_relative_to(base) or not resolved.is_file() \
                or not _allowed(resolved.name):
            raise GameNotFound(game_id)
        return resolved

    # ------------------------------------------------------------------ listing

    def listing(self) -> list[dict[str, Any]]:
        """Every game file under the roots (at most MAX_FILES, the newest folders first),
        newest first."""
        found: list[dict[str, Any]] = []
        paths: set[str] = set()
        for i, root in enumerate(self.roots):
            if root.single:
                if root.path.is_file():
                    found.append(self._entry(i, root.path, Path(root.path.name)))
                    paths.add(str(root.path))
                continue
            for path in self._walk(root.path):
                relative = path.relative_to(root.path)
                if any(SEPARATOR in p for p in relative.parts):
                    continue  # an id could not name it unambiguously
                paths.add(str(path))
                if not path.name.endswith(SUFFIX) and not self._game_like(path):
                    continue
                found.append(self._entry(i, path, relative))
                if len(found) >= MAX_FILES:
                    break
        found.sort(key=lambda g: g["mtime"], reverse=True)
        with self._lock:  # forget the headers of files no longer listed
            self._headers = {k: v for k, v in self._headers.items() if k[0] in paths}
            self._sniffed = {k: v for k, v in self._sniffed.items() if k[0] in paths}
        return found

    def page(self, query: str = "", offset: int = 0, limit: int = PAGE_SIZE) -> dict[str, Any]:
        """One page of the listing, filtered by ``query`` (words that must all appear in an
        entry); only the page's own logs have their footer read (the result: final scores,
        our rank and score)."""
        games = self.listing()
        words = query.lower().split()
        matched = [g for g in games
                   if all(w in " ".join(str(v) for v in g.values()).lower() for w in words)]
        shown = matched[offset:offset + limit]
        for entry in shown:
            if entry.get("own"):
                entry.update(self._result(entry))
        return {"games": shown, "total": len(games), "matched": len(matched),
                "offset": offset, "limit": limit}

    def _result(self, entry: dict[str, Any]) -> dict[str, Any]:
        from adapter.local.game import placement  # the table's rule; loaded only for a page

        path = self.resolve(entry["id"])
        key = (str(path), entry["mtime"], entry["size"], "footer")
        with self._lock:
            if key in self._headers:
                return self._headers[key]
        footer = _footer(path, entry["size"])
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
                info["our_rank"] = (ranks[seat] if ranks is not None and _ranks(ranks)
                                    else placement(scores)[seat])
        with self._lock:
            self._headers[key] = info
        return info

    def _walk(self, top: Path) -> Iterator[Path]:
        """Game files below ``top``, names in reverse order: the date folders the logs are
        kept in come newest first, so that a listing cut at MAX_FILES keeps the recent ones."""
        if not top.is_dir():
            return
        base_depth = len(top.parts)
        for folder, dirs, files in os.walk(top, followlinks=False):
            depth = len(Path(folder).parts) - base_depth
            dirs[:] = sorted((d for d in dirs if not d.startswith(".")), reverse=True) \
                if depth < MAX_DEPTH else []
            for name in sorted(files, reverse=True):
                path = Path(folder) / name
                if not name.startswith(".") and _allowed(name) and not path.is_symlink():
                    yield path  # an id never follows a link

    def _game_like(self, path: Path) -> bool:
        """An import's first bytes start as a game format's (remembered per file version)."""
        try:
            st = path.stat()
            key = (str(path), st.st_mtime, st.st_size)
            with self._lock:
                if key in self._sniffed:
                    return self._sniffed[key]
            with path.open("rb") as f:
                verdict = looks_like_a_game(f.read(SNIFF_BYTES))
        except OSError:
            return False
        with self._lock:
            self._sniffed[key] = verdict
        return verdict

    def _entry(self, index: int, path: Path, relative: Path) -> dict[str, Any]:
        try:
            st = path.stat()
        except OSError:
            st = None
        entry: dict[str, Any] = {
            "id": self.game_id(index, relative), "name": path.name,
            "folder": str(relative.parent) if str(relative.parent) != "." else "",
            "session": relative.parts[0] if len(relative.parts) > 1 else "",
            "size": st.st_size if st else 0, "mtime": st.st_mtime if st else 0.0,
            "own": path.name.endswith(SUFFIX)}
        if entry["own"] and st is not None:
            entry.update(self._header(path, st.st_mtime, st.st_size))
        return entry

    def _header(self, path: Path, mtime: float, size: int) -> dict[str, Any]:
        key = (str(path), mtime, size)
        with self._lock:
            if key in self._headers:
                return self._headers[key]
        info: dict[str, Any] = {}
        try:
            with path.open("rb") as f:
                unpacker = msgpack.Unpacker(f, raw=False, strict_map_key=False,
                                            max_buffer_size=1 << 20)
                head = next(unpacker, None)
            if isinstance(head, dict) and head.get("k") == "header":
                extra = head.get("extra")
                extra = extra if isinstance(extra, dict) else {}
                seat = extra.get("our_seat", head.get("seat"))
                info = {"platform": head.get("platform"), "variant": head.get("variant"),
                        "started": head.get("started"), "policy": head.get("policy"),
                        "players": extra.get("players"),
                        "our_seat": seat if isinstance(seat, int) and 0 <= seat < 4 else None}
        except (OSError, ValueError, msgpack.UnpackException):
            info = {"unreadable": True}
        with self._lock:
            self._headers[key] = info
        return info

    # ------------------------------------------------------------------ games

    def timeline(self, game_id: str) -> Timeline:
        """The game's steps, parsed now (the viewer's BuildCache keeps the last few);
        GameNotFound, or the formats' UnknownFormat / LogError for a file no reader
        accepts."""
        path = self.resolve(game_id)
        return build(formats.read(path.read_bytes(), path))

    def loaded(self, game_id: str) -> formats.Loaded:
        path = self.resolve(game_id)
        return formats.read(path.read_bytes(), path)


def _four_numbers(value: Any) -> list[Any] | None:
    """A footer's scores if they are four numbers, else None."""
    if isinstance(value, list) and len(value) == 4 and all(
            isinstance(v, int | float) and not isinstance(v, bool) for v in value):
        return value
    return None


def _ranks(value: Any) -> bool:
    """Whether a footer's ranks are four places, 1 to 4."""
    return isinstance(value, list) and len(value) == 4 and all(
        type(v) is int and 1 <= v <= 4 for v in value)


def _footer(path: Path, size: int) -> dict[str, Any] | None:
    """The footer frame at the end of one of our logs, read from its last bytes; None for a
    game still being written, stopped without one, or cut."""
    try:
        with path.open("rb") as f:
            f.seek(max(0, size - FOOTER_TAIL))
            tail = f.read(FOOTER_TAIL)
    except OSError:
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
