"""One msgpack file per game: a header, the frames of play in order, a footer.

Frames are msgpack maps with a kind ``"k"``: ``header``, ``rx`` (a raw inbound message as
received), ``event`` (an internal event parsed from it), ``decision`` (request, legal set, chosen
action, policy, top candidates, time spent, fallback and its kind), ``tx`` (a raw outbound
message), ``hand`` (a hand ended: the point where the file is fsynced) and ``footer``.

The writer appends and flushes every frame, so a process killed at any moment leaves a file
whose every complete frame reads back; it fsyncs at the end of each hand and at close. The reader
never fails on a cut or damaged tail: it returns what it could read and says where it stopped.
What a newer mjbot added (an event or action type, a frame kind, a field) is skipped and
counted (``GameLog.skipped``), the rest of the file read: a log outlives the version that wrote it.
Each header frame names the build that wrote the frames after it (replay/version.py); where
that is this very build or an older one of its history, such a name is damage instead.
Configured secret values are scrubbed from every string before it reaches the disk.
"""

from __future__ import annotations

import contextlib
import dataclasses
import datetime as dt
import os
import re
import time
import urllib.parse
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO, Literal

from protocols import events as ev
from replay import logzip, progress, schema
from replay.gcpause import collector_paused
from replay.locking import hold_while_writing
from replay.version import build_version, knows_all_of

FORMAT_VERSION = 1
SUFFIX = ".mjlog.msgpack"
GZ_SUFFIX = SUFFIX + logzip.GZ  # a finished log compressed in place (replay/logzip.py)
SCRUBBED = "***"
LOG_DIR_ENV = "MJBOT_LOG_DIR"


class LogError(ValueError):
    """A file is not an mjbot game log, or a frame in it is malformed."""


class UnknownKind(LogError):
    """A frame of a kind this version does not know, named as ours are and timed as every
    frame of play is (a newer mjbot's)."""

    def __init__(self, kind: str) -> None:
        super().__init__(f"unknown frame kind {kind!r}")
        self.kind = kind
        self.name = f"{kind!r} frame"

    def __reduce__(self) -> tuple[Any, ...]:  # pickle would call __init__(the message) alone
        return (type(self), (self.kind,))


# --------------------------------------------------------------------------- frames


@dataclass(frozen=True)
class Header:
    platform: str
    variant: str
    seat: int | None = None
    policy: str = ""
    policy_config: dict[str, Any] = field(default_factory=dict, hash=False)
    game_id: str = ""
    started: str = ""  # ISO 8601 wall-clock time of the start
    mjbot_version: str = ""
    format: int = FORMAT_VERSION
    extra: dict[str, Any] = field(default_factory=dict, hash=False)


@dataclass(frozen=True)
class RxFrame:
    t: float
    raw: str | bytes


@dataclass(frozen=True)
class TxFrame:
    t: float
    raw: str | bytes


@dataclass(frozen=True)
class EventFrame:
    t: float
    event: Any


@dataclass(frozen=True)
class DecisionFrame:
    """One answered request. ``candidates``: the policy's best few actions with its scores;
    ``elapsed``: seconds from request to answer; ``fallback``: why the policy's own answer was
    not played ("" when it was), for people; ``fallback_kind``: its kind, for what counts
    (brain/tally.py's FallbackKind value: "not-ready", "late", "failed", "illegal", "table";
    "" when the policy's own answer was played, and in logs from before it was recorded: a
    newer mjbot's kind is kept as written); ``source``: what answered (brain/anytime.py: "policy",
    "best_so_far", "forced", "fallback-<policy>", "fallback-best-so-far",
    "fallback-safest"; "" in logs from before it was recorded, and at the local table);
    ``work``: the work the played answer reports (e.g. playouts; 0 when none)."""

    t: float
    request: ev.DecisionRequest
    legal: tuple[Any, ...]
    action: Any
    policy: str = ""
    candidates: tuple[tuple[Any, float], ...] = ()
    elapsed: float = 0.0
    fallback: str = ""
    seat: int | None = None  # whose decision, in a full-information log (the local table)
    source: str = ""
    work: int = 0
    fallback_kind: str = ""


@dataclass(frozen=True)
class HandEndFrame:
    t: float


