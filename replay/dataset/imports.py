"""Real games whose hands are all known (tenhou.net/6, Tenhou mjlog, mjai, Botzone judge logs,
NYCU SGF; whatever :mod:`replay.formats` reads with every hand shown) in the self-play schema:
the evaluation sets of the learned models.

A record is read by the replay importers into one full-information event stream; each seat's
decisions are read off it as ``mjbot replay`` reads them (its move after each draw or call, its
call / win / pass where the rules offered more than a pass), and every seat's own state is
rebuilt from its view of the stream, so the decision rows, the legal sets and the hidden truth
come from the same code as self-play. The player of every decision is "recorded".
"""

from __future__ import annotations

import shlex
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from brain.rules.variant import variant_of
from brain.state import StateError, TableState
from protocols import events as ev
from protocols.tenhou_values import placement
from replay import formats
from replay.dataset import schema as S
from replay.dataset.records import Block, BlockBuilder, HandStart
from replay.dataset.shards import DatasetWriter
from replay.record import GameRecord, RecordError, view_event
from replay.replayer import Decision, damages_at, derive_decisions, sound

RECORDED = "recorded"
FORMAT_LABELS = {name: label for name, label, _ in formats.TEXT_FORMATS}


@dataclass
class ImportReport:
    """What an import did with each file: games taken, decisions, and what it left out."""

    files: list[dict[str, Any]] = field(default_factory=list)
    skipped_decisions: int = 0
    damaged_hands: int = 0  # hands left out whose moves did not fit the table


class Unreadable(S.DatasetError):
    """A file that is there but that no reader takes as a game whose hands are all known (a
    damaged log, one of our own logs): beside files that are read it is left out."""


def read_game(path: Path) -> GameRecord:
    """One game record with every hand known, from a file of any format ``mjbot replay``
    reads (DatasetError naming the file otherwise)."""
    try:
        data = path.read_bytes()
    except IsADirectoryError:  # the folder a user gives first (`make run`'s logs): say how
        raise S.DatasetError(f"{path}: is a folder; name the game files in it "
                             f"({Path(path, '*')})") from None
    except FileNotFoundError:
        raise S.DatasetError(f"{path}: no such file") from None
    except OSError as exc:
        raise S.DatasetError(f"{path}: {exc.strerror or exc}") from None
    try:
        loaded = formats.read(data, path)
    except RecordError as exc:
        first = str(exc).splitlines()[0].removesuffix("; tried:")
        raise Unreadable(f"{path}: {first}" + (f" (`mjbot replay {shlex.quote(str(path))}` says "
                             "why each format refused it)" if isinstance(exc, formats.UnknownFormat)
                             # only where replay has more to say than this one line
                             and "\n" in str(exc) else "")) from None
    record = loaded.record
    if record is None:
        raise Unreadable(f"{path}: an mjbot game log; the dataset of the local table is "
                             "written by mjbot selfplay")
    return record


def one_seat_view(path: Path, record: GameRecord) -> str | None:
    """Why a record cannot be imported (one seat's view: a platform's command log), or
    None. Such a file beside full records is left out with that reason; alone, it is an
    error."""
    if record.meta.get("view_seat") is None:
        return None
    return (f"{path}: {FORMAT_LABELS.get(record.source, record.source)} shows one seat's view "
            "only; a dataset needs games whose hands are all known")


def as_legal(action: Any, legal: Iterable[Any]) -> Any | None:
    """The legal action that is ``action`` (a record may list a call's tiles in another
    order than the rules do: the same tiles are the same call), or None."""
    for a in legal:
        if a == action:
            return a
    tiles = getattr(action, "tiles", None)
    if tiles is None:
        return None
    for a in legal:
        if (type(a) is type(action) and getattr(a, "kind", None) == getattr(action, "kind", None)
                and sorted(a.tiles) == sorted(tiles)):
            return a
    return None


