"""Opponent-model features on hand-made tables (exact values), the live state and the dataset
rows giving the same inputs, and the rank AUC against hand-computed cases."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from adapter.local.arena import ArenaConfig
from adapter.local.selfplay import SelfPlayConfig, run_selfplay
from brain.opponents import view as V
from brain.opponents.features import (
    KIND_NAMES,
    PUBLIC_NAMES,
    Features,
    dora_of,
    opponent_pairs,
    tile_kind,
)
from brain.state import TableState
from protocols import events as ev
from protocols import tiles as T
from replay.dataset import schema as S
from replay.dataset.shards import read_manifest, read_shard, shard_paths
from replay.dataset.snapshot import restore
from replay.learning.opponents.metrics import auc, bootstrap_ci


def k(text: str) -> int:
    return T.parse_mpsz(text)[0]


def discard(state: TableState, seat: int, tile: str, tsumogiri: bool, draw: bool = True
            ) -> None:
    t = k(tile)
    if draw:
        state.apply(ev.TileDrawn(seat, t if seat == state.seat else None))
    state.apply(ev.TileDiscarded(seat, t, tsumogiri))


def called_twice_state() -> TableState:
    """Seat 1 pons East (the round wind) off seat 3, chows 5-6-7p off the viewer's 7p and
    then discards a 5m it drew (tsumogiri; 5m is dora under the 4m indicator)."""
    s = TableState("riichi", 0)
    s.apply(ev.GameStarted("riichi", 0))
    s.apply(ev.RoundStarted(0, 0, scores=(25000,) * 4, dora_indicators=(k("4m"),),
                            hand=tuple(T.parse_mpsz("1112223336669m"))))
    discard(s, 0, "1s", True)
    discard(s, 1, "9p", False)
    discard(s, 2, "2m", False)
    discard(s, 3, "1z", False)
    s.apply(ev.MeldCalled(1, "pon", (k("1z"),) * 3, k("1z"), 3))
    discard(s, 1, "1m", False, draw=False)
    discard(s, 2, "6s", False)
    discard(s, 3, "3p", False)
    discard(s, 0, "7p", True)
    s.apply(ev.MeldCalled(1, "chi", (k("5p"), k("6p"), k("7p")), k("7p"), 0))
    discard(s, 1, "9s", False, draw=False)
    discard(s, 2, "4z", False)
    discard(s, 3, "2z", False)
    discard(s, 0, "2p", True)
    discard(s, 1, "5m", True)
    discard(s, 2, "3s", True)
    return s


def features_of(state: TableState) -> tuple[dict[str, float], dict[str, np.ndarray]]:
    """Public features (name -> value) and per-kind features (name -> (34,)) of the first
    opponent (the next seat)."""
    f = Features(V.OpponentInputs.from_state(state))
    x, z = f.public()[0], f.kinds()[0]
    return (dict(zip(PUBLIC_NAMES, x.tolist(), strict=True)),
            {name: z[:, i] for i, name in enumerate(KIND_NAMES)})


def test_two_calls_and_a_tsumogiri_dora_five() -> None:
    x, _ = features_of(called_twice_state())
    expected = {
        "riichi": 0, "riichi_age": 0, "open_melds_2": 1, "open_melds_0": 0, "closed_kans": 0,
        "chows": 1, "pungs": 1, "discards": 4 / 20, "discards_4": 1, "tedashi": 3 / 20,
        "tedashi_last3": 2 / 3, "tedashi_last6": 3 / 6, "since_tedashi": 1 / 18,
        "tsumogiri_streak": 1 / 10, "tsumogiri_share": 1 / 4,
        "turn": 14 / 80, "turn_3": 1, "dealer": 0, "others_riichi": 0,
        "latest_4": 1, "latest_tsumogiri": 1, "latest_red": 0, "latest_class_3": 1,
        "last_tedashi_class_1": 1, "latest_dora": 1, "last_tedashi_dora": 0,
        "discard_suit_0": 2 / 4, "discard_suit_1": 1 / 4, "discard_suit_2": 1 / 4,
        "discard_suit_3": 0, "meld_suit_1": 3 / 12, "meld_suit_3": 3 / 12, "meld_suits": 2,
        "discarded_0": 0.5, "discarded_4": 0.5, "discarded_17": 0.5, "discarded_26": 0.5,
        "melded_27": 1, "melded_13": 1 / 3, "melded_15": 1 / 3, "chow_1_4": 1,
        "discarded_pairs": 0, "dora_discarded": 1, "red_discarded": 0, "dora_melded": 0,
        "dora_indicators": 1, "yakuhai_pungs": 1, "honour_melds": 1, "simple_melds_only": 0,
        "one_suit_melds": 1, "pungs_only": 0, "flowers": 0, "wall": (70 - 12) / 84,
    }
    for name, value in expected.items():
        assert x[name] == pytest.approx(value), name
    # nothing else is set among the one-hot groups
    assert sum(x[f"latest_{i}"] for i in range(34)) == 1
    assert sum(x[f"open_melds_{i}"] for i in range(5)) == 1
    assert sum(x[n] for n in PUBLIC_NAMES if n.startswith("chow_")) == 1


def test_genbutsu_suji_and_what_passed_after_the_last_discard() -> None:
    _, z = features_of(called_twice_state())
    river = [k("9p"), k("1m"), k("9s"), k("5m")]
    assert set(np.nonzero(z["genbutsu"])[0]) == set(river)
    # 4m: suji partners 1m (hers) and 7m (not): half; 6p: 3p (not hers) and 9p: half;
    # 6s: 3s and 9s: half; 2m and 8m have one partner each, 5m (hers): full;
    # 3s: only 6s, not hers; 6m: 3m and 9m, neither hers
    assert z["suji_half"][k("4m")] == 1 and z["suji_full"][k("4m")] == 0
    assert z["suji_half"][k("6p")] == 1 and z["suji_half"][k("6s")] == 1
    assert z["suji_full"][k("2m")] == 1 and z["suji_full"][k("8m")] == 1
    assert z["suji_full"][k("3s")] == 0 and z["suji_half"][k("3s")] == 0
    assert z["suji_full"][k("6m")] == 0 and z["suji_half"][k("6m")] == 0
    # only 3s was discarded (by seat 2) after her last discard
    assert set(np.nonzero(z["passed_since_last_discard"])[0]) == {k("3s")}
    assert not z["passed_since_riichi"].any()
    # 5m is dora, 4m and 6m next to it, 3m and 7m two away
    assert z["dora"][k("5m")] == 0.5 and z["dora"].sum() == 0.5
    assert z["next_to_dora"][k("3m")] == 1 and z["next_to_dora"][k("5m")] == 0
    # her latest hand-discard was 9s: 8s one below it, 6s three below
    assert z["last_tedashi_-1"][k("8s")] == 1 and z["last_tedashi_-3"][k("6s")] == 1
    assert z["last_tedashi_0"][k("9s")] == 1 and z["last_tedashi_1"].sum() == 0
    # East (round wind) and the dragons are yakuhai for her; South is her own wind
    assert {i for i in range(27, 34) if z["honour_yakuhai"][i]} == {27, 28, 31, 32, 33}
    assert z["melded"][k("1z")] == 0.75
    # the viewer holds 1112223336669m and has seen 2m and 1m discarded: four of each
    assert z["visible_4"][k("2m")] == 1 and z["visible_3"][k("1m")] == 0
    assert z["visible_4"][k("1m")] == 1  # three in hand, one in her river


def test_no_chance_kabe_from_visible_copies() -> None:
    _, z = features_of(called_twice_state())
    # four 2m seen: 1m can only be waited on with 2m-3m (blocked), so no two-sided wait
    # reaches it; 3m still has 4m-5m, 4m has 5m-6m; honours never count
    assert z["no_chance"][k("1m")] == 1
    assert z["no_chance"][k("3m")] == 0 and z["no_chance"][k("4m")] == 0
    assert z["no_chance"][27:].sum() == 0


def riichi_state() -> TableState:
    """Seat 2 declares riichi on 4s, then seats 3 and 0 discard 7z and 8p."""
    s = TableState("riichi", 0)
    s.apply(ev.GameStarted("riichi", 0))
    s.apply(ev.RoundStarted(0, 1, scores=(25000,) * 4, dora_indicators=(k("9p"),),
                            hand=tuple(T.parse_mpsz("1112223334449m"))))
    discard(s, 1, "1p", True)
    discard(s, 2, "2z", False)
    discard(s, 3, "9m", False)
    discard(s, 0, "1s", True)
    discard(s, 1, "2p", True)
    s.apply(ev.RiichiDeclared(2))
    discard(s, 2, "4s", False)
    s.apply(ev.RiichiAccepted(2))
    discard(s, 3, "7z", False)
    discard(s, 0, "8p", True)
    return s


def test_riichi_opponent() -> None:
    state = riichi_state()
    f = Features(V.OpponentInputs.from_state(state))
    assert list(f.o) == [1, 2, 3]
    x = dict(zip(PUBLIC_NAMES, f.public()[1].tolist(), strict=True))
    z = {name: f.kinds()[1][:, i] for i, name in enumerate(KIND_NAMES)}
    assert x["riichi"] == 1 and x["riichi_age"] == 0 and x["dealer"] == 0
    assert x["latest_21"] == 1 and x["latest_tsumogiri"] == 0
    assert x["others_riichi"] == 0
    x1 = dict(zip(PUBLIC_NAMES, f.public()[0].tolist(), strict=True))
    assert x1["dealer"] == 1 and x1["others_riichi"] == pytest.approx(1 / 3)
    assert set(np.nonzero(z["passed_since_riichi"])[0]) == {k("7z"), k("8p")}
    # matagi and suji of the riichi tile 4s
    assert z["riichi_tile_-1"][k("3s")] == 1 and z["riichi_tile_2"][k("6s")] == 1
    assert z["riichi_tile_3"][k("7s")] == 1 and z["riichi_tile_-3"][k("1s")] == 1
    assert z["riichi_tile_1"][k("5p")] == 0
    # 1s and 7s are full suji (4s is hers), 8p passed since riichi makes 5p half suji
    assert z["suji_full"][k("1s")] == 1 and z["suji_full"][k("7s")] == 1
    assert z["suji_half"][k("5p")] == 1 and z["suji_full"][k("2p")] == 0
    assert z["dora"][k("1p")] == 0.5


def test_dora_of_matches_the_tiles_module() -> None:
    kinds = np.arange(34)
    assert dora_of(kinds).tolist() == [T.dora_from_indicator(i) for i in range(34)]
    assert tile_kind(np.array([34, 35, 36, -1, 5])).tolist() == [4, 13, 22, -1, 5]


def test_view_bits_are_the_schema_bits() -> None:
    assert (V.RIVER_TSUMOGIRI, V.RIVER_TSUMOGIRI_UNKNOWN, V.RIVER_RIICHI, V.RIVER_CLAIMED) == (
        S.RIVER_TSUMOGIRI, S.RIVER_TSUMOGIRI_UNKNOWN, S.RIVER_RIICHI, S.RIVER_CLAIMED)
    assert (V.SEAT_RIICHI, V.SEAT_RIICHI_PENDING, V.SEAT_DOUBLE_RIICHI, V.SEAT_IPPATSU) == (
        S.SEAT_RIICHI, S.SEAT_RIICHI_PENDING, S.SEAT_DOUBLE_RIICHI, S.SEAT_IPPATSU)
    assert V.MELD_KINDS == S.MELD_KINDS
    for col, name in ((V.TABLE_ROUND_WIND, "round_wind"), (V.TABLE_DEALER, "dealer"),
                      (V.TABLE_WALL_REMAINING, "wall_remaining"), (V.TABLE_TURN, "turn")):
        assert S.TABLE_COLUMNS[col] == name
    for name in V.FIELDS:
        assert name in S.FIELDS


@pytest.mark.parametrize("variant,hands", [("riichi", 12), ("taiwan16", 8), ("mcr", 2)])
def test_live_state_and_dataset_rows_give_the_same_inputs(tmp_path, variant, hands) -> None:
    out = tmp_path / variant
    run_selfplay(SelfPlayConfig(ArenaConfig(variant, ("rulebased", "greedy", "rulebased",
                                                      "greedy"), hands, 3), str(out)))
    manifest = read_manifest(out)
    rows = read_shard(shard_paths(out, manifest)[0][0], [f.name for f in S.DECISION_FIELDS])
    batch = V.OpponentInputs.from_fields(rows)
    step = max(1, len(rows["seat"]) // 300)
    for i in range(0, len(rows["seat"]), step):
        one = {name: rows[name][i] for name in rows}
        live = V.OpponentInputs.from_state(restore(variant, int(one["seat"]), one))
        for attr in V.FIELDS.values():
            assert np.array_equal(getattr(live, attr)[0], getattr(batch, attr)[i]), (i, attr)
    # features of the whole batch equal the features row by row
    f = Features(batch)
    x, z = f.public(), f.kinds()
    for i in (0, len(rows["seat"]) // 2, len(rows["seat"]) - 1):
        g = Features(V.OpponentInputs.from_fields({n: rows[n][i:i + 1] for n in V.FIELDS}))
        assert np.array_equal(g.public(), x[3 * i:3 * i + 3])
        assert np.array_equal(g.kinds(), z[3 * i:3 * i + 3])
    assert np.isfinite(x).all() and np.isfinite(z).all()


def test_opponent_pairs_are_the_three_other_seats() -> None:
    inputs = V.OpponentInputs.from_state(riichi_state())
    b, o = opponent_pairs(inputs)
    assert b.tolist() == [0, 0, 0] and o.tolist() == [1, 2, 3]


# --------------------------------------------------------------------------- AUC


def test_auc_hand_computed() -> None:
    # positives 0.35 and 0.8 against negatives 0.1 and 0.4: 3 of the 4 pairs are ordered
    assert auc(np.array([0.1, 0.4, 0.35, 0.8]), np.array([0, 0, 1, 1])) == 0.75
    # ties count one half: positives {1, 2}, negatives {1, 0}: 0.5 + 1 + 1 + 1 over 4
    assert auc(np.array([1, 1, 2, 0]), np.array([1, 0, 1, 0])) == 0.875
    assert auc(np.array([3, 3, 3]), np.array([1, 0, 0])) == 0.5
    assert auc(np.array([0.2, 0.9]), np.array([1, 1])) is None


def test_auc_equals_the_pair_count_on_random_ties() -> None:
    rng = np.random.default_rng(5)
    scores = rng.integers(0, 6, 60).astype(float)
    labels = rng.integers(0, 2, 60)
    wins = 0.0
    pairs = 0
    for i, j in itertools.product(np.nonzero(labels)[0], np.nonzero(labels == 0)[0]):
        wins += 1.0 if scores[i] > scores[j] else 0.5 if scores[i] == scores[j] else 0.0
        pairs += 1
    assert auc(scores, labels) == pytest.approx(wins / pairs)


def test_bootstrap_interval_contains_the_estimate() -> None:
    rng = np.random.default_rng(1)
    groups = np.repeat(np.arange(40), 10)
    labels = rng.integers(0, 2, 400)
    scores = labels + rng.normal(0, 1, 400)
    interval = bootstrap_ci(lambda r: auc(scores[r], labels[r]), groups, 100, seed=0)
    assert interval is not None, "one group or none"
    lo, hi = interval
    estimate = auc(scores, labels)
    assert estimate is not None
    assert lo < estimate < hi and hi - lo < 0.2
