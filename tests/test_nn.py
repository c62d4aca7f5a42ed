"""The neural policy's numpy side (issue 17): the encoding's planes on hand-made positions, the
action heads, the forward pass against stored outputs, and the ``nn`` policy at the table.
None of this needs torch (tests/test_nn_train.py has the torch parts)."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from adapter.bench.mc import positions
from brain.nn import encoding as E
from brain.nn import heads as H
from brain.nn.network import MissingNetwork, Network, Shape, load_network, random_network
from brain.policies import get_policy
from brain.policies.nn import ENV, NnPolicy, require_network
from brain.state import TableState
from protocols import events as ev
from protocols import tiles as T
from replay.dataset.snapshot import encode_view, restore
from tests.in_process import mjbot_here

P = T.parse_mpsz
NN_DATA = Path(__file__).resolve().parent / "data" / "nn"
GOLDEN_WEIGHTS = NN_DATA / "golden_riichi.npz"


def plane(x: np.ndarray, name: str) -> np.ndarray:
    return x[E.PLANE[name]]


def kinds(mpsz: str) -> list[int]:
    return [T.kind(t) for t in P(mpsz)]


def turn_state(hand13: str, draw: str, seat: int = 0, dora: str = "1z") -> TableState:
    """``seat`` (the dealer) holds ``hand13`` and draws ``draw``; nobody has discarded."""
    s = TableState("riichi", seat)
    s.apply(ev.GameStarted("riichi", seat))
    s.apply(ev.RoundStarted(0, seat, scores=(25000, 31000, 19000, 25000),
                            dora_indicators=tuple(P(dora)), hand=tuple(P(hand13))))
    s.apply(ev.TileDrawn(seat, P(draw)[0]))
    return s


TURN = ev.DecisionRequest("turn")


# ---------------------------------------------------------------------- encoding


def test_plane_names_are_unique_and_counted() -> None:
    assert len(set(E.PLANES)) == E.NUM_PLANES == len(E.PLANES)
    x = E.encode(turn_state("123m456p789s1122z", "5z"), TURN)
    assert x.shape == (E.NUM_PLANES, 34) and x.dtype == np.float32


def test_own_hand_as_four_binary_planes_red_five_and_draw() -> None:
    s = turn_state("1111m0556p789s11z", "2z")
    x = E.encode(s, TURN)
    assert plane(x, "hand_ge4")[0] == 1 and plane(x, "hand_ge1")[1] == 0
    five_p = T.kind(P("5p")[0])
    assert [plane(x, f"hand_ge{n}")[five_p] for n in (1, 2, 3, 4)] == [1, 1, 1, 0]
    assert np.flatnonzero(plane(x, "hand_red")).tolist() == [five_p]
    assert np.flatnonzero(plane(x, "last_draw")).tolist() == kinds("2z")
    assert plane(x, "hand_ge1").sum() == len({T.kind(t) for t in s.hand})


def test_shanten_planes_mark_the_discards_that_keep_the_best_shanten() -> None:
    # tenpai on 1z/2z after discarding the lone 5z: only that discard keeps shanten 0
    x = E.encode(turn_state("123m456p789s1122z", "5z"), TURN)
    assert np.flatnonzero(plane(x, "discard_best")).tolist() == kinds("5z")
    assert plane(x, "discard_shanten")[kinds("5z")[0]] == pytest.approx(1 / 8)
    assert plane(x, "discard_shanten")[kinds("1m")[0]] == pytest.approx(2 / 8)
    # waits 1z and 2z: two unseen copies of 2z, one of 1z (the dora indicator shows one)
    assert plane(x, "discard_ukeire")[kinds("5z")[0]] == pytest.approx(3 / 34)
    assert plane(x, "shanten")[0] == pytest.approx(1 / 8)


def test_a_claim_marks_the_offered_tile_its_source_and_the_useful_kinds() -> None:
    s = TableState("riichi", 0)
    s.apply(ev.GameStarted("riichi", 0))
    s.apply(ev.RoundStarted(0, 3, scores=(25000,) * 4, dora_indicators=tuple(P("9p")),
                            hand=tuple(P("23m456p789s11z234z"))))
    s.apply(ev.TileDrawn(3, None))
    s.apply(ev.TileDiscarded(3, P("4m")[0], tsumogiri=False))
    request = ev.DecisionRequest("claim", tile=P("4m")[0], from_seat=3)
    x = E.encode(s, request)
    assert np.flatnonzero(plane(x, "request_tile")).tolist() == kinds("4m")
    assert plane(x, "request_claim").min() == 1 and plane(x, "request_turn").max() == 0
    assert plane(x, "request_from3").min() == 1 and plane(x, "request_from1").max() == 0
    assert plane(x, "useful")[kinds("1m")[0]] == 1 and plane(x, "useful")[kinds("4m")[0]] == 1
    # seat 3 is the previous seat: relative 3; its hand-cut 4m is its most recent discard
    assert np.flatnonzero(plane(x, "river3_recent0")).tolist() == kinds("4m")
    assert np.flatnonzero(plane(x, "river3_tedashi0")).tolist() == kinds("4m")
    assert plane(x, "river3_count")[kinds("4m")[0]] == pytest.approx(0.25)
    assert plane(x, "dealer3").min() == 1 and plane(x, "dealer0").max() == 0
    assert np.flatnonzero(plane(x, "dora")).tolist() == kinds("1p")


def test_seats_are_relative_and_rivers_keep_order_marks_and_riichi() -> None:
    # seat 2's view: seat 3 is the next seat (relative 1), seat 1 the previous (relative 3)
    s = TableState("riichi", 2)
    s.apply(ev.GameStarted("riichi", 2))
    s.apply(ev.RoundStarted(1, 0, scores=(25000, 31000, 19000, 25000),
                            dora_indicators=tuple(P("4s")), hand=tuple(P("123m456p789s1122z"))))
    s.apply(ev.TileDrawn(0, None))
    s.apply(ev.TileDiscarded(0, P("9m")[0], tsumogiri=True))
    s.apply(ev.TileDrawn(1, None))
    s.apply(ev.RiichiDeclared(1))
    s.apply(ev.TileDiscarded(1, P("7z")[0], tsumogiri=False))
    s.apply(ev.RiichiAccepted(1))
    s.apply(ev.TileDrawn(2, P("3z")[0]))
    s.apply(ev.TileDiscarded(2, P("3z")[0], tsumogiri=True))
    s.apply(ev.TileDrawn(3, None))
    s.apply(ev.TileDiscarded(3, P("1s")[0], tsumogiri=False))
    s.apply(ev.MeldCalled(0, "pon", tuple(P("111s")), P("1s")[0], 3))
    s.apply(ev.TileDiscarded(0, P("8m")[0], tsumogiri=False))
    x = E.encode(s, ev.DecisionRequest("claim", tile=P("8m")[0], from_seat=0))
    assert plane(x, "riichi3").min() == 1 and plane(x, "riichi1").max() == 0
    assert np.flatnonzero(plane(x, "river3_riichi_tile")).tolist() == kinds("7z")
    # seat 0 (relative 2): 8m then 9m, the 9m a draw-discard (no hand-cut mark)
    assert np.flatnonzero(plane(x, "river2_recent0")).tolist() == kinds("8m")
    assert np.flatnonzero(plane(x, "river2_recent1")).tolist() == kinds("9m")
    assert plane(x, "river2_tedashi0")[kinds("8m")[0]] == 1
    assert plane(x, "river2_tedashi1").max() == 0
    assert [plane(x, f"meld2_ge{n}")[kinds("1s")[0]] for n in (1, 2, 3, 4)] == [1, 1, 1, 0]
    # the riichi seat's safe kinds: its own river and what passed after its riichi
    safe = set(np.flatnonzero(plane(x, "river3_safe")).tolist())
    assert safe == set(kinds("7z3z1s8m"))
    assert plane(x, "river0_safe")[kinds("3z")[0]] == 1
    assert plane(x, "round_wind")[T.SOUTH] == 1 and plane(x, "seat_wind")[T.WEST] == 1
    assert plane(x, "score0")[0] == pytest.approx((19000 - 25000) / 25000)
    assert plane(x, "score3")[0] == pytest.approx((31000 - 1000 - 25000) / 25000)
    assert plane(x, "visible_ge3")[kinds("1s")[0]] == 1
    assert plane(x, "variant_riichi").min() == 1


def test_mcr_uses_flowers_and_private_walls_and_no_dora() -> None:
    s = TableState("mcr", 1)
    s.apply(ev.GameStarted("mcr", 1))
    s.apply(ev.RoundStarted(0, 0, hand=tuple(P("123m456p789s1122z"))))
    s.apply(ev.FlowerReplaced(0, 37))
    s.apply(ev.TileDrawn(0, None))
    x = E.encode(s, ev.DecisionRequest("turn"))
    assert plane(x, "variant_mcr").min() == 1 and plane(x, "dora").max() == 0
    assert plane(x, "flowers3")[0] == pytest.approx(1 / 8)
    assert plane(x, "seat_wall3")[0] == pytest.approx(20 / 21)


@pytest.fixture(scope="module")
def game_positions() -> list[tuple[TableState, ev.DecisionRequest, list[Any]]]:
    """Seat 0's decisions with a choice in a seeded rulebased game."""
    return positions("riichi", games=4, seed=5)


