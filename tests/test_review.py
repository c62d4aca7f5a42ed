"""`mjbot review`, the evaluators behind it, the prediction measure and the two benches, on
hand-made positions and on the real games of tests/data (rulebased, or mc with a few
playouts: fast)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from brain.actions import canonical
from brain.opponents.features import Features
from brain.policies import POLICIES, Decision, get_policy
from protocols import events as ev
from protocols import tiles as T
from replay import replayer
from replay.replayer import action_key
from replay.review import measure
from replay.review.commentary import commentary_rows
from replay.review.evaluators import (
    POINTS,
    RANK,
    Evaluation,
    McEvaluator,
    RankingEvaluator,
    Scored,
)
from replay.review.game import review
from replay.review.lookahead import CHUNK, Lookahead
from replay.review.registry import evaluator_for
from tests.in_process import mjbot_here
from tests.log_samples import log_frames, write_frames
from tests.narrowing import tile_of
from tests.review_positions import legal, riichi_turn
from tests.shared_data import BOTZONE_JUDGE_LOG, DATA, MJAI_GAME
from tests.viewer_fixtures import practice_game

ROOT = Path(__file__).resolve().parent.parent
TURN = ev.DecisionRequest("turn")
SHORT_MJLOG = DATA / "tenhou" / "mjx_pairs" / "2017040900gm-00a9-0000-af5434e3.mjlog"
SHORT_TENHOU6 = DATA / "tenhou" / "mjx_pairs" / "2017040900gm-00a9-0000-af5434e3.tenhou6.json"
RANKED = DATA / "tenhou" / "convlog_tenhou6_json" / "ranked_game.json"  # chows and pungs
GAMES = {"mjlog": SHORT_MJLOG, "tenhou6": SHORT_TENHOU6, "mjai": MJAI_GAME,
         "botzone": BOTZONE_JUDGE_LOG}


def _mjbot(*args: str, timeout: int = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "adapter.cli", "--log-level", "warning",
                           *args], cwd=ROOT, capture_output=True, text=True, timeout=timeout)


def _cli(capsys: pytest.CaptureFixture[str], *args: str) -> subprocess.CompletedProcess[str]:
    """``mjbot ARGS`` in this process, as :func:`_mjbot` runs it in a child: the tests that
    read a command's output need no interpreter start-up of their own (a failure's traceback
    would fail the test here; test_review_command_errors_are_one_line keeps the child)."""
    return mjbot_here(capsys, "--log-level", "warning", *args)


def _distinct(actions: list[object]) -> int:
    return len({action_key(a) for a in actions})


# ---------------------------------------------------------------------- evaluators


def test_ranking_evaluator_ranks_every_action_with_the_policy_choice_first():
    state = riichi_turn("234m456p678s23s7p9m", "1p")
    actions = legal(state, TURN)
    evaluation = RankingEvaluator("rulebased").evaluate(state, TURN, actions)
    assert evaluation.unit == RANK
    assert evaluation.top == get_policy("rulebased").decide(state, TURN, actions).action
    assert len(evaluation.ranked) == _distinct(actions)
    assert [s.rank for s in evaluation.ranked] == list(range(1, len(evaluation.ranked) + 1))
    assert evaluation.loss(evaluation.top) == 0.0
    assert evaluation.loss(evaluation.ranked[-1].action) == 1.0


def test_a_ranking_asked_for_its_top_k_asks_the_policy_k_times_not_once_an_action():
    """The commentary shows a policy's first three moves, and ranked every legal action for
    them: a 14-tile hand's discards in up to 14 asks of the policy, most of a game's
    commentary. Asked for its top k, the ranking asks k times: the same first k (with the
    policy's own values), then the rest unranked in canonical order, as a ranking the policy
    stopped answering lists them."""
    state = riichi_turn("234m456p678s23s7p9m", "1p")
    actions = legal(state, TURN)
    whole = RankingEvaluator("rulebased").evaluate(state, TURN, actions)
    assert all(s.value is not None for s in whole.ranked)  # each ask values its choice
    top = RankingEvaluator("rulebased").evaluate(state, TURN, actions, top=3)
    assert top.ranked[:3] == whole.ranked[:3] and top.unit == whole.unit == RANK
    rest = [s.action for s in top.ranked[3:]]
    assert rest == [a for a in canonical(actions) if action_key(a) not in
                    {action_key(s.action) for s in whole.ranked[:3]}]
    assert [s.value for s in top.ranked[3:]] == [None] * len(rest) and len(rest) >= 8
    assert [s.rank for s in top.ranked] == list(range(1, len(whole.ranked) + 1))


def test_the_commentary_works_the_models_features_out_for_many_decisions_at_once(monkeypatch):
    """Each discard's and call's sentence reads the opponent models' estimate; worked out a
    decision at a time, their features (some hundred numpy calls on one row) were over half
    of a commentary's CPU. They are worked out for CHUNK decisions at once now, and each
    estimate is the one the decision alone gets, bit for bit (the networks still run on one
    decision's rows: a batched product rounds otherwise)."""
    from brain.policies.mc.models import load_models
    from brain.state import TableState

    rep = replayer.load(RANKED, 0)
    made: list[int] = []
    real = Features.__init__

    def counted(self: Features, inputs: Any, *rest: Any) -> None:
        made.append(len(inputs))
        real(self, inputs, *rest)

    monkeypatch.setattr(Features, "__init__", counted)
    rows = list(commentary_rows(rep, RankingEvaluator("rulebased"), 3))
    assert len(rows) == len(rep.decisions) > CHUNK
    assert len(made) == -(-len(rep.decisions) // CHUNK) and made[0] == CHUNK, made
    ahead, state, applied = Lookahead(rep), TableState(rep.variant, rep.seat), 0
    models = load_models(rep.variant)
    for n, d in enumerate(rep.decisions):
        while applied < d.index:
            state.apply(rep.events[applied])
            applied += 1
        got, alone = ahead.estimate(n, state), models.estimate(state)
        assert got is not None, n
        for name in ("seats", "tenpai", "wait", "value"):
            assert np.array_equal(getattr(got, name), getattr(alone, name)), (n, name)


def test_a_game_whose_start_names_another_variant_than_the_header_keeps_that_ones_models(
        tmp_path, capsys):
    """The lookahead worked its estimates out with the models of the replay's variant (the
    header's); the commentary alone, with those of the game's (its GameStarted, which the
    table takes): an edited log, its header riichi and its game mass, got riichi's deal-in
    chances where mass has no models and the commentary gave none."""
    frames = log_frames(practice_game(tmp_path / "made"))
    started = [f["event"] for f in frames if f.get("k") == "event"
               and f["event"]["type"] == "GameStarted"]
    assert started and frames[0]["variant"] == "riichi"
    for event in started:
        event["variant"] = "mass"
    log = write_frames(tmp_path / "edited.mjlog.msgpack", frames)
    facts = [r["facts"] for r in _replay_json(capsys, str(log), "--commentary")["commentary"]]
    assert sum("deal_in" in f for f in facts) >= 10, facts  # the defence sentences are there
    assert all(f.get("deal_in", 0) == f.get("best_deal_in", 0) == 0 and not f.get("ready")
               for f in facts), [f for f in facts if f.get("deal_in") or f.get("ready")]


def test_mc_evaluator_values_every_discard_in_points_best_first():
    state = riichi_turn("234m456p678s23s7p9m", "1p")
    actions = legal(state, TURN)
    evaluation = McEvaluator(playouts=8).evaluate(state, TURN, actions)
    assert evaluation.unit == POINTS and not evaluation.forced
    values = [s.value for s in evaluation.ranked if s.value is not None]
    assert len(values) == len(evaluation.ranked)  # none without a value
    assert values == sorted(values, reverse=True)
    assert len(evaluation.ranked) == _distinct(actions)
    for s, value in zip(evaluation.ranked, values, strict=True):
        assert evaluation.loss(s.action) == pytest.approx(values[0] - value)
    # seeded: the same numbers again
    again = McEvaluator(playouts=8).evaluate(state, TURN, actions)
    assert [s.value for s in again.ranked] == values


@settings(max_examples=40, deadline=None)
@given(st.lists(st.floats(-5000, 5000, allow_nan=False), min_size=2, max_size=14))
def test_points_loss_is_the_gap_to_the_best_and_never_negative(values):
    values = sorted(values, reverse=True)
    ranked = tuple(Scored(ev.Discard(k), v, i + 1) for i, (k, v) in enumerate(
        zip(range(len(values)), values, strict=True)))
    evaluation = Evaluation(ranked, POINTS)
    for s in ranked:
        loss = evaluation.loss(s.action)
        assert loss is not None and loss >= 0
        assert loss == pytest.approx(values[0] - s.value) or s.rank == 1


def test_nn_reviews_by_its_own_ranking_and_unknown_names_are_refused():
    assert isinstance(evaluator_for("nn"), RankingEvaluator)
    with pytest.raises(ValueError, match="unknown policy"):
        evaluator_for("nosuch")


def test_html_dash_is_standard_output_as_json_dash_is(tmp_path, capsys, monkeypatch):
    """`mjbot review GAME --html -` wrote the page into a file named '-' in the current
    folder and printed the text review, where `--json -` puts the JSON on standard output,
    nothing else. `--html -` now does the same; the two together are refused in one line."""
    game = DATA / "tenhou" / "mjx_pairs" / "double-ron.mjlog"
    monkeypatch.chdir(tmp_path)
    r = _cli(capsys, "review", str(game), "--policy", "rulebased", "--html", "-")
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("<!doctype html>") and r.stdout.rstrip().endswith("</html>")
    assert "agreement" in r.stdout and not (tmp_path / "-").exists()
    both = _cli(capsys, "review", str(game), "--policy", "rulebased", "--html", "-",
                "--json", "-")
    assert both.returncode == 2 and both.stdout == ""
    assert both.stderr.strip() == ("mjbot review: --json - and --html -: only one of them can "
                                   "go to standard output; name a FILE for the other")


def test_a_claim_row_says_which_tile_was_offered_and_by_whom(tmp_path, capsys):
    """A claim's row said 'played chi 68p, best pass' without the tile on offer (7p? 9p?).
    The review now names it and its discarder: in --json, the text and the HTML page."""
    game = DATA / "tenhou" / "mjx_pairs" / "double-ron.mjlog"
    out, page = tmp_path / "r.json", tmp_path / "r.html"
    r = _cli(capsys, "review", str(game), "--seat", "1", "--policy", "rulebased",
             "--json", str(out), "--html", str(page))
    assert r.returncode == 0, r.stderr
    data = json.loads(out.read_text())
    decisions = replayer.load(game, 1).decisions
    claims = 0
    for row, d in zip(data["rows"], decisions, strict=True):
        if d.request.kind == "turn":
            assert row["offered"] == ""
            continue
        claims += 1
        assert row["offered"] == (f"{T.tile_name(tile_of(d.request))} from seat "
                                  f"{d.request.from_seat}")
    assert claims > 0
    costly = [c for c in data["costly"] if c["kind"] != "turn"]
    assert costly and f"- {costly[0]['round']} claim on {costly[0]['offered']}:" in r.stdout
    assert f"claim on {costly[0]['offered']}" in page.read_text()


def test_nn_values_are_its_probabilities_of_the_whole_legal_set(capsys):
    """nn ranks by being asked again without its choices; each answer's probability was of
    what was left (the last action always 1.0, the list rising and falling). The values
    are now of the whole legal set: they fall with the rank and add up to 1 at most."""
    r = _cli(capsys, "review", str(SHORT_MJLOG), "--policy", "nn", "--seat", "1", "--json", "-")
    assert r.returncode == 0, r.stderr
    rows = [row for row in json.loads(r.stdout)["rows"] if len(row["actions"]) > 1]
    assert rows
    for row in rows:
        values = [a["value"] for a in row["actions"] if a["value"] is not None]
        assert values == sorted(values, reverse=True), row
        assert sum(values) <= 1.0 + 0.01 * len(values), row  # each rounded to 0.01
    claims = [row for row in rows if row["kind"] == "claim"]
    assert claims and all(row["actions"][-1]["value"] < 1.0 for row in claims)


def test_review_takes_a_weights_file_as_the_arena_seats_it(capsys):
    """A user who trained a network reviews with it as the arena seats it (nn@FILE); review
    refused it as an unknown policy. Its values are the network's probabilities, as nn's, and
    a file of another variant is refused in one line."""
    weights = ROOT / "brain" / "data" / "nn_riichi_gen4.npz"
    r = _cli(capsys, "review", str(SHORT_MJLOG), "--policy", f"nn@{weights}", "--seat", "1",
                     "--json", "-")
    assert r.returncode == 0, r.stderr
    data = json.loads(r.stdout)
    assert data["policy"] == f"nn@{weights}" and data["decisions"] > 0
    rows = [row for row in data["rows"] if len(row["actions"]) > 1]
    assert rows and all(sum(a["value"] for a in row["actions"] if a["value"] is not None)
                        <= 1.0 + 0.01 * len(row["actions"]) for row in rows)
    r = _cli(capsys, "review", str(SHORT_MJLOG), "--policy",
                     f"nn@{ROOT / 'brain' / 'data' / 'nn_mcr.npz'}")
    assert r.returncode == 2 and "not 'riichi'" in r.stderr and "Traceback" not in r.stderr


# ---------------------------------------------------------------------- a whole game


def test_review_of_a_real_game_agrees_with_its_rows():
    rep = replayer.load(SHORT_MJLOG, 0)
    seen: list[tuple[int, int]] = []
    result = review(rep, RankingEvaluator("rulebased"), lambda d, n: seen.append((d, n)))
    rows = result["rows"]
    # the replayer keeps every decision; the review rates those with a choice (this game's
    # seat has a riichi's forced discards: counted on their own)
    chosen = [d for d in rep.decisions if len(d.legal) > 1]
    assert len(rows) == len(chosen) == result["decisions"] < len(rep.decisions)
    assert result["forced_decisions"] == len(rep.decisions) - len(chosen)
    assert seen[-1] == (len(rep.decisions), len(rep.decisions))
    assert result["agree"] == sum(r["agree"] for r in rows)
    assert result["total_loss"] == pytest.approx(sum(r["loss"] for r in rows
                                                     if r["loss"] is not None), abs=1e-3)
    for r, d in zip(rows, chosen, strict=True):
        assert r["agree"] == (r["loss"] == 0)
        assert {a["action"] for a in r["actions"]} >= {r["played"], r["best"]}
        assert len(r["actions"]) == _distinct(list(d.legal))
    losses = [c["loss"] for c in result["costly"]]
    assert losses == sorted(losses, reverse=True) and len(losses) <= 5
    for c in result["costly"]:
        assert {"hand", "shanten", "dangerous", "wall"} <= set(c["situation"])
    if result["agree"] < result["decisions"]:
        assert result["rating"] < 100


@pytest.mark.parametrize("fmt", sorted(GAMES))
def test_review_command_on_every_format(tmp_path, fmt, capsys):
    out, page = tmp_path / "r.json", tmp_path / "r.html"
    r = _cli(capsys, "review", str(GAMES[fmt]), "--policy", "rulebased", "--json", str(out),
                     "--html", str(page), "--seat", "1")
    assert r.returncode == 0, r.stderr
    data = json.loads(out.read_text())
    assert data["decisions"] > 0 and data["seat"] == 1 and data["policy"] == "rulebased"
    assert f"agreement {data['agree']}/{data['decisions']}" in r.stdout
    text = page.read_text()
    assert text.startswith("<!doctype html>") and data["rows"][0]["played"] in text


def test_review_command_on_an_own_local_table_log(tmp_path, capsys):
    from adapter.bench.review import local_game

    log = local_game(str(tmp_path), seed=3, length="east")
    r = _cli(capsys, "review", log, "--seat", "2", "--policy", "mc", "--playouts", "4",
                     "--json", "-", "--progress")
    assert r.returncode == 0, r.stderr
    data = json.loads(r.stdout)
    assert data["source"] == "local" and data["seat"] == 2 and data["unit"] == "points"
    assert data["decisions"] == len(replayer.load(log, 2).decisions)
    assert "decisions," in r.stderr and f"{data['decisions']}/{data['decisions']}" in r.stderr
    # the game was played by rulebased: its own review of it agrees everywhere
    own = review(replayer.load(log, 2), RankingEvaluator("rulebased"))
    assert own["agreement"] == 1.0 and own["total_loss"] == 0 and own["rating"] == 100.0


def test_review_command_errors_are_one_line(tmp_path):
    r = _mjbot("review", str(SHORT_MJLOG), "--policy", "nosuch")
    assert r.returncode == 2 and "unknown policy" in r.stderr
    assert "Traceback" not in r.stderr
    r = _mjbot("review", str(tmp_path / "missing.json"), "--policy", "rulebased")
    assert r.returncode == 2 and "no such file" in r.stderr and "Traceback" not in r.stderr


# ---------------------------------------------------------------------- commentary in replay


def _replay_json(capsys: pytest.CaptureFixture[str], *args: str) -> dict[str, Any]:
    r = _cli(capsys, "replay", *args, "--json")
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def test_replay_commentary_json_per_move(capsys):
    rows = _replay_json(capsys, str(SHORT_TENHOU6), "--commentary", "--top-k", "2")["commentary"]
    rep = replayer.load(SHORT_TENHOU6, 0)
    assert len(rows) == len(rep.decisions)
    for row, d in zip(rows, rep.decisions, strict=True):
        assert row["event_index"] == d.index and len(row["predicted"]) <= 2
        assert row["hit"] == (row["played"] in row["predicted"])
        assert row["sentence"].startswith("seat 0 ") and row["factor"]


def test_every_percentage_a_sentence_gives_is_in_its_facts(capsys):
    """README: every number in a sentence is in the row's facts. The P(ready) of a threat
    that has not declared ('seat 3 (ready 77%)') was only in the sentence; a win's discarder
    only in the words. double-ron.mjlog, seat 2: pushes and folds against undeclared seats;
    seat 3 keeps a dora where the shape-best discard kept no more useful tiles (it said
    '0 useful tiles fewer')."""
    game = DATA / "tenhou" / "mjx_pairs" / "double-ron.mjlog"
    rows: list[dict[str, Any]] = []
    for seat in ("2", "3"):
        rows += _replay_json(capsys, str(game), "--seat", seat, "--commentary")["commentary"]
    assert any("as many useful tiles" in row["sentence"] for row in rows)
    assert not any("(0 useful tiles fewer)" in row["sentence"] for row in rows)
    said = 0
    for row in rows:
        for seat, pct in re.findall(r"seat (\d) \(ready (\d+)%\)", row["sentence"]):
            p = row["facts"]["ready"][seat]
            assert abs(100 * p - int(pct)) <= 0.5 + 1e-9, row
            said += 1
        if row["factor"] == "win" and not row["facts"]["self_draw"]:
            assert f"on seat {row['facts']['from_seat']}'s" in row["sentence"]
    assert said >= 5


# ---------------------------------------------------------------------- measure


class _Recorded:
    """A ranking that puts the recorded move first: the measure must then be perfect."""

    name = "recorded"
    unit = RANK
    played: object = None

    def evaluate(self, state, request, legal_actions, top=None):
        rest = [a for a in canonical(legal_actions) if action_key(a) != action_key(self.played)]
        return Evaluation(tuple(Scored(a, None, i + 1) for i, a in
                                enumerate([self.played, *rest])), RANK)


def test_measure_counts_hits_and_calls_from_the_ranking():
    files = measure.game_files([SHORT_MJLOG, SHORT_TENHOU6, RANKED])
    reps, left = measure.replays(files)
    assert [x["why"] for x in left] == ["the same game as a file already counted"]
    assert len(reps) == 8  # two games, four seats each
    tally = measure.measure(reps, RankingEvaluator("rulebased"))
    discards = sum(1 for r in reps for d in r.decisions
                   if d.request.kind == "turn" and isinstance(d.action, ev.Discard))
    chis = sum(1 for r in reps for d in r.decisions if isinstance(d.action, ev.Chi))
    pons = sum(1 for r in reps for d in r.decisions if isinstance(d.action, ev.Pon))
    assert tally.discards == discards and 0 < tally.hits < discards
    assert tally.calls["chi"][1] == chis and tally.calls["pon"][1] == pons
    assert chis > 0 and pons > 0
    assert 0 < tally.table()["discard_topk"] < 1


def test_measure_is_perfect_when_the_ranking_is_the_recorded_move():
    reps, _ = measure.replays(measure.game_files([RANKED]))
    oracle = _Recorded()
    tally = measure.Tally()
    for rep in reps:
        for d, state in replayer.walk(rep):
            oracle.played = d.action
            measure.count(tally, oracle, state, d.request, list(d.legal), d.action, 1)
    result = tally.table()
    assert result["discard_topk"] == 1.0
    for name in ("chi", "pon"):
        assert result[name]["made"] > 0
        assert result[name]["precision"] == result[name]["recall"] == 1.0


def test_bench_commentary_prints_the_table(tmp_path, capsys):
    out = tmp_path / "commentary.json"
    r = _cli(capsys, "bench", "commentary", str(SHORT_MJLOG), str(BOTZONE_JUDGE_LOG),
                     "--policies", "rulebased,mc,seed004", "--playouts", "2", "--json", str(out))
    assert r.returncode == 0, r.stderr
    assert "discard top-k" in r.stdout and "seed 004" in r.stdout  # the table, and its anchor
    data = json.loads(out.read_text())
    for name in data["policies"]:
        assert f"\n  {name} " in r.stdout
    assert set(data["policies"]) == {"rulebased", "mc", "seed004"}
    for row in data["policies"].values():
        parts = row["by_variant"]
        assert set(parts) == {"riichi", "mcr"}
        assert row["discard_hits"] == sum(p["discard_hits"] for p in parts.values())
    assert data["seat_views_by_variant"] == {"riichi": 4, "mcr": 4}
    assert data["anchors"]["discard_topk"] == 0.7584
    for row in data["policies"].values():
        assert 0 <= row["discard_topk"] <= 1 and row["discard_decisions"] > 0


def test_bench_review_on_a_given_game(capsys):
    r = _cli(capsys, "bench", "review", str(SHORT_MJLOG), "--playouts", "4", "--json", "-")
    assert r.returncode == 0, r.stderr
    data = json.loads(r.stdout)
    decisions = replayer.load(SHORT_MJLOG, 0).decisions
    assert data["decisions"] == sum(len(d.legal) > 1 for d in decisions)
    assert data["decisions"] + data["forced_decisions"] == len(decisions)
    assert data["mc_seconds"] > 0 and data["rulebased_seconds"] > 0
    assert data["ratio_mc_to_rulebased"] == pytest.approx(
        data["mc_seconds"] / data["rulebased_seconds"], rel=0.1)


def test_review_leaves_out_decisions_whose_hand_cannot_be_measured(tmp_path):
    from tests.viewer_fixtures import platform_game

    log = platform_game(tmp_path / "game.mjlog.msgpack")  # a hand-written 15-tile hand
    rep = replayer.load(log)
    result = review(rep, RankingEvaluator("rulebased"))
    assert result["decisions"] == len(rep.decisions) and result["errors"] >= 1
    assert any("cannot be measured" in n for n in result["notes"])
    assert all(r["loss"] is None for r in result["rows"] if "error" in r)


def test_review_rows_carry_the_deal_in_chance_of_each_discard():
    rep = replayer.load(RANKED, 0)
    result = review(rep, RankingEvaluator("rulebased"))
    discards = [a for r in result["rows"] for a in r["actions"]
                if a["action"].startswith("discard ")]
    assert discards and all(0 <= a["deal_in"] <= 1 for a in discards)
    assert any(a["deal_in"] > 0 for a in discards)


def _keys(typed: type) -> tuple[set[str], set[str]]:
    """A TypedDict's (required, all) keys, read from its annotations (``__required_keys__``
    misses NotRequired under postponed annotations before Python 3.12)."""
    import typing
    hints = typing.get_type_hints(typed, include_extras=True)
    return ({k for k, v in hints.items() if typing.get_origin(v) is not typing.NotRequired},
            set(hints))


def test_review_rows_are_what_their_typed_dicts_say(tmp_path):
    """The --json rows as ReviewRow and ActionRow describe them (the type checker reads the
    row literals against them; this holds them to the rows a real review writes), rows left
    out for an unmeasurable hand included."""
    from replay.review.game import ActionRow, ReviewRow
    from tests.viewer_fixtures import platform_game

    rows = [r for path, seat in ((RANKED, 0), (platform_game(tmp_path / "g.mjlog.msgpack"),
                                               None))
            for r in review(replayer.load(path, seat), RankingEvaluator("rulebased"))["rows"]]
    (required, known), (action_required, action_known) = _keys(ReviewRow), _keys(ActionRow)
    assert any("error" in r for r in rows) and any(r["actions"] for r in rows)
    for r in rows:
        assert required <= set(r) <= known, set(r) ^ known
        for a in r["actions"]:
            assert action_required <= set(a) <= action_known, set(a) ^ action_known


def test_a_seat_that_never_decided_says_so(tmp_path, capsys):
    """kyushukyuhai.json: the hand ends at seat 0's nine-terminal draw, before seat 1 draws.
    Its review has nothing to value: n/a and a note, not 'rating None' and a loss of 0."""
    game = DATA / "tenhou" / "convlog_tenhou6_json" / "kyushukyuhai.json"
    out, page = tmp_path / "r.json", tmp_path / "r.html"
    r = _cli(capsys, "review", str(game), "--seat", "1", "--policy", "rulebased",
             "--json", str(out), "--html", str(page))
    assert r.returncode == 0, r.stderr
    assert "None" not in r.stdout and "rating n/a" in r.stdout
    assert "expected loss: n/a" in r.stdout and "seat 1 made no decision" in r.stdout
    data = json.loads(out.read_text())
    assert data["decisions"] == 0 and data["rating"] is None
    assert data["loss_per_decision"] is None
    text = page.read_text()
    assert "<td>n/a</td>" in text and "<td></td>" not in text and "None" not in text
    assert "costliest" not in text and "seat 1 made no decision" in text


def test_the_review_of_a_game_that_ended_early_says_so(tmp_path, capsys):
    """`mjbot replay` says 'game unfinished: stopped on request' for a session stopped in its
    game; the review of the same log (text, JSON, page) said nothing of it."""
    from tests.test_replay_cli import _own_log

    log = _own_log(tmp_path / "stopped.mjlog.msgpack", stopped=True)
    out, page = tmp_path / "r.json", tmp_path / "r.html"
    r = _cli(capsys, "review", str(log), "--policy", "rulebased", "--json", str(out), "--html",
                     str(page))
    assert r.returncode == 0, r.stderr
    assert "note: game unfinished: stopped on request" in r.stdout
    assert "game unfinished: stopped on request" in json.loads(out.read_text())["notes"]
    assert "game unfinished: stopped on request" in page.read_text()
    finished = _own_log(tmp_path / "whole.mjlog.msgpack")
    r = _cli(capsys, "review", str(finished), "--policy", "rulebased")
    assert r.returncode == 0 and "unfinished" not in r.stdout


class _Faulty:
    """A policy that raises on every other decision and answers an action no one offered on
    the rest: what a broken policy (or a network of the wrong shape) does."""

    name = "test-faulty"

    def __init__(self) -> None:
        self.asked = 0

    def decide(self, state, request, legal, budget=None):
        self.asked += 1
        if self.asked % 2:
            raise ValueError("a broken policy")
        return Decision(ev.Pon((0, 0)))


def test_a_policy_that_gives_no_answer_is_counted_not_ranked_in_canonical_order(
        tmp_path, monkeypatch, capsys):
    """Its failure on the decision asked was taken for the end of its ranking: the legal set's
    canonical order stood in as its choice, and the review rated play against it (exit 0)."""
    from adapter.bench.review import local_game
    from adapter.cli import main

    monkeypatch.setitem(POLICIES, _Faulty.name, _Faulty)
    log = local_game(str(tmp_path), seed=3, length="east")
    result = review(replayer.load(log, 2), RankingEvaluator(_Faulty.name))
    assert result["decisions"] > 0 and result["policy_failures"] == result["decisions"]
    assert result["errors"] == 0 and result["valued"] == 0 and result["agree"] == 0
    assert all(r["best"] == "" and r["policy_failed"] for r in result["rows"])
    assert any("POLICY FAILED: test-faulty gave no answer" in n for n in result["notes"])
    assert main(["review", log, "--seat", "2", "--policy", _Faulty.name]) == 1
    out, err = capsys.readouterr()
    assert "POLICY FAILED" in out
    assert err.strip() == (f"mjbot review: --policy test-faulty gave no answer on "
                           f"{result['decisions']} decision(s)")
    # the commentary says each move, with no prediction where the predictor gave none
    assert main(["replay", log, "--seat", "2", "--commentary", "--predictor",
                 _Faulty.name]) == 1
    out, err = capsys.readouterr()
    assert out.count("? no prediction: test-faulty ") == result["decisions"]
    assert err.strip() == (f"mjbot replay: --predictor test-faulty gave no answer on "
                           f"{result['decisions']} move(s): their commentary has no prediction")
    assert "test-faulty raised ValueError: a broken policy" in out


class _TwoLines(_Faulty):
    """A policy whose error says two lines (numpy's and a traceback's messages can)."""

    name = "test-two-lines"

    def decide(self, state, request, legal, budget=None):
        raise ValueError("weights of the wrong shape:\n  expected (34, 128), got (34, 64)")


def test_a_reason_of_two_lines_keeps_each_commentary_row_on_one_line(tmp_path, monkeypatch,
                                                                     capsys):
    """The predictor's reason was printed as it came, so a reason of two lines split its
    row: the second line stood alone among the rows, as though it were a move of its own.
    The text now says it on the row's one line; --json keeps the reason as it was."""
    from adapter.bench.review import local_game
    from adapter.cli import main

    monkeypatch.setitem(POLICIES, _TwoLines.name, _TwoLines)
    log = local_game(str(tmp_path), seed=3, length="east")
    moves = len(replayer.load(log, 2).decisions)
    assert main(["replay", log, "--seat", "2", "--commentary", "--predictor",
                 _TwoLines.name]) == 1
    out, _ = capsys.readouterr()
    said = [x for x in out.splitlines() if "no prediction: " in x]
    assert len(said) == moves and not any("expected (34, 128)" in x for x in out.splitlines()
                                          if "no prediction: " not in x), out
    assert "test-two-lines raised ValueError: weights of the wrong shape: expected (34, 128), " \
           "got (34, 64)" in said[0]
    assert main(["replay", log, "--seat", "2", "--commentary", "--predictor",
                 _TwoLines.name, "--json"]) == 1
    out, _ = capsys.readouterr()
    rows = json.loads(out)["commentary"]
    assert {r["no_prediction"] for r in rows} == {
        "test-two-lines raised ValueError: weights of the wrong shape:\n  expected (34, 128), "
        "got (34, 64)"}
