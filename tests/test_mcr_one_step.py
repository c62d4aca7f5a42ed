"""MCR one step from ready: the draws that reach a ready hand with a wait worth 8 fan, checked
against brute force over every draw, discard and wait, and the discards and calls they change
(the plans' distance is only a lower bound toward their own families)."""

from __future__ import annotations

import random

from brain.policies import get_policy
from brain.policies.evaluation import analyse_discards
from brain.policies.mcr_plan import best_distance, one_step_draws, winning_waits
from brain.policies.rulebased import _McrView
from brain.rules.base import WinContext
from brain.rules.mcr import MIN_FAN, fan_items
from brain.shanten import shanten, waits
from brain.state import Meld, TableState
from protocols import events as ev
from protocols import tiles as T

WALL = [k for k in range(34) for _ in range(4)]


def _turn(tiles: list[int], melds: tuple[Meld, ...] = (), seat: int = 0) -> TableState:
    """MCR, ``seat`` holds ``tiles`` (the last one just drawn) beside ``melds``."""
    state = TableState("mcr", seat)
    state.apply(ev.GameStarted("mcr", seat))
    state.apply(ev.RoundStarted(round_wind=0, dealer=0, hand=tuple(tiles[:-1])))
    state.apply(ev.TileDrawn(seat, tiles[-1]))
    state.melds.extend(melds)
    return state


def _brute_force(state: TableState, counts: list[int]) -> tuple[int, ...]:
    """Every draw after which some discard leaves a ready hand (regular, seven pairs or
    thirteen orphans) one of whose waits the fan calculator scores at 8 or more on a
    discard win: no shanten table, no plan, no cache."""
    found = []
    for draw in range(34):
        if counts[draw] == 4:
            continue
        hand = list(counts)
        hand[draw] += 1
        if any(_winnable(state, hand, k) for k in range(34) if hand[k] and k != draw):
            found.append(draw)
    return tuple(found)


def _winnable(state: TableState, hand: list[int], discard: int) -> bool:
    ready = list(hand)
    ready[discard] -= 1
    concealed = tuple(k for k in range(34) for _ in range(ready[k]))
    for wait in range(34):
        if ready[wait] == 4:
            continue
        ready[wait] += 1
        complete = shanten(ready) == -1
        ready[wait] -= 1
        if not complete:
            continue
        items = fan_items(WinContext(concealed=(*concealed, wait), melds=tuple(state.melds),
                                     win_tile=wait, seat=state.seat, from_seat=state.seat + 1,
                                     dealer=state.dealer, round_wind=state.round_wind_kind))
        if items is not None and sum(fan for _, fan in items) >= MIN_FAN:
            return True
    return False


def _one_shanten_hands(n: int, seed: int, size: int = 13) -> list[list[int]]:
    rng = random.Random(seed)
    out: list[list[int]] = []
    while len(out) < n:
        tiles = rng.sample(WALL, size)
        if shanten(T.counts34(tiles)) == 1:
            out.append(tiles)
    return out


def test_one_step_draws_equal_brute_force_on_concealed_hands():
    disagree_with_plans = 0
    for tiles in _one_shanten_hands(40, seed=11):
        counts = T.counts34(tiles)
        state = _turn([*tiles, tiles[0]])  # any 14th tile: only seat and winds matter
        all_draws = [k for k in range(34) if counts[k] < 4]
        found = one_step_draws(state, counts, all_draws)
        assert found == _brute_force(state, counts), T.to_mpsz(tiles)
        disagree_with_plans += (best_distance(counts, []) <= 1) != bool(found)
    assert disagree_with_plans > 0  # the plans alone would not have said the same


def test_one_step_draws_equal_brute_force_beside_a_called_pung():
    pung = Meld("pon", tuple(T.parse_mpsz("555z")), T.parse_mpsz("5z")[0])
    for tiles in _one_shanten_hands(15, seed=12, size=10):
        counts = T.counts34(tiles)
        if counts[T.kind(pung.tiles[0])]:
            continue  # the fourth white is not in the wall
        state = _turn([*tiles, tiles[0]], melds=(pung,))
        found = one_step_draws(state, counts, [k for k in range(34) if counts[k] < 4])
        assert found == _brute_force(state, counts), T.to_mpsz(tiles)