def test_encoding_a_dataset_row_gives_the_planes_of_play(game_positions: list[Any]) -> None:
    """Training encodes states rebuilt from dataset rows: they must give the very planes the
    policy sees in play."""
    assert len(game_positions) > 20
    for state, request, _ in game_positions:
        again = restore(state.variant, state.seat, encode_view(state))
        assert np.array_equal(E.encode(again, request), E.encode(state, request))


# ---------------------------------------------------------------------- heads


def test_heads_map_every_legal_action_and_back(game_positions: list[Any]) -> None:
    kinds_seen = set()
    for _, request, legal in game_positions:
        by_index = H.legal_map(legal, request.tile)
        assert all(0 <= i < H.NUM_ACTIONS for i in by_index)
        assert all(a in legal for a in by_index.values())
        for a in legal:
            assert H.action_index(by_index[H.action_index(a, request.tile)],
                                  request.tile) == H.action_index(a, request.tile)
            kinds_seen.add(type(a).__name__)
    assert {"Discard", "Pass"} <= kinds_seen


def test_chi_variants_by_the_claimed_tiles_place() -> None:
    c = P("4m")[0]
    assert H.action_index(ev.Chi(tuple(P("56m"))), c) == H.CHI_LOW
    assert H.action_index(ev.Chi(tuple(P("35m"))), c) == H.CHI_MID
    assert H.action_index(ev.Chi(tuple(P("23m"))), c) == H.CHI_HIGH
    assert H.action_index(ev.Kan("closed_kan", tuple(P("7777z")))) == H.CLOSED_KAN + 33
    assert H.action_index(ev.Kan("added_kan", tuple(P("1p")))) == H.ADDED_KAN + 9
    assert H.action_index(ev.Discard(P("0s")[0], riichi=True)) == H.RIICHI + 22
    with pytest.raises(H.UnmappedAction):
        H.action_index(ev.Chi(tuple(P("56m"))))


