"""The arena: every variant plays with zero illegal actions and zero referee errors, seatings
are duplicates of the same walls, figures and intervals are computed as documented, and the
command writes JSON and logs that `mjbot replay` reads."""

import hashlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from adapter.local.arena import ArenaConfig, play_unit, ratio_ci, run_arena, summarize
from adapter.local.game import GameConfig, play_game
from adapter.local.seat import seat_for
from protocols import events as ev
from replay.log import read_log
from tests.in_process import mjbot_here
from tests.narrowing import header_of
from tests.serve_helpers import mjbot as _mjbot
from tests.stop_helpers import stop_by_signal, stopped_by_deadline

HANDS = {"riichi": 240, "mcr": 200, "taiwan16": 240, "mass": 240}


@pytest.mark.parametrize("variant", ["riichi", "mcr", "taiwan16", "mass"])
def test_hundreds_of_hands_without_illegal_actions(variant):
    config = ArenaConfig(variant, ("rulebased", "greedy", "tsumogiri", "greedy"),
                         hands=HANDS[variant], seed=1, workers=2 if variant == "mass" else 1)
    results = run_arena(config)
    summary = summarize(config, results, 1.0)
    assert summary["hands"] >= HANDS[variant] * 0.8
    assert summary["illegal_actions"] == 0
    assert summary["referee_errors"] == 0, [e for r in results for e in r.errors]
    for name in ("rulebased", "greedy", "tsumogiri"):
        p = summary["policies"][name]
        assert 0 <= p["win_rate"] <= 1 and p["hands"] > 0
        lo, hi = p["points_per_hand_ci95"]
        assert lo <= p["points_per_hand"] <= hi
        assert 0 <= p["win_rate_ci95"][0] <= p["win_rate"] <= p["win_rate_ci95"][1] <= 1
    # points move between seats only: pooled over seats they sum to zero
    total = sum(p["points_per_hand"] * p["hands"] for p in summary["policies"].values())
    assert abs(total) < 1e-6 * max(1, summary["hands"])
    assert summary["policies"]["tsumogiri"]["win_rate"] == 0


def test_every_seating_plays_the_same_walls(tmp_path):
    config = ArenaConfig("riichi", ("rulebased", "greedy", "greedy", "greedy"), hands=1,
                         seed=5, log_dir=str(tmp_path))
    result = play_unit(config, 0)
    assert len(result.logs) == 4
    first_hands = []
    for path in result.logs:
        log = read_log(path)
        header = header_of(log)
        assert log.complete and header.extra["players"] == list(header.policy.split(","))
        start = next(e for e in log.events() if isinstance(e, ev.RoundStarted))
        first_hands.append(start.hands)
    assert all(h == first_hands[0] for h in first_hands)
    seatings = {header_of(read_log(p)).policy for p in result.logs}
    assert len(seatings) == 4  # rulebased in each seat once


def test_arrangements_are_the_distinct_seatings():
    assert len(ArenaConfig("mass", ("a", "b", "b", "b")).arrangements()) == 4
    assert len(ArenaConfig("mass", ("a", "a", "b", "b")).arrangements()) == 6
    assert len(ArenaConfig("mass", ("a", "b", "c", "d")).arrangements()) == 24


def test_same_seed_same_figures():
    config = ArenaConfig("mass", ("rulebased", "greedy", "greedy", "greedy"), hands=32, seed=9)
    a = summarize(config, run_arena(config), 1.0)
    b = summarize(config, run_arena(config), 1.0)
    assert a["policies"] == b["policies"]


def test_ratio_interval():
    value, _, hi = ratio_ci([2.0, 4.0, 6.0], [1.0, 1.0, 1.0])
    assert value == 4.0 and hi is not None
    # three wall sets: Student's t with 2 degrees of freedom (4.303 in any table), not the
    # normal 1.96, which covered such an interval about 81% of the time, not 95%
    assert hi - value == pytest.approx(4.302653 * 2 / 3 ** 0.5)
    assert ratio_ci([1.0], [2.0]) == (0.5, None, None)  # one wall set: no interval
    assert ratio_ci([], []) == (0.0, None, None)


