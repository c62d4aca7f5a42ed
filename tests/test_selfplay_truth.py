"""The hidden truth of self-play rows, checked against the referee and the rules by other
routes than the ones that wrote it: the physical walls the referee still holds, shanten and
a brute-force completion test over all 34 kinds, the referee's own score of the wins that
happened, and the state rebuilt from a row giving the same legal actions and the same move."""

from __future__ import annotations

import functools
from typing import Any

import numpy as np
import pytest

from adapter.local.arena import ArenaConfig
from adapter.local.game import play_game
from adapter.local.seat import BrainSeat
from adapter.local.selfplay import RecordingReferee, SelfPlayConfig, play_selfplay_unit
from brain.policies import get_policy
from brain.rules import rules_for
from brain.shanten import regular_shanten, shanten
from protocols import events as ev
from protocols import tiles as T
from replay.dataset import schema as S
from replay.dataset.records import Block, BlockBuilder
from replay.dataset.snapshot import encode_view, restore

VARIANTS = ["riichi", "mcr", "taiwan16", "mass"]
POLICIES = ("rulebased", "greedy", "rulebased", "greedy")


def _wall_kinds(referee: Any) -> list[int]:
    """Copies of each kind the referee has not dealt, drawn or shown (dora indicators)."""
    w = referee.walls
    if referee.variant == "mcr":
        tiles = [t for wall in w.private for t in wall]
    elif referee.variant == "riichi":
        tiles = [*w.live, *w.rinshan, *w.indicators[len(w.dora):], *w.ura_indicators]
    else:
        tiles = list(w.live)
    return T.counts34(tiles)


class CheckingReferee(RecordingReferee):
    """Records as self-play does, then compares the row just written with the referee."""

    checked = 0

    def _record(self, referee: Any, seat: int, request: ev.DecisionRequest,
                legal: list[Any], answer: Any) -> None:
        super()._record(referee, seat, request, legal, answer)
        row = self.builder.row(self.builder.decisions - 1)
        assert row["t_wall"].tolist() == _wall_kinds(self), (seat, request)
        for s in range(4):
            hand = [int(t) for t in row["t_hand"][s] if t >= 0]
            assert hand == self.views[s].hand
        CheckingReferee.checked += 1


@pytest.mark.parametrize("variant", VARIANTS)
def test_wall_truth_is_what_the_referee_still_holds(variant):
    config = ArenaConfig(variant, POLICIES, seed=11)
    CheckingReferee.checked = 0
    for seating in config.arrangements()[:2]:
        players = [BrainSeat(variant, s, seating[s]) for s in range(4)]
        builder = BlockBuilder(variant, sorted(set(POLICIES)))
        referee = CheckingReferee(variant, players, builder, 0, seating)
        play_game(config.game_config(), players, 11, 0, None, referee)
    assert CheckingReferee.checked > 50


@functools.cache
def _brute_waits(variant: str, hand: tuple[int, ...]) -> list[int]:
    """Cached by hand: a row repeats the three hands that did not move (mcr: 72 hands in 1,119
    seat rows), and a brute-force MCR completion check is about 0.6 ms per kind."""
    rules = rules_for(variant)
    counts = list(hand)
    out = []
    for k in range(34):
        if counts[k] >= 4:
            continue
        counts[k] += 1
        if rules.is_complete(counts):
            out.append(k)
        counts[k] -= 1
    return out


def _knitted_ready(counts: list[int]) -> bool:
    import MahjongGB

    hand = tuple(T.to_botzone(k) for k in range(34) for _ in range(counts[k]))
    for fn in (MahjongGB.HonorsAndKnittedTilesShanten, MahjongGB.KnittedStraightShanten):
        try:
            if fn(hand)[0] == 0:
                return True
        except TypeError:
            continue
    return False


@pytest.fixture(scope="module", params=VARIANTS)
def unit(request):
    variant = request.param
    config = SelfPlayConfig(ArenaConfig(variant, POLICIES, hands=1, seed=7), "unused")
    data = play_selfplay_unit(config, 0)
    assert data.errors == []
    return variant, Block.concat(data.games).arrays