def test_a_red_and_a_plain_five_share_a_head_and_the_plain_one_is_played() -> None:
    legal = sorted([ev.Discard(P("5m")[0]), ev.Discard(P("0m")[0]), ev.Discard(P("1z")[0])],
                   key=lambda a: T.sort_key(a.tile))
    assert H.legal_map(legal)[4] == ev.Discard(P("5m")[0])


# the logits drawn as an array (hypothesis.extra.numpy: a fill value and some drawn elements,
# ties included), not a list of NUM_ACTIONS floats drawn one by one: a third of the time for
# the same 200 examples
@settings(max_examples=200, deadline=None)
@given(arrays(np.float64, H.NUM_ACTIONS, elements=st.floats(-1e6, 1e6, allow_nan=False)),
       st.sets(st.integers(0, H.NUM_ACTIONS - 1), min_size=1))
def test_masked_argmax_never_picks_an_illegal_head(logits: np.ndarray, legal: set[int]) -> None:
    m = H.mask(legal)
    assert H.masked_argmax(logits.astype(np.float32), m) in legal
    probs = H.masked_softmax(logits, m)
    assert probs[~m].sum() == 0 and probs.sum() == pytest.approx(1.0)



def test_an_empty_mask_is_refused_alike_by_argmax_and_softmax() -> None:
    """With nothing legal, argmax raised while softmax returned NaNs (0/0) that a caller could
    pass on as probabilities; both now refuse it with the same message."""
    logits, empty = np.zeros(H.NUM_ACTIONS), H.mask(set())
    for choose in (H.masked_argmax, H.masked_softmax):
        with pytest.raises(ValueError, match=r"^no legal action to choose from$"):
            choose(logits, empty)