def test_arena_command_json_and_logs_read_by_replay(tmp_path, capsys):
    out = tmp_path / "arena.json"
    r = mjbot_here(capsys, "arena", "--variant", "taiwan16", "--policies",
                   "rulebased,greedy,greedy,greedy", "--hands", "16", "--seed", "3", "--json",
                   str(out), "--log-dir", str(tmp_path), "--progress")
    assert r.returncode == 0, r.stderr
    assert "rulebased" in r.stdout and "illegal actions: 0" in r.stdout
    assert "1/1 wall sets, 16 hands," in r.stderr  # the progress bar, forced on
    data = json.loads(out.read_text())
    assert {"variant", "hands", "illegal_actions", "policies"} <= set(data)
    for entry in data["policies"].values():
        assert {"hands", "win_rate", "self_draw_rate", "deal_in_rate", "points_per_hand",
                "points_per_hand_ci95", "avg_rank"} <= set(entry)
        assert entry["avg_rank"] is None
    logs = sorted(tmp_path.glob("local/*/*.mjlog.msgpack"))
    assert len(logs) == 4
    r = mjbot_here(capsys, "replay", str(logs[0]), "--seat", "2", "--json")
    assert r.returncode == 0, r.stderr
    replay = json.loads(r.stdout)["summary"]
    assert replay["seat"] == 2 and replay["hands"] and replay["decisions"]
    r = mjbot_here(capsys, "replay", str(logs[0]), "--seat", "1", "--policy", "greedy")
    assert r.returncode == 0 and "agree" in r.stdout


def test_a_reader_that_stops_early_does_not_cost_the_json_file(tmp_path):
    """`mjbot arena ... --json FILE | head -3`: the table was printed first, the reader had
    gone, and the broken pipe ended the command before FILE was written: the run's figures
    were lost. The file is written first now; the command still ends as SIGPIPE would."""
    out = tmp_path / "arena.json"
    root = Path(__file__).resolve().parent.parent
    proc = subprocess.Popen([sys.executable, "-m", "adapter.cli", "arena", "--policies",
                             "rulebased,greedy,greedy,greedy", "--hands", "8", "--seed", "3",
                             "--no-log", "--json", str(out)], cwd=root,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()  # the reader is gone before the table is printed
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=120) == 141, err
    assert "Traceback" not in err
    data = json.loads(out.read_text())
    assert data["hands"] > 0 and set(data["policies"]) == {"rulebased", "greedy"}


def test_arena_figures_say_which_search_and_network_played(tmp_path, capsys, monkeypatch):
    # "nn" and "mc" read the same whatever MJBOT_MC and MJBOT_NN_WEIGHTS say: the figures
    # record both, the weights by their SHA-256, in the JSON and on one line of the text
    # (the command in this process: the environment is read as the run starts)
    weights = Path(__file__).parents[1] / "brain" / "data" / "nn_riichi_gen3.npz"
    digest = hashlib.sha256(weights.read_bytes()).hexdigest()
    monkeypatch.setenv("MJBOT_MC", "playouts=16")
    monkeypatch.setenv("MJBOT_NN_WEIGHTS", str(weights))
    out = tmp_path / "arena.json"
    table = ("arena", "--variant", "riichi", "--policies", "nn,greedy,greedy,greedy", "--hands",
             "4", "--seed", "3", "--no-log", "--json", str(out))
    r = mjbot_here(capsys, *table)
    assert r.returncode == 0, r.stderr
    assert json.loads(out.read_text())["environment"] == {
        "MJBOT_MC": "playouts=16", "MJBOT_NN_WEIGHTS": str(weights), "nn_weights_sha256": digest}
    assert (f"environment: MJBOT_MC=playouts=16, MJBOT_NN_WEIGHTS={weights} "
            f"(SHA-256 {digest[:12]})") in r.stdout.splitlines()
    monkeypatch.delenv("MJBOT_MC")
    monkeypatch.delenv("MJBOT_NN_WEIGHTS")
    r = mjbot_here(capsys, *table)
    assert r.returncode == 0, r.stderr
    assert json.loads(out.read_text())["environment"] == {}
    assert "environment:" not in r.stdout


