"""The benches take only their own options; `mjbot bench mjai` plays the policy asked for,
names it, reports each game and an interval, and its final scores sum to the table total.
The mjai package is not needed here: the arena is played by a fake server that replays a real
mlibriichi game, and the score arithmetic is checked on that game and on hand-made endings."""

import itertools
import json
from dataclasses import dataclass
from typing import Any

import pytest

from adapter.bench.mjai import _Engine, _ours, final_scores, summarize, text
from adapter.local.game import placement as ranks_of
from brain.tally import FallbackTally
from tests.serve_helpers import mjbot as _mjbot
from tests.shared_data import MJAI_GAME

EVENTS = [json.loads(line) for line in MJAI_GAME.read_text().splitlines() if line.strip()]


def test_bench_log_refuses_options_of_other_benches():
    r = _mjbot("bench", "log", "--frames", "200", "--policy", "no-such", "--model", "NO_SUCH",
               "--json", "-")
    assert r.returncode == 2 and r.stdout == ""
    assert "unrecognized arguments: --policy no-such --model NO_SUCH" in r.stderr


@pytest.mark.parametrize("args", [("shanten", "--games", "3"), ("mjai", "--frames", "5"),
                                  ("arena", "--policy", "mc"), ("nn", "--soak", "3"),
                                  ("review", "a", "b")])
def test_each_bench_takes_only_its_own_options(args):
    r = _mjbot("bench", *args)
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert "unrecognized arguments" in r.stderr


def test_bench_mjai_checks_its_policy_before_anything_else():
    r = _mjbot("bench", "mjai", "--policy", "no-such", "--games", "1")
    assert r.returncode == 2
    from brain.policies import POLICIES

    assert r.stderr.strip() == ("mjbot bench mjai: unknown policy 'no-such' (known: "
                                f"{', '.join(sorted(POLICIES))})")


def test_final_scores_of_a_real_game_sum_to_the_total():
    # the last hand: seat 3 declares riichi and wins; its win's deltas (+9,600) include
    # its own stick, which its declaration took from its 12,000
    assert final_scores(EVENTS) == [-4900, 77900, 6400, 20600]
    assert sum(final_scores(EVENTS)) == 100_000


def test_each_hand_of_the_real_game_ends_at_the_next_hands_scores():
    starts = [i for i, e in enumerate(EVENTS) if e["type"] == "start_kyoku"]
    for here, there in itertools.pairwise(starts):
        # a hand's own result with no sticks left over equals the next start
        hand = EVENTS[here:there]
        next_start = EVENTS[there]
        expected = next_start["scores"]
        got = final_scores(hand)
        leftover = next_start["kyotaku"]
        if leftover:  # the sticks stay on the table; final_scores gives them to the top
            got[got.index(max(got))] -= 1000 * leftover
        assert got == expected


def _hand(scores, kyotaku=0):
    return {"type": "start_kyoku", "bakaze": "E", "kyoku": 4, "honba": 0, "kyotaku": kyotaku,
            "oya": 3, "scores": scores}


def test_a_riichi_in_the_last_hand_and_a_win_sums_to_the_total():
    # one stick on the table from before; seat 2 declares; seat 1 wins 3,900 off seat 0
    # and takes both sticks
    game = [_hand([30000, 25000, 26500, 17500], kyotaku=1),
            {"type": "reach", "actor": 2}, {"type": "reach_accepted", "actor": 2},
            {"type": "hora", "actor": 1, "target": 0, "deltas": [-3900, 5900, 0, 0]},
            {"type": "end_kyoku"}, {"type": "end_game"}]
    # the old arithmetic left seat 2 at 26,500 (101,000 in all) and second, not third
    assert final_scores(game) == [26100, 30900, 25500, 17500]
    assert ranks_of(final_scores(game)) == [2, 1, 3, 4]


def test_sticks_left_after_a_last_draw_go_to_the_top():
    game = [_hand([25000, 26000, 26000, 23000]),
            {"type": "reach_accepted", "actor": 0}, {"type": "reach_accepted", "actor": 3},
            {"type": "ryukyoku", "deltas": [1500, -1500, -1500, 1500]},
            {"type": "end_kyoku"}, {"type": "end_game"}]
    # after the draw 25,500 / 24,500 / 24,500 / 23,500 and two sticks: seat 0 is top
    assert final_scores(game) == [27500, 24500, 24500, 23500]
    tie = [_hand([25000, 25000, 25000, 25000]), {"type": "reach_accepted", "actor": 3},
           {"type": "ryukyoku", "deltas": [-1000, -1000, -1000, 3000]}]
    assert final_scores(tie) == [24000, 24000, 24000, 28000]
    even = [_hand([26000, 26000, 24000, 24000]), {"type": "reach_accepted", "actor": 2},
            {"type": "ryukyoku", "deltas": [0, 0, 0, 0]}]
    assert final_scores(even) == [27000, 26000, 23000, 24000]  # a tie: the earlier seat


@dataclass
class _GameState:
    """What mlibriichi's arena hands an engine: the game's index and the hand so far."""

    game_index: int
    events_json: str