# ---------------------------------------------------------------------- network


def test_numpy_forward_matches_the_stored_outputs() -> None:
    """Golden: weights and inputs stored, outputs computed by the torch model when the file was
    made (tests/test_nn_train.py recomputes them with torch where it is installed)."""
    net = Network.from_file(GOLDEN_WEIGHTS, "riichi")
    with np.load(NN_DATA / "golden_io.npz") as io:
        logits, value = net.forward(io["x"])
        assert logits.shape == (3, H.NUM_ACTIONS)
        np.testing.assert_allclose(logits, io["logits"], atol=1e-5, rtol=0)
        np.testing.assert_allclose(value, io["value"], atol=1e-5, rtol=0)
        single, _ = net.forward(io["x"][0])
        np.testing.assert_allclose(single, io["logits"][0], atol=1e-5, rtol=0)


def test_weights_round_trip_and_refuse_another_variant_or_encoding(tmp_path: Path) -> None:
    net = random_network("mcr", Shape(channels=8, blocks=1, value_hidden=4), seed=1)
    path = tmp_path / "w.npz"
    net.save(path)
    back = Network.from_file(path, "mcr")
    x = np.ones((E.NUM_PLANES, 34), np.float32)
    assert np.array_equal(back.forward(x)[0], net.forward(x)[0])
    with pytest.raises(MissingNetwork, match="not 'riichi'"):
        Network.from_file(path, "riichi")
    meta = dict(net.meta, encoding_version=E.ENCODING_VERSION + 1)
    Network(net.params, meta).save(path)
    with pytest.raises(MissingNetwork, match="encoding"):
        Network.from_file(path, "mcr")


# ---------------------------------------------------------------------- the policy


def test_the_policy_answers_a_legal_action_on_every_position(game_positions: list[Any]) -> None:
    policy = NnPolicy(Network.from_file(GOLDEN_WEIGHTS, "riichi"))
    for state, request, legal in game_positions:
        decision = policy.decide(state, request, legal)
        assert decision.action in legal
        assert all(a in legal for a, _ in decision.candidates)


