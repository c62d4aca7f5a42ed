"""How well a policy's ranking predicts real players (seed 004's measure): top-k discard
accuracy, and chow / pung precision and recall, over every seat of every game given.

A turn whose move was a discard counts for the discard accuracy: a hit when the played tile's
kind is among the first ``k`` discard kinds of the ranking (a riichi and a plain discard of
one tile are one kind). A claim where a chow (pung) was legal counts for the chow (pung)
figures: the ranking's first action is the prediction, the recorded move the truth. The same
game in two formats (an mjlog and its tenhou.net/6 twin) is counted once.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from brain.rules import rules_for
from brain.shanten import HandError
from brain.state import StateError, TableState
from protocols import events as ev
from protocols import tiles as T
from replay import formats
from replay.record import GameRecord, RecordError
from replay.replayer import Replay, damage_note, from_record, from_seat_record, walk
from replay.review.evaluators import Evaluator

ANCHORS = {"source": "seed 004 (Botzone MCR, 45,050 decisions)", "discard_topk": 0.7584,
           "chi_precision": 0.7252, "chi_recall": 0.8384, "pon_precision": 0.5833,
           "pon_recall": 0.9212}


@dataclass
class Tally:
    discards: int = 0
    hits: int = 0
    calls: dict[str, list[int]] = field(default_factory=lambda: {
        "chi": [0, 0, 0], "pon": [0, 0, 0]})  # predicted, actual, both

    def add(self, other: Tally) -> None:
        self.discards += other.discards
        self.hits += other.hits
        for name, row in other.calls.items():
            self.calls[name] = [a + b for a, b in zip(self.calls[name], row, strict=True)]

    def table(self) -> dict[str, Any]:
        out: dict[str, Any] = {"discard_decisions": self.discards, "discard_hits": self.hits,
                               "discard_topk": _ratio(self.hits, self.discards)}
        for name, (pred, actual, both) in self.calls.items():
            out[name] = {"offered_predicted": pred, "made": actual, "correct": both,
                         "precision": _ratio(both, pred), "recall": _ratio(both, actual)}
        return out


def _ratio(a: int, b: int) -> float | None:
    return round(a / b, 4) if b else None


def game_files(paths: Iterable[str | Path]) -> list[Path]:
    """The files under ``paths`` (folders searched recursively), sorted."""
    out: list[Path] = []
    for p in map(Path, paths):
        out += sorted(f for f in p.rglob("*") if f.is_file()) if p.is_dir() else [p]
    return out


def replays(files: list[Path]) -> tuple[list[Replay], list[dict[str, str]]]:
    """Every seat of every four-player game the readers accept (one seat for a seat's own
    log), duplicates once; also what was left out and why."""
    out: list[Replay] = []
    left: list[dict[str, str]] = []
    seen: set[str] = set()
    for f in files:
        try:
            loaded = formats.read(f.read_bytes(), f)
        except (OSError, RecordError) as exc:
            why = "no reader accepts it" if isinstance(exc, formats.UnknownFormat) \
                else str(exc).splitlines()[0]
            left.append({"file": str(f), "why": why})
            continue
        record = loaded.record
        if record is None:
            left.append({"file": str(f), "why": "an mjbot log: review it with mjbot review"})
            continue
        if record.meta.get("players", 4) != 4:
            left.append({"file": str(f), "why": "three-player game"})
            continue
        key = _fingerprint(record)
        if key in seen:
            left.append({"file": str(f), "why": "the same game as a file already counted"})
            continue
        seen.add(key)
        if record.meta.get("view_seat") is not None:
            out.append(from_seat_record(record, None, str(f)))
        else:
            out += [from_record(record, s, str(f)) for s in range(4)]
    return out, left


def _fingerprint(record: GameRecord) -> str:
    """The game's discards, to count a game given twice once; a discard that names no tile (a
    damaged or edited file: its reader keeps what the file said, and the hand is left out)
    is taken as written: it was a TypeError out of `mjbot bench commentary`."""
    moves = [(e.seat, T.kind(e.tile) if T.is_valid(e.tile) else repr(e.tile))
             for e in record.events if isinstance(e, ev.TileDiscarded)]
    return hashlib.sha1(repr((record.variant, moves)).encode()).hexdigest()


def damaged_hands(replay_list: list[Replay]) -> list[dict[str, str]]:
    """Each hand left out as damaged, once per file and hand (every seat of a game notes a
    hand all can see): its file and the note `mjbot replay` gives of it."""
    out: dict[tuple[str, int], dict[str, str]] = {}
    for rep in replay_list:
        for d in rep.damaged:
            out.setdefault((rep.path, d["hand"]), {"file": rep.path, "note": damage_note(d)})
    return list(out.values())


def measure(replay_list: list[Replay], ranker: Evaluator, k: int = 3,
            progress: Callable[[int, int], None] | None = None) -> Tally:
    tally = Tally()
    total = sum(len(r.decisions) for r in replay_list)
    done = 0
    for rep in replay_list:
        rules = rules_for(rep.variant)
        # a damaged import's hand is left from its failing event, as its decisions were;
        # any other event the table refuses is noted in ``rep.damaged`` the same way
        for d, state in walk(rep):
            done += 1
            legal = list(d.legal) or rules.legal_actions(state, d.request)
            count(tally, ranker, state, d.request, legal, d.action, k)
            if progress is not None:
                progress(done, total)
    return tally


def count(tally: Tally, ranker: Evaluator, state: TableState, request: ev.DecisionRequest,
          legal: list[Any], played: Any, k: int) -> None:
    """Add one decision to ``tally`` (decisions that are neither a discard nor a claim with
    a chow or pung on offer do not count, nor do those whose table the rules cannot read)."""
    offered = {name for name, kind in (("chi", ev.Chi), ("pon", ev.Pon))
               if any(isinstance(a, kind) for a in legal)}
    is_discard = request.kind == "turn" and isinstance(played, ev.Discard)
    if not is_discard and not offered:
        return
    try:
        ranked = [s.action for s in ranker.evaluate(state, request, legal).ranked]
    except (HandError, StateError):  # a table the rules cannot read: no prediction to count
        return
    if is_discard:
        kinds: list[int] = []
        for a in ranked:
            if isinstance(a, ev.Discard) and T.kind(a.tile) not in kinds:
                kinds.append(T.kind(a.tile))
        tally.discards += 1
        tally.hits += T.kind(played.tile) in kinds[:k]
    for name in offered:
        kind = ev.Chi if name == "chi" else ev.Pon
        pred = isinstance(ranked[0], kind)
        actual = isinstance(played, kind)
        row = tally.calls[name]
        row[0] += pred
        row[1] += actual
        row[2] += pred and actual
