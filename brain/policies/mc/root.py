"""From the table and the legal actions to what the playouts start from.

A candidate is a legal action and the position it leaves (:class:`~brain.policies.mc.playout.
Start`): a discard (riichi or not) hands the turn to the next seat; a chow or pung leaves us a
discard to make (its called kind banned where the rules ban swap-calling, as Tenhou does); a
kong draws a replacement; a pass lets the seat after the discarder draw. The shared part (the
unseen tiles, the walls, the opponents as the models see them) is the
:class:`~brain.policies.mc.playout.Table`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from brain.opponents.models import OpponentEstimate
from brain.policies.evaluation import value_honours
from brain.policies.mc import tables
from brain.policies.mc.oneplayer import static_bias
from brain.policies.mc.playout import PLAN_KEEP, Start, Table
from brain.policies.mcr_plan import plan_calls, plan_kinds
from brain.state import Meld, TableState
from protocols import events as ev
from protocols import tiles as T

DORA_KEEP = 1.5
VALUE_HONOUR_KEEP = 0.5


@dataclass(frozen=True)
class Candidate:
    """A legal action with its start; ``start`` None: the hand ends at once (abortive draw:
    worth nothing either way)."""

    action: Any
    start: Start | None
    discard_kind: int = -1  # a root discard: the kind Score(t)'s deal-in terms look at


def opponents_relative(state: TableState, est: OpponentEstimate) -> tuple[np.ndarray, ...]:
    """The estimate's rows in relative seat order 1..3: (tenpai, wait, value)."""
    order = np.argsort([(int(s) - state.seat) % 4 for s in est.seats])
    return (np.asarray(est.tenpai, np.float64)[order], np.asarray(est.wait, np.float64)[order],
            np.asarray(est.value, np.float64)[order])


def build_table(state: TableState, est: OpponentEstimate) -> Table:
    seat = state.seat
    tenpai, wait, value = opponents_relative(state, est)
    pool = np.clip(np.asarray(state.unseen_counts(), np.int16), 0, 4)
    if state.seat_walls is not None:
        walls = np.array([state.seat_walls[(seat + i) % 4] for i in range(4)], np.int16)
        shared = False
    else:
        walls = np.full(4, state.wall_remaining, np.int16)
        shared = True
    others = [(seat + i) % 4 for i in (1, 2, 3)]
    river = np.zeros(34, bool)
    for r in state.me.river:
        river[T.kind(r.tile)] = True
    dealer_rel = (state.dealer - seat) % 4
    variant = state.variant
    # a typical win of ours, the scale of the playout's fold rule (points of the variant)
    win_value = state.spec.typical_win * (state.spec.dealer_factor if dealer_rel == 0 else 1.0)
    return Table(
        variant=variant, pool=pool, walls=walls, shared_wall=shared, tenpai=tenpai,
        wait=wait, value=value,
        declared=np.array([state.seats[s].riichi or state.seats[s].riichi_pending
                           for s in others]),
        opp_draws=np.array([state.seats[s].draws for s in others], np.int16),
        our_draws=state.me.draws, our_river=river,
        can_riichi=state.spec.has_riichi and state.scores[seat] >= 1000,
        win_value=win_value, dealer_rel=dealer_rel,
        wpet=np.asarray(tables.WPET.get(variant, tables.WPET["riichi"])),
        p_win=np.asarray(tables.P_WIN.get(variant, tables.P_WIN["riichi"])))


def discard_bias(state: TableState) -> np.ndarray:
    """The playout policy's lone-tile preferences: dora and value honours are kept."""
    keep: dict[int, float] = {}
    if state.spec.has_dora:
        for ind in state.dora_indicators:
            k = T.dora_from_indicator(ind)
            keep[k] = keep.get(k, 0.0) + DORA_KEEP
    if state.spec.value_honours:
        for k in value_honours(state):
            keep[k] = keep.get(k, 0.0) + VALUE_HONOUR_KEEP
    return static_bias(keep)


def plan_bias(state: TableState, starts: Sequence[Start | None], base: np.ndarray
              ) -> np.ndarray:
    """Per candidate (C, 34) in MCR: ``base`` steered toward the nearest 8-fan plan of the
    candidate's hand (its kinds kept, a flush's other suits thrown first; a greedy playout
    reaches mostly hands under 8 fan otherwise); elsewhere ``base`` as it is, (34,)."""
    if not state.spec.min_fan:
        return base
    out = np.tile(base, (len(starts), 1))
    for i, start in enumerate(starts):
        if start is None:
            continue
        keep, throw = plan_kinds([int(n) for n in start.hand], list(start.melds))
        out[i, list(keep)] -= PLAN_KEEP
        out[i, list(throw)] += PLAN_KEEP
    return out


def plan_call_masks(state: TableState, starts: Sequence[Start | None]) -> np.ndarray | None:
    """(C, 2, 34) in MCR: the kinds each candidate's playouts may pung ([:, 0]) and chow
    ([:, 1], every kind of the chow) keeping to its nearest 8-fan plan (an open hand off its
    plan rarely reaches 8 fan); None elsewhere (any call that helps the shape)."""
    if not state.spec.min_fan:
        return None
    out = np.zeros((len(starts), 2, 34), bool)
    for i, start in enumerate(starts):
        if start is None:
            continue
        pung, chow = plan_calls([int(n) for n in start.hand], list(start.melds))
        out[i, 0, list(pung)] = True
        out[i, 1, list(chow)] = True
    return out


