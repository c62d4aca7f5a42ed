"""Nonsense option values and unusable paths get one line naming what was wrong, before any
work is done: never a traceback (a reviewer's walk through the commands found each of these
ending in one), never a run that plays and then fails to write, never a silent empty result."""

import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from adapter.cli import main
from tests.in_process import mjbot_here

GAME = "tests/data/shared/tenhou/mjx_pairs/2010110100gm-00a9-0000-de3472e8.mjlog"
HAND = ("score", "123456789m234p55s", "--win", "5s")


@pytest.mark.parametrize(("args", "said"), [
    ((*HAND, "--seat", "9"), "argument --seat: a seat is 0, 1, 2 or 3, not '9'"),
    ((*HAND, "--ron-from", "7"), "argument --ron-from: a seat is 0, 1, 2 or 3"),
    ((*HAND, "--dealer", "-1"), "argument --dealer: a seat is 0, 1, 2 or 3"),
    (("bench", "mc", "--positions", "0"), "argument --positions: a whole number of at least 1"),
    (("bench", "mc", "--soak", "-1"), "argument --soak: a whole number of at least 0"),
    (("bench", "shanten", "--seconds", "0"), "argument --seconds: seconds above 0"),
    (("bench", "shanten", "--hands", "0"), "argument --hands: a whole number of at least 1"),
    (("bench", "arena", "--repeats", "-1"), "argument --repeats: a whole number of at least 1"),
    (("bench", "botzone", "--repeats", "0"), "argument --repeats: a whole number"),
    (("bench", "log", "--frames", "0"), "argument --frames: a whole number of at least 1"),
    (("tenhou", "--games", "0"), "argument --games: a whole number of at least 1"),
    (("tenhou", "--budget", "-2"), "argument --budget: seconds above 0"),
    (("tenhou", "--lobby", "-3"), "argument --lobby: a whole number of at least 0"),
    (("tenhou-server", "--port", "99999"), "argument --port: must be 0..65535"),
    (("ntpu-server", "--port", "70000"), "argument --port: must be 0..65535"),
    (("ntpu-server", "--port", "²"), "argument --port: must be 0..65535"),
    (("ntpu-server", "--time-limit", "-1"), "argument --time-limit: seconds above 0"),
    (("ntpu-server", "--client-budget", "-1"), "argument --client-budget: seconds above 0"),
    (("botzone", "--time-limit", "-1"), "argument --time-limit: seconds above 0"),
    (("botzone", "--later-time-limit", "-3"), "argument --later-time-limit: seconds above 0"),
    (("botzone-judge", "--games", "0"), "argument --games: a whole number of at least 1"),
])
def test_a_nonsense_value_is_a_usage_error_naming_the_option(args, said, capsys):
    with pytest.raises(SystemExit) as exited:
        main(list(args))
    assert exited.value.code == 2
    err = capsys.readouterr().err
    assert said in err and "Traceback" not in err


def _refused(args: list[str], capsys) -> str:
    assert main(args) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
    return err


def test_the_winner_cannot_have_discarded_the_winning_tile(capsys):
    err = _refused([*HAND, "--seat", "2", "--ron-from", "2"], capsys)
    assert "--ron-from 2 is the winner's own seat" in err


@pytest.mark.parametrize("variant", ["riichi", "mcr", "taiwan16"])
def test_score_refuses_five_of_one_tile(variant, capsys):
    """Riichi's rules raised ValueError (a traceback); the others said only "not a winning
    hand", as if the hand could be held."""
    err = _refused(["score", "11111m234p55s123s", "--win", "5s", "--variant", variant], capsys)
    assert "'11111m234p55s123s' holds more than four of one tile" in err


@pytest.mark.parametrize(("args", "said"), [
    (["123456789m234p505s", "--win", "5s"], "'123456789m234p505s' is 15 tiles: a riichi win "
                                             "is 14, the winning tile included"),
    (["123456789m234p5s", "--win", "5s", "--variant", "mcr"], "is 13 tiles: a mcr win is 14"),
    (["123456789m234p55s", "--win", "5s", "--variant", "taiwan16"], "is 14 tiles: a taiwan16 "
                                                                     "win is 17"),
    (["1234567m234p55s11z", "--win", "1z", "--variant", "mass"], "holds honours: mass has "
                                                                   "none"),
])
def test_score_names_a_hand_no_win_could_be(args, said, capsys):
    """A hand of the wrong size, or with honours where the set has none, was only "not a
    winning hand" (exit 1), the answer for a real hand that does not win."""
    assert said in _refused(["score", *args], capsys)


@pytest.mark.parametrize(("args", "said"), [
    (["--variant", "mcr", "--riichi"], "--riichi: mcr has no riichi"),
    (["--variant", "mass", "--dora", "4s"], "--dora: mass has no dora"),
    (["--dora", "1m2m3m4m5m6m"], "--dora 1m2m3m4m5m6m: 6 indicators, at most 5 are shown"),
    (["--dora", "1m1m"], "HAND and --dora 1m1m hold more than four of one tile"),
])
def test_score_refuses_what_the_variant_or_the_table_cannot_have(args, said, capsys):
    """These were scored as if possible: mcr's value silently without the riichi asked for,
    six dora indicators, a fifth 1m among the indicators."""
    said_of = _refused(["score", "111m456789m234p55s", "--win", "5s", *args], capsys)
    assert said in said_of