@dataclass(frozen=True)
class Footer:
    result: dict[str, Any] = field(default_factory=dict, hash=False)
    scores: tuple[int, ...] = ()
    ended: str = ""


Frame = RxFrame | TxFrame | EventFrame | DecisionFrame | HandEndFrame


def _frame_to_map(frame: Any) -> dict[str, Any]:
    if isinstance(frame, RxFrame | TxFrame):
        return {"k": "rx" if isinstance(frame, RxFrame) else "tx", "t": frame.t, "raw": frame.raw}
    if isinstance(frame, EventFrame):
        return {"k": "event", "t": frame.t, "event": schema.encode(frame.event)}
    if isinstance(frame, DecisionFrame):
        return {
            "k": "decision", "t": frame.t,
            "request": schema.encode(frame.request),
            "legal": schema.encode_many(frame.legal),
            "action": schema.encode(frame.action),
            "policy": frame.policy,
            "candidates": [[schema.encode(a), float(s)] for a, s in frame.candidates],
            "elapsed": frame.elapsed, "fallback": frame.fallback,
            **({"seat": frame.seat} if frame.seat is not None else {}),
            **({"source": frame.source} if frame.source else {}),
            **({"work": frame.work} if frame.work else {}),
            **({"fallback_kind": frame.fallback_kind} if frame.fallback_kind else {}),
        }
    if isinstance(frame, HandEndFrame):
        return {"k": "hand", "t": frame.t}
    if isinstance(frame, Header):
        return {"k": "header", **{f: getattr(frame, f) for f in Header.__dataclass_fields__}}
    if isinstance(frame, Footer):
        return {"k": "footer", "result": frame.result, "scores": list(frame.scores),
                "ended": frame.ended}
    raise LogError(f"not a frame: {type(frame).__name__}")


# the keys each frame kind's writer gives (the header's are its dataclass's, checked apart)
_FRAME_FIELDS: dict[str, frozenset[str]] = {
    "rx": frozenset({"k", "t", "raw"}), "tx": frozenset({"k", "t", "raw"}),
    "event": frozenset({"k", "t", "event"}), "hand": frozenset({"k", "t"}),
    "decision": frozenset({"k", *DecisionFrame.__dataclass_fields__}),
    "footer": frozenset({"k", *Footer.__dataclass_fields__}),
}


def _count_unknown(kind: str, data: dict[Any, Any], ignored: Counter[str] | None) -> None:
    """A field a newer mjbot added to a frame of a known kind (``decision.thinking_ms``),
    counted in ``ignored`` as a header's or an event's is; it was dropped without a word, so
    it never reached the note that says what a newer writer added. A key named as no writer
    names one is damage, as in the header."""
    for k in data:
        if k in _FRAME_FIELDS[kind]:
            continue
        if ignored is None or not isinstance(k, str) or not schema.FIELD_NAME.fullmatch(k):
            raise LogError(f"{kind} frame has no field {k!r}")
        ignored[f"{kind}.{k}"] += 1