def record_block(record: GameRecord, game: int,
                 damaged: list[dict[str, Any]] | None = None) -> tuple[Block, int]:
    """The decisions of every seat of ``record`` as one block; also the number of recorded
    moves left out because our rules do not list them as legal (none on the shipped data).
    A hand whose moves stop fitting a seat's table (a damaged or hand-edited file: a discard
    of a tile the hand does not hold) is left out whole, the hands after it are read, and
    where it failed is added to ``damaged`` (:func:`replay.replayer.damage_at`'s form): the
    first such event ended the import of the rest of the game."""
    variant = record.variant
    builder = BlockBuilder(variant, (RECORDED,))
    at: dict[int, list[tuple[int, Decision]]] = defaultdict(list)
    failed: dict[int, str] = {}  # event index -> why a seat's table refused it

    def note(i: int, why: str) -> None:
        failed.setdefault(i, why)

    for seat in range(4):
        for d in derive_decisions(record, seat, damaged=note):
            at[d.index].append((seat, d))
    events = record.events
    for i, e in enumerate(events):  # payments a hand's row cannot hold (its four deltas)
        if isinstance(e, ev.RoundWon | ev.RoundDrawn) and len(e.deltas) != 4 and (
                isinstance(e, ev.RoundWon) or e.deltas):  # a draw's none: nobody paid
            note(i, f"its payments {list(e.deltas)!r} are not four seats' (a win's sc or "
                    "deltas missing or cut)")
    bad: dict[int, dict[str, Any]] = {}  # hand number (1 = the first) -> its first failure
    for where in damages_at(events, [(i, failed[i]) for i in sorted(failed)], record.lines):
        i = where["event"]
        where["unread"] = i in record.damaged  # its reader could not read it (why says so)
        bad.setdefault(where["hand"], where)
    if damaged is not None:
        damaged += bad.values()
    views = [TableState(variant, s) for s in range(4)]
    skipped = 0
    hand = 0  # the hands started so far (one left out is counted: h_number is the game's)
    open_hand = False
    left = 0 in bad  # this hand is left out (damaged): its events and moves are not read
    wins: list[tuple[int, int | None, int]] = []
    deltas = [0, 0, 0, 0]
    reason = "other"
    final: list[int] | None = None
    last_scores = [0, 0, 0, 0]
    for i in range(len(events) + 1):
        for seat, d in sorted(at.get(i, ()), key=lambda x: x[0]):
            if not open_hand or left:
                continue
            action = as_legal(d.action, d.legal)
            if action is None:
                skipped += 1
                continue
            builder.decision(views, seat, d.request, d.legal, action, RECORDED)
        if i == len(events):
            break
        e = events[i]
        if isinstance(e, ev.RoundStarted):
            if open_hand:
                builder.end_hand(reason, deltas, wins)
            hand += 1
            left = hand in bad
            open_hand = not left
            if left:  # nothing of its play is read, its start and result neither (any
                continue  # may be what is damaged); the next start resets
            builder.start_hand(HandStart(
                game=game, number=hand - 1, seed=-1,
                round=(e.round_wind, e.round_number, e.dealer, e.honba, e.sticks),
                players=(0, 0, 0, 0), scores=tuple(e.scores) or (0, 0, 0, 0)))
            wins, deltas, reason = [], [0, 0, 0, 0], "other"
            last_scores = list(e.scores) or last_scores
        elif left:
            if isinstance(e, ev.GameEnded) and len(e.scores) == 4 and sound(e):  # the end
                final = list(e.scores)  # stands: its ranks were lost with a damaged last hand
            continue
        elif isinstance(e, ev.RoundWon):
            wins.append((e.winner, e.from_seat, e.value))
            deltas = [a + b for a, b in zip(deltas, e.deltas, strict=False)]
            reason = "win"
        elif isinstance(e, ev.RoundDrawn):
            reason = e.reason
            deltas = [a + b for a, b in zip(deltas, e.deltas or (0,) * 4, strict=False)]
        elif isinstance(e, ev.GameEnded):  # scores not four (a damaged end): no result
            final = list(e.scores) if len(e.scores) in (0, 4) else None  # (an IndexError)
        try:
            for s in range(4):
                views[s].apply(view_event(e, s, variant))
        except StateError:
            break  # the record stops showing a seat's tiles: the hand so far is kept
    if open_hand:
        builder.end_hand(reason, deltas, wins)
    scores = final or [a + b for a, b in zip(last_scores, deltas, strict=True)]
    # a game the record does not end (cut short) has no placement: the scores at the cut
    # rank nobody, so its ranks are unknown (-1), not those of a game that ended there
    ranked = variant_of(variant).ranked and final is not None
    builder.end_game(scores, placement(scores) if ranked else None)
    return builder.block(), skipped