def test_tenpai_and_waits_by_shanten_and_brute_force(unit):
    variant, a = unit
    rules = rules_for(variant)
    tenpai_rows = 0
    for i in range(a["seat"].shape[0]):
        for s in range(4):
            counts = T.counts34(int(t) for t in a["t_hand"][i, s] if t >= 0)
            marked = bool(a["t_tenpai"][i, s])
            waits = np.flatnonzero(a["t_waits"][i, s]).tolist()
            if sum(counts) % 3 != 1:
                assert not marked and not waits
                continue
            assert waits == _brute_waits(variant, tuple(counts)), (i, s)
            assert marked == bool(waits)
            if marked:
                tenpai_rows += 1
                by_tables = (regular_shanten(counts) if variant == "taiwan16"
                             else shanten(counts))
                assert by_tables == 0 or (variant == "mcr" and _knitted_ready(counts)), (i, s)
                assert a["t_shanten"][i, s] == by_tables
            for k in range(34):  # values only on waits; -1: no legal win, which pays nothing
                value, points = a["t_value"][i, s, k], a["t_points"][i, s, k]
                if not a["t_waits"][i, s, k] or value == -1:
                    assert value in (0, -1) and points == 0
                    assert value == 0 or a["t_waits"][i, s, k]
                else:
                    assert value >= rules.min_value and points != 0
            if marked and variant == "riichi" and s != a["seat"][i]:
                assert a["t_furiten"][i, s] in (0, 1)
    assert tenpai_rows > 20


def test_discard_truth_predicts_the_referees_score_of_the_ron(unit):
    """The decision that dealt in: the winner's row said this kind wins, worth what the
    referee then scored (riichi: ura dora aside, so only winners without riichi)."""
    variant, a = unit
    n = a["seat"].shape[0]
    last_turn: dict[tuple[int, int], int] = {}
    for i in range(n):
        if a["request"][i] == 0:
            last_turn[(int(a["hand_index"][i]), int(a["seat"][i]))] = i
    checked = 0
    for (hand, seat), i in last_turn.items():
        action = S.decode_action(a["action"][i])
        wins = [w for w in a["h_wins"][hand] if w[0] >= 0]
        if (not isinstance(action, ev.Discard) or action.riichi or T.is_red(action.tile)
                or len(wins) != 1 or wins[0][1] != seat):
            continue
        winner, _, value = (int(x) for x in wins[0])
        k = T.kind(action.tile)
        assert a["t_waits"][i, winner, k] == 1
        if variant == "riichi" and a["v_seat_flags"][i, winner] & S.SEAT_RIICHI:
            assert 0 < a["t_value"][i, winner, k] <= value  # ura dora come at the win
            continue
        assert a["t_value"][i, winner, k] == value, (i, winner, k)
        if not a["v_seat_flags"][i, seat] & S.SEAT_RIICHI:  # else its stick is in the deltas
            assert a["t_points"][i, winner, k] == -a["h_deltas"][hand][seat]
        checked += 1
    assert checked >= 1


def test_a_row_rebuilds_the_state_the_policy_saw(unit):
    variant, a = unit
    rules = rules_for(variant)
    policies = sorted(set(POLICIES))
    for i in range(a["seat"].shape[0]):
        row = {name: a[name][i] for name in a if not name.startswith("h_")}
        seat = int(row["seat"])
        state = restore(variant, seat, row)
        request = ev.DecisionRequest(
            S.REQUEST_KINDS[int(row["request"])],
            tile=None if row["request_tile"] < 0 else int(row["request_tile"]),
            from_seat=None if row["request_from"] < 0 else int(row["request_from"]))
        legal = rules.legal_actions(state, request)
        recorded = [S.decode_action(x) for x in row["legal"][:int(row["legal_count"])]]
        assert legal == recorded, i
        for name, value in encode_view(state).items():
            assert np.array_equal(value, row[name]), (i, name)
        if len(legal) > 1:
            policy = get_policy(policies[int(row["policy"])])
            chosen = policy.decide(state, request, legal, None).action
            assert chosen == S.decode_action(row["action"]), (i, policy.name)