def _map_to_frame(data: Any, ignored: Counter[str] | None = None) -> Any:
    """The frame a map stands for. With ``ignored`` (the reader), fields a newer mjbot added
    are left out and counted there; a type or kind it added raises UnknownType / UnknownKind."""
    if not isinstance(data, dict) or not isinstance(data.get("k"), str):
        raise LogError(f"a frame must be a map with a kind 'k', got {type(data).__name__}")
    kind = data["k"]
    if kind in _FRAME_FIELDS:
        _count_unknown(kind, data, ignored)
    try:
        if kind in ("rx", "tx"):
            raw = data["raw"]
            if not isinstance(raw, str | bytes):
                raise LogError(f"{kind} frame: raw must be text or bytes")
            return (RxFrame if kind == "rx" else TxFrame)(float(data["t"]), raw)
        if kind == "event":
            return EventFrame(float(data["t"]), schema.decode(data["event"], ignored))
        if kind == "decision":
            return DecisionFrame(
                t=float(data["t"]),
                request=schema.decode(data["request"], ignored),
                legal=tuple(schema.decode_many(data["legal"], ignored)),
                action=schema.decode(data["action"], ignored),
                policy=str(data.get("policy", "")),
                candidates=tuple((schema.decode(a, ignored), float(s))
                                 for a, s in data["candidates"]),
                elapsed=float(data.get("elapsed", 0.0)),
                fallback=str(data.get("fallback", "")),
                seat=None if data.get("seat") is None else int(data["seat"]),
                source=str(data.get("source", "")),
                work=int(data.get("work", 0)),
                fallback_kind=str(data.get("fallback_kind", "")),
            )
        if kind == "hand":
            return HandEndFrame(float(data["t"]))
        if kind == "header":
            fields = {k: v for k, v in data.items() if k != "k"}
            for k in [k for k in fields if k not in Header.__dataclass_fields__]:
                # named as a field is (schema.FIELD_NAME); anything else there is damage
                if (ignored is None or not isinstance(k, str)
                        or not schema.FIELD_NAME.fullmatch(k)):
                    raise LogError(f"header has no field {k!r}")
                ignored[f"Header.{k}"] += 1
                del fields[k]
            # read as a map by replay and the viewer (policy_config is read by nobody: a
            # log whose policy_config is no map opens as it always did)
            if not isinstance(fields.get("extra", {}), dict):
                raise LogError(f"extra must be a map, got {type(fields['extra']).__name__}")
            return Header(**fields)
        if kind == "footer":
            return Footer(result=dict(data.get("result") or {}),
                          scores=tuple(data.get("scores") or ()), ended=str(data.get("ended", "")))
    except schema.UnknownType:
        raise
    except (KeyError, TypeError, ValueError) as exc:
        raise LogError(f"malformed {kind} frame: {exc}") from None
    # a newer kind is named as a field is (schema.FIELD_NAME) and, as every frame of play,
    # carries its time; a map without one is damage
    if schema.FIELD_NAME.fullmatch(kind) and isinstance(data.get("t"), float | int):
        raise UnknownKind(kind)
    raise LogError(f"unknown frame kind {kind!r}")


# --------------------------------------------------------------------------- secrets


def secret_variants(secret: str) -> list[str]:
    """The forms a secret takes on the wire: as is, URL-quoted, and percent-encoded byte by byte
    (Tenhou writes names as ``%4E%6F...``), upper and lower case."""
    if not secret:
        return []
    every_byte = "".join(f"%{b:02X}" for b in secret.encode())
    forms = {secret, urllib.parse.quote(secret, safe=""), urllib.parse.quote(secret),
             every_byte, every_byte.lower()}
    return sorted(forms, key=len, reverse=True)


class Scrubber:
    """Replaces configured secret values in every string and byte string of a frame."""

    def __init__(self, secrets: Iterable[str] = ()) -> None:
        forms = [f for s in secrets if s for f in secret_variants(s)]
        self._text = re.compile("|".join(re.escape(f) for f in forms)) if forms else None
        self._bytes = (re.compile(b"|".join(re.escape(f.encode()) for f in forms))
                       if forms else None)

    def __bool__(self) -> bool:
        return self._text is not None

    def masked(self, data: bytes) -> bytes:
        """``data`` with each secret replaced by as many ``*`` as it has bytes: a trace that
        tells a payload's length beside it (the websockets library's frames) still tells the
        true one, and cuts a long payload where it cut the real one."""
        if self._bytes is None:
            return data
        return self._bytes.sub(lambda m: b"*" * len(m.group()), data)

    def __call__(self, value: Any) -> Any:
        if self._text is None or self._bytes is None:
            return value
        if isinstance(value, str):
            return self._text.sub(SCRUBBED, value)
        if isinstance(value, bytes):
            return self._bytes.sub(SCRUBBED.encode(), value)
        if isinstance(value, dict):
            return {self(k): self(v) for k, v in value.items()}
        if isinstance(value, list | tuple):
            return [self(v) for v in value]
        return value


# --------------------------------------------------------------------------- paths


def is_log_name(name: str) -> bool:
    """One of our logs' file names, compressed or not."""
    return name.endswith((SUFFIX, GZ_SUFFIX))


def plain_name(name: str) -> str:
    """A log's name as it was written (``.gz`` taken off a compressed one's)."""
    return name.removesuffix(logzip.GZ) if name.endswith(GZ_SUFFIX) else name


def default_log_dir() -> Path:
    return Path(os.environ.get(LOG_DIR_ENV) or "logs")


