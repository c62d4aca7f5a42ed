"""Which reader a log file needs: every known format is tried, the likeliest first.

A file's first bytes only suggest a format (a JSON object can be a tenhou.net/6 game, a
Botzone judge log or one mjai line), so guessing alone misreads files: plain text used to be
taken for msgpack and failed with a message about frames. Here the guess only orders the tries;
the first reader that accepts the file wins, and a file that none accepts gets one line per
format saying why that reader refused it.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from protocols import events as ev
from replay import logzip
from replay.formats import (
    botzone_human,
    botzone_log,
    mjai_log,
    mjlog,
    ntpu_log,
    nycu_sgf,
    tenhou6,
    tenhou_client,
)
from replay.log import GameLog, LogError, parse_log
from replay.record import CutShort, GameRecord, RecordError, Refused
from replay.schema import SchemaError

REASON_CHARS = 200  # a reason is one line of the error message


@dataclass(frozen=True)
class Loaded:
    """``name``: the format's short name (its ``--export`` / source name); exactly one of
    ``log`` (our own msgpack log) and ``record`` (an import) is set."""

    name: str
    label: str
    log: GameLog | None = None
    record: GameRecord | None = None


class UnknownFormat(RecordError):
    """No reader accepted the file; ``attempts`` is (format label, why it refused) for every
    format, in the order of :data:`FORMATS`. ``likeliest`` is the label of the format the
    file's opening marks it as, if it has such a mark: that reader's refusal leads the
    message, since it is almost always the one the user needs (a damaged Botzone log is not
    helped by eight other formats' reasons first)."""

    def __init__(self, attempts: list[tuple[str, str]], likeliest: str | None = None,
                 cut: tuple[str, str] | None = None,
                 refused: tuple[str, str] | None = None) -> None:
        self.attempts = attempts
        self.likeliest = likeliest
        self.cut = cut
        self.refused = refused
        if cut is not None:  # a one-document format's file cut short: that, in one line
            super().__init__(f"{cut[0]} cut short: {cut[1]}")
            return
        if refused is not None:  # the format the file is marked as refused what it holds
            super().__init__(f"{refused[0]}: {refused[1]}")
            return
        if attempts and attempts[0][1] == EMPTY:  # nine readers' ways of finding nothing
            super().__init__(f"not a game log we know: {EMPTY}")
            return
        why_text = {why for label, why in attempts[1:]}  # the text formats, after our own
        if likeliest is None and len(why_text) == 1 and attempts[1:] \
                and next(iter(why_text)).startswith("not UTF-8 text"):
            # binary, and not our log: eight lines of one reason said nothing more than this
            super().__init__(f"not a game log we know: not an {attempts[0][0]} "
                             f"({attempts[0][1]}), and {next(iter(why_text))}, which the "
                             f"{len(attempts) - 1} other formats are")
            return
        lines = "\n".join(f"  {label}: {why}" for label, why in attempts)
        lead = "" if likeliest is None else \
            f" ({likeliest}, by its opening: {dict(attempts)[likeliest]})"
        super().__init__(f"not a game log we know{lead}; tried:\n{lines}")

    def __reduce__(self) -> tuple[Any, ...]:  # pickle would call __init__(the message) alone
        return type(self), (self.attempts, self.likeliest, self.cut, self.refused), \
            self.__dict__


TextReader = Callable[[str], GameRecord]

# name, label, reader of the decoded text; our own binary log is handled before these
TEXT_FORMATS: tuple[tuple[str, str, TextReader], ...] = (
    ("mjlog", "tenhou mjlog XML", mjlog.loads),
    ("tenhou6", "tenhou.net/6 JSON", tenhou6.loads),
    ("mjai", "mjai JSONL", mjai_log.loads),
    ("botzone", "Botzone judge log", botzone_log.loads),
    ("botzone_human", "Botzone human games (preprocessed)", botzone_human.loads),
    ("nycu_sgf", "NYCU SGF", nycu_sgf.loads),
    ("ntpu_log", "NTPU command log", ntpu_log.loads),
    (tenhou_client.SOURCE, tenhou_client.LABEL, tenhou_client.loads),
)
MJBOT_LABEL = "mjbot msgpack log"
EMPTY = "the file is empty"  # our own reader's word for no bytes, which every format refuses
FORMATS: tuple[str, ...] = (MJBOT_LABEL, *(label for _, label, _ in TEXT_FORMATS))

# what a reader may raise on a file of another format (its own errors, and the odd slip of a
# reader that meets a shape it never expected): reported, never a traceback
_REFUSALS = (RecordError, LogError, SchemaError, ValueError, KeyError, TypeError, IndexError,
             AttributeError, RecursionError)


def own_log_frames(platform: str, frames: Sequence[Any]) -> list[Any]:
    """The frames of one of our own game logs (``platform``: its header's) as today's codec
    would have logged them, where an older mjbot's codec logged otherwise and the raw
    messages the log keeps tell how: an mjai client's draws read again from their
    ``ryukyoku`` (mjai_log.draws_read_again) and the end of each hand whose result never
    came told (mjai_log.results_not_sent). Others as logged."""
    if platform == "mjai":
        return mjai_log.results_not_sent(mjai_log.draws_read_again(frames))
    return list(frames)


def own_log_events(platform: str, events: list[Any]) -> list[Any]:
    """The events of one of our own game logs (``platform``: its header's) as replay and the
    viewer show them: an NTPU client's wins valued by our rules (the server sends no
    value; replay/formats/ntpu_log.value_own_wins), an mjai client's own wins likewise
    where the ``hora`` carried no value (mjai_log.value_own_wins), a Tenhou client's
    exhaustive draws that name no ready seat given those its payments, or the dealer keeping
    the deal, tell (tenhou_client.draws_ready), a game end that names no scores given the
    scores its hands add up to, others as logged."""
    if platform == "ntpu":
        events = ntpu_log.value_own_wins(events)
    elif platform == "mjai":
        events = mjai_log.value_own_wins(events)
    elif platform == "tenhou":
        events = tenhou_client.draws_ready(events)
    return scored_game_ends(events)


def scored_game_ends(events: list[Any]) -> list[Any]:
    """``events`` with each :class:`GameEnded` that carries no scores (mjai's ``end_game``
    may carry none, and the mjai codec then logs ``()``) given the scores of its game as the
    hands left them: the last hand's start, the riichi deposits, the deltas since. Without
    it replay printed ``final scores []`` and the viewer ``game over:`` with nothing after.
    A damaged hand's scores or seat (a score that is text, a seat that is none: the log's
    reader takes any value) leave the scores unknown up to the next hand's start, where
    they raised a TypeError or IndexError out of the read (the viewer's 500); the hand
    itself says what is wrong with it when it is shown."""
    scores: list[int] | None = None
    out: list[Any] = []
    for e in events:
        try:
            scores = _scores_after(e, scores)
        except (LookupError, TypeError, ValueError):
            scores = None
        if isinstance(e, ev.GameEnded) and not e.scores and scores is not None:
            e = dataclasses.replace(e, scores=tuple(scores))
        out.append(e)
    return out


def _scores_after(e: Any, scores: list[int] | None) -> list[int] | None:
    """The scores as ``e`` leaves them (None: not known)."""
    if isinstance(e, ev.RoundStarted):
        return list(e.scores)
    if scores is not None and isinstance(e, ev.RiichiAccepted):
        if e.scores is not None:
            return list(e.scores)
        scores[e.seat] -= 1000
    elif scores is not None and isinstance(e, ev.RoundWon | ev.RoundDrawn):
        return [a + b for a, b in zip(scores, e.deltas or (0,) * 4, strict=False)]
    return scores


BOM = "\ufeff".encode()  # the byte-order mark an editor may put in front of a text file


def guess(data: bytes) -> str:
    """The likeliest format's name from the first bytes (only the order of the tries)."""
    if _starts_with_map(data):
        return "mjbot"  # our header frame
    data = data.removeprefix(BOM)  # an editor's byte-order mark: the opening follows it
    head = data.lstrip()[:200]
    if head.startswith(b"<"):
        return "mjlog"
    if head.startswith(b"("):
        return "nycu_sgf"
    if head.startswith((b"Send:", b"Get:")):
        return "tenhou_client"
    if head.startswith((b"/", b"[ <", b"[ >", b"[<", b"[>")):
        return "ntpu_log"
    if head.startswith((b"{", b"[")):
        text = data[:5000].decode("utf-8", errors="replace")
        first = text.lstrip().split("\n", 1)[0]
        if '"type"' in first and '"log"' not in first:
            return "mjai"
        if '"output"' in text or '"initdata"' in text:
            return "botzone"
        if '"first_player"' in first and '"actions"' in first:
            return "botzone_human"
        return "tenhou6"
    return "mjbot"


def marked_as(data: bytes) -> str | None:
    """The format whose own mark the file's opening bears, or None where it bears none
    (plain text, a bare number, ``<html>``): only there does nothing but trying tell which
    format was meant. A mark is stricter than :func:`guess`'s first bytes: our header frame,
    ``<mjloggm``, an SGF's ``(;``, an NTPU line, and for JSON the key only one format has."""
    name = guess(data)
    head = data.removeprefix(BOM).lstrip()[:5000]
    marks = {"mjbot": _starts_with_map(data), "mjlog": b"<mjloggm" in head,
             "nycu_sgf": head.startswith(b"(;"), "ntpu_log": True, "mjai": True,
             "botzone": True, "botzone_human": True, "tenhou6": b'"log"' in head,
             "tenhou_client": tenhou_client.marked(head.decode("utf-8", errors="replace"))}
    return name if marks[name] else None


def read(data: bytes, path: Path | str = "<bytes>") -> Loaded:
    """The file read by the first format that accepts it; UnknownFormat if none does. gzip
    data (a log the serve process compressed, replay/logzip.py) is read as what it holds."""
    packed = len(data) if logzip.is_gzip(data) else None  # where a cut note counts from
    try:
        data = logzip.inflate(data)
    except logzip.Unreadable as exc:
        raise RecordError(str(exc)) from None
    first = guess(data)
    order = sorted(["mjbot", *(name for name, _, _ in TEXT_FORMATS)],
                   key=lambda name: name != first)
    reasons: dict[str, str] = {}
    text: str | None = None
    text_error = ""
    cut: tuple[str, str] | None = None
    refused: dict[str, str] = {}  # name -> label, of the readers that refused with Refused
    for name in order:
        if name == "mjbot":
            try:
                return Loaded("mjbot", MJBOT_LABEL, log=_own_log(data, path, packed))
            except _REFUSALS as exc:
                reasons[MJBOT_LABEL] = _reason(exc, str(path))
            continue
        label, reader = next((lb, r) for n, lb, r in TEXT_FORMATS if n == name)
        if text is None and not text_error:
            try:
                text = data.decode("utf-8")
            except UnicodeDecodeError as exc:
                if exc.reason == "unexpected end of data":
                    # a file cut inside a character's bytes (a Japanese name): the text before
                    # it, which the readers see as cut short as they see any other cut
                    text = data[:exc.start].decode("utf-8", errors="strict")
                else:
                    text_error = (f"not UTF-8 text (byte {data[exc.start]:#04x} at offset "
                                  f"{exc.start})")
        if text is None:
            reasons[label] = text_error
            continue
        try:
            return Loaded(name, label, record=reader(text))
        except _REFUSALS as exc:
            reasons[label] = _reason(exc, name)
            if isinstance(exc, CutShort) and cut is None and name == first:
                # said in one line by the reader the opening names, tried first: another's
                # (tenhou.net/6 calls any JSON object cut short) is one reason among the rest
                cut = (label, reasons[label])
            if isinstance(exc, Refused):
                refused[name] = label
    if text is not None:  # a reason may quote a line holding a Tenhou login ID: masked
        reasons = {label: tenhou_client.mask_ids(text, why) for label, why in reasons.items()}
    marked = marked_as(data)
    said = refused.get(marked or "")
    raise UnknownFormat([(label, reasons[label]) for label in FORMATS],
                        None if marked is None else _label(marked), cut,
                        None if said is None else (said, reasons[said]))


def _label(name: str) -> str:
    return MJBOT_LABEL if name == "mjbot" else next(lb for n, lb, _ in TEXT_FORMATS if n == name)


def _starts_with_map(data: bytes) -> bool:
    """A msgpack map's first byte: a fixmap, map 16 or map 32."""
    return bool(data) and (0x80 <= data[0] <= 0x8F or data[0] in (0xDE, 0xDF))


def _own_log(data: bytes, path: Path | str, packed: int | None) -> GameLog:
    if not data:
        raise LogError(EMPTY)
    if not _starts_with_map(data):
        raise LogError(f"no msgpack header frame at the start (it begins {data[:12]!r})")
    log = parse_log(data, path, packed)
    if log.header is None:
        cut = f" ({log.truncated.reason})" if log.truncated is not None else ""
        raise LogError(f"no complete header frame{cut}")
    return log


def _reason(exc: BaseException, prefix: str) -> str:
    """One line: the reader's message without the file or format name it starts with."""
    text = str(exc) if isinstance(exc, RecordError | LogError | SchemaError) \
        else f"{type(exc).__name__}: {exc}"
    for lead in (f"{prefix}: ", f"{prefix.replace('_', ' ')}: "):
        text = text.removeprefix(lead)
    own = re.fullmatch(r"not an mjbot game log \((.*)\)", text, re.S)
    text = " ".join((own.group(1) if own else text).split()) or type(exc).__name__
    return text if len(text) <= REASON_CHARS else text[:REASON_CHARS - 3] + "..."
