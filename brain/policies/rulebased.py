"""``rulebased``: the Seofon_v2 player (seed 000; brain/ALGORITHMS.md section 2), generalised to
every variant.

Discards: dead tiles first; never raise the shanten number (MCR: never move away from the
nearest 8-fan plan); then the most unseen useful tiles counted jointly, plus the honour weights
of table 3-1, the dora kept (riichi) and, in MCR, only the waits that score 8 fan. Defence: a
declared riichi (or, without declarations, a seat with three calls or the last stretch of the
wall) makes a hand far from ready fold — genbutsu, suji, dead honours (riichi), or the
follow-discard rule (跟打) and the threat's own discards elsewhere. Riichi is declared on a wait
with two or more live tiles, or when the hand has no yaku without it. Calls are made when they
lower the shanten number and keep the hand's value: a yaku in riichi, a >= 8-fan plan in MCR;
no open kong while ready and no kong that breaks the hand's shape (the Seofon kong rule), nor
(MCR) one whose replacement draw is due from an empty wall.
Every tie between equally scored actions goes by :func:`brain.actions.action_key` (tile kind
first), so the same table gives the same move whatever order the hand arrived in.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import Any, Literal

from brain.actions import action_key, canonical
from brain.policies import defence
from brain.policies.base import Decision, win_if_legal
from brain.policies.evaluation import (
    DiscardInfo,
    analyse_discards,
    honour_weight,
    is_dead,
    terminal_weight,
    value_honours,
)
from brain.policies.mcr_plan import (
    best_distance,
    best_distances_after_discards,
    one_step_draws,
    winning_waits,
)
from brain.rules import rules_for
from brain.rules.base import WinContext
from brain.shanten import (
    shanten,
    shanten_after_discards,
    thirteen_orphans_shanten,
    useful_tiles,
    waits,
)
from brain.state import Meld, TableState
from protocols import events as ev
from protocols import tiles as T

DEAD_TILE_BONUS = 6.0
DORA_KEEP = 2.5
LATE_WALL = 12  # draws left below which every opponent is treated as a threat (no riichi)
FLUSH_SHARE = 0.7  # share of a hand in one suit that makes the plain variants chase a flush


@dataclass(frozen=True)
class Style:
    """The knobs of a playing style (the league's population; README "League"). The default
    is ``rulebased`` exactly: each knob only changes play away from its default value, so the
    pinned tables do not move. Knobs that a variant has no use for are ignored there (riichi
    knobs without riichi, the dora weight without dora); MCR never folds whatever the style
    (a deal-in costs only the fan above the 8 everyone pays).

    ``calls``: "value" (lower shanten and keep a yaku / an 8-fan plan), "open" (any chi/pon
    that lowers shanten), "never" (only a win), "yakuhai" (a value-honour pung or a one-suit
    plan; MCR: as "value"). ``riichi``: "default" (two or more live waits, or no yaku
    without it), "always" (any live wait). ``fold_from_shanten``: fold at a threat from this
    shanten up (None: 2, and 1 in riichi or the late wall). ``fold_ready_live``: ready hands
    with fewer live waits fold too. ``threat_calls``: open calls that make a seat a threat
    where no one declares riichi; ``riichi_threat_calls``: the same in riichi (None: only a
    declaration is a threat there). ``push_value``: a hand of at most one shanten holding this
    many value points (dora, value-honour pairs, a flush) never folds (None: never pushes).
    ``dora_keep``: the weight against discarding a dora. ``flush_share``: the share of one
    suit from which the plain variants chase a flush (above 1: never)."""

    name: str = "rulebased"
    calls: Literal["value", "open", "never", "yakuhai"] = "value"
    riichi: Literal["default", "always"] = "default"
    fold_from_shanten: int | None = None
    fold_ready_live: int = 1
    threat_calls: int = 3
    riichi_threat_calls: int | None = None
    push_value: int | None = None
    dora_keep: float = DORA_KEEP
    flush_share: float = FLUSH_SHARE


DEFAULT_STYLE = Style()
STYLE_PREFIX = "style:"

STYLES: dict[str, tuple[Style, str]] = {  # the league's styles: knobs, and what they play like
    "open": (Style("style:open", calls="open", dora_keep=0.0, flush_share=1.01),
             "fast and open: calls whenever a chi/pon lowers shanten, whatever the hand is "
             "then worth (no yaku kept, no 8-fan plan), and keeps no dora nor a flush"),
    "closed": (Style("style:closed", calls="never", riichi="always"),
               "closed and riichi-heavy: never calls except to win; declares riichi on any "
               "live wait"),
    "defensive": (Style("style:defensive", fold_from_shanten=1, fold_ready_live=4,
                        threat_calls=2, riichi_threat_calls=2),
                  "folds early: at the first threat (a riichi, two open calls, the late wall "
                  "where there is no riichi) unless ready on four or more live tiles"),
    "value": (Style("style:value", calls="yakuhai", push_value=3, dora_keep=4.0,
                    flush_share=0.6),
              "value-seeking: calls only for a value-honour pung or a one-suit plan, keeps "
              "dora harder, chases a flush earlier, pushes on a hand of three value points"),
}


class RuleBasedPolicy:
    name = "rulebased"
    fast = True

    def __init__(self, style: Style = DEFAULT_STYLE) -> None:
        self.style = style
        self.name = style.name

    def decide(self, state: TableState, request: ev.DecisionRequest, legal: list[Any],
               budget: float | None = None) -> Decision:
        win = win_if_legal(legal)
        if win is not None:
            return win
        if request.kind == "turn":
            return self._turn(state, legal)
        if request.kind == "claim":
            return self._claim(state, request, legal)
        return Decision(_first(legal, ev.Pass) or min(legal, key=action_key))

    # ------------------------------------------------------------------ own turn

    def _turn(self, state: TableState, legal: list[Any]) -> Decision:
        counts = state.counts()
        if any(isinstance(a, ev.AbortiveDraw) for a in legal) and (
                thirteen_orphans_shanten(counts) >= 4):
            return Decision(ev.AbortiveDraw())
        discards = [a for a in legal if isinstance(a, ev.Discard)]
        if not discards:
            return Decision(min(legal, key=action_key))
        info = analyse_discards(state, slack=1 if state.spec.min_fan else 0,
                                kinds={T.kind(a.tile) for a in discards})
        current = min(d.shanten for d in info.values())
        against = _threats(state, self.style)
        folding = bool(against) and _should_fold(state, current, info, self.style)
        kan = self._kan(state, legal, current, folding)
        if kan is not None:
            return Decision(kan, ((kan, 1.0),))
        if folding:
            return self._fold(state, discards, info, against)
        scored = self._score_discards(state, discards, info)
        best = scored[0][1]
        riichi = [a for a in discards if a.riichi]
        if riichi and state.spec.has_riichi:
            declared = self._riichi(state, riichi, info, self.style)
            if declared is not None:
                best = declared
        candidates = tuple((a, float(s[0] * 100 + s[1])) for s, a in scored[:5])
        return Decision(best, candidates)

    def _score_discards(self, state: TableState, discards: list[ev.Discard],
                        info: dict[int, DiscardInfo]) -> list[tuple[tuple[float, float], Any]]:
        """(primary, secondary) per plain discard, best first. Primary: minus shanten (MCR:
        minus the distance to the nearest 8-fan plan, then shanten); secondary: useful tiles
        and weights."""
        counts = state.counts()
        unseen = state.unseen_counts()
        dora = _dora_kinds(state)
        scored: list[tuple[tuple[float, float], Any]] = []
        mcr = _McrView(state, counts, info) if state.spec.min_fan else None
        flush = _plain_scoring(state)
        flush_suit = (_flush_suit(counts, state.melds, self.style.flush_share) if flush
                      else None)  # the same for all discards
        for a in discards:
            if a.riichi:
                continue
            k = T.kind(a.tile)
            d = info[k]
            secondary = float(d.useful)
            secondary += honour_weight(state, k, counts, unseen) + terminal_weight(k, counts)
            if is_dead(state, k, counts, unseen):
                secondary += DEAD_TILE_BONUS
            if k in dora:
                secondary -= self.style.dora_keep * dora[k]
            if T.is_red(a.tile):
                secondary -= self.style.dora_keep
            if flush:
                secondary += _flush_bonus(flush_suit, k)
            primary = float(-d.shanten)
            if mcr is not None:
                distance, useful = mcr.after_discard(k, d)
                primary = -distance * 10.0 - d.shanten
                secondary = secondary - d.useful + useful
            scored.append(((primary, secondary), a))
        scored.sort(key=lambda x: (-x[0][0], -x[0][1], action_key(x[1])))
        return scored

    @staticmethod
    def _riichi(state: TableState, options: list[ev.Discard], info: dict[int, DiscardInfo],
                style: Style) -> ev.Discard | None:
        """The riichi discard with the most live waits, if riichi is worth declaring (style
        "always": whenever a wait is live)."""
        best = min(options, key=lambda a: (-info[T.kind(a.tile)].useful, T.is_red(a.tile),
                                           action_key(a)))
        live = info[T.kind(best.tile)].useful
        if live == 0:
            return None
        if live >= 2 or style.riichi == "always" or not _has_yaku_without_riichi(state, best.tile,
                                                     info[T.kind(best.tile)].useful_kinds):
            return best
        return None

    def _kan(self, state: TableState, legal: list[Any], current: int,
             folding: bool) -> ev.Kan | None:
        """A closed or added kong that leaves the shape as good (and, in riichi, only when not
        folding: a kong feeds every seat a new dora)."""
        if folding:
            return None
        counts = state.counts()
        for a in canonical(legal):
            if not isinstance(a, ev.Kan):
                continue
            k = T.kind(a.tiles[0])
            rest = list(counts)
            rest[k] -= 4 if a.kind == "closed_kan" else 1
            if sum(rest) % 3 == 1 and shanten(rest, state.spec.regular_shapes_only) <= current:
                return a
        return None

    def _fold(self, state: TableState, discards: list[ev.Discard],
              info: dict[int, DiscardInfo], against: list[int]) -> Decision:
        plain = [a for a in discards if not a.riichi]
        hand_kinds = {T.kind(a.tile) for a in plain}
        if not state.spec.has_riichi:
            follow = defence.follow_discard(state, hand_kinds)
            if follow is not None and all(
                    defence.danger(state, follow, s) <= 3.0 for s in against):
                choice = min((a for a in plain if T.kind(a.tile) == follow),
                             key=lambda a: (T.is_red(a.tile), action_key(a)))
                return Decision(choice, ((choice, 0.0),))
        ranked = sorted(plain, key=lambda a: (defence.total_danger(state, T.kind(a.tile), against),
                                              info[T.kind(a.tile)].shanten,
                                              -info[T.kind(a.tile)].useful, T.is_red(a.tile),
                                              action_key(a)))
        best = ranked[0]
        return Decision(best, tuple(
            (a, -defence.total_danger(state, T.kind(a.tile), against)) for a in ranked[:5]))

    # ------------------------------------------------------------------ calls

    def _claim(self, state: TableState, request: ev.DecisionRequest,
               legal: list[Any]) -> Decision:
        pass_action = _first(legal, ev.Pass) or ev.Pass()
        calls = [a for a in legal if isinstance(a, ev.Chi | ev.Pon | ev.Kan)]
        if not calls or request.tile is None or self.style.calls == "never":
            return Decision(pass_action)
        counts = state.counts()
        regular = state.spec.regular_shapes_only
        before = shanten(counts, regular)
        if _threats(state, self.style) and before >= 1:
            return Decision(pass_action)
        mcr_before = _McrView(state, counts).distance() if state.spec.min_fan else 0
        best: tuple[tuple[Any, ...], Any] | None = None
        for a in calls:
            rest = list(counts)
            for t in a.tiles:
                rest[T.kind(t)] -= 1
            after = best_after_call(rest, T.kind(request.tile), isinstance(a, ev.Kan), regular)
            if not self._call_keeps_value(state, a, request.tile, rest, before, after,
                                          mcr_before):
                continue
            key = (after, 0 if isinstance(a, ev.Pon) else 1, action_key(a))
            if best is None or key < best[0]:
                best = (key, a)
        if best is None:
            return Decision(pass_action, ((pass_action, 0.0),))
        return Decision(best[1], ((best[1], float(before - best[0][0])), (pass_action, 0.0)))

    def _call_keeps_value(self, state: TableState, action: Any, tile: int, rest: list[int],
                          before: int, after: int, mcr_before: int) -> bool:
        variant = state.spec
        if isinstance(action, ev.Kan):
            # the Seofon kong rule: no open kong while ready, none that costs shape
            if before == 0 or after > before:
                return False
            if state.seat_walls is not None and state.seat_walls[state.seat] == 0:
                return False  # MCR: the replacement is due from our empty wall, a drawn hand
            return not variant.has_riichi
        if after >= before:
            return False
        meld = Meld("chi" if isinstance(action, ev.Chi) else "pon",
                    (*action.tiles, tile), tile)
        melds = [*state.melds, meld]
        if self.style.calls == "open":
            return True
        if self.style.calls == "yakuhai" and not variant.min_fan:
            return _valuable_call(state, action, tile, rest, melds)
        if variant.needs_yaku:
            return _open_yaku(state, rest, melds)
        if variant.min_fan:
            called = _McrView(state, rest, analyse_discards(state, 1, counts=rest), melds)
            return called.best_after() < mcr_before
        return True


# ---------------------------------------------------------------------- helpers


def _first(legal: list[Any], kind: type) -> Any:
    return next((a for a in legal if isinstance(a, kind)), None)


def _plain_scoring(state: TableState) -> bool:
    """No riichi and no fan floor (Taiwan, mass): value comes from the hand's shape (a flush),
    and any seat may be ready late in the wall."""
    return not state.spec.has_riichi and not state.spec.min_fan


def _threats(state: TableState, style: Style = DEFAULT_STYLE) -> list[int]:
    out = defence.threats(state, style.threat_calls, style.riichi_threat_calls)
    if _plain_scoring(state) and state.wall_remaining <= LATE_WALL:
        out = [s for s in range(4) if s != state.seat]
    if state.spec.min_fan:
        return []  # a deal-in costs only the fan beyond the 8 everyone pays: never fold
    return out


def _should_fold(state: TableState, shanten_now: int, info: dict[int, DiscardInfo],
                 style: Style = DEFAULT_STYLE) -> bool:
    if style.push_value is not None and shanten_now <= 1 and (
            _value_points(state) >= style.push_value):
        return False
    if style.fold_from_shanten is not None and shanten_now >= style.fold_from_shanten:
        return True
    if shanten_now >= 2:
        return True
    if shanten_now == 1:
        return state.spec.has_riichi or state.wall_remaining < 2 * LATE_WALL
    live = max(d.useful for d in info.values() if d.shanten == 0)
    return live < style.fold_ready_live


def _value_points(state: TableState) -> int:
    """A rough count of what the hand is worth beyond its shape, for pushing: dora and red
    fives held or melded, value-honour pairs and pungs, 2 for a flush under way."""
    counts = state.counts()
    kinds = [T.kind(t) for m in state.melds for t in m.tiles]
    dora = _dora_kinds(state)
    points = sum(n * (counts[k] + kinds.count(k)) for k, n in dora.items())
    if state.spec.has_dora:
        points += sum(T.is_red(t) for t in state.hand)
        points += sum(T.is_red(t) for m in state.melds for t in m.tiles)
    values = value_honours(state)
    points += sum(1 for k in values if counts[k] + kinds.count(k) >= 2)
    if _flush_suit(counts, state.melds, FLUSH_SHARE + 0.15) is not None:
        points += 2
    return points


def _valuable_call(state: TableState, action: Any, tile: int, rest: list[int],
                   melds: list[Meld]) -> bool:
    """Style "yakuhai": a pung of a value honour, or a call that keeps the whole hand in one
    suit (plus honours) within reach; in riichi, the open hand must still have a yaku."""
    if isinstance(action, ev.Pon) and T.kind(tile) in value_honours(state):
        return True
    return _one_suit_within_reach([T.kind(t) for m in melds for t in m.tiles], rest)


def _one_suit_within_reach(kinds: list[int], rest: list[int]) -> bool:
    """The melds' tiles in one suit (honours aside), and at most two tiles of another suit
    left in the hand."""
    suits = {k // 9 for k in kinds if k < 27}
    if len(suits) != 1:
        return False
    s = suits.pop()
    return sum(c for k, c in enumerate(rest[:27]) if k // 9 != s) <= 2


def _dora_kinds(state: TableState) -> dict[int, int]:
    if not state.spec.has_dora:
        return {}
    out: dict[int, int] = {}
    for ind in state.dora_indicators:
        k = T.dora_from_indicator(ind)
        out[k] = out.get(k, 0) + 1
    return out


def _flush_suit(counts: list[int], melds: list[Meld],
                share: float = FLUSH_SHARE) -> int | None:
    """Taiwan 清一色 (8 tai) / mass 清一色: the suit holding most tiles when it holds 70% of
    them (the others are then shed: :func:`_flush_bonus`), else None."""
    per_suit = [sum(counts[9 * s:9 * s + 9]) for s in range(3)]
    for m in melds:
        for t in m.tiles:
            if T.kind(t) < 27:
                per_suit[T.kind(t) // 9] += 1
    main = max(range(3), key=lambda s: per_suit[s])
    total = sum(per_suit) + sum(counts[27:])
    return main if total and per_suit[main] / total >= share else None


def _flush_bonus(main: int | None, k: int) -> float:
    """Eagerness to discard kind ``k`` while going for the flush suit ``main``."""
    return 3.0 if main is not None and k < 27 and k // 9 != main else 0.0


def _best_discard(counts: list[int], banned: int = -1,
                  regular_only: bool = False) -> tuple[int, list[int]]:
    """(shanten, hand) after the shape-best discard (the first of equals), ``banned`` kind
    excepted; (99, counts) when nothing can be discarded. ``regular_only``: the variant has
    no seven pairs or thirteen orphans (Taiwan)."""
    best_kind, best = -1, 99
    if any(counts):
        after = shanten_after_discards(counts, regular_only=regular_only)
        for k, value in after.items():  # kind order: first of equals
            if k != banned and value < best:
                best_kind, best = k, value
    if best_kind < 0:
        return 99, counts
    trial = list(counts)
    trial[best_kind] -= 1
    return best, trial


def best_after_call(rest: list[int], called: int, kan: bool, regular_only: bool) -> int:
    """Shanten after a call: a kong draws a replacement (3k+1 hand as is); a chi/pon discards
    next (the best discard other than the called kind, which Tenhou forbids)."""
    return (shanten(rest, regular_only) if kan
            else _best_discard(rest, called, regular_only)[0])


def _drop_worst(rest: list[int]) -> list[int]:
    """The hand after a chi/pon less one tile (the shape-worst) so plan distances compare
    hands of the same size."""
    return _best_discard(rest)[1]


def _open_yaku(state: TableState, rest: list[int], melds: list[Meld]) -> bool:
    """Will the hand have a yaku once open? A value-honour pung, all simples within reach, or
    one suit (plus honours) within reach."""
    values = value_honours(state)
    kinds = [T.kind(t) for m in melds for t in m.tiles]
    if any(m.kind in ("pon", "open_kan", "added_kan", "closed_kan") and m.tiles
           and T.kind(m.tiles[0]) in values for m in melds):
        return True
    outside = sum(rest[k] for k in T.TERMINALS_AND_HONOURS)
    if all(k not in T.TERMINALS_AND_HONOURS for k in kinds) and outside <= 1:
        return True
    return _one_suit_within_reach(kinds, rest)


def _has_yaku_without_riichi(state: TableState, discard: int, wait_kinds: frozenset[int]) -> bool:
    """Would every wait win on a discard with a yaku even without riichi?"""
    rules = rules_for("riichi")
    hand = list(state.hand)
    hand.remove(discard)
    base = WinContext(concealed=(), melds=tuple(state.melds), win_tile=0, seat=state.seat,
                      from_seat=(state.seat + 1) % 4, dealer=state.dealer,
                      round_wind=state.round_wind_kind,
                      dora_indicators=tuple(state.dora_indicators))
    live = [w for w in wait_kinds if state.unseen(w)]
    if not live or not waits(T.counts34(hand)):
        return False
    for w in live:
        ctx = replace(base, concealed=(*hand, w), win_tile=w)
        if rules.score(ctx) is None:
            return False
    return True


class _McrView:
    """Plan distances of a hand and after each of its discards (computed on demand), exact
    near ready: the plans are a lower bound toward their own families only, so at ready and
    one step from it the fan calculator decides."""

    def __init__(self, state: TableState, counts: list[int],
                 info: dict[int, DiscardInfo] | None = None,
                 melds: list[Meld] | None = None) -> None:
        self.state = state
        self.counts = counts
        self.melds = state.melds if melds is None else melds  # a call weighs its own meld
        self.info = info or {}  # every discard's shape, where discards are to be scored
        self._after: dict[int, int] | None = None  # plan distance after each discard
        self._winnable: dict[int, list[int]] = {}  # ready discard -> its waits worth 8 fan

    def distance(self) -> int:
        """The distance of this 3k+1 hand (a 3k+2 one: after its shape-best discard)."""
        counts = self.counts
        if sum(counts) % 3 == 2:
            counts = _drop_worst(counts)
        planned = best_distance(counts, self.melds)
        shape = shanten(counts)
        if shape > 1:
            return planned
        useful = waits(counts) if shape == 0 else useful_tiles(counts, 1)
        return self._near_ready(counts, shape, useful, planned)[0]

    def best_after(self) -> int:
        """The least distance over the discards in ``info`` (the hand after a chow or pung)."""
        return min((self.after_discard(k, d)[0] for k, d in self.info.items()), default=99)

    def after_discard(self, k: int, d: DiscardInfo) -> tuple[int, float]:
        """(plan distance, live useful tiles) after discarding kind ``k``, exact near ready
        (:meth:`_near_ready`)."""
        if self._after is None:  # every discard is asked: measure them all in one go
            self._after = best_distances_after_discards(self.counts, self.melds)
        distance = self._after[k]
        if d.shanten == 0:
            winning: list[int] | None = self._winning_waits(k, d)
        elif d.shanten == 1 and d.useful_kinds and not self._some_discard_wins():
            winning = None
        else:
            return distance, float(d.useful)
        rest = list(self.counts)
        rest[k] -= 1
        distance, live = self._near_ready(rest, d.shanten, d.useful_kinds, distance, winning)
        return distance, float(live)

    def _near_ready(self, hand: list[int], shape: int, useful: Iterable[int], planned: int,
                    winning: list[int] | None = None) -> tuple[int, int]:
        """(distance, live useful tiles) of the 3k+1 ``hand`` at ``shape`` 0 or 1, whose
        ``useful`` kinds are its waits or the draws that make it ready. Ready: only live waits
        worth 8 fan count (``winning``, where known), and a hand with none is one step short.
        One step away: only the live draws that leave a wait worth 8 fan count, and a hand
        with none is two short. ``planned``, the plans' distance, is the floor otherwise."""
        if shape == 0:
            good = (winning_waits(self.state, hand, set(useful), self.melds)
                    if winning is None else winning)
            live = sum(map(self.state.unseen, good))
            return (0 if live else max(1, planned)), live
        live = sum(map(self.state.unseen, one_step_draws(self.state, hand, useful, self.melds)))
        return (1 if live else max(2, planned)), live

    def _winning_waits(self, k: int, d: DiscardInfo) -> list[int]:
        good = self._winnable.get(k)
        if good is None:
            rest = list(self.counts)
            rest[k] -= 1
            good = self._winnable[k] = winning_waits(self.state, rest, set(d.useful_kinds),
                                                     self.melds)
        return good

    def _some_discard_wins(self) -> bool:
        """Is some discard ready with a live wait worth 8 fan? Then it is the choice at distance 0,
        and the exact one-step measure of the others (the costly part) cannot change it."""
        return any(d.shanten == 0 and any(map(self.state.unseen, self._winning_waits(k, d)))
                   for k, d in self.info.items())