def log_path(root: str | Path, platform: str, game_id: str,
             when: dt.datetime | None = None) -> Path:
    """``root/<platform>/<YYYY-MM-DD>/<HHMMSS>-<game id>.mjlog.msgpack`` (local time), so a
    tournament day's games sit together in start order."""
    when = when or dt.datetime.now()
    safe_id = re.sub(r"[^A-Za-z0-9._-]+", "_", game_id).strip("._") or "game"
    safe_platform = re.sub(r"[^A-Za-z0-9_-]+", "_", platform) or "unknown"
    return (Path(root) / safe_platform / when.strftime("%Y-%m-%d")
            / f"{when.strftime('%H%M%S')}-{safe_id[:80]}{SUFFIX}")


# --------------------------------------------------------------------------- writer


class GameLogWriter:
    """Appends the frames of one game to its file.

    ``append=True`` continues an existing file (a Botzone match played one process per turn):
    a damaged tail left by a killed process is cut back to the last complete frame first, and
    the header is written only if the file has none.

    ``on_failure``: where a platform session's log goes when a frame cannot be written (a full
    disk, a failing mount): it is told the error once, the log is closed there and later frames
    are dropped, so that the game goes on and every answer is still sent. Without it (the
    arena, the tools) the error is raised. Opening the file and writing its header raise
    either way: the caller then plays without a log.
    """

    def __init__(self, path: str | Path, header: Header, secrets: Iterable[str] = (),
                 append: bool = False, clock: Any = time.monotonic,
                 flush_per_hand: bool = False,
                 on_failure: Callable[[OSError], None] | None = None,
                 exclusive: bool = False) -> None:
        self.path = Path(path)
        self._on_failure: Callable[[OSError], None] | None = None  # set once the header is in
        self.failure: OSError | None = None  # the write that ended the log, if one did
        # The local table runs in our own process: losing the hand in play when it dies costs
        # nothing, so it flushes once per hand (no fsync until close) and arena logs stay cheap.
        self._flush_each_frame = not flush_per_hand
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._scrub = Scrubber(secrets)
        self._clock = clock
        import msgpack  # here: the mjai.app upload writes no log and has no msgpack

        self._packer = msgpack.Packer(use_bin_type=True)
        self.repaired_bytes = 0
        has_header = False
        continued: str | None = None  # the version of the mjbot that wrote the frames before
        if append and logzip.compressed_name(self.path).exists():
            raise LogError(f"log {self.path} was compressed when finished: it cannot be "
                           "continued")
        if append and self.path.exists() and self.path.stat().st_size > 0:
            existing = read_log(self.path)
            has_header = existing.header is not None
            continued = existing.writers[-1] if existing.writers else None
            if existing.truncated is not None:
                self.repaired_bytes = existing.truncated.size - existing.truncated.offset
                os.truncate(self.path, existing.truncated.offset)
        kept = append and self.path.exists()  # a file of before, not ours to remove
        mode: Literal["ab", "xb", "wb"] = "ab" if append else "xb" if exclusive else "wb"
        self._file: BinaryIO | None = open(self.path, mode)  # noqa: SIM115
        # held until the file is closed (or the process dies): serve's log upkeep never removes
        # nor compresses a log in play, one whose worker is suspended for days included
        hold_while_writing(self._file.fileno())
        header = dataclasses.replace(
            header, started=header.started or dt.datetime.now().isoformat(timespec="seconds"),
            mjbot_version=header.mjbot_version or build_version())
        # a log continued by another mjbot than the one that wrote the frames before gets
        # a header of this one's (every reader keeps the first, reads past the others): what
        # follows is then judged by the version that wrote it (the reader's _not_newer)
        if not has_header or continued != header.mjbot_version:
            try:
                self._write(_frame_to_map(header))
            except OSError:
                # a full disk: the file made here holds no whole header, so nothing of a game.
                # Left behind, every reader took it for a broken log (the viewer listed each
                # as a game that opens as "the file is empty") until the upkeep's one-day rule
                self._abandon(created=not kept)
                raise
        self.header = header
        self._on_failure = on_failure

    def _abandon(self, created: bool) -> None:
        """Close the file whose header could not be written; remove it if it was made here
        (a log continued with ``append`` keeps what it held)."""
        file, self._file = self._file, None
        if file is not None:
            with contextlib.suppress(OSError):  # its buffered bytes fail as the header did
                file.close()
        if created:
            with contextlib.suppress(OSError):
                self.path.unlink()

    @classmethod
    def create(cls, root: str | Path | None, header: Header, secrets: Iterable[str] = (),
               when: dt.datetime | None = None, flush_per_hand: bool = False,
               on_failure: Callable[[OSError], None] | None = None) -> GameLogWriter:
        """A new log at the standard place under ``root`` (default ``$MJBOT_LOG_DIR`` or
        ``logs``), named after the header's platform and game id."""
        path = log_path(root if root is not None else default_log_dir(), header.platform,
                        header.game_id or "game", when)
        n = 1
        while True:
            # a name is taken by anything there, a link to nowhere too (opened for writing,
            # it made its target), and it is made only if no one made it since the look: two
            # writers of one name in one second (two serves on one folder) each truncated
            # the other's log, and one whose header failed removed the other's file
            if not os.path.lexists(path) and not logzip.compressed_name(path).exists():
                try:
                    return cls(path, header, secrets, flush_per_hand=flush_per_hand,
                               on_failure=on_failure, exclusive=True)
                except FileExistsError as exc:
                    if exc.filename != str(path):  # not the log's own name (its folder's)
                        raise
            n += 1
            path = path.with_name(path.name.replace(SUFFIX, f"-{n}{SUFFIX}"))

    # The frame methods return nothing and never raise on content: a log must not stop play
    # (nor, with ``on_failure``, on a disk that fails).

    def rx(self, raw: str | bytes) -> None:
        self._write({"k": "rx", "t": self._clock(), "raw": raw})

    def tx(self, raw: str | bytes) -> None:
        self._write({"k": "tx", "t": self._clock(), "raw": raw})

    def event(self, event: Any) -> None:
        self._write({"k": "event", "t": self._clock(), "event": schema.encode(event)})
        if isinstance(event, ev.RoundWon | ev.RoundDrawn):
            self.end_hand()

    def decision(self, request: ev.DecisionRequest, legal: Iterable[Any], action: Any,
                 policy: str = "", candidates: Iterable[tuple[Any, float]] = (),
                 elapsed: float = 0.0, fallback: str = "", seat: int | None = None,
                 source: str = "", work: int = 0, fallback_kind: str = "") -> None:
        frame = DecisionFrame(self._clock(), request, tuple(legal), action, policy,
                              tuple(candidates), elapsed, fallback, seat, source, work,
                              fallback_kind)
        self._write(_frame_to_map(frame))

    def end_hand(self) -> None:
        """Mark the end of a hand and make the file durable up to here."""
        self._write({"k": "hand", "t": self._clock()})
        if self._flush_each_frame:
            self._sync()
        elif self._file is not None:
            try:
                self._file.flush()
            except OSError as exc:
                self._failed(exc)

    def close(self, footer: Footer | None = None) -> None:
        if self._file is None:
            return
        if footer is not None:
            if not footer.ended:
                footer = Footer(footer.result, footer.scores, dt.datetime.now().isoformat())
            self._write(_frame_to_map(footer))
        self._sync()
        if self._file is not None:  # None: a failed write closed it already (on_failure)
            self._file.close()
            self._file = None

    @property
    def closed(self) -> bool:
        return self._file is None

    def __enter__(self) -> GameLogWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _write(self, data: dict[str, Any]) -> None:
        if self._file is None:
            if self.failure is not None:
                return  # the disk failed: the game goes on without its log
            raise LogError(f"log {self.path} is closed")
        if self._scrub:
            data = self._scrub(data)
        try:
            self._file.write(self._packer.pack(data))
            if self._flush_each_frame:
                self._file.flush()
        except OSError as exc:
            self._failed(exc)

    def _sync(self) -> None:
        if self._file is not None:
            try:
                self._file.flush()
                os.fsync(self._file.fileno())
            except OSError as exc:
                self._failed(exc)

    def _failed(self, exc: OSError) -> None:
        """A write or sync failed: raised without ``on_failure``; with it, told once (a report
        that itself fails to be written is dropped), and the file closed (what it holds up to
        the failed frame still reads back)."""
        if self._on_failure is None:
            raise exc
        file, self._file, self.failure = self._file, None, exc
        if file is not None:
            # its close flushes what is still buffered, which fails the same way
            with contextlib.suppress(OSError):
                file.close()
        # the report goes to stderr (print, structlog): a stderr on the same full disk fails
        # the same way, and that must not cost the answer either
        with contextlib.suppress(OSError):
            self._on_failure(exc)