def test_arena_figures_give_each_nn_file_seats_weights_by_their_hash(tmp_path, capsys):
    """An ``nn@FILE`` seat is named by its path, which says nothing of which weights lay
    there when it played (a retrained file under the same name): the figures record each
    file's SHA-256, under a label or a budget too, beside the environment's."""
    weights = Path(__file__).parents[1] / "brain" / "data" / "nn_riichi_gen3.npz"
    digest = hashlib.sha256(weights.read_bytes()).hexdigest()
    out = tmp_path / "arena.json"
    r = mjbot_here(capsys, "arena", "--variant", "riichi", "--policies",
                   f"g3=nn@{weights}@budget=1,greedy,greedy,greedy", "--hands", "4", "--seed",
                   "3", "--no-log", "--json", str(out))
    assert r.returncode == 0, r.stderr
    assert json.loads(out.read_text())["environment"] == {f"sha256 {weights}": digest}
    assert f"environment: nn@{weights} (SHA-256 {digest[:12]})" in r.stdout.splitlines()


# An mjai bot (tsumogiri on its own draw, none otherwise) that, as it starts, writes new
# bytes over the weights file the arena's environment names: a file replaced mid-run
REPLACING_BOT = """
import json, os, sys
seat = int(sys.argv[-1])
with open(os.environ["MJBOT_NN_WEIGHTS"], "wb") as f:
    f.write(b"the weights retrained in place")
for line in sys.stdin:
    last = json.loads(line)[-1]
    answer = {"type": "none"}
    if last["type"] == "tsumo" and last["actor"] == seat:
        answer = {"type": "dahai", "actor": seat, "pai": last["pai"], "tsumogiri": True}
    print(json.dumps(answer), flush=True)
"""


@pytest.mark.parametrize("command", ["arena", "league"])
def test_weights_replaced_during_the_run_are_recorded_as_they_began(tmp_path, capsys,
                                                                     monkeypatch, command):
    """The figures name the weights the games began with (as self-play's manifest and the
    league's options do), not what lay in the file when the figures were written; the
    change is said."""
    weights = tmp_path / "weights.npz"
    weights.write_bytes(b"the weights as the run began")
    began = hashlib.sha256(weights.read_bytes()).hexdigest()
    bot = tmp_path / "bot.py"
    bot.write_text(REPLACING_BOT)
    monkeypatch.setenv("MJBOT_NN_WEIGHTS", str(weights))
    out = tmp_path / "figures.json"
    seat = f"bot=mjai:{sys.executable} {bot}"
    if command == "arena":
        r = mjbot_here(capsys, "arena", "--variant", "riichi", "--policies",
                       f"{seat},greedy,greedy,greedy", "--hands", "4", "--seed", "3",
                       "--no-log", "--json", str(out))
        summary = json.loads(out.read_text())
        warning = r.stderr
    else:
        r = mjbot_here(capsys, "league", "--variant", "riichi", "--members", f"{seat},greedy",
                       "--hands", "4", "--seed", "3", "--out", str(tmp_path / "league"))
        (kept,) = (tmp_path / "league").glob("*.json")
        summary = json.loads(kept.read_text())["arena"]
        warning = r.stderr
    assert r.returncode == 0, r.stderr
    assert hashlib.sha256(weights.read_bytes()).hexdigest() != began  # replaced, really
    assert summary["environment"]["nn_weights_sha256"] == began
    assert f"{weights} (SHA-256 {began[:12]} as the run began" in summary["environment_changed"]
    assert "weights replaced during the run" in warning