def test_score_tells_a_complete_hand_that_does_not_pay_from_an_incomplete_one(capsys):
    """Both were "not a winning hand": a complete hand with no yaku read like a miscount."""
    assert main(["score", "123m456p789s234s55m", "--win", "5m", "--ron-from", "1"]) == 1
    assert capsys.readouterr().out == ("not a winning hand under riichi rules: a complete "
                                       "shape, but one these rules do not pay (no yaku, under "
                                       "the fan floor, or a shape they do not allow)\n")
    assert main(["score", "123m456p789s234s56m", "--win", "6m", "--ron-from", "1"]) == 1
    assert capsys.readouterr().out == "not a winning hand under riichi rules\n"


def test_score_tells_an_mcr_hand_under_the_fan_floor_its_fan(capsys):
    """An MCR hand under 8 fan read only "no yaku, under the fan floor, or a shape they do not
    allow": which, and by how much, was left to guess. Its fan is said, and the floor."""
    hand = ["score", "123m456m789p234s55p", "--variant", "mcr", "--win", "5p", "--ron-from", "3"]
    assert main(hand) == 1
    assert capsys.readouterr().out == (
        "not a winning hand under mcr rules: 6 fan (门前清 2, 平和 2, 连六 1, 单钓将 1), "
        "under the 8 a win needs (flowers not counted)\n")


def test_score_counts_mcr_flowers_beside_the_fan_floor(capsys):
    """MCR flowers are a fan each, paid, but not counted toward the 8-fan floor: `score` had
    no way to say how many the winner held."""
    win = ["score", "123456789m234p55s", "--variant", "mcr", "--win", "5s", "--ron-from", "3"]
    assert main([*win, "--flowers", "2"]) == 0
    assert capsys.readouterr().out == ("value 23: 清龙 16, 门前清 2, 平和 2, 单钓将 1, 花牌 2\n"
                                       "deltas [47, -8, -8, -31]\n")
    under = ["score", "123m456m789p234s55p", "--variant", "mcr", "--win", "5p", "--ron-from", "3"]
    assert main([*under, "--flowers", "3"]) == 1  # 9 fan with the flowers: still no win
    assert capsys.readouterr().out == (
        "not a winning hand under mcr rules: 9 fan (门前清 2, 平和 2, 连六 1, 单钓将 1, 花牌 3), "
        "under the 8 a win needs (flowers not counted)\n")
    with pytest.raises(SystemExit):
        main([*win, "--flowers", "-1"])
    assert "argument --flowers: a whole number of at least 0" in capsys.readouterr().err
    assert "--flowers 9: mcr has 8 flowers" in _refused([*win, "--flowers", "9"], capsys)
    assert "--flowers: riichi has no flowers" in _refused([*HAND, "--flowers", "1"], capsys)


def test_bench_mc_budgets_must_be_positive_seconds(capsys):
    assert "--budgets: seconds above 0" in _refused(["bench", "mc", "--budgets=0.5,-1"], capsys)


ARENA = ["arena", "--policies", "greedy,greedy,greedy,greedy", "--hands", "4"]


def test_a_log_folder_that_is_a_file_is_refused_before_a_game(tmp_path, capsys, monkeypatch):
    afile = tmp_path / "afile"
    afile.write_text("x")
    assert "--log-dir" in _refused([*ARENA, "--log-dir", str(afile)], capsys)
    err = _refused([*ARENA, "--log-dir", str(afile / "under")], capsys)
    assert "a part of it is a file" in err
    err = _refused(["league", "--members", "rulebased,greedy", "--hands", "4", "--log-dir",
                    str(afile)], capsys)
    assert f"--log-dir {afile}: a file, not a folder" in err
    err = _refused(["ntpu-server", "--hands", "4", "--clients", "stdio", "--log-dir",
                    str(afile)], capsys)
    assert "a file, not a folder" in err
    # the judge played its matches first, then ended in FileExistsError's traceback with the
    # judge logs unwritten
    err = _refused(["botzone-judge", "--games", "1", "--log-dir", str(afile)], capsys)
    assert f"--log-dir {afile}: a file, not a folder" in err
    monkeypatch.setenv("MJBOT_LOG_DIR", str(afile))
    assert f"$MJBOT_LOG_DIR {afile}: a file" in _refused(ARENA, capsys)


def test_botzone_judge_log_dir_empty_keeps_out_of_the_real_log_folder(tmp_path, capsys,
                                                                       monkeypatch):
    """`botzone-judge --log-dir ""` (a script's "$DIR" left unset) wrote its judge log and
    the bots' game logs into the real log folder ($MJBOT_LOG_DIR, or ./logs), among the
    real matches' logs the viewer lists as Botzone games, which the judge keeps out of it.
    An empty --log-dir is none given, as an empty $MJBOT_LOG_DIR is: no logs."""
    real = tmp_path / "real"
    monkeypatch.setenv("MJBOT_LOG_DIR", str(real))
    monkeypatch.chdir(tmp_path)
    assert main(["botzone-judge", "--games", "1", "--modes", "keep", "--log-dir", ""]) == 0
    assert '"verdicts": {}' in capsys.readouterr().out
    assert not real.exists() and sorted(p.name for p in tmp_path.iterdir()) == []