# --------------------------------------------------------------------------- reader


def writers_text(versions: tuple[str, ...]) -> str:
    """``mjbot 0.1.0+g...`` (``, continued by mjbot ...`` for each later one), as a note
    names the writers of a log."""
    named = [f"mjbot {v}" if v else "an mjbot of no recorded version" for v in versions]
    return ", continued by ".join(named) or "an mjbot of no recorded version"


@dataclass(frozen=True)
class Truncation:
    """Where reading stopped: ``offset`` is the end of the last good frame, ``size`` the file's
    size, ``reason`` what was found there; of a compressed log (``packed``: the gzip file's
    size) both count the bytes it unpacks to."""

    offset: int
    size: int
    reason: str
    packed: int | None = None

    def place(self) -> str:
        """Where the cut is, in bytes a user can count: a compressed log's are those
        ``gunzip -c`` gives, not the file's ("byte 25487 of 25509" of a 3,000-byte file)."""
        if self.packed is None:
            return f"byte {self.offset} of {self.size}"
        return (f"byte {self.offset} of the {self.size} its gzip file of {self.packed} bytes "
                "unpacks to")

    def note(self) -> str:
        """The viewer's word for it (the game's outline, the list's mark of a damaged log)."""
        return f"the log is cut at {self.place()} ({self.reason})"


