"""MCR's plan planes (encoding 2, brain/nn/mcr_planes.py) on hand-made hands, and that the
other encodings and the weights trained on them are untouched (issue 26, section 4)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from adapter.bench.mc import positions
from brain.nn import encoding as E
from brain.nn import mcr_planes as M
from brain.nn.network import MissingNetwork, Network, Shape, load_network, random_network
from brain.policies.mcr_plan import FAMILIES, best_distance, family_distances
from brain.policies.nn import NnPolicy
from brain.state import TableState
from protocols import events as ev
from protocols import tiles as T
from replay.dataset.snapshot import encode_view, restore

P = T.parse_mpsz
V2 = E.MCR_PLAN_ENCODING
NAMES = E.planes_of(V2)


def plane(x: np.ndarray, name: str) -> np.ndarray:
    return x[NAMES.index(name)]


def k(mpsz: str) -> int:
    return T.kind(P(mpsz)[0])


def scaled(d: int) -> float:
    return (min(d, M.CAP) + 1) / (M.CAP + 1)


def mcr_turn(hand13: str, draw: str) -> TableState:
    """MCR, seat 0 deals, holds ``hand13`` and draws ``draw``; nobody has discarded."""
    s = TableState("mcr", 0)
    s.apply(ev.GameStarted("mcr", 0))
    s.apply(ev.RoundStarted(round_wind=0, dealer=0, hand=tuple(P(hand13))))
    s.apply(ev.TileDrawn(0, P(draw)[0]))
    return s


def mcr_claim(hand13: str, offered: str, from_seat: int = 3) -> tuple[TableState,
                                                                      ev.DecisionRequest]:
    """MCR, seat 0 holds ``hand13``; ``from_seat`` (3: the previous seat, who may be chowed
    from) discards ``offered``."""
    s = TableState("mcr", 0)
    s.apply(ev.GameStarted("mcr", 0))
    s.apply(ev.RoundStarted(round_wind=0, dealer=from_seat, hand=tuple(P(hand13))))
    s.apply(ev.TileDrawn(from_seat, None))
    s.apply(ev.TileDiscarded(from_seat, P(offered)[0]))
    return s, ev.DecisionRequest("claim", tile=P(offered)[0], from_seat=from_seat)


TURN = ev.DecisionRequest("turn")


def test_version_1_is_unchanged_and_version_2_adds_the_mcr_planes() -> None:
    assert E.planes_of(E.ENCODING_VERSION) == E.PLANES and E.NUM_PLANES == 133
    assert NAMES[:E.NUM_PLANES] == E.PLANES and NAMES[E.NUM_PLANES:] == M.PLANES
    assert len(set(NAMES)) == len(NAMES) == E.num_planes(V2)
    assert E.encoding_for("mcr") == V2
    assert [E.encoding_for(v) for v in ("riichi", "taiwan16", "mass")] == [1, 1, 1]
    with pytest.raises(ValueError, match="unknown encoding version 3"):
        E.planes_of(3)


def test_a_ready_pure_straight_shows_distance_0_and_its_waits_reach_8_fan() -> None:
    # 123456789m + 1z 2z pairs: ready for 清龙 (16 fan) on 1z / 2z once the drawn 5z goes
    x = E.encode(mcr_turn("123456789m1122z", "5z"), TURN, V2)
    five_z = k("5z")
    assert plane(x, "plan_pure_straight")[five_z] == pytest.approx(scaled(0))
    assert plane(x, "plan_best")[five_z] == pytest.approx(scaled(0))
    assert np.flatnonzero(plane(x, "plan_best_discard")).tolist() == [five_z]
    # breaking the straight (discarding 5m) leaves it one tile short: distance 1
    assert plane(x, "plan_pure_straight")[k("5m")] == pytest.approx(scaled(1))
    assert np.flatnonzero(plane(x, "wait_win")).tolist() == [k("1z"), k("2z")]
    assert plane(x, "wait_fan")[k("1z")] == 1.0  # 16 fan and more: capped at 16
    # two unseen copies of each wait, all worth 8: 4 / 8
    assert plane(x, "discard_win8")[five_z] == pytest.approx(0.5)
    assert plane(x, "discard_win8")[k("5m")] == 0
    # kinds not held carry no per-discard value
    assert plane(x, "plan_best")[k("9s")] == 0 and plane(x, "plan_full_flush")[k("9s")] == 0


def test_only_the_wait_worth_8_fan_is_marked_as_a_win() -> None:
    # 23456789m 123p 55z waits on 1m (清龙, 16 fan), 4m and 7m (no 8-fan plan: a small hand)
    s, request = mcr_claim("23456789m123p55z", "9s", from_seat=2)
    x = E.encode(s, request, V2)
    assert np.flatnonzero(plane(x, "wait_win")).tolist() == [k("1m")]
    fan = plane(x, "wait_fan")
    assert fan[k("1m")] == 1.0
    assert 0 < fan[k("4m")] < 0.5 and 0 < fan[k("7m")] < 0.5  # a win, but under 8 fan
    assert plane(x, "plan_pure_straight")[0] == pytest.approx(scaled(0))
    assert plane(x, "plan_best").min() == pytest.approx(scaled(0))  # ready with an 8-fan wait


def test_a_ready_hand_with_no_wait_worth_8_fan_is_one_step_short() -> None:
    # 123m 234m 456p 678s + 5z: ready on the 5z single wait, a cheap hand below 8 fan
    s, request = mcr_claim("123234m456p678s5z", "9m", from_seat=2)
    x = E.encode(s, request, V2)
    assert plane(x, "wait_win").max() == 0 and plane(x, "wait_fan")[k("5z")] > 0
    assert plane(x, "plan_best")[0] >= scaled(1)


def test_a_chow_that_completes_the_pure_straight_shows_distance_0() -> None:
    # 1234568 9m 11z 22z 5z, 7m offered by the previous seat: chowing 789 leaves 123 456 and
    # two pairs (discard 5z: ready for 清龙); chowing 678 or 567 breaks the straight; passing
    # keeps the hand one exchange from ready
    s, request = mcr_claim("12345689m1122z5z", "7m", from_seat=3)
    x = E.encode(s, request, V2)
    assert plane(x, "call_chi_low")[0] == pytest.approx(scaled(0))
    assert plane(x, "call_chi_mid")[0] > scaled(0)
    assert plane(x, "call_chi_high")[0] > scaled(0)
    assert plane(x, "plan_best")[0] == pytest.approx(scaled(1))
    assert plane(x, "call_pon")[0] == 0 and plane(x, "call_kan")[0] == 0


def test_no_chow_planes_for_a_tile_from_another_seat_and_a_pon_where_a_pair_is_held() -> None:
    s, request = mcr_claim("12345689m1122z5z", "1z", from_seat=2)
    x = E.encode(s, request, V2)
    assert all(plane(x, f"call_{c}")[0] == 0 for c in ("chi_low", "chi_mid", "chi_high", "kan"))
    assert plane(x, "call_pon")[0] > 0


def test_every_family_is_measured_as_the_planner_measures_it() -> None:
    """The nearest family is the planner's best distance, on the hands of seeded MCR games
    (knitted families far away give a lower bound: compared below that bound)."""
    found = positions("mcr", games=3, seed=7)
    checked = 0
    for state, _, _ in found:
        counts = state.counts()
        if sum(counts) % 3 != 1:
            continue
        fams = family_distances(counts, state.melds)
        assert len(fams) == len(FAMILIES)
        best = best_distance(counts, state.melds)
        assert min(min(fams), 4) == min(best, 4)
        checked += 1
    assert checked > 10


def test_other_variants_get_zero_mcr_planes_and_their_first_planes_are_version_1s() -> None:
    for variant in ("riichi", "taiwan16"):
        for state, request, _ in positions(variant, games=1, seed=3)[:15]:
            x2 = E.encode(state, request, V2)
            assert np.array_equal(x2[:E.NUM_PLANES], E.encode(state, request))
            assert not x2[E.NUM_PLANES:].any()


@pytest.fixture(scope="module")
def mcr_positions() -> list[tuple[TableState, ev.DecisionRequest, list[Any]]]:
    return positions("mcr", games=3, seed=11)


def test_mcr_positions_share_version_1_planes_and_rebuild_from_dataset_rows(
        mcr_positions: list[Any]) -> None:
    """Training encodes states rebuilt from dataset rows: the plan planes must be the ones
    the policy sees in play."""
    assert len(mcr_positions) > 20
    lit = 0
    for state, request, _ in mcr_positions:
        x2 = E.encode(state, request, V2)
        assert np.array_equal(x2[:E.NUM_PLANES], E.encode(state, request))
        again = restore(state.variant, state.seat, encode_view(state))
        assert np.array_equal(E.encode(again, request, V2), x2)
        lit += bool(x2[E.NUM_PLANES:].any())
    assert lit == len(mcr_positions)


def test_version_1_mcr_weights_still_load_and_play(mcr_positions: list[Any]) -> None:
    shipped = load_network("mcr")
    assert shipped.encoding == 1 and shipped.shape.planes == E.NUM_PLANES
    policy = NnPolicy(shipped)
    for state, request, legal in mcr_positions[:20]:
        assert policy.decide(state, request, legal).action in legal


def test_a_version_2_network_round_trips_plays_and_a_wrong_plane_count_is_refused(
        tmp_path: Path, mcr_positions: list[Any]) -> None:
    shape = Shape(E.num_planes(V2), 8, 1, 4)
    net = random_network("mcr", shape, seed=2, encoding=V2)
    path = tmp_path / "v2.npz"
    net.save(path)
    back = Network.from_file(path, "mcr")
    assert back.encoding == V2
    policy = NnPolicy(back)
    for state, request, legal in mcr_positions[:20]:
        assert policy.decide(state, request, legal).action in legal
    small = random_network("mcr", Shape(E.NUM_PLANES, 8, 1, 4), seed=2)
    Network(small.params, dict(small.meta, encoding_version=V2)).save(path)
    with pytest.raises(MissingNetwork, match="133 planes, encoding 2 has 155"):
        Network.from_file(path, "mcr")