def test_our_engine_plays_the_policy_asked_for():
    react, bot = _ours(1, "greedy")
    assert bot.brain.name == "greedy"
    engine = _Engine("mjbot", react)
    engine.set_player_ids([1])
    engine.start_game(0)
    answers = []
    hand: list[Any] = []
    for event in EVENTS[1:]:
        if event["type"] == "end_game":
            break
        if event["type"] == "end_kyoku":
            engine.end_kyoku(0)
            hand = []
            continue
        hand.append(event)
        ours = event["type"] == "tsumo" and event["actor"] == 1
        if ours or (event["type"] == "dahai" and event["actor"] != 1):
            answers += engine.react_batch([_GameState(0, json.dumps(hand))])
    assert len(answers) > 50
    assert all(json.loads(a)["type"] in ("dahai", "none", "pon", "chi", "reach", "hora",
                                         "ankan", "kakan", "daiminkan", "ryukyoku")
               for a in answers)
    assert bot.brain.tally.decisions > 20 and bot.brain.tally.fallbacks == 0


def test_summary_names_the_policy_and_gives_each_game_and_an_interval():
    seats = ["mjbot", "RulebaseBot", "mjbot", "RulebaseBot"]
    games = [{"game": g, "seats": seats, "scores": s, "ranks": ranks_of(s)} for g, s in
             enumerate([[40000, 30000, 20000, 10000], [10000, 20000, 30000, 40000],
                        [35000, 25000, 30000, 10000]])]
    out = summarize(games, "nn", 1.0, FallbackTally(10, 1, "nn raised X"))
    assert out["policy"] == "nn" and out["per_game"] == games
    # mjbot's mean rank per game: 2, 3, 1.5
    assert out["average_rank"] == {"mjbot": 2.167, "RulebaseBot": 2.833}
    # 2.1667 -+ 4.302653 * 0.7638 / sqrt(3) is [0.27, 4.06]: cut to the ranks (the test below)
    assert out["average_rank_ci95"]["mjbot"] == [1.0, 4.0]
    # seats 0 and 2: +15,000 -5,000, -15,000 +5,000, +10,000 +5,000
    assert out["points_per_game"] == {"mjbot": 2500, "RulebaseBot": -2500}
    assert out["fallbacks"] == {"nn": {"decisions": 10, "fallbacks": 1, "fallback_share": 0.1,
                                       "first_fallback": "nn raised X"}}
    one = summarize(games[:1], "rulebased", 1.0, FallbackTally())
    assert one["average_rank_ci95"]["mjbot"] == [None, None]


def test_the_average_ranks_interval_stays_within_the_ranks():
    """Three games printed mjbot's average rank 2.167 with [0.270, 4.063] and RulebaseBot's
    2.833 with [0.937, 4.730], ranks no side can average; the arena and the league already
    cut theirs to [1, 4] (adapter/local/intervals.cut_to), where the true value lies. An
    interval inside the ranks is kept as it was."""
    seats = ["mjbot", "RulebaseBot", "mjbot", "RulebaseBot"]

    def games(scores):
        return [{"game": g, "seats": seats, "scores": s, "ranks": ranks_of(s)}
                for g, s in enumerate(scores)]

    wide = summarize(games([[40000, 30000, 20000, 10000], [10000, 20000, 30000, 40000],
                            [35000, 25000, 30000, 10000]]), "nn", 1.0, FallbackTally())
    assert wide["average_rank_ci95"] == {"mjbot": [1.0, 4.0], "RulebaseBot": [1.0, 4.0]}
    assert "mjbot        average rank 2.167 [1.000,4.000]" in text(wide)
    # mjbot's mean rank per game 2, 3, 2, 3: 2.5 -+ 3.182446 * 0.57735 / 2, [1.581, 3.419]
    narrow = summarize(games([[40000, 30000, 20000, 10000], [30000, 40000, 10000, 20000]] * 2),
                       "nn", 1.0, FallbackTally())
    lo, hi = narrow["average_rank_ci95"]["mjbot"]
    assert lo == pytest.approx(2.5 - 3.182446 * 0.57735 / 2, abs=1e-3)
    assert hi == pytest.approx(2.5 + 3.182446 * 0.57735 / 2, abs=1e-3)


def test_bench_mjai_against_rulebasebot_where_the_package_is_installed():
    pytest.importorskip("mjai", reason="the opt-in mjai package is not installed (make "
                        "bench-mjai installs it)")
    from adapter.bench.mjai import bench_mjai

    out = bench_mjai(games=4, policy="greedy")
    assert out["policy"] == "greedy" and out["games"] == len(out["per_game"]) == 4
    for game in out["per_game"]:
        assert sum(game["scores"]) == 100_000, game
        assert game["ranks"] == ranks_of(game["scores"])
        assert game["seats"].count("mjbot") == 2
    tally = out["fallbacks"]["greedy"]
    assert tally["decisions"] > 100 and tally["fallbacks"] == 0
    lo, hi = out["average_rank_ci95"]["mjbot"]
    assert lo <= out["average_rank"]["mjbot"] <= hi
