"""Seat labels (``LABEL=SEAT``, adapter/local/seat.py ``split_label``): a short display name
for a seat whose own name is an outside program's whole command. The label is the seat's
name in the arena's table and JSON, the league's table, self-play datasets and game logs;
the seat plays exactly as it does unlabelled. A ``=`` inside a command or a budget is no
label; one label naming two seats, and a bad label, are refused in one line before any game."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from adapter.local.arena import ArenaConfig, run_arena, summarize
from adapter.local.seat import seat_for, seat_specs, split_label
from replay.log import read_log
from tests.in_process import mjbot_here
from tests.narrowing import header_of

PY = sys.executable
# our own mjai bot as an outside program; its command holds an "=" of its own
RB = f"mjai:{PY} -m adapter.cli --log-level error mjai --no-log --policy=rulebased"
# a light outside program for the arena runs (its start is Python's, not mjbot's ~0.3-0.5 s
# of CPU at every game): it discards what it draws; "=" in its command too
TG = f"mjai:{PY} {Path(__file__).parent / 'mjai_tsumogiri.py'} --policy=tsumogiri"
# README's "Against outside programs" seat: the PyPI RulebaseBot, with "=" in its command
PYPI_RB = ('mjai:python -c "from loguru import logger; logger.remove(); import sys; from '
           'mjai.bot.rulebase import RulebaseBot as B; B(player_id=int(sys.argv[-1])).start()"')


def test_a_label_is_only_a_prefix_before_a_seat_name():
    assert split_label(f"rb={RB}") == ("rb", RB)
    assert split_label(f"rb={PYPI_RB}") == ("rb", PYPI_RB)
    assert split_label(f"tg={TG}") == ("tg", TG)
    assert split_label("fast=mc@budget=0.3") == ("fast", "mc@budget=0.3")
    assert split_label("g2=nn@runs/gen2.npz") == ("g2", "nn@runs/gen2.npz")
    assert split_label("v1.2_open-x=style:open") == ("v1.2_open-x", "style:open")
    assert split_label("r=mjai-tcp:127.0.0.1:11600") == ("r", "mjai-tcp:127.0.0.1:11600")
    for name in (RB, PYPI_RB, TG, "mc@budget=0.3", 'mjai:python -c "x=1"', "mjai:./bot --policy=mc",
                 "nn@a=rulebased", "rb=nope", "a=b=rulebased", "rulebased", "x=1"):
        assert split_label(name) == (name, name), name


@pytest.mark.parametrize("bad", ["=rulebased", "r b=rulebased", "rb!=mc@budget=1",
                                 "x" * 25 + "=" + RB])
def test_a_bad_label_is_a_one_line_error_naming_the_seat(bad):
    with pytest.raises(ValueError, match=r"^seat .*: a label \(LABEL=SEAT\) is 1 to 24 "):
        split_label(bad)
    assert split_label("x" * 24 + "=greedy") == ("x" * 24, "greedy")


def test_a_labelled_seat_plays_as_itself_under_its_label():
    fast = seat_for("riichi", 0, "fast=mc@budget=0.3", budget=2.0)
    assert fast.name == "fast" and fast.brain.name == "mc" and fast.brain.limit == 0.3
    plain = seat_for("riichi", 1, "mc@budget=0.3")
    assert plain.name == "mc@budget=0.3" and plain.brain.limit == 0.3
    outside = seat_for("riichi", 2, f"rb={RB}", 30.0)
    try:
        assert outside.name == "rb" and outside.argv[-1] == "--policy=rulebased"
    finally:
        outside.close()


def test_one_label_means_one_player():
    assert seat_specs(["greedy", f"rb={RB}", f"rb={RB}", "rulebased=rulebased"]) == {
        "greedy": "greedy", "rb": RB, "rulebased": "rulebased"}
    with pytest.raises(ValueError, match="label 'rb' names two players: 'rulebased' and "
                                         "'greedy'"):
        seat_specs(["rb=rulebased", "rb=greedy"])
    with pytest.raises(ValueError, match="label 'greedy' names two players"):
        seat_specs(["greedy", "greedy=mc"])
    config = ArenaConfig("riichi", ("a=rulebased", "a=greedy", "greedy", "greedy"))
    with pytest.raises(ValueError, match="label 'a' names two players"):
        config.players(config.arrangements()[0])  # not one of them quietly


def test_three_labelled_outside_seats_are_one_row_with_the_unlabelled_figures(tmp_path,
                                                                             capsys):
    out, logs = tmp_path / "a.json", tmp_path / "logs"
    done = mjbot_here(capsys, "--log-level", "error", "arena", "--policies",
                 f"greedy,tg={TG},tg={TG},tg={TG}", "--hands", "1", "--seed", "7",
                 "--seat-limit", "30", "--json", str(out), "--log-dir", str(logs))
    assert done.returncode == 0, done.stderr
    labelled = json.loads(out.read_text())
    assert list(labelled["policies"]) == ["greedy", "tg"]
    assert labelled["policies"]["tg"]["seats"] == 3
    assert list(labelled["differences"]) == ["greedy-tg"]
    assert list(labelled["external_seats"]) == ["tg"]
    assert labelled["policies_seated"] == ["greedy", "tg", "tg", "tg"]
    assert labelled["specs"] == {"greedy": "greedy", "tg": TG}
    table = done.stdout.split("\n\n")[1].splitlines()
    assert [line.split()[0] for line in table[1:3]] == ["greedy", "tg"]
    assert table[3].startswith("thinking")  # no third row
    assert "tg (outside program): late 0, crashed 0, garbage 0, illegal 0" in done.stdout
    assert TG not in done.stdout
    # the same seats unlabelled, on the same walls: the same figures, under the command
    config = ArenaConfig("riichi", ("greedy", TG, TG, TG), hands=1, seed=7, seat_limit=30)
    plain = summarize(config, run_arena(config), 1.0)
    assert labelled["policies"]["tg"] == plain["policies"][TG]
    assert labelled["policies"]["greedy"] == plain["policies"]["greedy"]
    figures = ("points_per_hand", "ci95")  # the pair's names differ: its label, its command
    assert ({k: labelled["differences"]["greedy-tg"][k] for k in figures}
            == {k: plain["differences"][f"greedy-{TG}"][k] for k in figures})
    assert labelled["external_seats"]["tg"] == plain["external_seats"][TG]
    assert labelled["hands"] == plain["hands"] > 0
    # the game logs name the seat by its label and keep what it stands for
    files = sorted(logs.rglob("*.mjlog.msgpack"))
    assert len(files) == 4
    for path in files:
        log = read_log(path)
        header = header_of(log)
        assert sorted(header.extra["players"]) == ["greedy", "tg", "tg", "tg"]
        assert header.extra["specs"] == {"greedy": "greedy", "tg": TG}
        assert {d.policy for d in log.decisions()} == {"greedy", "tg"}


def test_league_and_selfplay_name_members_by_label(tmp_path, capsys):
    out = tmp_path / "league.json"
    done = mjbot_here(capsys, "league", "--members", "rb=rulebased,g=greedy,closed=style:closed",
                 "--hands", "4", "--seed", "3", "--json", str(out), "--out",
                 str(tmp_path / "arenas"))
    assert done.returncode == 0, done.stderr
    data = json.loads(out.read_text())
    assert data["members"] == ["rb", "g", "closed"]
    assert data["specs"] == {"rb": "rulebased", "g": "greedy", "closed": "style:closed"}
    assert set(data["arenas"]) == {"rb vs 3x g", "rb vs 3x closed", "g vs 3x closed"}
    assert data["arenas"]["rb vs 3x g"]["policies_seated"] == ["rb", "g", "g", "g"]
    assert set(data["table"]["g"]) == {"rb", "closed"} and set(data["fallbacks"]) == {
        "rb", "g", "closed"}
    rows = done.stdout.split("row minus column")[1].splitlines()
    assert {line.split()[0] for line in rows[2:5]} == {"rb", "g", "closed"}
    assert sorted(p.name.split("-")[0] for p in (tmp_path / "arenas").iterdir()) == [
        "g", "rb", "rb"]
    # the same members unlabelled: the same table under the policies' own names
    plain = tmp_path / "plain.json"
    again = mjbot_here(capsys, "league", "--members", "rulebased,greedy,style:closed",
                       "--hands", "4", "--seed", "3", "--json", str(plain))
    assert again.returncode == 0, again.stderr
    names = {"rb": "rulebased", "g": "greedy", "closed": "style:closed"}
    unlabelled = json.loads(plain.read_text())["table"]
    for a, row in data["table"].items():
        for b, cell in row.items():
            theirs = unlabelled[names[a]][names[b]]
            assert cell["points_per_hand"] == theirs["points_per_hand"]
            assert cell["ci95"] == theirs["ci95"] and cell["avg_rank"] == theirs["avg_rank"]

    sp = mjbot_here(capsys, "--log-level", "error", "selfplay", "--policies",
                    "g=greedy,rb=rulebased,g=greedy,rb=rulebased", "--hands", "1", "--out",
                    str(tmp_path / "ds"), "--json")
    assert sp.returncode == 0, sp.stderr
    assert set(json.loads(sp.stdout)["fallbacks"]) == {"g", "rb"}
    manifest = json.loads((tmp_path / "ds" / "manifest.json").read_text())
    assert manifest["policies"] == ["g", "rb"]
    assert manifest["config"]["specs"] == {"g": "greedy", "rb": "rulebased"}


@pytest.mark.parametrize("command", ["arena", "league", "selfplay"])
def test_one_label_for_two_seats_is_refused_before_any_game(command, tmp_path, capsys):
    seats = f"rb={RB},rb=rulebased,greedy,greedy"
    args = {"arena": ["--policies", seats, "--log-dir", str(tmp_path / "logs")],
            "league": ["--members", f"rb={RB},rb=rulebased,greedy"],
            "selfplay": ["--policies", seats, "--out", str(tmp_path / "ds")]}[command]
    done = mjbot_here(capsys, command, *args, "--hands", "1")
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert done.stderr.strip() == (f"mjbot {command}: label 'rb' names two players: {RB!r} "
                                   "and 'rulebased' (a label must mean one player)")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(("command", "label"), [
    ("arena", ""), ("arena", "r b"), ("arena", "rb!"), ("arena", "x" * 25),
    ("league", "rb/1"), ("selfplay", "")])
def test_a_bad_label_is_refused_in_one_line(command, label, tmp_path, capsys):
    seat = f"{label}={RB}"
    args = {"arena": ["--policies", f"{seat},greedy,greedy,greedy"],
            "league": ["--members", f"{seat},greedy"],
            "selfplay": ["--policies", f"{seat},greedy,greedy,greedy",
                         "--out", str(tmp_path / "ds")]}[command]
    done = mjbot_here(capsys, command, *args, "--hands", "1")
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert done.stderr.strip() == (f"mjbot {command}: seat {seat!r}: a label (LABEL=SEAT) is "
                                   f"1 to 24 letters, digits, '_', '-' or '.', not {label!r}")


def test_a_labelled_seat_that_cannot_play_is_refused_naming_its_label(capsys):
    done = mjbot_here(capsys, "arena", "--policies", "rb=mjai:,greedy,greedy,greedy",
                      "--hands", "1")
    assert done.returncode == 2
    assert done.stderr.strip() == "mjbot arena: label 'rb': 'mjai:': no command after mjai:"
    done = mjbot_here(capsys, "arena", "--variant", "mcr", "--policies",
                      f"rb={RB},greedy,greedy,greedy")
    assert done.returncode == 2 and "plays riichi, not mcr" in done.stderr
    done = mjbot_here(capsys, "league", "--members", "rb=rulebased,rb=rulebased", "--hands", "1")
    assert done.returncode == 2 and "--members names rb more than once" in done.stderr


def test_an_mc_seat_carries_its_own_options_over_the_environments(monkeypatch):
    from brain.policies import get_policy
    from brain.policies.mc.policy import McPolicy

    monkeypatch.setenv("MJBOT_MC", "playouts=32")
    policy = get_policy("mc@plan=false;playout_calls=true")
    assert isinstance(policy, McPolicy), policy
    assert (policy.config.playouts, policy.config.plan, policy.config.playout_calls) == (
        32, False, True)
    assert split_label("strict=mc@plan_strict=true") == ("strict", "mc@plan_strict=true")
    assert split_label("mc@plan=false@budget=0.5") == ("mc@plan=false@budget=0.5",) * 2
    player = seat_for("mcr", 0, "b=mc@plan=false@budget=0.5")
    assert player.name == "b"


def test_two_mc_configurations_sit_at_one_table_and_a_bad_option_is_refused(tmp_path, capsys):
    out = tmp_path / "a.json"
    done = mjbot_here(capsys, "arena", "--variant", "mcr", "--policies",
                 "a=mc@plan=false;playouts=2,b=mc@playouts=2,rulebased,rulebased",
                 "--hands", "12", "--seed", "3", "--no-log", "--json", str(out))
    assert done.returncode == 0, done.stderr
    summary = json.loads(out.read_text())
    assert summary["specs"]["a"] == "mc@plan=false;playouts=2"
    assert {"a", "b", "rulebased"} == set(summary["policies"])
    assert summary["policies"]["a"]["fallbacks"] == 0
    done = mjbot_here(capsys, "arena", "--policies", "mc@plan=maybe,greedy,greedy,greedy",
                      "--hands", "1")
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert done.stderr.strip() == ("mjbot arena: seat 'mc@plan=maybe': mc: plan needs a bool, "
                                   "got 'maybe'")


@pytest.mark.parametrize("command", ["arena", "league"])
def test_json_dash_is_stdout_and_an_unwritable_file_is_named(command, tmp_path, capsys,
                                                            monkeypatch):
    """``--json -`` puts the figures onto stdout as one JSON document (the text goes to
    stderr) and writes no file called ``-``; a --json path that cannot be written is the
    user's error, named, with no traceback, before any game is played."""
    seats = (["--policies", "rulebased,greedy,greedy,greedy"] if command == "arena"
             else ["--members", "rulebased,greedy"])
    quiet = ["--no-log"] if command == "arena" else []
    monkeypatch.chdir(tmp_path)
    done = mjbot_here(capsys, command, *seats, "--hands", "8", "--seed", "5", *quiet, "--json",
                      "-")
    assert done.returncode == 0, done.stderr
    figures = json.loads(done.stdout)
    assert figures["variant"] == "riichi"
    assert "rulebased" in done.stderr  # the table, for the person at the terminal
    assert not (tmp_path / "-").exists()
    bad = tmp_path / "no-such-dir" / "out.json"
    done = mjbot_here(capsys, command, *seats, "--hands", "4", "--seed", "5", *quiet,
                      "--json", str(bad))
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert f"--json {bad}: no folder {bad.parent}" in done.stderr
    assert "hands in" not in done.stderr + done.stdout  # refused before the arena


def test_an_outside_seats_decisions_are_logged_with_the_time_it_took(tmp_path):
    """The referee logged an outside program's every decision as taking 0.0 s (only our
    brain's answers say how long they thought), so `mjbot replay` of an arena log showed
    'median 0.0 ms' for the outside seat. It now logs the time the program took to answer."""
    config = ArenaConfig("riichi", (f"tg={TG}", "tsumogiri", "tsumogiri", "tsumogiri"),
                         hands=1, seed=3, log_dir=str(tmp_path))
    run_arena(config)
    times = [d.elapsed for path in sorted(tmp_path.rglob("*.mjlog.msgpack"))
             for d in read_log(path).decisions() if d.policy == "tg"]
    assert times and all(t > 0 for t in times), times[:5]