@dataclass
class GameLog:
    path: Path
    header: Header | None
    frames: list[Any]
    footer: Footer | None
    truncated: Truncation | None
    # what a newer mjbot wrote that this version does not know, skipped: a type's name
    # (FuritenShown), a frame kind ("'note' frame") or a field (TileDrawn.colour) -> how many
    skipped: dict[str, int] = field(default_factory=dict)
    # the versions of the mjbots that wrote it, in order: its header's, then each that
    # continued it (``append``) where it was another (a second header frame says so)
    writers: tuple[str, ...] = ()

    def newer_note(self) -> str | None:
        """The one line that says what was skipped and which mjbot wrote the log, or None
        where nothing was skipped."""
        if not self.skipped:
            return None
        what = ", ".join(f"{name} ({n})" for name, n in sorted(self.skipped.items()))
        return (f"written by {writers_text(self.writers)}, this is {build_version()}: skipped "
                f"what this version does not know: {what}; the rest of the log is read")

    @property
    def complete(self) -> bool:
        return self.footer is not None and self.truncated is None

    def events(self) -> Iterator[Any]:
        for f in self.frames:
            if isinstance(f, EventFrame):
                yield f.event

    def decisions(self) -> list[DecisionFrame]:
        return [f for f in self.frames if isinstance(f, DecisionFrame)]


def read_log(path: str | Path, keep: bool = True) -> GameLog:
    """Every complete frame of a log, compressed (``.gz``) or not. A cut or damaged tail is
    reported in ``truncated``, never raised; a file that is not a log at all (no header where
    one should be, a gzip file nothing inflates from) raises LogError. ``keep``: as
    :func:`parse_log`'s."""
    path = Path(path)
    raw = path.read_bytes()
    try:
        data = logzip.inflate(raw)
    except logzip.Unreadable as exc:
        raise LogError(f"{path}: not an mjbot game log ({exc})") from None
    return parse_log(data, path, len(raw) if logzip.is_gzip(raw) else None, keep)


def parse_log(data: bytes, path: Path | str = "<bytes>", packed: int | None = None,
              keep: bool = True) -> GameLog:
    """The log's frames (its header and footer apart); a file cut or damaged after its header
    is read up to the last whole frame and says where (``truncated``; ``packed``: the size
    of the gzip file ``data`` was unpacked from). The cycle collector is paused meanwhile
    (replay/gcpause.py): every object read is kept. ``keep=False``: each frame read is
    checked and dropped (``frames`` stays empty): where the file stops and why, with the
    memory of one frame (the viewer's check of a listed log)."""
    with collector_paused():
        return _parse_log(data, path, packed, keep)