def test_the_policy_refuses_a_variant_without_weights(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MJBOT_NN_WEIGHTS", raising=False)
    with pytest.raises(MissingNetwork, match="mjbot nn train"):
        load_network("mass")
    state, request, legal = positions("mass", games=1, seed=1)[0]
    with pytest.raises(MissingNetwork):
        get_policy("nn").decide(state, request, legal)
    monkeypatch.setenv("MJBOT_NN_WEIGHTS", str(GOLDEN_WEIGHTS))
    assert require_network("riichi").meta["channels"] == 16
    with pytest.raises(MissingNetwork):
        require_network("mass")  # riichi weights never play another variant


Run = Callable[..., subprocess.CompletedProcess[str]]


@pytest.fixture
def mjbot(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> Run:
    """``mjbot ARGS`` through its main() in this process (tests/in_process.py), for commands
    that are sent no signal and set nothing process-wide (bench nn pins a child of its own to
    one core): a child paid Python's start each. ``weights`` is MJBOT_NN_WEIGHTS for this
    test alone, else it is unset."""
    def run(*args: str, weights: str | None = None) -> subprocess.CompletedProcess[str]:
        if weights:
            monkeypatch.setenv(ENV, weights)
        else:
            monkeypatch.delenv(ENV, raising=False)
        return mjbot_here(capsys, *args)
    return run


def test_nn_plays_at_the_table_without_fallbacks(tmp_path: Path, mjbot: Run) -> None:
    """Self-play records whether the brain's fallback answered: the network never needs it."""
    out = tmp_path / "sp"
    r = mjbot("selfplay", "--variant", "riichi", "--policies", "nn,rulebased,rulebased,rulebased",
               "--hands", "2", "--seed", "3", "--out", str(out), weights=str(GOLDEN_WEIGHTS))
    assert r.returncode == 0, r.stderr
    r = mjbot("dataset", "stats", str(out), "--json")
    stats = json.loads(r.stdout)
    assert stats["by_policy"]["nn"] > 100
    assert stats["fallbacks"] == 0 and stats["illegal_actions"] == 0


def test_commands_refuse_nn_without_weights_in_one_line(tmp_path: Path, mjbot: Run) -> None:
    r = mjbot("arena", "--variant", "mass", "--policies", "nn,rulebased,rulebased,rulebased",
               "--hands", "1", "--no-log")
    assert r.returncode == 2
    assert "no network weights for 'mass'" in r.stderr and "Traceback" not in r.stderr
    r = mjbot("bench", "nn", "--variant", "mass")
    assert r.returncode == 2 and "Traceback" not in r.stderr


def test_two_networks_sit_at_one_table_by_file(tmp_path: Path, mjbot: Run) -> None:
    """``nn@FILE`` plays FILE's network beside the shipped ``nn``: generations meet in one
    duplicate arena. A missing file and another variant's network are refused in one line."""
    policy = get_policy(f"nn@{GOLDEN_WEIGHTS}")
    assert isinstance(policy, NnPolicy), policy
    state, request, legal = positions("riichi", games=1, seed=2)[0]
    assert policy.network("riichi").meta["channels"] == 16  # the golden file, not the shipped
    assert policy.decide(state, request, legal).action in legal
    r = mjbot("arena", "--variant", "riichi", "--policies",
               f"nn@{GOLDEN_WEIGHTS},nn,rulebased,rulebased", "--hands", "4", "--seed", "1",
               "--no-log", "--json", str(tmp_path / "a.json"))
    assert r.returncode == 0, r.stderr
    summary = json.loads((tmp_path / "a.json").read_text())
    assert {f"nn@{GOLDEN_WEIGHTS}", "nn"} <= set(summary["policies"])
    assert summary["illegal_actions"] == 0 and summary["seatings"] == 12
    r = mjbot("arena", "--variant", "riichi", "--policies",
               f"nn@{tmp_path / 'none.npz'},rulebased,rulebased,rulebased", "--hands", "1")
    assert r.returncode == 2 and "no weights file" in r.stderr and "Traceback" not in r.stderr
    r = mjbot("arena", "--variant", "mcr", "--policies",
               f"nn@{GOLDEN_WEIGHTS},rulebased,rulebased,rulebased", "--hands", "1")
    assert r.returncode == 2 and "not 'mcr'" in r.stderr and "Traceback" not in r.stderr


# ---------------------------------------------------------------------- training examples


def test_dataset_rows_become_examples_with_the_answer_among_the_legal_heads(
        tmp_path: Path) -> None:
    """replay/learning/nn/data.py and stream.py (numpy only): every kept row's answer is one of
    its legal heads, rows without a choice and wins are left out, and a row's planes are those
    of its state."""
    from adapter.local.arena import ArenaConfig
    from adapter.local.selfplay import SelfPlayConfig, run_selfplay
    from replay.dataset.loader import ShuffledLoader
    from replay.learning.nn.data import FIELDS, Examples, request_of
    from replay.learning.nn.stream import ExampleStream

    def load_examples(dirs: list[Path], policies: list[str] | None = None) -> Examples:
        parts = list(ExampleStream(dirs, policies, holdout_share=0.0).epoch(0))
        return Examples(*(np.concatenate([getattr(p, f) for p in parts]) for f in (
            "x", "mask", "target", "value", "source", "dataset")))

    out = tmp_path / "ds"
    run_selfplay(SelfPlayConfig(ArenaConfig("riichi", ("rulebased", "greedy", "rulebased",
                                                       "greedy"), 2, 7, 1), str(out), 400))
    ex = load_examples([out])
    assert len(ex) > 100
    assert ex.mask[np.arange(len(ex)), ex.target].all()
    assert (ex.mask.sum(axis=1) >= 2).all() and not ex.mask[:, H.WIN].any()
    greedy = load_examples([out], policies=["greedy"])
    assert 0 < len(greedy) < len(ex)
    rows = {}
    for batch in ShuffledLoader(out, batch_size=10_000, fields=FIELDS).epoch(0):
        for i, did in enumerate(batch["decision_id"]):
            rows[int(did)] = {k: v[i] for k, v in batch.items()}
    for j in range(0, len(ex), 37):
        row = rows[int(ex.source[j])]
        state = restore("riichi", int(row["seat"]), row)
        assert np.array_equal(ex.x[j], E.encode(state, request_of(row)))
    assert np.isfinite(ex.value).all() and np.abs(ex.value).max() < 10


def test_playing_never_imports_torch() -> None:
    """brain/ is numpy only; torch is the [train] extra of replay/learning/nn/train.py alone."""
    code = ("import sys; from brain.policies.nn import NnPolicy; import adapter.cli, "
            "replay.learning.nn.data; print('torch' in sys.modules)")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "False"
    root = Path(__file__).resolve().parent.parent
    for path in [*root.glob("brain/**/*.py"), *root.glob("protocols/**/*.py")]:
        assert "import torch" not in path.read_text(), path


def test_the_shipped_weights_load_and_fit_the_budget(game_positions: list[Any],
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """brain/data/nn_VARIANT.npz: this code's encoding, <= 8 MB each, and the riichi one plays
    every position (brain/data/nn_models.md: how they were trained)."""
    monkeypatch.delenv("MJBOT_NN_WEIGHTS", raising=False)
    for variant in ("riichi", "mcr", "taiwan16"):
        path = Path(__file__).resolve().parent.parent / "brain" / "data" / f"nn_{variant}.npz"
        assert path.stat().st_size <= 8 * 1024 * 1024
        net = require_network(variant)
        assert net.variant == variant and net.meta["encoding_version"] == E.ENCODING_VERSION
        assert net.meta["training"]["holdout"]["accuracy"] > 0.5
    policy = get_policy("nn")
    for state, request, legal in game_positions[:40]:
        assert policy.decide(state, request, legal).action in legal


def test_bench_nn_times_nn_beside_rulebased_on_one_core(mjbot: Run) -> None:
    r = mjbot("bench", "nn", "--model", str(GOLDEN_WEIGHTS), "--games", "1", "--repeats", "1",
               "--json", "-")
    assert r.returncode == 0, r.stderr
    result = json.loads(r.stdout)
    assert result["positions"] > 5 and result["network"]["channels"] == 16
    for name in ("nn", "rulebased", "encode", "forward"):
        assert 0 < result["ms"][name]["p50"] <= result["ms"][name]["p99"]
    assert result["p99_ratio_vs_rulebased"] > 0