def test_an_output_file_nowhere_is_refused_before_the_work(tmp_path, capsys):
    missing = tmp_path / "no" / "x.json"
    err = _refused([*ARENA, "--no-log", "--json", str(missing)], capsys)
    assert f"--json {missing}: no folder" in err
    err = _refused(["league", "--members", "rulebased,greedy", "--hands", "4", "--json",
                    str(tmp_path)], capsys)
    assert "is a folder" in err
    err = _refused(["review", GAME, "--policy", "rulebased", "--html",
                    str(tmp_path / "no" / "x.html")], capsys)
    assert "--html" in err and "no folder" in err
    # a name too long for the file system was a traceback out of Path.is_dir
    too_long = tmp_path / ("x" * 300 + ".json")
    err = _refused([*ARENA, "--no-log", "--json", str(too_long)], capsys)
    assert f"--json {too_long}: File name too long" in err
    # a file that exists but takes no writes: the league played, then failed to write
    err = _refused(["league", "--members", "rulebased,greedy", "--hands", "4", "--json",
                    "/proc/version"], capsys)
    assert "--json /proc/version: " in err and "rulebased vs" not in err
    for server in (["ntpu-server", "--hands", "2", "--clients", "stdio"],
                   ["tenhou-server", "--games", "1"]):  # they served, then failed to write
        err = _refused([*server, "--json", str(too_long)], capsys)
        assert f"--json {too_long}: File name too long" in err
    assert list(tmp_path.iterdir()) == []


def test_a_weights_file_that_is_no_npz_is_named(tmp_path, capsys, monkeypatch):
    text = tmp_path / "notes.txt"
    text.write_text("not weights\n")
    err = _refused([*ARENA[:2], f"nn@{text},greedy,greedy,greedy", "--hands", "4",
                    "--no-log"], capsys)
    assert f"{text} is not a weights file" in err and "pickle" not in err
    assert "is not a weights file" in _refused(["bench", "nn", "--model", str(text)], capsys)
    monkeypatch.setenv("MJBOT_NN_WEIGHTS", str(text))
    err = _refused([*ARENA[:2], "nn,greedy,greedy,greedy", "--hands", "4", "--no-log"], capsys)
    assert "is not a weights file" in err


def test_a_bundle_output_that_is_a_file_or_missing_models_are_refused(tmp_path, capsys):
    afile = tmp_path / "afile"
    afile.write_text("x")
    err = _refused(["bundle", "botzone", "-o", str(afile)], capsys)
    assert f"--output {afile}: a file, not a folder" in err
    err = _refused(["bundle", "botzone", "-o", str(tmp_path / "out"), "--policy", "mc",
                    "--models", str(tmp_path / "none")], capsys)
    assert f"needs the MCR opponent models: no {tmp_path / 'none' / 'opponents_mcr.npz'}" in err
    assert not (tmp_path / "out").exists()  # nothing half-written


@pytest.mark.parametrize(("args", "said"), [
    (["--server", "nohost"],
     "--server needs HOST:PORT ([::1]:PORT for IPv6), got 'nohost': no port"),
    # digits that are no ASCII: int() refused '²' with its own words
    (["--server", "127.0.0.1:²"],
     "--server needs HOST:PORT ([::1]:PORT for IPv6), got '127.0.0.1:²': port '²' is no number"),
    (["--transport", "ws", "--server", "http://127.0.0.1:1"], "a ws:// or wss:// URL"),
    # a WebSocket URL over TCP (it was looked up as the host name 'ws://127.0.0.1')
    (["--server", "ws://127.0.0.1:1"], "needs --transport ws"),
])
def test_a_malformed_tenhou_server_is_refused_before_connecting(args, said, capsys):
    assert said in _refused(["tenhou", *args], capsys)