def _parse_log(data: bytes, path: Path | str, packed: int | None, keep: bool) -> GameLog:
    import msgpack  # here, as in GameLogWriter

    unpacker = msgpack.Unpacker(raw=False, strict_map_key=False, max_buffer_size=0)
    unpacker.feed(data)
    header: Header | None = None
    footer: Footer | None = None
    frames: list[Any] = []
    skipped: Counter[str] = Counter()
    ignored: Counter[str] = Counter()  # one frame's, counted once the frame is read whole
    writers: list[str] = []  # the versions its header frames name (GameLog.writers)
    good = 0
    read = 0  # frames read, the header and footer apart
    reason = ""
    ask = progress.hook()  # a long read given up between hands (replay/progress.py)
    while True:
        try:
            obj = unpacker.unpack()
        except msgpack.OutOfData:
            reason = "cut inside a frame"
            break
        except (ValueError, msgpack.UnpackException) as exc:
            reason = f"unreadable bytes ({exc})"
            break
        try:
            frame = _map_to_frame(obj, ignored)
        except (LogError, schema.SchemaError) as exc:
            ignored.clear()
            if good == 0:
                raise LogError(f"{path}: not an mjbot game log ({exc})") from None
            if not isinstance(exc, UnknownKind | schema.UnknownType):
                reason = f"bad frame: {exc}"
                break
            if (why := _not_newer(writers)) is not None:
                reason = f"bad frame: {exc}{why}"
                break
            skipped[exc.name] += 1  # a newer mjbot's: the frames after it are read
            good = unpacker.tell()
            if good == len(data):
                break
            continue
        if isinstance(frame, Header):  # the frames after it are its writer's
            # (a version that is no text, damaged, names no writer: "")
            version = frame.mjbot_version if isinstance(frame.mjbot_version, str) else ""
            if not writers or version != writers[-1]:
                writers.append(version)
        if ignored:
            if (why := _not_newer(writers)) is not None:
                unknown = f"no field {', '.join(sorted(ignored))}{why}"
                if good == 0:
                    raise LogError(f"{path}: not an mjbot game log (header has {unknown})")
                reason = f"bad frame: {unknown}"
                break
            skipped.update(ignored)
            ignored.clear()
        if good == 0 and not isinstance(frame, Header):
            raise LogError(f"{path}: not an mjbot game log (first frame is not a header)")
        good = unpacker.tell()
        if isinstance(frame, Header):
            if header is None:
                header = frame
        elif isinstance(frame, Footer):
            footer = frame
        else:
            read += 1
            if keep:
                frames.append(frame)
            if ask is not None and not read % progress.EVERY:
                ask()
        if good == len(data):
            break
    truncated = None if good == len(data) else Truncation(good, len(data), reason, packed)
    return GameLog(Path(path), header, frames, footer, truncated, dict(skipped),
                   tuple(writers))


def header_refusal(first: Any) -> str | None:
    """Why :func:`parse_log` refuses ``first`` (a log's first frame, unpacked) as its header,
    and with it the whole log ("not an mjbot game log"); None where it takes it. The viewer's
    list reads only this frame of a log: a header the reader refuses (its extra no map, a
    field this very build never writes) was listed as a game and opened as a 422."""
    ignored: Counter[str] = Counter()
    try:
        frame = _map_to_frame(first, ignored)
    except (LogError, schema.SchemaError) as exc:
        return str(exc)
    if not isinstance(frame, Header):
        return "first frame is not a header"
    version = frame.mjbot_version if isinstance(frame.mjbot_version, str) else ""
    if ignored and (why := _not_newer([version])) is not None:
        return f"header has no field {', '.join(sorted(ignored))}{why}"
    return None


def _not_newer(writers: list[str]) -> str | None:
    """Where the frames being read were written by this very build or an older one of its
    history (replay/version.py's knows_all_of): why a name it does not know is damage, not
    a newer mjbot's addition, for the cut's reason. None where a newer mjbot may have
    written them."""
    how = knows_all_of(writers[-1]) if writers else None
    if how is None:
        return None
    return (f" (written by mjbot {writers[-1]}, {how}, whose writer gives no such name: "
            "damage, not a newer mjbot's)")