def import_files(paths: Iterable[str | Path], out: str | Path,
                 shard_decisions: int = 20000) -> dict[str, Any]:
    """Import every file into one dataset at ``out``; all must be of one variant. Three-player
    games are left out (mjbot's rules and scores are four-player), as is a file no reader
    takes (:class:`Unreadable`) beside files that are read: its entry has ``unread`` and
    ``left_out`` (why). A bad tile name in one of a thousand logs ended the whole import.
    With no file read, that is the error. Returns the manifest."""
    records: list[tuple[Path, GameRecord]] = []
    at: list[int] = []  # each record's place among the files given
    unread: list[tuple[int, Path, str]] = []  # a file no reader takes: left out, said why
    for i, p in enumerate(paths):
        path = Path(p)
        try:
            records.append((path, read_game(path)))
            at.append(i)
        except Unreadable as exc:  # alone (or with only such files), the error it was;
            unread.append((i, path, str(exc)))  # beside readable ones it lost them all
        # (a file that is not there, or cannot be opened, is still the error: a mistyped
        # name is the user's to fix before anything is written)
    if unread and not records:
        raise S.DatasetError(unread[0][2])
    variants = sorted({r.variant for _, r in records})
    if len(variants) > 1:
        first = {v: next(str(p) for p, r in records if r.variant == v) for v in variants}
        raise S.DatasetError("files of several variants (" + ", ".join(
            f"{v}: {f}" for v, f in first.items()) + "): import each variant into its own "
            "directory")
    if not records:
        raise S.DatasetError("no files to import")
    views = [one_seat_view(p, r) for p, r in records]
    if all(views):
        raise S.DatasetError(str(views[0]))
    report = ImportReport()
    meta = {"source": "import", "variant": variants[0], "policies": [RECORDED],
            "config": {"files": [p.name for p, _ in records]}}
    writer = DatasetWriter(Path(out), meta, shard_decisions)
    first_of: dict[str, Path] = {}  # a game's moves -> the file it was first read from
    for game, (path, record) in enumerate(records):
        # "path": the file as the user named it (two of one name in two folders told apart)
        entry: dict[str, Any] = {"file": path.name, "path": str(path),
                                 "format": record.source}
        if views[game]:
            entry["left_out"] = "one seat's view only (a command log)"
            report.files.append(entry)
            continue
        seen = first_of.setdefault(_moves(record), path)
        if seen != path or any(p == path for p, _ in records[:game]):
            entry["left_out"] = f"the same game as {seen} (it would count twice)"
            report.files.append(entry)
            continue
        if record.meta.get("players", 4) != 4:
            entry["left_out"] = "three-player game"
            report.files.append(entry)
            continue
        damaged: list[dict[str, Any]] = []
        block, skipped = record_block(record, game, damaged)
        writer.add(block)
        entry.update(hands=block.hands, decisions=block.decisions, skipped_decisions=skipped)
        if damaged:  # those hands left out, the rest of the game in
            entry["damaged_hands"] = [_damaged_text(d) for d in damaged]
            report.damaged_hands += len(damaged)
        if record.meta.get("cut"):  # read up to the cut: said, not taken as a whole game
            entry["cut"] = str(record.meta["cut"])
            # unless its game end came before the cut (a judge log cut only at its close)
            entry["game_end"] = any(isinstance(e, ev.GameEnded) for e in record.events)
        report.skipped_decisions += skipped
        report.files.append(entry)
    placed = [(at[k], entry) for k, entry in enumerate(report.files)] + [
        (i, {"file": path.name, "path": str(path), "unread": True,
             "left_out": why.removeprefix(f"{path}: ")}) for i, path, why in unread]
    report.files = [entry for _, entry in sorted(placed, key=lambda x: x[0])]
    return writer.close({"import": {"files": report.files,
                                    "skipped_decisions": report.skipped_decisions,
                                    "damaged_hands": report.damaged_hands}})


def _damaged_text(d: dict[str, Any]) -> str:
    """One hand left out, in one line: where its moves stopped fitting, and why (a hand its
    reader could not read: why alone)."""
    if d.get("unread"):
        return f"hand {d['hand']} ({d['round']}) left out: it cannot be read: {d['why']}"
    return (f"hand {d['hand']} ({d['round']}) left out: event {d['event']} ({d['what']})"
            f"{d.get('at', '')} does not fit the table: {d['why']}")


def _moves(record: GameRecord) -> str:
    """A game's events without the players' names: a file given twice, or an mjlog and its
    anonymised tenhou.net/6 twin, read as the same game."""
    return repr([e for e in record.events if not isinstance(e, ev.GameStarted)])