def test_rulebased_keeps_the_discard_one_step_from_an_8_fan_win():
    # 三色三同顺 678 is one step away by the plans after either 9m or 3p, but after 9m no
    # single draw makes a ready hand worth 8 fan (the hand still needs its pair and its 678s);
    # after 3p, a 7m or a 4s does.
    tiles = T.parse_mpsz("89m35678p35678s77z")
    state = _turn(tiles)
    counts = T.counts34(tiles)
    after = {}
    for name in ("9m", "3p"):
        rest = list(counts)
        rest[T.kind(T.parse_mpsz(name)[0])] -= 1
        assert best_distance(rest, []) == 1
        after[name] = one_step_draws(state, rest, [k for k in range(34) if rest[k] < 4])
    assert after["9m"] == () and set(after["3p"]) == {T.kind(t) for t in T.parse_mpsz("7m4s")}
    legal = [ev.Discard(t) for t in sorted(set(tiles))]
    decision = get_policy("rulebased").decide(state, ev.DecisionRequest("turn"), legal)
    assert decision.action == ev.Discard(T.parse_mpsz("3p")[0])


def test_a_ready_hand_whose_8_fan_waits_are_all_seen_is_not_at_distance_zero():
    # 清龙 waiting on a single 9p: worth 16 fan, but once the other three 9p lie in the
    # discards it can never win, so it scores as one step short with nothing to wait for.
    hand = tuple(T.parse_mpsz("123456789m345p9p"))
    nine, east = T.parse_mpsz("9p")[0], T.parse_mpsz("1z")[0]
    for seen, distance, useful in ((0, 0, 3.0), (3, 1, 0.0)):
        state = TableState("mcr", 0)
        state.apply(ev.GameStarted("mcr", 0))
        state.apply(ev.RoundStarted(round_wind=0, dealer=1, hand=hand))
        for seat in (1, 2, 3):  # the three others draw and throw: a 9p while ``seen`` lasts
            state.apply(ev.TileDrawn(seat, None))
            state.apply(ev.TileDiscarded(seat, nine if seat <= seen else east))
        state.apply(ev.TileDrawn(0, east))
        info = analyse_discards(state)
        view = _McrView(state, state.counts(), info)
        assert view.after_discard(T.kind(east), info[T.kind(east)]) == (distance, useful)


def test_rulebased_chows_into_a_ready_hand_worth_8_fan_that_no_plan_names():
    # Chowing 3p with 45p and throwing the West leaves 88m 456s 567s 33z: a win on 8m has no
    # fan at all, and 无番和 is itself worth 8. No plan family names it (they put the hand two
    # steps away, as before the chow), so only the exact measure takes the call.
    hand = T.parse_mpsz("88m45p455667s133z")
    three = T.parse_mpsz("3p")[0]
    state = TableState("mcr", 0)
    state.apply(ev.GameStarted("mcr", 0))
    state.apply(ev.RoundStarted(round_wind=0, dealer=3, hand=tuple(hand)))
    state.apply(ev.TileDrawn(3, None))
    state.apply(ev.TileDiscarded(3, three))
    chow = ev.Chi(tuple(T.parse_mpsz("45p")))
    meld = Meld("chi", (*chow.tiles, three), three)
    rest = T.counts34(T.parse_mpsz("88m455667s33z"))
    assert best_distance(T.counts34(hand), []) == best_distance(rest, [meld]) == 2
    assert winning_waits(state, rest, waits(rest), [meld]) == [T.kind(T.parse_mpsz("8m")[0])]
    request = ev.DecisionRequest("claim", tile=three, from_seat=3)
    decision = get_policy("rulebased").decide(state, request, [ev.Pass(), chow])
    assert decision.action == chow
