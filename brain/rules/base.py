"""What every variant shares: the win context, the score, hand decomposition and the legal-action
logic, with per-variant hooks (who may call what, kong limits, riichi, the minimum value to win).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from itertools import combinations

from brain.actions import canonical
from brain.shanten import regular_shanten
from brain.state import Meld, TableState
from protocols import events as ev
from protocols import tiles as T


@dataclass(frozen=True, slots=True)
class WinContext:
    """Everything needed to value a win. ``concealed`` includes the winning tile."""

    concealed: tuple[int, ...]
    melds: tuple[Meld, ...]
    win_tile: int
    seat: int
    from_seat: int | None  # None for a self-draw
    dealer: int = 0
    round_wind: int = T.EAST  # as a kind 27..30
    riichi: bool = False
    double_riichi: bool = False
    ippatsu: bool = False
    after_kan: bool = False  # win on a kong replacement draw
    robbing_kan: bool = False
    last_tile: bool = False  # last tile of the wall (haitei / houtei / 海底)
    first_turn: bool = False  # tenhou / chiihou / 天胡 地胡 人胡
    fourth_tile: bool = False  # MCR 和绝张
    flowers: int = 0
    dora_indicators: tuple[int, ...] = ()
    ura_dora_indicators: tuple[int, ...] = ()
    honba: int = 0
    sticks: int = 0
    declared_eye: bool = False  # Taiwan 眼牌 option
    pao_seat: int | None = None  # riichi: the seat liable for the yakuman (責任払い)

    @property
    def self_draw(self) -> bool:
        return self.from_seat is None

    @property
    def seat_wind(self) -> int:
        return T.EAST + (self.seat - self.dealer) % 4

    @property
    def is_dealer(self) -> bool:
        return self.seat == self.dealer


@dataclass(frozen=True, slots=True)
class WinScore:
    """``value``: han / fan / tai; ``deltas``: score change of seats 0..3; ``items``: (name,
    value) of each yaku / fan / tai counted."""

    value: int
    deltas: tuple[int, int, int, int]
    items: tuple[tuple[str, int], ...] = ()
    fu: int | None = None
    limit: str | None = None
    # (name, value, who) of what one payer alone pays beyond ``value`` (Taiwan's 莊家 when a
    # non-dealer self-draws: "the dealer" pays one tai more than the others): shown beside
    # the items, so that the value line says what the deltas hold
    payer_items: tuple[tuple[str, int, str], ...] = ()

    def item_texts(self) -> tuple[str, ...]:
        """The items as a log's yaku entries (``門清(1)``), then what one payer alone pays
        beyond the value (``莊家(1, paid by the dealer alone)``: its name still reads as the
        item's, replay/yaku_names.item_name)."""
        return (tuple(f"{name}({value})" for name, value in self.items)
                + tuple(f"{name}({value}, paid by {who} alone)"
                        for name, value, who in self.payer_items))


def four_seats(deltas: Sequence[int]) -> tuple[int, int, int, int]:
    """``deltas`` as WinScore's four-seat tuple; ValueError unless there are exactly four."""
    seat0, seat1, seat2, seat3 = deltas
    return (seat0, seat1, seat2, seat3)


@dataclass(frozen=True, slots=True)
class Group:
    """One group of a decomposed hand: "chow" (kind = lowest), "pung", "kong", or "pair"."""

    shape: str
    kind: int
    concealed: bool = True
    from_meld: str | None = None  # the meld kind when it came from a call

    @property
    def kinds(self) -> tuple[int, ...]:
        if self.shape == "chow":
            return (self.kind, self.kind + 1, self.kind + 2)
        return (self.kind,)


def decompositions(counts: list[int], groups: int) -> Iterator[list[Group]]:
    """Every way to split ``counts`` (3*groups + 2 tiles) into ``groups`` chows/pungs and a pair,
    without duplicates (groups come out in non-decreasing order)."""
    counts = list(counts)
    for pair in range(34):
        if counts[pair] >= 2:
            counts[pair] -= 2
            for rest in _groups_of(counts, 0):
                yield [Group("pair", pair), *rest]
            counts[pair] += 2


def _groups_of(counts: list[int], start: int) -> Iterator[list[Group]]:
    i = start
    while i < 34 and counts[i] == 0:
        i += 1
    if i == 34:
        yield []
        return
    if counts[i] >= 3:
        counts[i] -= 3
        for rest in _groups_of(counts, i):
            yield [Group("pung", i), *rest]
        counts[i] += 3
    if i < 27 and i % 9 <= 6 and counts[i + 1] and counts[i + 2]:
        for k in (i, i + 1, i + 2):
            counts[k] -= 1
        for rest in _groups_of(counts, i):
            yield [Group("chow", i), *rest]
        for k in (i, i + 1, i + 2):
            counts[k] += 1


# Actions are immutable values: the legal sets share one instance of each plain discard and of
# Pass rather than build them again for every request.
_PLAIN_DISCARDS = tuple(ev.Discard(t) for t in range(T.FLOWER_LAST + 1))
_PASS = ev.Pass()


def meld_groups(melds: tuple[Meld, ...] | list[Meld]) -> list[Group]:
    out = []
    for m in melds:
        k = m.kind_of_tiles
        if k is None or m.kind == "nuki":
            continue
        shape = {"chi": "chow", "pon": "pung"}.get(m.kind, "kong")
        out.append(Group(shape, k, concealed=m.kind == "closed_kan", from_meld=m.kind))
    return out


class Rules:
    """The interface every variant implements; the shared legal-action logic lives here."""

    name = ""
    hand_size = 13
    min_value = 0
    allows_riichi = False
    allows_seven_pairs = False
    red_fives = False
    bans_swap_calling = False  # the first discard after a chow or pung may not be the called
    # kind (nor, after a chow, the kind at the sequence's other end): _swap_banned_kinds says
    # which, and no call is offered after which every discard would be one
    flowers = 0  # flower tiles set aside that the value counts, a fan each (MCR's 8)

    # -------------------------------------------------------------- hooks per variant

    def is_complete(self, counts: list[int]) -> bool:
        """Shape only: does this concealed count vector (3k+2 tiles) form a winning shape?"""
        return regular_shanten(counts) == -1

    def score(self, ctx: WinContext) -> WinScore | None:
        """The value of a win, or None if it is no legal win (wrong shape, below the minimum)."""
        raise NotImplementedError

    def unpaid_items(self, ctx: WinContext) -> tuple[tuple[str, int], ...] | None:
        """The items of a hand these rules value but do not pay (under a floor), to say why
        :meth:`score` gave None; None where there is nothing to say."""
        return None

    def can_chi(self, state: TableState, from_seat: int) -> bool:
        return (from_seat + 1) % 4 == state.seat

    def can_open_kan(self, state: TableState, from_seat: int) -> bool:
        """An open kong on ``from_seat``'s discard (the claim itself already allowed)."""
        return self.kan_allowed(state)

    def claims_allowed(self, state: TableState) -> bool:
        """Can this seat call (chi/pon/kan) at all now? Winning is decided separately."""
        return state.wall_remaining > 0

    def kan_allowed(self, state: TableState) -> bool:
        return state.wall_remaining > 0 and state.kans < 4

    def can_win_on(self, state: TableState, tile: int) -> bool:
        """Variant restrictions on a win by a discard (riichi: furiten)."""
        return True

    # Every winning shape is one the shanten tables know (MCR's knitted ones are not), so the
    # seat's cached waits can rule a tile out before any scoring is tried.
    waits_cover_wins = True

    def _may_win_on(self, state: TableState, tile: int, request: ev.DecisionRequest) -> bool:
        """The tile is one of our waits and the variant lets us win on it. Where the platform
        offers the win (Tenhou's ron flag), its own furiten judgement stands: it knows the
        order of play, which a reconnect's table (REINIT: each river on its own) does not
        give, and a riichi furiten read into a guessed order passed up every later ron."""
        if self.waits_cover_wins and T.kind(tile) not in state.waits():
            return False
        if request.offered is not None and "win" in request.offered:
            return True
        return self.can_win_on(state, tile)

    # -------------------------------------------------------------- contexts

    def context(self, state: TableState, win_tile: int, from_seat: int | None,
                robbing_kan: bool = False) -> WinContext:
        """The win context for ``state``'s own seat winning on ``win_tile``."""
        concealed = list(state.hand)
        if from_seat is not None:
            concealed.append(win_tile)
        me = state.me
        return WinContext(
            concealed=tuple(concealed), melds=tuple(me.melds), win_tile=win_tile,
            seat=state.seat, from_seat=from_seat, dealer=state.dealer,
            round_wind=state.round_wind_kind, riichi=me.riichi, double_riichi=me.double_riichi,
            ippatsu=me.ippatsu, after_kan=from_seat is None and state.last_draw_replacement,
            robbing_kan=robbing_kan, last_tile=state.wall_remaining == 0,
            first_turn=not state.calls_made and me.draws <= 1 and not me.river,
            fourth_tile=self._fourth_tile(state, win_tile, from_seat, robbing_kan),
            flowers=len(me.flowers), dora_indicators=tuple(state.dora_indicators),
            honba=state.honba, sticks=state.sticks,
        )

    def _fourth_tile(self, state: TableState, win_tile: int, from_seat: int | None,
                     robbing_kan: bool) -> bool:
        return False

    def win_score(self, state: TableState, win_tile: int, from_seat: int | None,
                  robbing_kan: bool = False) -> WinScore | None:
        counts = state.counts()
        if from_seat is not None:
            counts[T.kind(win_tile)] += 1
        if sum(counts) % 3 != 2 or not self.is_complete(counts):
            return None
        return self.score(self.context(state, win_tile, from_seat, robbing_kan))

    # -------------------------------------------------------------- legal actions

    def legal_actions(self, state: TableState, request: ev.DecisionRequest) -> list[ev.Action]:
        """Every action this seat may take now, by the variant's rules, intersected with what
        the platform offers (where it says), in canonical order (never the hand's order)."""
        if request.kind == "turn":
            actions = self._turn_actions(state)
            if self._after_last_draw(state, request):
                actions = [*(a for a in actions if isinstance(a, ev.Win)), _PASS]
        elif request.kind == "claim":
            actions = self._claim_actions(state, request)
        elif request.kind == "rob_kan":
            actions = self._rob_kan_actions(state, request)
        else:
            actions = [_PASS]
        if request.offered is not None:
            # Pass is always possible where a platform offers anything; on our turn a plain
            # discard always is (platforms list only the optional extras, e.g. Tenhou t-flags).
            offered = set(request.offered)
            kept = [a for a in actions if ev.action_kind(a) in offered or isinstance(a, ev.Pass)
                    or (request.kind == "turn" and ev.action_kind(a) == "discard")]
            actions = kept or actions
        return canonical(actions) if len(actions) > 1 else actions

    @staticmethod
    def _after_last_draw(state: TableState, request: ev.DecisionRequest) -> bool:
        """Our turn on the draw that emptied the live wall where that draw ends the hand
        (Taiwan, as at the NYCU lab referee): we may only win by it, or pass; no discard
        follows. A platform that asks for a discard all the same (``offered``) gets one: its
        count of the wall is the table's, not ours."""
        return (state.spec.last_draw_ends and state.wall_remaining == 0
                and state.last_draw is not None
                and not (request.offered is not None and "discard" in request.offered))

    def _turn_actions(self, state: TableState) -> list[ev.Action]:
        actions: list[ev.Action] = []
        drawn = state.last_draw
        if drawn is not None and self.win_score(state, drawn, None) is not None:
            actions.append(ev.Win())
        actions.extend(self._discards(state))
        if drawn is not None and self.kan_allowed(state):
            actions.extend(self._own_kans(state))
        return actions

    def _discards(self, state: TableState) -> list[ev.Action]:
        banned = self._kuikae_banned(state)
        seen: set[int] = set()
        out: list[ev.Action] = []
        for t in sorted(state.hand, key=T.sort_key):
            if t in seen or T.kind(t) in banned:
                continue
            seen.add(t)
            out.append(_PLAIN_DISCARDS[t])
        return out

    def _kuikae_banned(self, state: TableState) -> set[int]:
        """The kinds the discard right after our chow or pung may not be (swap-calling)."""
        meld = state.called_this_turn
        if meld is None or meld.called is None:
            return set()
        return self._swap_banned_kinds(meld.kind, meld.called, meld.tiles)

    def _swap_banned_kinds(self, kind: str, called: int,
                           tiles: tuple[int, ...]) -> set[int]:
        """The kinds a chow or pung of ``tiles`` (``called`` among them) bars from the next
        discard; none where the rules allow swap-calling."""
        return set()

    def _leaves_a_discard(self, state: TableState, call: ev.Chi | ev.Pon, tile: int) -> bool:
        """Some tile left after ``call`` on ``tile`` may be discarded: a call after which
        every discard would be a swap-call is not allowed (2s3s4s4s: no chow of 2s3s on a
        1s, as the 4s are barred), so a turn never comes with nothing to play."""
        rest = list(state.hand)
        for t in call.tiles:
            rest.remove(t)
        banned = self._swap_banned_kinds(ev.action_kind(call), tile, (*call.tiles, tile))
        return any(T.kind(t) not in banned for t in rest)

    def _own_kans(self, state: TableState) -> list[ev.Action]:
        counts = state.counts()
        out: list[ev.Action] = []
        for k in range(34) if 4 in counts else ():
            if counts[k] == 4:
                out.append(ev.Kan("closed_kan", tuple(sorted(
                    (t for t in state.hand if T.kind(t) == k), key=T.sort_key))))
        for m in state.melds:
            if m.kind == "pon" and m.tiles:
                k = T.kind(m.tiles[0])
                held = sorted((t for t in state.hand if T.kind(t) == k), key=T.sort_key)
                if held:
                    out.append(ev.Kan("added_kan", (held[0],)))
        return out

    def _claim_actions(self, state: TableState, request: ev.DecisionRequest) -> list[ev.Action]:
        actions: list[ev.Action] = [_PASS]
        if state.last_discard is None and request.tile is None:
            return actions
        from_seat, tile = state.last_discard or (request.from_seat, request.tile)
        if from_seat is None or tile is None or from_seat == state.seat:
            return actions
        if self._may_win_on(state, tile, request) and self.win_score(
                state, tile, from_seat) is not None:
            actions.append(ev.Win())
        if not self.claims_allowed(state):
            return actions
        k = T.kind(tile)
        counts = state.counts()
        if counts[k] < 2 and not (k < 27 and self.can_chi(state, from_seat)
                                  and self._has_chi_partners(counts, k)):
            return actions  # the common case: nothing to call
        same = sorted((t for t in state.hand if T.kind(t) == k), key=T.sort_key)
        if len(same) >= 2:
            for pair in _distinct_subsets(same, 2):
                actions.append(ev.Pon(pair))
        if len(same) >= 3 and self.can_open_kan(state, from_seat):
            actions.append(ev.Kan("open_kan", tuple(same[:3])))
        if k < 27 and self.can_chi(state, from_seat):
            actions.extend(self._chis(state, k))
        if self.bans_swap_calling:
            actions = [a for a in actions if not isinstance(a, ev.Chi | ev.Pon)
                       or self._leaves_a_discard(state, a, tile)]
        return actions

    @staticmethod
    def _has_chi_partners(counts: list[int], k: int) -> bool:
        r = k % 9
        left = r >= 1 and counts[k - 1]
        right = r <= 7 and counts[k + 1]
        return bool((left and (right or (r >= 2 and counts[k - 2])))
                    or (right and r <= 6 and counts[k + 2]))

    def _chis(self, state: TableState, k: int) -> list[ev.Action]:
        out: list[ev.Action] = []
        r = k % 9
        for lo in (k - 2, k - 1, k):
            if lo < k - r or lo + 2 > k - r + 8:
                continue
            need = [x for x in (lo, lo + 1, lo + 2) if x != k]
            options_a = sorted({t for t in state.hand if T.kind(t) == need[0]})
            options_b = sorted({t for t in state.hand if T.kind(t) == need[1]})
            for a in options_a:
                for b in options_b:
                    out.append(ev.Chi((a, b)))
        return out

    def _rob_kan_actions(self, state: TableState, request: ev.DecisionRequest) -> list[ev.Action]:
        actions: list[ev.Action] = [_PASS]
        seat_tile = state.last_added_kan or (request.from_seat, request.tile)
        from_seat, tile = seat_tile
        if from_seat is None or tile is None or from_seat == state.seat:
            return actions
        # a sanma kita (nuki) may be won on as a discard, but it robs no kan: no chankan
        robbing = state.last_added_kan is not None or not _robs_a_nuki(state, from_seat)
        if self._may_win_on(state, tile, request) and self.win_score(
                state, tile, from_seat, robbing_kan=robbing) is not None:
            actions.append(ev.Win())
        return actions


def _robs_a_nuki(state: TableState, seat: int) -> bool:
    """The tile offered is the North ``seat`` just set aside (Tenhou's ``t="8"`` on a nuki):
    riichi.wiki's Sanma page, "A kita call can be ronned, but this does not award chankan"."""
    melds = state.seats[seat].melds
    return bool(melds) and melds[-1].kind == "nuki"


def _distinct_subsets(tiles: list[int], n: int) -> list[tuple[int, ...]]:
    """Distinct n-subsets by tile identity (a red five and a plain five differ)."""
    return sorted({tuple(sorted(c)) for c in combinations(tiles, n)})


@dataclass(slots=True)
class ScoreSheet:
    """Collects (name, value) items while a calculator works through a hand."""

    items: list[tuple[str, int]] = field(default_factory=list)

    def add(self, name: str, value: int) -> None:
        self.items.append((name, value))

    @property
    def total(self) -> int:
        return sum(v for _, v in self.items)