def test_the_timing_tool_names_a_missing_path():
    done = subprocess.run([sys.executable, "-m", "adapter.local.timing", "/no/such/log"],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert "no such file or folder: /no/such/log" in done.stderr


def test_mc_options_name_the_key_they_break(capsys, monkeypatch):
    err = _refused([*ARENA[:2], "mc@depth=5,greedy,greedy,greedy", "--hands", "4",
                    "--no-log"], capsys)
    assert "mc: depth must be 1, 2 or 3, got 5" in err
    assert "no options after mc@" in _refused([*ARENA[:2], "mc@,greedy,greedy,greedy",
                                               "--hands", "4", "--no-log"], capsys)
    monkeypatch.setenv("MJBOT_MC", "playouts=-4")
    err = _refused([*ARENA[:2], "mc,greedy,greedy,greedy", "--hands", "4", "--no-log"],
                   capsys)
    assert "playouts must be >= 0" in err and "got -4" in err


@pytest.mark.parametrize(("args", "said"), [
    (["--top-k", "3"], "--top-k and --predictor shape the commentary: add --commentary"),
    (["--predictor", "seed004"], "add --commentary"),
    (["-o", "out.json"], "-o names the file an --export goes to: add --export"),
])
def test_replay_options_that_would_do_nothing_are_refused(args, said, capsys):
    """Each was accepted and ignored: a user waiting for ranked moves or a written file got
    the plain summary without a word."""
    assert said in _refused(["replay", GAME, *args], capsys)


def test_bench_commentary_needs_games_to_measure(tmp_path, capsys):
    err = _refused(["bench", "commentary", str(tmp_path / "none")], capsys)
    assert f"no such file or folder: {tmp_path / 'none'}" in err
    err = _refused(["bench", "commentary", str(tmp_path)], capsys)
    assert "no game the replayer reads in" in err


@pytest.mark.parametrize(("args", "said"), [
    (["--lr", "-1"], "--lr must be a number above 0, got -1.0"),
    (["--lr", "nan"], "--lr must be a number above 0, got nan"),
    (["--seed", "-1"], "--seed must be at least 0"),
    (["--max-decisions", "-1"], "--max-decisions must be at least 0"),
    (["--threads", "0"], "--threads must be at least 1"),
    (["--channels", "100000"], "--channels at most 512"),
    (["--out", "/no/such/folder/x.npz"], "--out /no/such/folder/x.npz: no folder"),
])
def test_nn_train_refuses_values_before_reading_data_or_loading_torch(args, said, capsys):
    """Each crashed (numpy's seed, torch's learning rate or allocator), or, for --out,
    failed only once training had finished."""
    base = ["nn", "train", "--variant", "riichi", "--data", "no-such-data", "--out", "x.npz"]
    assert said in _refused([*base, *args], capsys)


def test_models_train_and_eval_refuse_nonsense_counts(tmp_path, capsys):
    base = ["models", "train", "--variant", "riichi", "--data", "no-such-data"]
    assert "--seed must be at least 0" in _refused([*base, "--seed", "-1"], capsys)
    assert "--out" in _refused([*base, "--out", str(tmp_path)], capsys)
    assert "--workers must be at least 1" in _refused(
        ["models", "eval", "--variant", "riichi", "--workers", "0"], capsys)
    assert "--bootstrap must be at least 0" in _refused(
        ["models", "eval", "--variant", "riichi", "--bootstrap", "-1"], capsys)


def test_weights_holding_nan_are_not_played(tmp_path, capsys):
    """A diverged training run's file (nn train no longer writes one, but a file may come
    from elsewhere) answered garbage at the table without a word."""
    import numpy as np

    from brain.nn.network import Network

    net = Network.from_file("brain/data/nn_riichi_gen3.npz")
    net.params[next(iter(net.params))][...] = np.nan
    path = tmp_path / "nan.npz"
    net.save(path)
    err = _refused([*ARENA[:2], f"nn@{path},greedy,greedy,greedy", "--hands", "4", "--no-log"],
                   capsys)
    assert "holds values that are not finite numbers" in err


def test_a_weights_file_of_the_other_kind_is_named_as_such(tmp_path, capsys):
    """The network and the opponent models are both .npz files with a meta entry: each
    reader says which kind it was handed (was 'weights format None' and a doubled path)."""
    err = _refused([*ARENA[:2], "nn@brain/data/opponents_riichi.npz,greedy,greedy,greedy",
                    "--hands", "4", "--no-log"], capsys)
    assert "is not a network's weights" in err and "it holds opponent models" in err
    err = _refused(["models", "eval", "--variant", "riichi", "--model",
                    "brain/data/nn_riichi.npz"], capsys)
    assert err.count("nn_riichi.npz") == 1 and "a network's weights" in err
    err = _refused(["dataset", "import", "--out", str(tmp_path / "d"), "README.md"], capsys)
    assert "`mjbot replay README.md` says why each format refused it" in err


def test_a_dataset_named_twice_or_held_out_from_itself_is_refused(tmp_path, capsys):
    """Twice in --data, every example counted twice; in --data and --holdout, held-out
    figures read on training examples: both went without a word."""
    data = tmp_path / "d"
    data.mkdir()
    base = ["nn", "train", "--variant", "riichi", "--out", str(tmp_path / "w.npz")]
    err = _refused([*base, "--data", str(data), f"{data}/"], capsys)
    assert "twice" in err and "count twice" in err
    err = _refused([*base, "--data", str(data), "--holdout", str(data)], capsys)
    assert f"--holdout {data} is also in --data" in err
    err = _refused(["models", "train", "--variant", "riichi", "--data", str(data), str(data)],
                   capsys)
    assert "twice" in err


def test_a_held_out_set_of_the_training_walls_or_a_copied_dataset_is_refused(tmp_path, capsys):
    """A held-out self-play set played on the training set's seed (the README's held-out set
    with the training command's --seed 1, fewer hands) is the first rows of the training set,
    decision for decision, and a dataset copied to a second folder holds the same shards:
    `nn train` read its held-out figures in-sample, or counted examples twice, without a word.
    Another seed is taken as before."""
    import shutil

    def selfplay(name: str, seed: int, hands: int, variant: str = "riichi") -> str:
        out = tmp_path / name
        assert main(["selfplay", "--variant", variant, "--policies",
                     "rulebased,greedy,rulebased,greedy", "--hands", str(hands), "--seed",
                     str(seed), "--workers", "1", "--out", str(out), "--no-progress"]) == 0
        capsys.readouterr()
        return str(out)

    # sizes as small as the checks allow: they read the manifests' seeds and the shards'
    # hashes (one shard each), not the examples; the held-out set is the smaller, as it is
    train, small, other = selfplay("t", 1, 12), selfplay("h", 1, 4), selfplay("o", 2, 4)
    copy = str(tmp_path / "copy")
    shutil.copytree(train, copy)
    base = ["nn", "train", "--variant", "riichi", "--out", str(tmp_path / "w.npz")]
    err = _refused([*base, "--data", train, "--holdout", small], capsys)
    assert (f"--holdout {small} was dealt the walls of --data {train} (riichi self-play seed "
            "1 both)" in err and "another --seed" in err)
    err = _refused([*base, "--data", train, "--holdout", other, copy], capsys)
    assert f"--holdout {copy} and --data {train} hold the same shard" in err
    err = _refused([*base, "--data", train, copy], capsys)
    assert f"--data {train} and {copy} hold the same shard" in err and "count twice" in err
    err = _refused(["models", "train", "--variant", "riichi", "--data", copy, train], capsys)
    assert "hold the same shard" in err
    # another seed's walls, or another variant's of the seed (refused as of several variants
    # where torch is): not refused for the walls (stopped before its first step)
    for held in (other, selfplay("m", 1, 4, "mass")):
        main([*base, "--data", train, "--holdout", held, "--stop-after", "1e-9"])
        err = capsys.readouterr().err
        assert "dealt the walls" not in err and "same shard" not in err, err


def test_a_held_out_import_of_records_trained_on_is_refused(tmp_path, capsys):
    """Imported records carry no seed, and the same records imported into two folders (a
    subset, another order, an mjlog and its tenhou.net/6 twin) share no shard: a held-out
    import of games the --data import holds was taken without a word (convlog's 10 games
    held out from the card's import of the people's games: 778 examples, every one trained
    on), and two such imports in --data counted them twice. Other records are taken."""
    from tests.shared_data import DATA

    convlog = sorted((DATA / "tenhou" / "convlog_tenhou6_json").glob("*.json"))
    mjlog = DATA / "tenhou" / "dnovikoff_mjlog" / "pao.xml"
    twin = sorted((DATA / "tenhou" / "mjx_pairs").glob("*.mjlog"))[0]

    def imported(name: str, *files: Path) -> str:
        assert main(["dataset", "import", "--out", str(tmp_path / name),
                     *map(str, files)]) == 0
        capsys.readouterr()
        return str(tmp_path / name)

    everything = imported("all", mjlog, *convlog)
    some = imported("some", *reversed(convlog[:3]))
    other = imported("other", twin)
    twin_json = imported("twin", twin.with_suffix(".tenhou6.json"))
    base = ["nn", "train", "--variant", "riichi", "--out", str(tmp_path / "w.npz")]
    err = _refused([*base, "--data", everything, "--holdout", other, some], capsys)
    assert f"--holdout {some}: 3 of its 3 hands are in --data {everything}" in err
    err = _refused([*base, "--data", other, "--holdout", twin_json], capsys)
    assert f"--holdout {twin_json}: " in err and f"hands are in --data {other}" in err
    err = _refused([*base, "--data", some, everything], capsys)
    assert f"--data {some} and {everything} hold 3 of the same hands" in err
    err = _refused(["models", "train", "--variant", "riichi", "--data", everything, some],
                   capsys)
    assert "of the same hands" in err
    # other records: not refused for their hands (stopped before the first step)
    main([*base, "--data", everything, "--holdout", other, "--stop-after", "1e-9"])
    err = capsys.readouterr().err
    assert "same hands" not in err and "hands are in" not in err, err


def test_score_help_says_what_it_does(capsys):
    """`mjbot score -h` had no description, and --seat, --dealer, --riichi no help."""
    with pytest.raises(SystemExit):
        main(["score", "-h"])
    out = " ".join(capsys.readouterr().out.split())
    assert "value a winning hand in a variant: its items" in out
    assert "--seat SEAT the winner's seat" in out and "--dealer DEALER the dealer's seat" in out
    assert "--riichi the winner declared riichi" in out


def test_bench_commentary_says_why_the_files_it_read_were_left_out(tmp_path, capsys):
    """A folder of our own logs: each reads, and each is left out (the measure is of real
    games); the refusal said only "no game the replayer reads", as if they were unreadable."""
    from replay.log import Footer, GameLogWriter
    from tests.log_samples import sample_hand, sample_header, write_steps

    for n in range(2):
        w = GameLogWriter(tmp_path / f"g{n}.mjlog.msgpack", sample_header())
        write_steps(w, sample_hand(0))
        w.close(Footer({"hands": 1}))
    (tmp_path / "notes.txt").write_text("not a game\n", encoding="utf-8")
    err = _refused(["bench", "commentary", str(tmp_path)], capsys)
    assert "3 file(s) looked at; 2 left out: an mjbot log: review it with mjbot review; " \
           "1 left out: no reader accepts it)" in err


def test_an_idle_limit_without_a_line_to_give_up_is_refused(capsys):
    """`mjbot ntpu --stdio --idle-limit 60` took the limit and never applied it."""
    err = _refused(["ntpu", "--stdio", "--idle-limit", "60"], capsys)
    assert "--idle-limit goes with --server" in err


def test_a_json_fifo_gets_the_figures_not_the_checks_empty_open(tmp_path):
    """`--json FIFO` (a reader waiting on a named pipe): the check that the file can be
    written opened it for appending and closed it at once, so the reader took that for the
    end of the figures (an empty read), and the arena's real write then waited for a reader
    for ever. A file that is no regular file is now checked for access only."""
    import json
    import os
    import threading

    fifo = tmp_path / "figures"
    os.mkfifo(fifo)
    figures: list[str] = []

    def read() -> None:
        with open(fifo, encoding="utf-8") as reader:
            figures.append(reader.read())

    reading = threading.Thread(target=read, daemon=True)
    reading.start()
    proc = subprocess.Popen([sys.executable, "-m", "adapter.cli", *ARENA, "--no-log",
                             "--json", str(fifo)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        reading.join(timeout=120)
        if reading.is_alive():  # nothing ever opened it for writing: let the reader go
            os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
            reading.join()
        assert figures and figures[0], "the reader was handed an empty file"
        assert json.loads(figures[0])["hands"] > 0
        assert proc.wait(timeout=120) == 0, proc.stderr.read() if proc.stderr else ""
    finally:
        proc.kill()


def test_the_module_tools_answer_help_with_their_usage(tmp_path):
    """`python -m adapter.local.timing --help` read '--help' as a path (no such file), and
    `python -m brain.shanten_tables --help` rebuilt and rewrote the shipped tables."""
    from brain.shanten_tables import SHIPPED

    before = os.stat(SHIPPED).st_mtime_ns
    for module, said in (("adapter.local.timing", "LOG_OR_FOLDER"),
                         ("brain.shanten_tables", "Build the shanten tables")):
        done = subprocess.run([sys.executable, "-m", module, "--help"], capture_output=True,
                              text=True, timeout=120)
        assert done.returncode == 0 and said in done.stdout, (module, done.stderr)
    assert os.stat(SHIPPED).st_mtime_ns == before  # not written


def _subparsers(parser):
    """(prog, parser) for every command and sub-command of ``parser``, bench's included."""
    import argparse

    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in dict.fromkeys(action.choices.values()):
                yield sub.prog, sub
                yield from _subparsers(sub)


def _all_parsers():
    from adapter.cli import build_parser
    from adapter.commands.bench import bench_parser

    yield from _subparsers(build_parser())
    yield from _subparsers(bench_parser())


def _options(parser) -> set[str]:
    return {s for a in parser._actions for s in a.option_strings}


LOGGED = sorted(prog for prog, p in _all_parsers() if {"--log-dir", "--no-log"} <= _options(p))


def test_every_command_with_both_log_options_is_found():
    assert LOGGED == ["mjbot arena", "mjbot botzone", "mjbot mjai", "mjbot ntpu",
                      "mjbot ntpu-server", "mjbot tenhou", "mjbot tenhou-server"]


@pytest.mark.parametrize("prog", LOGGED)
def test_log_dir_with_no_log_is_refused_in_one_line(prog, tmp_path, capsys):
    """--no-log won silently: the user thought the logs went to the folder, and none were
    written anywhere."""
    folder = tmp_path / "logs"
    with pytest.raises(SystemExit) as exited:
        main([*prog.split()[1:], "--log-dir", str(folder), "--no-log"])
    assert exited.value.code == 2
    err = capsys.readouterr().err
    assert err == f"{prog}: argument --no-log: not allowed with argument --log-dir\n"
    assert not folder.exists()


def test_the_botzone_bundles_parser_refuses_both_log_options(capsys):
    from adapter.platforms.botzone import main as bundle_main

    with pytest.raises(SystemExit):
        bundle_main(["--no-log", "--log-dir", "x"])
    assert capsys.readouterr().err == ("mjbot-botzone: argument --log-dir: not allowed with "
                                       "argument --no-log\n")


@pytest.mark.parametrize(("args", "said"), [
    (["arena", "--variant", "richi"], "mjbot arena: argument --variant: invalid choice: "
     "'richi' (choose from 'riichi', 'mcr', 'taiwan16', 'mass')"),
    (["league", "--variant", "richi"], "mjbot league: argument --variant: invalid choice: "
     "'richi' (choose from 'riichi', 'mcr', 'taiwan16', 'mass')"),
    (["score", "123m", "--win", "1m", "--variant", "MCR"], "mjbot score: argument --variant: "
     "invalid choice: 'MCR' (choose from 'riichi', 'mcr', 'taiwan16', 'mass')"),
    (["bench", "mc", "--variant", "taiwan"], "mjbot bench mc: argument --variant: invalid "
     "choice: 'taiwan' (choose from 'all', 'riichi', 'mcr', 'taiwan16', 'mass')"),
    (["arena", "--length", "west"], "mjbot arena: argument --length: invalid choice: 'west' "
     "(choose from 'east', 'south')"),
    ([*HAND, "--seat", "9"], "mjbot score: argument --seat: a seat is 0, 1, 2 or 3, not '9'"),
    (["bench", "arena", "--repeats", "-1"], "mjbot bench arena: argument --repeats: a whole "
     "number of at least 1, not '-1'"),
])
def test_a_bad_choice_or_value_is_one_line_naming_what_it_takes(args, said, capsys):
    """argparse printed its usage block (up to ten lines) before the line that says what was
    wrong; the commands' own refusals (selfplay's --variant among them) are one line."""
    with pytest.raises(SystemExit) as exited:
        main(args)
    assert exited.value.code == 2
    assert capsys.readouterr().err == said + "\n"


def test_a_missing_argument_still_shows_the_usage(capsys):
    """There the usage is the answer: it shows what the command needs."""
    with pytest.raises(SystemExit):
        main(["score"])
    err = capsys.readouterr().err
    assert err.startswith("usage: mjbot score") and "required: hand, --win" in err


def test_a_mistyped_mc_key_names_the_nearest_one(capsys, monkeypatch):
    """"unknown key 'budgt'" came with the thirty keys in alphabetical order and no word of
    which was meant; the nearest is named first now, for a seat's mc@ and for MJBOT_MC."""
    seats = "mc@budgt=1,greedy,greedy,greedy"
    err = _refused([*ARENA[:1], "--policies", seats, "--hands", "4", "--no-log"], capsys)
    assert ("seat 'mc@budgt=1': mc: unknown key 'budgt' in 'budgt=1', did you mean "
            "'budget_share'? (known keys: alpha, ") in err
    # ... or the seat's own time limit, which is no mc option but a suffix
    assert err.endswith("wpet_scale); a seat's own time limit per decision is "
                        "POLICY@budget=SECONDS\n")
    err = _refused([*ARENA[:1], "--policies", "mc@budget_shar=0.5,greedy,greedy,greedy",
                    "--no-log"], capsys)
    assert err.endswith("did you mean 'budget_share'? (known keys: alpha, always_simulate, "
                        "attack, batch, budget_share, call_anchor, call_margin, call_z, "
                        "default_playouts, defend, depth, exact_ready, exact_step, fast, "
                        "fold_ready, fold_unready, kappa, models, placement, plan, plan_strict, "
                        "playout_calls, playouts, search, seconds, seed, turn_margin, turn_z, "
                        "wait_scale, wpet_scale)\n")
    monkeypatch.setenv("MJBOT_MC", "seed=1,playout=3")
    err = _refused([*ARENA[:1], "--policies", "mc,greedy,greedy,greedy", "--no-log"], capsys)
    assert "MJBOT_MC='seed=1,playout=3': mc: unknown key 'playout' in 'playout=3', did you " \
           "mean 'playouts'? (known keys: " in err
    monkeypatch.setenv("MJBOT_MC", "bogus=1")  # nothing near: the list alone, as before
    err = _refused([*ARENA[:1], "--policies", "mc,greedy,greedy,greedy", "--no-log"], capsys)
    assert "mc: unknown key 'bogus' in 'bogus=1' (known keys: alpha, " in err


@pytest.mark.parametrize("command", [["arena"], ["botzone"]])
def test_a_bad_log_level_is_one_line_as_every_bad_value(command, capsys):
    """`mjbot --log-level bogus arena` printed the usage block before "unknown log level
    'bogus'", the one bad option value that still did (it is checked when logging is set up,
    not by its type); it is one line naming the option and what it takes, exit 2."""
    with pytest.raises(SystemExit) as exited:
        main(["--log-level", "bogus", *command])
    assert exited.value.code == 2
    assert capsys.readouterr().err == ("mjbot: argument --log-level: unknown log level 'bogus' "
                                       "(debug, info, warning, error)\n")


def _commands_with_a_variant() -> list[str]:
    """Every command (and bench) whose parser takes --variant, found by walking the parsers."""
    import argparse

    from adapter.cli import build_parser
    from adapter.commands.bench import bench_parser

    found: list[str] = []
    todo = [build_parser(), bench_parser()]
    while todo:
        parser = todo.pop()
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                todo += list(action.choices.values())
            elif "--variant" in action.option_strings:
                found.append(parser.prog.removeprefix("mjbot "))
    return sorted(found)


COMMANDS_WITH_A_VARIANT = _commands_with_a_variant()


def test_the_walk_finds_the_commands_that_take_a_variant():
    assert {"arena", "league", "score", "selfplay", "nn train", "nn iterate", "nn probe-expert",
            "models train", "models eval", "bench arena", "bench logkeep"} <= set(
        COMMANDS_WITH_A_VARIANT), COMMANDS_WITH_A_VARIANT


@pytest.mark.parametrize("command", COMMANDS_WITH_A_VARIANT)
def test_every_command_refuses_an_unknown_variant_in_the_same_words(command, capsys):
    """`mjbot arena --variant richi` was refused in argparse's words ("invalid choice ...
    (choose from ...)"), `mjbot selfplay`, `nn` and `models` in their own ("unknown variant
    'richi' (riichi, mcr, taiwan16 or mass)"): one option, one wording, everywhere."""
    r = mjbot_here(capsys, *command.split(), "--variant", "richi")
    assert r.returncode == 2, r
    lines = r.stderr.splitlines()
    assert len(lines) == 1, lines
    head = f"mjbot {command}: argument --variant: invalid choice: 'richi' (choose from "
    assert lines[0].startswith(head), lines
    assert lines[0].endswith("'riichi', 'mcr', 'taiwan16', 'mass')"), lines


def test_a_port_another_process_holds_says_what_to_give_instead(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`mjbot view --port P` and `mjbot serve --status HOST:P` on a port another process
    listens on said asyncio's words alone ("[Errno 98] error while attempting to bind on
    address ('127.0.0.1', P): address already in use"): now one line that names the address
    and the option to change, and that port 0 picks a free one; exit 1 as before."""
    config = tmp_path / "serve.toml"
    config.write_text("")  # no session: only the status server would run
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        for args, option in (
                (("view", str(tmp_path), "--port", str(port)), "--port"),
                (("serve", str(config), "--status", f"127.0.0.1:{port}", "--log-dir",
                  str(tmp_path / "logs")), "--status HOST:PORT (or the config's [status] port)")):
            r = mjbot_here(capsys, *args)
            assert r.returncode == 1, r.stderr
            assert r.stderr.splitlines()[-1] == (
                f"mjbot {args[0]}: port in use: another process listens on 127.0.0.1:{port}; "
                f"give another port with {option}, or port 0 for a free one"), r.stderr


def test_a_port_another_process_holds_on_the_ipv6_loopback_names_that_address(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """On the IPv6 loopback (`--host ::1`, `--status [::1]:P`, or `localhost`, which binds it
    too) asyncio names the address as a 4-tuple, "('::1', P, 0, 0)", and the port-in-use
    line said 'another process listens on that address': the address it is meant to name was
    lost. Now it names [::1]:P, as --status takes it."""
    if not socket.has_ipv6:
        pytest.skip("no IPv6 here")
    config = tmp_path / "serve.toml"
    config.write_text("")
    with socket.socket(socket.AF_INET6) as taken:
        try:
            taken.bind(("::1", 0))
        except OSError:
            pytest.skip("no IPv6 loopback here")
        taken.listen()
        port = taken.getsockname()[1]
        for args, option in (
                (("view", str(tmp_path), "--host", "::1", "--port", str(port)), "--port"),
                (("serve", str(config), "--status", f"[::1]:{port}", "--log-dir",
                  str(tmp_path / "logs")), "--status HOST:PORT (or the config's [status] port)")):
            r = mjbot_here(capsys, *args)
            assert r.returncode == 1, r.stderr
            assert r.stderr.splitlines()[-1] == (
                f"mjbot {args[0]}: port in use: another process listens on [::1]:{port}; "
                f"give another port with {option}, or port 0 for a free one"), r.stderr


@pytest.mark.parametrize(("args", "game"), [
    (("arena", "--variant", "mcr", "--policies", "rulebased,rulebased,rulebased,rulebased",
      "--no-log", "--length", "south"), "one hand (one Botzone match)"),
    (("selfplay", "--variant", "taiwan16", "--policies",
      "rulebased,rulebased,rulebased,rulebased", "--length", "east"),
     "4 hands, the dealer moving on every hand"),
    (("league", "--variant", "mass", "--members", "rulebased,greedy", "--length", "south"),
     "4 hands, the dealer moving on every hand"),
])
def test_a_game_length_for_a_variant_whose_game_has_a_set_length_is_refused(
        args, game, tmp_path, capsys):
    """`--variant mcr --length south` was accepted in silence and played the same one-hand
    games as without it: --length is a riichi game's (east-only or east-south). Given for
    another variant it is refused, naming what that variant's game is, before any game or
    output; a riichi table takes it, and the others play as before without it."""
    out = tmp_path / "ds"
    run = mjbot_here(capsys, *args, "--hands", "1",
                     *(("--out", str(out)) if args[0] == "selfplay" else ()))
    assert run.returncode == 2 and not out.exists()
    variant = args[2]
    assert run.stderr.strip() == (
        f"mjbot {args[0]}: --length {args[args.index('--length') + 1]} sets how long a riichi "
        f"game runs; a game of {variant} is {game}: leave --length out")
    assert run.stdout == ""
    riichi = mjbot_here(capsys, "arena", "--variant", "riichi", "--policies",
                        "greedy,greedy,greedy,greedy", "--no-log", "--hands", "1", "--length",
                        "south", "--json", "-")
    assert riichi.returncode == 0, riichi.stderr


def test_review_of_several_games_says_it_reviews_one(capsys):
    """`mjbot review logs/*` answered "unrecognized arguments: " and every file after the
    first: it now says that review takes one GAME, how many were given, and what shows
    many (replay), in one line, exit 2, before any file is read."""
    run = mjbot_here(capsys, "review", GAME, "b.json", "c.json", "--policy", "rulebased")
    assert run.returncode == 2 and run.stdout == ""
    assert run.stderr.strip() == (f"mjbot review: reviews one GAME at a time, and 3 were given "
                                  f"({GAME}, b.json, ...): review each alone; `mjbot replay` "
                                  "shows many")


def test_review_of_a_second_game_after_an_option_says_it_reviews_one(capsys):
    """`mjbot review a --seat 1 b`: argparse gives review's extra GAMEs only the words before
    the first option, so "b" was its "unrecognized arguments: b" and usage. It is now the one
    line `review a b` gets; an unknown option among them is still refused as one."""
    run = mjbot_here(capsys, "review", GAME, "--seat", "1", "b.json", "--policy", "rulebased")
    assert run.returncode == 2 and run.stdout == ""
    assert run.stderr.strip() == (f"mjbot review: reviews one GAME at a time, and 2 were given "
                                  f"({GAME}, b.json): review each alone; `mjbot replay` shows "
                                  "many")
    bogus = mjbot_here(capsys, "review", GAME, "--seat", "1", "b.json", "--bogus")
    assert bogus.returncode == 2 and "unrecognized arguments: --bogus" in bogus.stderr
