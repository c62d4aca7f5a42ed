"""The arena's pair differences: one key per pair, and each entry names its pair, since
seat names may hold '-' (labels, outside programs' commands)."""

from __future__ import annotations

import json

import pytest

from adapter.local.arena import ArenaConfig, paired_difference, run_arena, summarize
from adapter.local.seat import check_pair_keys
from tests.in_process import mjbot_here


def test_names_whose_pairs_share_a_difference_key_are_refused():
    # a-b - c and a - b-c are both "a-b-c": one would overwrite the other in the figures
    seats = ("a-b=greedy", "c=greedy", "a=rulebased", "b-c=rulebased")
    with pytest.raises(ValueError, match=r"seats 'a' - 'b-c' and 'a-b' - 'c' would share the "
                                         r"difference key 'a-b-c'"):
        run_arena(ArenaConfig("riichi", seats, hands=1))  # before any game
    check_pair_keys(["a-b", "c", "a", "d"])  # no clash


def test_the_cli_refuses_them_in_one_line_before_any_game(capsys, tmp_path):
    out = tmp_path / "a.json"
    r = mjbot_here(capsys, "arena", "--policies", "a-b=greedy,c=greedy,a=rulebased,b-c=rulebased",
                   "--hands", "1", "--json", str(out))
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert r.stderr.strip() == ("mjbot arena: seats 'a' - 'b-c' and 'a-b' - 'c' would share the "
                           "difference key 'a-b-c': give one of them another label "
                           "(LABEL=SEAT)")
    assert not out.exists()


def test_selfplay_and_league_take_such_names(capsys, tmp_path):
    """Only an arena's four-name table keys differences by pair: self-play reports none and a
    league's arenas seat two members each, so the names are theirs to use. Played as mass
    mahjong: the names are what is tested, and its hands cost a third of riichi's (the
    self-play's 24 seatings and the league's six arenas)."""
    seats = "a-b=greedy,c=greedy,a=rulebased,b-c=rulebased"
    sp = mjbot_here(capsys, "--log-level", "error", "selfplay", "--variant", "mass",
                    "--policies", seats, "--hands", "1", "--out", str(tmp_path / "ds"), "--json")
    assert sp.returncode == 0, sp.stderr
    assert set(json.loads(sp.stdout)["fallbacks"]) == {"a-b", "c", "a", "b-c"}
    league = mjbot_here(capsys, "league", "--variant", "mass", "--members", seats, "--hands", "1",
                        "--json", "-")
    assert league.returncode == 0, league.stderr
    assert json.loads(league.stdout)["members"] == ["a-b", "c", "a", "b-c"]


def test_each_difference_names_its_pair_and_reads_either_way():
    config = ArenaConfig("mcr", ("x-1=greedy", "rulebased", "greedy-2=greedy", "tsumogiri"),
                         hands=25, seed=3)  # two units: an interval
    summary = summarize(config, run_arena(config), 1.0)
    assert len(summary["differences"]) == 6
    for key, d in summary["differences"].items():
        assert key == f"{d['a']}-{d['b']}" and d["a"] < d["b"]
        value, (lo, hi) = paired_difference(summary, d["b"], d["a"])
        assert value == -d["points_per_hand"] and [lo, hi] == [-d["ci95"][1], -d["ci95"][0]]