def test_arena_command_rejects_bad_policies(capsys):
    r = mjbot_here(capsys, "arena", "--policies", "greedy,greedy")
    assert r.returncode == 2 and "four names" in r.stderr and "Traceback" not in r.stderr
    r = mjbot_here(capsys, "arena", "--policies", "greedy,greedy,greedy,nobody")
    assert r.returncode == 2 and "unknown policy 'nobody'" in r.stderr


def test_riichi_summary_has_ranks():
    config = ArenaConfig("riichi", ("rulebased", "greedy", "greedy", "greedy"), hands=20, seed=2)
    summary = summarize(config, run_arena(config), 1.0)
    ranks = [p["avg_rank"] for p in summary["policies"].values()]
    assert all(1 <= r <= 4 for r in ranks)


def test_bench_runs_never_replay_walls(monkeypatch):
    """Each measured run (and the runs with logs) plays walls no earlier run played: the
    caches of hand shapes would otherwise find every hand of a replayed game."""
    from adapter.bench import arena as benchmarks

    played: list[tuple[str | None, int]] = []

    def fake_play_unit(config, unit):
        played.append((config.log_dir, unit))
        from adapter.local.arena import UnitResult
        from brain.tally import FallbackTally

        return UnitResult(unit, {}, hands=1, fallbacks={config.policies[0]: FallbackTally()})

    monkeypatch.setattr(benchmarks, "play_unit", fake_play_unit)
    benchmarks.bench_arena(["mass"], repeats=2, scale=0.25)
    measured = [u for _, u in played if u < benchmarks.WARM_UP_UNITS]
    per_call = 2 * 2 + benchmarks.WARM_UP_RUNS * 2  # warm-up, then 2 runs of 2 units
    assert len(played) % per_call == 0
    for call in range(len(played) // per_call):
        runs = [u for _, u in played[call * per_call:(call + 1) * per_call]
                if u < benchmarks.WARM_UP_UNITS]
        assert len(set(runs)) == len(runs) == 4
    logged = {u for d, u in played if d is not None and u < benchmarks.WARM_UP_UNITS}
    plain = {u for d, u in played if d is None and u < benchmarks.WARM_UP_UNITS}
    assert logged and plain and not logged & plain and measured


def test_call_and_riichi_rates_count_the_hands_the_logs_show(tmp_path):
    """The style figures: a hand counts once for a seat however many calls it made there."""
    config = ArenaConfig("riichi", ("rulebased", "greedy", "tsumogiri", "greedy"), hands=16,
                         seed=4, log_dir=str(tmp_path))
    results = run_arena(config)
    summary = summarize(config, results, 1.0)
    calls = {"rulebased": 0, "greedy": 0, "tsumogiri": 0}
    riichis = dict.fromkeys(calls, 0)
    hands = dict.fromkeys(calls, 0)
    for path in (p for r in results for p in r.logs):
        log = read_log(path)
        players = header_of(log).extra["players"]
        called: set[int] = set()
        declared: set[int] = set()
        in_hand = False
        for e in log.events():
            if isinstance(e, ev.RoundStarted):
                called, declared, in_hand = set(), set(), True
            elif isinstance(e, ev.MeldCalled) and e.kind in ("chi", "pon", "open_kan"):
                called.add(e.seat)
            elif isinstance(e, ev.RiichiDeclared):
                declared.add(e.seat)
            elif isinstance(e, ev.RoundWon | ev.RoundDrawn) and in_hand:
                in_hand = False  # a double ron ends one hand
                for seat, name in enumerate(players):
                    hands[name] += 1
                    calls[name] += seat in called
                    riichis[name] += seat in declared
    for name, entry in summary["policies"].items():
        assert entry["hands"] == hands[name]
        assert entry["call_rate"] == pytest.approx(calls[name] / hands[name])
        assert entry["riichi_rate"] == pytest.approx(riichis[name] / hands[name])
    assert summary["policies"]["tsumogiri"]["call_rate"] == 0
    assert summary["policies"]["tsumogiri"]["riichi_rate"] == 0
    assert summary["policies"]["rulebased"]["call_rate"] > 0
    assert summary["policies"]["greedy"]["riichi_rate"] > 0


# ---------------------------------------------------------------------- stopped early


# cheap wall sets (~0.2 s of CPU each; nn against rulebased took ~0.7 s): a stop waits for
# six of them, and a loaded machine finishes the first well inside --stop-after
_MANY = ["--variant", "riichi", "--policies", "greedy,tsumogiri,tsumogiri,tsumogiri",
         "--hands", "400000", "--seed", "5", "--no-log"]


def _stopped_figures(out):
    data = json.loads(out.read_text())
    stopped = data["stopped"]
    assert 1 <= stopped["units_done"] < stopped["units_planned"]
    assert data["units"] == stopped["units_done"] and data["hands"] > 0
    assert data["games"] == 4 * stopped["units_done"]  # every seating of each wall set
    return stopped


def test_stop_after_reports_the_first_wall_sets_finished(tmp_path):
    out = tmp_path / "a.json"
    # the workers play on for the whole --stop-after, so it is their CPU: the shortest that
    # lets a wall set (~0.2 s of CPU) finish on this machine now (a fixed 4 s, once 6 s, was
    # too short under a load of 9: no wall set, no figures, exit 1)
    r = stopped_by_deadline(lambda seconds: _mjbot(
        "arena", *_MANY, "--workers", "2", "--stop-after", f"{seconds:g}", "--json", str(out)))
    assert r.returncode == 0, r.stderr
    stopped = _stopped_figures(out)
    assert stopped["reason"] == "time"
    assert (f"stopped early (--stop-after passed): the first {stopped['units_done']} of "
            f"{stopped['units_planned']} wall sets") in r.stdout
    r = _mjbot("arena", *_MANY, "--stop-after", "0")
    assert r.returncode == 2 and "--stop-after 0: needs a positive number" in r.stderr


def _signalled(tmp_path, signum, workers):
    """An arena told to stop by ``signum`` once a wall set has finished: its exit status,
    its stdout, its figures."""
    out = tmp_path / "s.json"
    status, stdout = stop_by_signal(["arena", *_MANY, "--workers", str(workers), "--json",
                                     str(out)], signum, after=1 if workers == 1 else 6)
    return status, stdout, _stopped_figures(out)


def test_sigterm_stops_an_arena_with_its_figures_so_far(tmp_path):
    status, stdout, stopped = _signalled(tmp_path, signal.SIGTERM, workers=2)
    assert status == 128 + signal.SIGTERM and stopped["reason"] == "SIGTERM"
    assert "stopped early (SIGTERM)" in stdout and "greedy-tsumogiri:" in stdout


def test_ctrl_c_stops_a_one_process_arena_with_its_figures_so_far(tmp_path):
    status, stdout, stopped = _signalled(tmp_path, signal.SIGINT, workers=1)
    assert "stopped early (SIGINT)" in stdout
    assert status == 128 + signal.SIGINT and stopped["reason"] == "SIGINT"
    assert stopped["units_left_out"] == 0  # one process: units finish in order


def test_a_stopped_arena_leaves_no_outside_program_running(tmp_path):
    """The outside programs run in their own sessions, out of reach of a signal to the
    arena's group: the workers ended by the stop kill them on their way out. This program
    outlives the end of its input (a shell that sleeps once its bot has ended), as a bot that
    ignores EOF would."""
    marker = tmp_path / "bot-marker"  # the shell's $0: in its command line, to find it
    # the bot is a light one (tests/mjai_tsumogiri.py, Python's start only): each game
    # starts the program anew, and mjbot's own mjai paid ~0.3-0.5 s of CPU at every start
    light = Path(__file__).parent / "mjai_tsumogiri.py"
    bot = f"mjai:sh -c '{sys.executable} {light} --policy=tsumogiri; sleep 600' {marker}"
    status, _ = stop_by_signal(["arena", "--variant", "riichi", "--policies",
                                f"{bot},rulebased,rulebased,rulebased", "--hands", "400000",
                                "--seed", "5", "--workers", "2", "--no-log"],
                               signal.SIGTERM, after=1)
    assert status == 128 + signal.SIGTERM
    for _ in range(50):
        left = subprocess.run(["pgrep", "-f", str(marker)], capture_output=True, text=True)
        if not left.stdout.strip():
            break
        time.sleep(0.1)
    assert not left.stdout.strip(), "outside programs left running: " + left.stdout


class _SeesTheStart:
    """Seat 0, the first to see the game's first event: notes which of the other seats'
    programs are running by then, and ends the game there (an exception out of it)."""

    name = "first"

    def __init__(self, others: list[Any]) -> None:
        self.others, self.running = others, [False] * len(others)

    def observe(self, event) -> None:
        if isinstance(event, ev.GameStarted):
            self.running = [p.ahead is not None and p.ahead.proc.poll() is None
                            for p in self.others]
            raise _GameCut

    def decide(self, request):
        raise AssertionError("asked before the game started")


class _GameCut(Exception):
    pass


def test_the_outside_programs_at_a_table_are_started_side_by_side():
    """Each game starts its outside programs anew, and each start waits for the program's
    first answer: started one after another at the game's first event, a table of three
    programs waited out three loads in turn, every game. Now every one is started before
    the first event goes out; a game that ends early leaves none running."""
    bot = f"mjai:{sys.executable} -m adapter.cli --log-level error mjai --no-log"
    others = [seat_for("riichi", s, bot, 30.0) for s in (1, 2, 3)]
    first = _SeesTheStart(others)
    try:
        with pytest.raises(_GameCut):
            play_game(GameConfig("riichi"), [first, *others], 1, 0)
    finally:
        for seat in others:
            seat.close()
    assert first.running == [True, True, True]
    pids = [pid for seat in others for pid in seat.pids]
    assert len(pids) == 3
    for pid in pids:
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)