def _counts(tiles: list[int]) -> np.ndarray:
    return np.asarray(T.counts34(tiles), np.int8)


def _without(hand: list[int], tiles: tuple[int, ...]) -> list[int]:
    rest = list(hand)
    for t in tiles:
        if t in rest:
            rest.remove(t)
        else:
            k = T.kind(t)
            rest.remove(next(x for x in rest if T.kind(x) == k))
    return rest


def candidates(state: TableState, request: ev.DecisionRequest,
               legal: list[Any]) -> list[Candidate]:
    """One candidate per distinct outcome: a red five and a plain five of the same kind are
    one discard (the plain one goes; the red is worth a dora)."""
    me = state.me
    melds = tuple(me.melds)
    closed = state.is_concealed()
    out: list[Candidate] = []
    seen: set[tuple[int, bool]] = set()
    plain_first = sorted((a for a in legal if isinstance(a, ev.Discard)),
                         key=lambda a: (T.is_red(a.tile), a.riichi))
    for a in plain_first:
        k = T.kind(a.tile)
        if (k, a.riichi) in seen:
            continue
        seen.add((k, a.riichi))
        hand = _counts(_without(state.hand, (a.tile,)))
        out.append(Candidate(a, Start(hand, melds, closed, me.riichi or a.riichi, 1,
                                      stick=a.riichi), k))
    from_rel = None if request.from_seat is None else (request.from_seat - state.seat) % 4
    # the called kind, where the rules ban swap-calling (riichi; MCR and Taiwan do not)
    banned = (T.kind(request.tile) if request.tile is not None
              and state.spec.rules.bans_swap_calling else -1)
    for a in legal:
        if isinstance(a, ev.AbortiveDraw):
            out.append(Candidate(a, None))
        elif isinstance(a, ev.Pass):
            nxt = 1 if from_rel is None else (from_rel + 1) % 4
            out.append(Candidate(a, Start(_counts(state.hand), melds, closed, me.riichi, nxt)))
        elif isinstance(a, ev.Kan):
            out.append(Candidate(a, _kan_start(state, a, melds, closed, request)))
        elif isinstance(a, ev.Chi | ev.Pon) and request.tile is not None:
            kind = "chi" if isinstance(a, ev.Chi) else "pon"
            meld = Meld(kind, tuple(sorted((*a.tiles, request.tile), key=T.sort_key)),
                        request.tile, request.from_seat)
            hand = _counts(_without(state.hand, a.tiles))
            out.append(Candidate(a, Start(hand, (*melds, meld), False, False, 0,
                                          discard_first=True, banned=banned)))
    return _dedupe_calls(out)


def _kan_start(state: TableState, a: ev.Kan, melds: tuple[Meld, ...], closed: bool,
               request: ev.DecisionRequest) -> Start:
    me = state.me
    if a.kind == "added_kan":
        k = T.kind(a.tiles[0])
        new = []
        for m in melds:
            if m.kind == "pon" and m.tiles and T.kind(m.tiles[0]) == k:
                m = Meld("added_kan", (*m.tiles, a.tiles[0]), a.tiles[0], m.from_seat)
            new.append(m)
        hand = _counts(_without(state.hand, a.tiles))
        return Start(hand, tuple(new), closed, me.riichi, 0)
    if a.kind == "open_kan" and request.tile is not None:
        meld = Meld("open_kan", (*a.tiles, request.tile), request.tile, request.from_seat)
        return Start(_counts(_without(state.hand, a.tiles)), (*melds, meld), False, False, 0)
    meld = Meld("closed_kan", tuple(a.tiles))
    return Start(_counts(_without(state.hand, a.tiles)), (*melds, meld), closed, me.riichi, 0)


def outcome_key(action: Any) -> tuple[object, ...]:
    """What makes two answers the same candidate: a discard's kind and riichi flag (which
    copy of the kind goes is the candidates' choice, a plain five before a red one), a call's
    type and kinds; any other action as itself. Another policy's answer (the fast move) is
    found among the candidates by this, not by the tile it names."""
    if isinstance(action, ev.Discard):
        return ("discard", T.kind(action.tile), action.riichi)
    if isinstance(action, ev.Chi | ev.Pon):
        return (type(action).__name__, tuple(sorted(T.kind(t) for t in action.tiles)))
    return ("action", action)


def _dedupe_calls(cands: list[Candidate]) -> list[Candidate]:
    """Chows or pungs that differ only by a red five: keep the one that keeps the red."""
    out: list[Candidate] = []
    seen: dict[tuple[object, ...], int] = {}
    for c in cands:
        a = c.action
        if isinstance(a, ev.Chi | ev.Pon):
            key = (type(a), tuple(sorted(T.kind(t) for t in a.tiles)))
            if key in seen:
                if sum(T.is_red(t) for t in a.tiles) < sum(
                        T.is_red(t) for t in out[seen[key]].action.tiles):
                    out[seen[key]] = c
                continue
            seen[key] = len(out)
        out.append(c)
    return out
