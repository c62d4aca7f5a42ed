"""The arena's pair differences: one key per pair, and each entry names its pair, since
seat names may hold '-' (labels, outside programs' commands)."""

from __future__ import annotations

import pytest

from adapter.local.arena import ArenaConfig, paired_difference, run_arena, summarize
from adapter.local.seat import seat_specs
from tests.in_process import mjbot_here


def test_names_whose_pairs_share_a_difference_key_are_refused():
    # a-b - c and a - b-c are both "a-b-c": one would overwrite the other in the figures
    with pytest.raises(ValueError, match=r"seats 'a' - 'b-c' and 'a-b' - 'c' would share the "
                                         r"difference key 'a-b-c'"):
        seat_specs(["a-b=greedy", "c=greedy", "a=rulebased", "b-c=rulebased"])
    assert seat_specs(["a-b=greedy", "c=greedy", "a=rulebased", "d=rulebased"])  # no clash


def test_the_cli_refuses_them_in_one_line_before_any_game(capsys, tmp_path):
    out = tmp_path / "a.json"
    r = mjbot_here(capsys, "arena", "--policies", "a-b=greedy,c=greedy,a=rulebased,b-c=rulebased",
                   "--hands", "1", "--json", str(out))
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert r.stderr.strip() == ("mjbot arena: seats 'a' - 'b-c' and 'a-b' - 'c' would share the "
                           "difference key 'a-b-c': label one of them (LABEL=SEAT)")
    assert not out.exists()


def test_each_difference_names_its_pair_and_reads_either_way():
    config = ArenaConfig("mcr", ("x-1=greedy", "rulebased", "greedy-2=greedy", "tsumogiri"),
                         hands=25, seed=3)  # two units: an interval
    summary = summarize(config, run_arena(config), 1.0)
    assert len(summary["differences"]) == 6
    for key, d in summary["differences"].items():
        assert key == f"{d['a']}-{d['b']}" and d["a"] < d["b"]
        value, (lo, hi) = paired_difference(summary, d["b"], d["a"])
        assert value == -d["points_per_hand"] and [lo, hi] == [-d["ci95"][1], -d["ci95"][0]]