@pytest.mark.parametrize(("command", "policies", "seatings", "hands", "wall_sets"), [
    ("selfplay", "rulebased,greedy,rulebased,greedy", 6, 40, 2),
    ("selfplay", "rulebased,greedy,rulebased,greedy", 6, 33, 1),
    ("arena", "rulebased,greedy,greedy,greedy", 4, 23, 2),
])
def test_hands_asked_play_the_fewest_whole_wall_sets_the_help_says(
        command: str, policies: str, seatings: int, hands: int, wall_sets: int,
        capsys: pytest.CaptureFixture[str]) -> None:
    """`mjbot selfplay --hands 40` played 74 hands, 12 games, and its --help said only that
    whole wall sets in every seating are played (arena's: whole games, ~5.5 hands each).
    Both now say how many hands a wall set of their default policies holds; the count is
    the fewest wall sets whose expected hands reach --hands, decided once for every worker."""
    out = " ".join(mjbot_here(capsys, command, "--help").stdout.split())
    assert f"default: {policies})" in out
    per_set = round(5.5 * seatings)
    assert f"~{per_set} per wall set for the default's {seatings} seatings" in out, out
    a, b, c, d = policies.split(",")
    config = ArenaConfig("riichi", (a, b, c, d), hands, 0, 2)
    assert len(config.arrangements()) == seatings and config.units() == wall_sets
    if hands == 40:
        assert "--hands 40 plays 2 wall sets, 12 games" in out


def test_help_gives_the_defaults_a_bare_run_plays(capsys: pytest.CaptureFixture[str]) -> None:
    """`MJBOT_MC=... mjbot arena --variant riichi --policies mc,...` (the README's mc example)
    plays 400 hands: --help said "hands to play, about" and no number, nor which variant a
    bare `mjbot arena` plays."""
    out = " ".join(mjbot_here(capsys, "arena", "--help").stdout.split())
    assert "seatings) (default: 400)" in out and "--variant {riichi,mcr,taiwan16,mass} " \
        "the rules at the table (default: riichi)" in out, out
    assert "--seed SEED the walls' seed: the same seed, the same walls (default: 0)" in out
