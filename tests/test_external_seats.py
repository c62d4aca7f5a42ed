"""Outside programs at the local table (adapter/local/external/): our own `mjbot mjai` and
`mjbot botzone` as outside programs give exactly the figures of the same policy seated
in-process on the same walls; tiny bots written here crash, hang, answer illegally or write
garbage, and the table plays on, counts each fault and leaves no process behind."""

from __future__ import annotations

import contextlib
import functools
import json
import os
import select
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from structlog.testing import capture_logs

from adapter.local.arena import ArenaConfig, format_summary, run_arena, summarize
from adapter.local.external import (
    SeatLimits,
    botzone_seat,
    external_seat,
    mjai_seat,
    mjai_tcp_seat,
    ntpu_seat,
    time_limit_text,
)
from adapter.local.external import seat as seat_module
from adapter.local.external.process import LineProcess, NoClient, SeatFault
from adapter.local.game import GameConfig, play_game
from adapter.local.seat import seat_for
from brain.tally import FallbackKind
from protocols import events as ev
from replay.log import read_log
from tests.in_process import mjbot_here
from tests.serve_helpers import free_port

PY = sys.executable
# What starts a bot written here: each needs only the standard library, so it starts without
# site (-S) and skips this venv's site-packages and their .pth files (the editable install's
# finder), about half of a bare Python start's CPU: these bots start hundreds of times a run
# (every one-shot Botzone turn, every fresh run after a fault). mjbot's own commands need
# site and keep PY.
BOT_PY = f"{PY} -S"
MJBOT = f"{PY} -m adapter.cli --log-level error"
MARKER = ">>>BOTZONE_REQUEST_KEEP_RUNNING<<<"

# An mjai bot: tsumogiri on its own draw, none otherwise (mute: no answer ever); argv: MODE
# PIDFILE ... SEAT. It
# starts a sleeping child first (a program's children must go with it) and records both pids.
# It crashes or hangs once, on the first draw any of its runs is asked to play (a marker file
# beside the pidfile says it has): one fault shows it counted, the program and its child
# killed and a fresh run for the next hand, as a fault in every run did, without waiting out
# the limit in every hand of four games.
MJAI_BOT = textwrap.dedent("""
    import json, os, subprocess, sys, time
    mode, pidfile, seat = sys.argv[1], sys.argv[2], int(sys.argv[-1])
    def first_fault():
        if os.path.exists(pidfile + ".faulted"):
            return False  # it has crashed or hung once: it plays well now
        open(pidfile + ".faulted", "w").close()
        return True
    child = subprocess.Popen([sys.executable, "-S", "-c", "import time; time.sleep(600)"])
    with open(pidfile, "a") as f:
        f.write(f"{os.getpid()} {child.pid}\\n")
    if mode == "mute":  # started, never answers (not even start_game)
        time.sleep(600)
    for line in sys.stdin:
        events = json.loads(line)
        last = events[-1]
        answer = {"type": "none"}
        if last["type"] == "tsumo" and last["actor"] == seat:
            if mode == "crash" and first_fault():
                sys.stderr.write("boom: the bot fell over\\n")
                sys.exit(3)
            if mode == "hang" and first_fault():
                time.sleep(600)
            if mode == "illegal":  # a pass where a move is due
                answer = {"type": "none"}
            else:
                answer = {"type": "dahai", "actor": seat, "pai": last["pai"], "tsumogiri": True}
        if mode == "garbage":
            print("this is not json", flush=True)
            continue
        print(json.dumps(answer), flush=True)
""")

# A Botzone bot, simple interaction, keep running: PLAY the drawn tile, PASS otherwise. Like
# MJAI_BOT, it hangs once (a hang in every run waited out the limit in each of four games).
BOTZONE_KEEP_BOT = textwrap.dedent("""
    import os, subprocess, sys, time
    mode, pidfile = sys.argv[1], sys.argv[2]
    def first_fault():
        if os.path.exists(pidfile + ".faulted"):
            return False  # it has hung once: it plays well now
        open(pidfile + ".faulted", "w").close()
        return True
    child = subprocess.Popen([sys.executable, "-S", "-c", "import time; time.sleep(600)"])
    with open(pidfile, "a") as f:
        f.write(f"{os.getpid()} {child.pid}\\n")
    def answer(request):
        parts = request.split()
        if parts[0] == "2":
            if mode == "crash":
                sys.exit(2)
            if mode == "hang" and first_fault():
                time.sleep(600)
            return "HU" if mode == "illegal" else "PLAY " + parts[1]
        if mode == "garbage":
            return "what is this"
        return "HU" if mode == "illegal" and parts[0] == "3" else "PASS"
    n = int(sys.stdin.readline())
    requests = [sys.stdin.readline().strip() for _ in range(2 * n - 1)][::2]
    print(answer(requests[-1]))
    print("MARKER", flush=True)
    for line in sys.stdin:
        if line.strip():
            print(answer(line.strip()))
            print("MARKER", flush=True)
""").replace("MARKER", MARKER)

# An NTPU program on stdin/stdout: throws what it drew (the dealer: its 17th tile), passes on
# every offer. Like MJAI_BOT, it crashes or hangs once.
NTPU_BOT = textwrap.dedent("""
    import os, subprocess, sys, time
    mode, pidfile = sys.argv[1], sys.argv[2]
    def first_fault():
        if os.path.exists(pidfile + ".faulted"):
            return False  # it has crashed or hung once: it plays well now
        open(pidfile + ".faulted", "w").close()
        return True
    child = subprocess.Popen([sys.executable, "-S", "-c", "import time; time.sleep(600)"])
    with open(pidfile, "a") as f:
        f.write(f"{os.getpid()} {child.pid}\\n")
    last = None
    for line in sys.stdin:
        parts = line.split()
        if not parts:
            continue
        if parts[0] == "/close":
            break
        if parts[0] == "/ready":
            print("/ready", flush=True)
        elif parts[0] in ("/mo", "/initCard"):
            last = parts[-1]
        elif parts[0] == "/ask":
            if parts[1] == "throw":
                if mode == "crash" and first_fault():
                    sys.exit(4)
                if mode == "hang" and first_fault():
                    time.sleep(600)
                if mode == "garbage":
                    print("what is this", flush=True)
                    continue
                print("/throw " + ("999" if mode == "illegal" else last), flush=True)
            else:
                print("/pass", flush=True)
""")

# One-shot Botzone bots that check their data comes back: they leave the number of turns
# answered, and answer garbage when the next run does not find it.
BOTZONE_ONESHOT_SIMPLE = textwrap.dedent("""
    import sys
    lines = sys.stdin.read().split("\\n")
    n = int(lines[0])
    requests = lines[1:2 * n:2]
    data = lines[2 * n] if len(lines) > 2 * n else ""
    if data != (str(n - 1) if n > 1 else ""):
        print("DATA LOST " + repr(data))
        sys.exit(0)
    parts = requests[-1].split()
    print("PLAY " + parts[1] if parts[0] == "2" else "PASS")
    print("debug line")
    print(n)
""")

BOTZONE_ONESHOT_JSON = textwrap.dedent("""
    import json, sys
    turn = json.loads(sys.stdin.readline())
    n = len(turn["requests"])
    if turn.get("data", "") != (str(n - 1) if n > 1 else ""):
        print(json.dumps({"response": "DATA LOST"}))
        sys.exit(0)
    parts = turn["requests"][-1].split()
    answer = "PLAY " + parts[1] if parts[0] == "2" else "PASS"
    print(json.dumps({"response": answer, "debug": "x", "data": str(n)}))
""")


def _script(tmp_path: Path, name: str, text: str) -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def _arena(variant: str, seat0: str, seed: int = 3, seat_limit: float | None = None,
           hands: int = 1) -> dict[str, Any]:
    config = ArenaConfig(variant, (seat0, "rulebased", "rulebased", "rulebased"), hands=hands,
                         seed=seed, seat_limit=seat_limit)
    return summarize(config, run_arena(config), 1.0)


@pytest.fixture
def short_banner_grace(monkeypatch: pytest.MonkeyPatch) -> None:
    """BANNER_GRACE at 0.05 s, for the in-process arenas (one worker) whose garbage bot
    writes noise where its first answer goes (start_game's answer): the seat then waits the
    grace, once a run, for an answer that never comes (the bot writes nothing until asked
    again) and takes the noise for the answer, which is what these tests count. The outcome
    is the same for any grace; at 2 s it was 8 s of idle waiting a run (four games). Noise
    after a run's first answer (an NTPU throw's) is waited on for the answer's limit.
    tests/test_outside_leftovers.py keeps the real grace where the wait is what it tests."""
    monkeypatch.setattr(seat_module, "BANNER_GRACE", 0.05)


HANG_LIMIT = 0.5  # seconds a hung program is waited for, a turn after its run's first


@pytest.fixture
def short_turns(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each platform's limit for a turn after a run's first (Botzone's 4 s, mjai's 2 s,
    NTPU's 5 s) at :data:`HANG_LIMIT`, for the in-process arenas (one worker) whose bot hangs
    on such a turn, run with the platform's limits (no --seat-limit): the hang is waited out
    for 0.5 s, and a run's start keeps its platform's allowance (Botzone's first turn, 6 s;
    an mjai or NTPU program's first answer, 30 s). A --seat-limit of 0.5 s, as they had,
    bounds the start too (as it does for a user): on a loaded machine (load 16) a Python
    bot took longer to start, and where every run of the arena was late at its start, each
    was killed before it recorded its pids (a test without them to check: not found), and
    the hang was never played."""
    monkeypatch.setattr(botzone_seat, "LATER_LIMIT", HANG_LIMIT)
    monkeypatch.setattr(mjai_seat, "ANSWER_LIMIT", HANG_LIMIT)
    # the TCP seat's module holds mjai's limit by its own name, taken when it is first
    # imported (by a process's first external_seat): imported with this module, not first
    # under the patch, where it kept 0.5 s after the test (see the test below)
    monkeypatch.setattr(mjai_tcp_seat, "ANSWER_LIMIT", HANG_LIMIT)
    monkeypatch.setattr(ntpu_seat, "ANSWER_LIMIT", HANG_LIMIT)


def _all_gone(pidfile: Path) -> list[int]:
    """The recorded processes still alive (a zombie is gone: it only waits to be reaped),
    after giving the system a moment to reap what was killed."""
    pids = [int(p) for line in pidfile.read_text().split("\n") for p in line.split()]
    assert pids

    def alive(pid: int) -> bool:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except (FileNotFoundError, ProcessLookupError, IndexError):
            return False  # ProcessLookupError: reaped between the open and the read
        return state != "Z"

    for _ in range(100):
        left = [p for p in pids if alive(p)]
        if not left:
            return []
        time.sleep(0.05)
    return left


# ---------------------------------------------------------------------- our own programs


def _versus_greedy(variant: str, seat0: str) -> dict[str, Any]:
    config = ArenaConfig(variant, (seat0, "greedy", "greedy", "greedy"), hands=1, seed=7,
                         seat_limit=30)
    return summarize(config, run_arena(config), 1.0)


@functools.cache
def _inside(variant: str) -> dict[str, Any]:
    """rulebased seated in-process against three greedy (_versus_greedy): the figures our own
    program must give as an outside one. Played once a process: riichi's is compared to by
    three tests (the stdin, TCP and eager-reach programs), and the tests only read it."""
    return _versus_greedy(variant, "rulebased")


def _same_figures(inside: dict[str, Any], outside: dict[str, Any], name: str) -> None:
    ours = inside["policies"]["rulebased"]
    theirs = outside["policies"][name]
    assert theirs == ours
    assert outside["policies"]["greedy"] == inside["policies"]["greedy"]
    assert outside["hands"] == inside["hands"] > 0
    assert outside["illegal_actions"] == inside["illegal_actions"] == 0
    assert outside["external_seats"][name] == {
        "late": 0, "crashed": 0, "garbage": 0, "illegal": 0, "restarts": 0,
        "stderr_left_out": 0, "first_fault": None}


def test_mjbot_mjai_as_an_outside_program_plays_as_the_in_process_seat(tmp_path):
    name = f"mjai:{MJBOT} mjai --no-log --policy rulebased"
    inside = _inside("riichi")
    outside = _versus_greedy("riichi", name)
    _same_figures(inside, outside, name)
    assert outside["policies"][name]["decisions"] > 0


def test_mjbot_botzone_as_an_outside_program_plays_as_the_in_process_seat(tmp_path):
    name = f"botzone-keep:{MJBOT} botzone --keep-running --no-log --policy rulebased"
    inside = _inside("mcr")
    outside = _versus_greedy("mcr", name)
    _same_figures(inside, outside, name)


def test_mjbot_mjai_over_tcp_plays_as_the_in_process_seat(tmp_path):
    port = free_port()
    name = f"mjai-tcp:127.0.0.1:{port}"
    # the original mjai server ends a connection with its game: the client runs in a loop
    clients = subprocess.Popen(
        [PY, "-S", "-c",
         "import subprocess, sys\nfor _ in range(4):\n    subprocess.run(sys.argv[1:])",
         PY, "-m", "adapter.cli", "--log-level", "error", "mjai", "--server",
         f"127.0.0.1:{port}", "--no-log"])
    try:
        config = ArenaConfig("riichi", (name, "greedy", "greedy", "greedy"), hands=1, seed=7,
                             seat_limit=30)
        outside = summarize(config, run_arena(config), 1.0)
    finally:
        clients.wait(timeout=60)
    _same_figures(_inside("riichi"), outside, name)


def test_an_mjai_tcp_claim_on_the_discard_after_a_kan_is_kept_across_its_dora():
    """The table shows an added kan's new dora between the replacement's discard and the claims
    on it; over TCP the bot answers the dahai (here a chi) and then the dora (none). The chi
    was counted as an answer 'where nothing goes' and lost, so the seat passed (seed 0, game 1:
    seat 2 adds a kan and discards 3s, seat 3 chis it)."""
    port = free_port()
    client = subprocess.Popen([PY, "-m", "adapter.cli", "--log-level", "error", "mjai",
                               "--server", f"127.0.0.1:{port}", "--no-log"])
    seat = external_seat("riichi", 3, f"mjai-tcp:127.0.0.1:{port}", SeatLimits(connect=30.0))
    players = [seat_for("riichi", s, "rulebased") for s in (0, 1, 2)] + [seat]
    try:
        with capture_logs() as logs:
            outside = play_game(GameConfig("riichi"), players, 0, 1)
    finally:
        for p in players:
            p.close()
        client.wait(timeout=60)
    inside = play_game(GameConfig("riichi"), [seat_for("riichi", s, "rulebased")
                                              for s in range(4)], 0, 1)
    assert [e for e in logs if e.get("event") == "outside program fault"] == []
    assert outside.scores == inside.scores


def test_mjbot_ntpu_as_an_outside_program_plays_as_the_in_process_seat(tmp_path):
    name = f"ntpu:{MJBOT} ntpu --stdio --no-log --policy rulebased"
    inside = _inside("taiwan16")
    outside = _versus_greedy("taiwan16", name)
    _same_figures(inside, outside, name)


def test_the_pypi_mjai_rulebasebot_plays_through_the_seat(tmp_path):
    try:
        import mjai.bot.rulebase  # noqa: F401
    except ImportError:
        pytest.skip("the PyPI mjai package is not installed (pip install -e '.[mjai]' && "
                    "pip install --no-deps mjai==0.2.1, or make bench-mjai)")
    bot = _script(tmp_path, "rulebase_bot.py", textwrap.dedent("""
        import sys
        from loguru import logger
        from mjai.bot.rulebase import RulebaseBot
        logger.remove()
        bot = RulebaseBot(player_id=int(sys.argv[-1]))
        for line in sys.stdin:
            print(bot.react(line.strip()), flush=True)
    """))
    name = f"mjai:{PY} {bot}"
    summary = _arena("riichi", name, seat_limit=30)
    assert summary["games"] == 4 and summary["referee_errors"] == 0
    report = summary["external_seats"][name]
    assert report["crashed"] == report["late"] == report["garbage"] == 0, report
    assert summary["policies"][name]["decisions"] > 0


# ---------------------------------------------------------------------- bad programs


@pytest.mark.parametrize("mode,reason", [("crash", "crashed"), ("hang", "late"),
                                         ("illegal", "illegal"), ("garbage", "garbage")])
def test_a_bad_mjai_bot_is_played_safe_counted_and_killed(tmp_path, mode, reason,
                                                          short_banner_grace, short_turns):
    pidfile = tmp_path / "pids"
    bot = _script(tmp_path, "bot.py", MJAI_BOT)
    name = f"mjai:{BOT_PY} {bot} {mode} {pidfile}"
    with capture_logs() as logs:
        summary = _arena("riichi", name, seat_limit=None if mode == "hang" else 30)
    assert summary["games"] == 4 and summary["referee_errors"] == 0
    assert summary["illegal_actions"] == 0  # the referee never saw the bad answers
    report = summary["external_seats"][name]
    assert report[reason] > 0, report
    assert summary["policies"][name]["fallbacks"] > 0
    assert report["first_fault"].startswith(reason)
    if mode == "crash":
        assert "boom: the bot fell over" in report["first_fault"]
        assert "exit 3" in report["first_fault"]
    if mode in ("crash", "hang"):
        assert report["restarts"] > 0  # a fresh run for the next hand
    faults = [e for e in logs if e["event"] == "outside program fault"]
    assert faults and all(e["program"] == name for e in faults)
    assert {e["reason"] for e in faults} >= {reason}
    if mode in ("illegal", "garbage"):  # what the program sent, as it sent it
        sent = '{"type": "none"}' if mode == "illegal" else "this is not json"
        assert any(sent in e["raw"] for e in faults if e["reason"] == reason)
    assert _all_gone(pidfile) == []


def test_a_good_mjai_bot_has_no_faults_and_leaves_nothing_behind(tmp_path):
    pidfile = tmp_path / "pids"
    bot = _script(tmp_path, "bot.py", MJAI_BOT)
    name = f"mjai:{BOT_PY} {bot} good {pidfile}"
    summary = _arena("riichi", name, seat_limit=30)
    report = summary["external_seats"][name]
    assert {k: v for k, v in report.items() if k != "first_fault"} == dict.fromkeys(
        ("late", "crashed", "garbage", "illegal", "restarts", "stderr_left_out"), 0)
    assert summary["policies"][name]["fallbacks"] == 0
    assert summary["policies"][name]["decisions"] > 0
    assert len(pidfile.read_text().splitlines()) == 4  # one run per game
    assert _all_gone(pidfile) == []


@pytest.mark.parametrize("mode,reason", [("crash", "crashed"), ("hang", "late"),
                                         ("illegal", "illegal"), ("garbage", "garbage")])
def test_a_bad_botzone_bot_is_played_safe_counted_and_killed(tmp_path, mode, reason,
                                                             short_turns):
    pidfile = tmp_path / "pids"
    bot = _script(tmp_path, "bot.py", BOTZONE_KEEP_BOT)
    name = f"botzone-keep:{BOT_PY} {bot} {mode} {pidfile}"
    summary = _arena("mcr", name, seat_limit=None if mode == "hang" else 30)
    assert summary["games"] == 4 and summary["referee_errors"] == 0
    assert summary["illegal_actions"] == 0
    report = summary["external_seats"][name]
    assert report[reason] > 0, report
    if mode == "hang":  # the hang on its draw, not a start that was slow
        assert report["first_fault"] == f"late: no answer within {HANG_LIMIT:g} s", report
    assert summary["policies"][name]["fallbacks"] > 0
    assert _all_gone(pidfile) == []


@pytest.mark.parametrize("mode,reason", [("crash", "crashed"), ("hang", "late"),
                                         ("illegal", "illegal"), ("garbage", "garbage"),
                                         ("good", "")])
def test_an_ntpu_program_is_played_safe_counted_and_killed(tmp_path, mode, reason,
                                                          short_banner_grace, short_turns):
    pidfile = tmp_path / "pids"
    bot = _script(tmp_path, "bot.py", NTPU_BOT)
    name = f"ntpu:{BOT_PY} {bot} {mode} {pidfile}"
    # the hang and the garbage bot's noise where its throw goes are waited on for a later
    # ask's limit (HANG_LIMIT, short_turns) once a hand; a run's start keeps NTPU's 30 s: a
    # --seat-limit of 1 s, as the garbage case had, bounded the start too, and a Python start
    # slower than that under load was late at /ready, hiding the garbage
    summary = _arena("taiwan16", name, seat_limit=None if mode in ("hang", "garbage") else 30)
    assert summary["games"] == 4 and summary["referee_errors"] == 0
    assert summary["illegal_actions"] == 0
    report = summary["external_seats"][name]
    if mode == "good":
        assert report["first_fault"] is None
        assert summary["policies"][name]["fallbacks"] == 0
        assert summary["policies"][name]["decisions"] > 0
    else:
        assert report[reason] > 0, report
        assert summary["policies"][name]["fallbacks"] > 0
    if mode == "garbage":  # the noise at a throw, not a start that was slow
        assert report["late"] == 0, report
    if mode in ("crash", "hang"):
        assert report["restarts"] > 0
    assert _all_gone(pidfile) == []


# Two tests of one pytest run, the first a hang case's fixture and the process's first seat
# (a -k or --lf run of the hang cases, say), the second played after it.
SHORT_TURNS_THEN = textwrap.dedent("""
    from adapter.local.external import external_seat, mjai_seat
    from tests.test_external_seats import short_turns  # noqa: F401 (the fixture)

    def test_a_hang_case(short_turns):
        external_seat("riichi", 0, "mjai-tcp:127.0.0.1:1").close()

    def test_the_next_test():
        from adapter.local.external import mjai_tcp_seat
        assert (mjai_tcp_seat.ANSWER_LIMIT, mjai_seat.ANSWER_LIMIT) == (60.0, 2.0)
""")


def test_short_turns_leaves_mjais_limit_to_the_next_test(tmp_path):
    """The mjai TCP seat's module took mjai's limit by name when it was first imported, which
    a process's first outside seat does: where that seat was a hang case's, under
    short_turns, every mjai-tcp seat of a later test in the process waited 0.5 s for an
    answer, not its platform's (short_turns restored mjai_seat's limit alone). It is
    imported with this module now, and patched and restored with the others; it has its own
    limit now (the mjai server's 60 s), which must come back as well."""
    (tmp_path / "test_then.py").write_text(SHORT_TURNS_THEN)
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}  # one process
    r = subprocess.run([PY, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_then.py"],
                       capture_output=True, text=True, cwd=tmp_path, timeout=120,
                       env={**env, "PYTHONPATH": str(Path(__file__).parents[1])})
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-2000:]
    assert "2 passed" in r.stdout, r.stdout


def test_a_good_botzone_bot_kept_running_has_no_faults(tmp_path):
    pidfile = tmp_path / "pids"
    bot = _script(tmp_path, "bot.py", BOTZONE_KEEP_BOT)
    name = f"botzone-keep:{BOT_PY} {bot} good {pidfile}"
    summary = _arena("mcr", name, seat_limit=30)
    assert summary["external_seats"][name]["first_fault"] is None
    assert summary["policies"][name]["fallbacks"] == 0
    assert len(pidfile.read_text().splitlines()) == 4  # kept running: one run per match
    assert _all_gone(pidfile) == []


def _mcr_game_with_outside_seat_0(name, limit, seed=11):
    """One MCR match (seed 11 unless told) with the outside program ``name`` at seat 0 and
    rulebased at the others, every player closed after it: (the game's result, the outside
    seat)."""
    players = [seat_for("mcr", 0, name, limit)] + [seat_for("mcr", s, "rulebased")
                                                   for s in (1, 2, 3)]
    try:
        result = play_game(GameConfig("mcr"), players, seed, 0)
    finally:
        for p in players:
            p.close()
    return result, players[0]


@pytest.mark.parametrize("kind,text", [("botzone", BOTZONE_ONESHOT_SIMPLE),
                                       ("botzone-json", BOTZONE_ONESHOT_JSON)])
def test_a_one_shot_botzone_bot_gets_the_history_and_its_data_back(tmp_path, kind, text):
    bot = _script(tmp_path, "bot.py", text)
    name = f"{kind}:{BOT_PY} {bot}"
    # seed 0: a hand won after 31 request lines, each a run that checks the data the last
    # left (seed 11, drawn out after 167 lines, started five times as many runs)
    result, seat = _mcr_game_with_outside_seat_0(name, 30.0, seed=0)
    assert len(result.hands) == 1
    assert seat.report.as_dict()["first_fault"] is None, seat.report
    assert seat.tally.decisions > 0 and seat.tally.fallbacks == 0
    assert len(seat.pids) == len(seat.bot.requests) > 10  # a fresh run for every line


# Answers its first turn (simple interaction) and then neither prints the keep-running marker
# nor exits; or, one-shot, answers and does not exit.
BOTZONE_ANSWERS_AND_STAYS = textwrap.dedent("""
    import sys, time
    n = int(sys.stdin.readline())
    for _ in range(2 * n - 1):
        sys.stdin.readline()
    print("PASS", flush=True)
    time.sleep(60)
""")


@pytest.mark.parametrize("kind,ending", [
    ("botzone-keep", f"did not print {MARKER} or exit"), ("botzone", "did not exit")])
def test_a_botzone_bot_that_answers_but_does_not_end_its_turn_is_told_so(tmp_path, kind,
                                                                          ending):
    """Botzone waits for the marker (kept running) or the exit (one-shot) and then judges
    TLE: the fault said 'no answer within 0.77 s' (the time left, not the limit) to a bot
    that had answered at once, hiding its mistake."""
    bot = _script(tmp_path, "bot.py", BOTZONE_ANSWERS_AND_STAYS)
    name = f"{kind}:{BOT_PY} {bot}"
    report = _mcr_game_with_outside_seat_0(name, 0.5)[1].report
    assert report.late == 1, report
    assert report.first == f"late: answered 'PASS' but {ending} within 0.5 s", report.first


# Kept running; claims every W1 / W2 the seat before it discards with 'CHI W1 t' (a chow
# whose middle has no tile below it).
BOTZONE_CHI_W1 = textwrap.dedent("""
    import sys
    me = None
    def answer(req):
        global me
        p = req.split()
        if p[0] == "0":
            me = int(p[1])
        if p[0] == "2":
            return "PLAY " + p[1]
        if p[0] == "3" and p[2] in ("PLAY", "PENG", "CHI") and (int(p[1]) + 1) % 4 == me \\
                and p[-1] in ("W1", "W2"):
            return "CHI W1 " + p[-1]
        return "PASS"
    n = int(sys.stdin.readline())
    lines = [sys.stdin.readline().strip() for _ in range(2 * n - 1)]
    print(answer(lines[-1]))
    print(">>>BOTZONE_REQUEST_KEEP_RUNNING<<<", flush=True)
    for line in sys.stdin:
        if line.strip():
            print(answer(line.strip()))
            print(">>>BOTZONE_REQUEST_KEEP_RUNNING<<<", flush=True)
""")


def test_a_chi_with_no_chow_of_the_discard_is_played_safe_not_a_referee_error(tmp_path):
    """On these walls the bot may chow a W2 and answers 'CHI W1 W2': the game ended in a
    referee error (TileError: not a tile: -1) and its figures were lost."""
    bot = _script(tmp_path, "bot.py", BOTZONE_CHI_W1)
    name = f"botzone-keep:{BOT_PY} {bot}"
    summary = _arena("mcr", name, seed=6)
    assert summary["referee_errors"] == 0 and summary["games"] == 4
    report = summary["external_seats"][name]
    assert report["garbage"] > 0 and "no chow with that middle" in report["first_fault"]


# ---------------------------------------------------------------------- the command


def _refusal(capsys, *args: str) -> tuple[int, str]:
    """``mjbot ARGS`` run in this process (a refusal comes before any program or game is
    started, so a process of its own showed nothing more): its exit status and stderr."""
    r = mjbot_here(capsys, *args)  # argparse's usage errors: their exit status
    return r.returncode, r.stderr


def test_a_platform_for_another_variant_is_refused_in_one_line(capsys):
    status, err = _refusal(capsys, "arena", "--variant", "mcr", "--policies",
                           f"mjai:{PY} bot.py,rulebased,rulebased,rulebased", "--hands", "1")
    assert status == 2
    assert err.strip().count("\n") == 0
    assert "plays riichi, not mcr" in err
    status, err = _refusal(capsys, "selfplay", "--variant", "riichi", "--policies",
                           f"botzone:{PY} bot.py,rulebased,rulebased,rulebased", "--out", "x")
    assert status == 2 and "plays mcr, not riichi" in err


def test_a_missing_program_is_refused_in_one_line(capsys):
    status, err = _refusal(capsys, "arena", "--policies",
                           "mjai:/no/such/bot,rulebased,rulebased,rulebased", "--hands", "1")
    assert status == 2
    assert "no program '/no/such/bot'" in err
    assert "Traceback" not in err
    status, err = _refusal(capsys, "arena", "--policies", "mjai:,rulebased,rulebased,rulebased")
    assert status == 2 and "no command after mjai:" in err
    status, err = _refusal(capsys, "botzone", "--policy", f"mjai:{PY}")  # no policy
    assert status == 2 and "unknown policy" in err


def test_a_faulty_program_fails_the_run_past_the_fallback_share(tmp_path, capsys):
    pidfile = tmp_path / "pids"
    bot = _script(tmp_path, "bot.py", MJAI_BOT)
    name = f"mjai:{BOT_PY} {bot} illegal {pidfile}"
    out = tmp_path / "a.json"
    done = mjbot_here(capsys, "--log-level", "error", "arena", "--policies",
                      f"{name},rulebased,rulebased,rulebased", "--hands", "1", "--no-log",
                      "--json", str(out))
    assert done.returncode == 1
    assert f"policy {name} fell back" in done.stderr
    assert f"{name} (outside program): late 0, crashed 0, garbage 0, illegal" in done.stdout
    assert json.loads(out.read_text())["external_seats"][name]["illegal"] > 0
    assert _all_gone(pidfile) == []


def test_selfplay_records_an_outside_program(tmp_path, capsys):
    pidfile = tmp_path / "pids"
    bot = _script(tmp_path, "bot.py", MJAI_BOT)
    name = f"mjai:{BOT_PY} {bot} good {pidfile}"
    done = mjbot_here(capsys, "--log-level", "error", "selfplay", "--policies",
                      f"{name},rulebased,rulebased,rulebased", "--hands", "1",
                      "--out", str(tmp_path / "ds"), "--json")
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    assert summary["fallbacks"][name]["decisions"] > 0
    assert summary["fallbacks"][name]["fallbacks"] == 0
    assert os.listdir(tmp_path / "ds")
    assert _all_gone(pidfile) == []


def test_selfplay_reports_an_outside_programs_faults(tmp_path, capsys):
    """Self-play printed and kept only the fallbacks: an outside program's garbage lines
    (a debug print on stdout, its answer still played, so no fallback), late answers and
    crashes were nowhere in its text or the dataset's manifest. It now prints the arena's
    line per program and keeps the counts in the manifest under ``external_seats``."""
    bot = _script(tmp_path, "chatty.py", MJAI_CHATTY)
    name = f"chatty=mjai:{BOT_PY} {bot} buffered"
    done = mjbot_here(capsys, "--log-level", "error", "selfplay", "--policies",
                      f"{name},rulebased,rulebased,rulebased", "--hands", "1",
                      "--out", str(tmp_path / "ds"), "--seat-limit", "30")
    assert done.returncode == 0, done.stderr
    manifest = json.loads((tmp_path / "ds" / "manifest.json").read_text())
    report = manifest["external_seats"]["chatty"]
    assert report["garbage"] == manifest["games"] and report["illegal"] == 0, report
    assert (f"chatty (outside program): late 0, crashed 0, garbage {manifest['games']}, "
            "illegal 0, restarts 0; first: garbage") in done.stdout
    greedy = mjbot_here(capsys, "--log-level", "error", "selfplay", "--policies",
                        "greedy,rulebased,rulebased,rulebased", "--hands", "1",
                        "--out", str(tmp_path / "ours"))
    assert greedy.returncode == 0, greedy.stderr  # no outside program: no such key
    assert "external_seats" not in json.loads((tmp_path / "ours" / "manifest.json").read_text())


# An mjai bot that plays tsumogiri but never flushes its output: every answer sits in its
# stdout buffer, whatever PYTHONUNBUFFERED says (the classic first bug of a pipe bot).
MJAI_UNFLUSHED = textwrap.dedent("""
    import io, json, sys
    seat = int(sys.argv[-1])
    out = io.TextIOWrapper(open(1, "wb", buffering=65536, closefd=False), write_through=False)
    for line in sys.stdin:
        last = json.loads(line)[-1]
        answer = {"type": "none"}
        if last["type"] == "tsumo" and last["actor"] == seat:
            answer = {"type": "dahai", "actor": seat, "pai": last["pai"], "tsumogiri": True}
        out.write(json.dumps(answer) + "\\n")
""")


def test_a_program_that_never_flushes_is_told_it_may_be_why(tmp_path):
    """A bot that printed its answers without flushing them (block-buffered on a pipe) got
    'late: no answer within 30 s at its start' and nothing more: the same words as a bot
    that hangs, for the commonest mistake of a first pipe bot. A run late with its first
    answer is now said to look so too when its output is not flushed."""
    bot = _script(tmp_path, "bot.py", MJAI_UNFLUSHED)
    name = f"mjai:{BOT_PY} {bot}"
    # a short limit: it is waited out once a game whatever it is (nothing is ever flushed)
    summary = _arena("riichi", name, seat_limit=0.5)
    report = summary["external_seats"][name]
    assert report["late"] == summary["games"], report
    first = summary["policies"][name]["first_fallback"]
    assert "at its start" in first and "flush" in first, first


# A kept-running Botzone bot that passes but never flushes: its answer and the keep-running
# marker sit in its stdout buffer (the input stays open, so no exit flushes them).
BOTZONE_KEEP_UNFLUSHED = textwrap.dedent("""
    import io, sys
    out = io.TextIOWrapper(open(1, "wb", buffering=65536, closefd=False), write_through=False)
    for line in sys.stdin:
        out.write("PASS\\nMARKER\\n")
""").replace("MARKER", MARKER)


def test_a_kept_botzone_program_that_never_flushes_is_told_it_may_be_why(tmp_path):
    """The flush hint reached mjai and NTPU runs late at their start, never a kept Botzone
    run, which is asked nothing until its first turn: a bot whose answers sat in its output
    buffer got 'late: no answer within 6 s', a hang's words, each hand. A kept run late
    with its first turn's answer now gets the hint too."""
    bot = _script(tmp_path, "bot.py", BOTZONE_KEEP_UNFLUSHED)
    name = f"botzone-keep:{BOT_PY} {bot}"
    # a short limit: it is waited out once a game whatever it is (nothing is ever flushed)
    summary = _arena("mcr", name, seat_limit=0.5)
    assert summary["external_seats"][name]["late"] >= summary["games"], summary
    first = summary["policies"][name]["first_fallback"]
    assert first.startswith("late: no answer within 0.5 s") and "flush" in first, first


def test_an_outside_programs_answer_times_are_in_the_thinking_figures(tmp_path):
    """The arena's thinking line and JSON timed only our own policies: the author of an
    outside bot saw no mean or p99 of its answers beside the platform's limit (mjai's 2 s),
    though the seat times each answer for the game log. Its decisions are now timed there
    as a policy's are (a safe play while it is down is no answer of its own: not timed)."""
    # slow (0.02 s) on every fifth draw: a fifth of its answers is past the p99 (it slept
    # on every draw, 357 times, 7 s of the test's idle waiting)
    bot = _script(tmp_path, "bot.py", MJAI_CHATTY.replace(
        "draws += 1", "draws += 1; time.sleep(0.02 if draws % 5 == 0 else 0)"))
    name = f"slow=mjai:{BOT_PY} {bot} buffered"
    config = ArenaConfig("riichi", (name, "rulebased", "rulebased", "rulebased"), hands=1,
                         seed=3, seat_limit=30)
    summary = summarize(config, run_arena(config), 1.0)
    timed = summary["thinking"]["slow"]
    assert timed["timed_decisions"] == summary["policies"]["slow"]["decisions"] > 0, timed
    assert 0.02 <= timed["max_s"] < 30 and timed["p99_s"] >= 0.02, timed
    text = format_summary(summary)
    assert "slow " in text.split("thinking per decision: ")[1].splitlines()[0]


def test_a_listening_seat_is_refused_where_it_cannot_listen_alone(capsys):
    tcp = "mjai-tcp:127.0.0.1:11601"
    status, err = _refusal(capsys, "arena", "--policies", f"{tcp},{tcp},rulebased,rulebased",
                           "--hands", "1")
    assert status == 2 and "one seat per listening address" in err
    status, err = _refusal(capsys, "arena", "--policies", f"{tcp},rulebased,rulebased,rulebased",
                           "--workers", "2", "--hands", "1")
    assert status == 2 and "one game at a time" in err
    status, err = _refusal(capsys, "arena", "--policies",
                           "mjai-tcp:nowhere,rulebased,rulebased,rulebased")
    assert status == 2 and "mjai-tcp needs HOST:PORT" in err


@pytest.mark.parametrize("port", ["\u00b2", "\u0661\u0662", "0", "65536", "9" * 5000])
def test_a_listening_seats_port_that_is_no_port_is_one_line(capsys, port):
    """A superscript two or Arabic-Indic digits (digits to str.isdigit, not to int()) printed
    int()'s "invalid literal", a 5,000-digit port int()'s 4,300-digit limit (or, for
    '١٢', listened on port 12): each is the seat's own one line now."""
    status, err = _refusal(capsys, "arena", "--policies",
                           f"mjai-tcp:127.0.0.1:{port},rulebased,rulebased,rulebased")
    assert status == 2 and "mjai-tcp needs HOST:PORT" in err, err
    assert "int()" not in err and "Exceeds the limit" not in err and err.count("\n") == 1


# ---------------------------------------------------------------------- never answering


def test_a_program_that_never_starts_costs_the_seat_limit_once_a_game(tmp_path, capsys):
    """--seat-limit bounds the first answer too, and a run that failed its start is not
    started again that game: 4 games, 4 runs, 4 late starts (not 16 waits of 30 s). The
    limit is short: the bot never answers, so any limit is waited out once a game."""
    pidfile = tmp_path / "pids"
    bot = _script(tmp_path, "bot.py", MJAI_BOT)
    name = f"mjai:{BOT_PY} {bot} mute {pidfile}"
    out = tmp_path / "a.json"
    done = mjbot_here(capsys, "--log-level", "error", "arena", "--policies",
                      f"{name},rulebased,rulebased,rulebased", "--hands", "1", "--no-log",
                      "--seat-limit", "0.25", "--json", str(out))
    assert "Traceback" not in done.stderr
    summary = json.loads(out.read_text())
    report = summary["external_seats"][name]
    assert (report["late"], report["crashed"], report["restarts"]) == (4, 0, 0), report
    assert report["first_fault"].startswith("late: no answer within 0.25 s")
    assert summary["games"] == 4 and summary["referee_errors"] == 0
    assert summary["policies"][name]["fallbacks"] == summary["policies"][name]["decisions"] > 0
    # at most one run a game (a second would add a line); a run may be ended with its one-hand
    # game before it got as far as its line (two Python starts under its keeper on a loaded
    # machine: seen once, 3 lines), so not always exactly 4
    assert 1 <= len(pidfile.read_text().splitlines()) <= 4
    assert _all_gone(pidfile) == []


def _cli(*args: str) -> subprocess.Popen[str]:
    """``mjbot ARGS`` in its own session (signals reach only it), Ctrl-C not ignored."""
    return subprocess.Popen(
        [PY, "-m", "adapter.cli", "--log-level", "error", *args], stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True, start_new_session=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))


def _wait_for_file(path: Path, proc: subprocess.Popen[str], lines: int = 1,
                   settle: float = 0.3) -> None:
    """Until ``path`` holds ``lines`` whole lines (the program's pids: all it started runs),
    then ``settle`` seconds more (the arena is then waiting for its answer)."""
    deadline = time.monotonic() + 60
    while not (path.exists() and path.read_text().count("\n") >= lines):
        assert time.monotonic() < deadline and proc.poll() is None, proc.stderr
        time.sleep(0.05)
    time.sleep(settle)


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_stops_one_process_while_a_program_is_awaited(tmp_path, signum):
    """One process, a mute program within its 30 s start-up allowance: the stop does not
    wait for it (nor for the three more runs of the game), and nothing is left running."""
    pidfile = tmp_path / "pids"
    bot = _script(tmp_path, "bot.py", MJAI_BOT)
    proc = _cli("arena", "--policies",
                f"mjai:{BOT_PY} {bot} mute {pidfile},rulebased,rulebased,rulebased",
                "--hands", "1", "--no-log")
    try:
        _wait_for_file(pidfile, proc)
        proc.send_signal(signum)
        _, err = proc.communicate(timeout=25)  # under the 30 s the program would be given
    finally:
        proc.kill()
    assert proc.returncode == 128 + signum, err
    assert "stopped (SIG" in err and "no figures" in err
    assert "Traceback" not in err
    assert _all_gone(pidfile) == []


# An mjai bot whose helper leaves its process group as a daemon does (a double fork, setsid)
# and records its pid, as the bot does its own; the bot then plays (tsumogiri), crashes on
# the first draw any of its runs is asked to play (once, as MJAI_BOT: a crash in every run
# restarted it every hand), or never answers (mute). argv: MODE PIDFILE ... SEAT.
DAEMON_BOT = textwrap.dedent("""
    import json, os, sys, time
    mode, pidfile, seat = sys.argv[1], sys.argv[2], int(sys.argv[-1])
    ready, written = os.pipe()
    helper = os.fork()
    if helper == 0:
        os.setsid()
        if os.fork():
            os._exit(0)  # the daemon's parent exits: the daemon is re-parented
        with open(pidfile, "a") as f:
            f.write(f"{os.getpid()}\\n")
        os.write(written, b"x")  # recorded: the bot may go on
        null = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):
            os.dup2(null, fd)  # holds none of the bot's pipes
        time.sleep(600)
        os._exit(0)
    os.waitpid(helper, 0)
    os.read(ready, 1)
    with open(pidfile, "a") as f:
        f.write(f"{os.getpid()}\\n")
    if mode == "mute":
        time.sleep(600)
    for line in sys.stdin:
        last = json.loads(line)[-1]
        answer = {"type": "none"}
        if last["type"] == "tsumo" and last["actor"] == seat:
            if mode == "crash" and not os.path.exists(pidfile + ".faulted"):
                open(pidfile + ".faulted", "w").close()
                sys.exit(3)
            answer = {"type": "dahai", "actor": seat, "pai": last["pai"], "tsumogiri": True}
        print(json.dumps(answer), flush=True)
""")


@pytest.mark.parametrize("mode", ["good", "crash"])
def test_a_daemon_a_program_started_does_not_outlive_the_arena(tmp_path, mode):
    """A helper that leaves the program's process group (setsid after a double fork, as a
    daemon does) escaped the group kill and ran on after the arena, one more every game: a
    long run filled the machine with them. The keeper, a subreaper, ends it with the run."""
    pidfile = tmp_path / "pids"
    bot = _script(tmp_path, "bot.py", DAEMON_BOT)
    name = f"mjai:{BOT_PY} {bot} {mode} {pidfile}"
    summary = _arena("riichi", name, seat_limit=30)
    assert summary["games"] == 4 and summary["referee_errors"] == 0
    report = summary["external_seats"][name]
    if mode == "crash":
        assert report["crashed"] > 0 and "(exit 3)" in report["first_fault"], report
    else:
        assert report["crashed"] == 0 and summary["policies"][name]["fallbacks"] == 0
    pids = [int(p) for p in pidfile.read_text().split()]
    assert len(pids) >= 8  # a bot and its helper a run, every helper a daemon
    try:
        assert _all_gone(pidfile) == []
    finally:
        for pid in pids:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)


@pytest.mark.parametrize("workers,killed", [(1, "run"), (2, "run"), (2, "group")])
@pytest.mark.parametrize("kind", ["child", "daemon"])
def test_no_program_outlives_an_arena_that_is_killed(tmp_path, workers, killed, kind):
    """SIGKILL cannot be answered: the kernel signals the program's keeper when the arena
    (one process) or the worker that runs it dies, and the keeper ends all the program
    started: a child in its group, or a daemon that left it. With workers, the run's
    process alone killed (``kill -9 PID``) has each worker sent SIGTERM by the kernel, and
    the worker ends its programs' keepers itself, so the keeper's own signal is not needed
    there (these cases passed with it removed); killed with its workers (``kill -9`` to its
    process group, as a terminal's or an OOM kill of the lot), no process of ours can answer,
    and only the keeper's signal ends the program."""
    pidfile = tmp_path / "pids"
    bot = _script(tmp_path, "bot.py", MJAI_BOT if kind == "child" else DAEMON_BOT)
    proc = _cli("arena", "--policies", f"mjai:{BOT_PY} {bot} mute {pidfile},rulebased,rulebased,"
                "rulebased",
                "--hands", "1", "--no-log", "--workers", str(workers))
    with _nothing_of_the_arena_left(proc, pidfile):
        try:  # killed once every process of the program runs: what the arena does is not
            _wait_for_file(pidfile, proc, lines=1 if kind == "child" else 2, settle=0)
        finally:  # the point
            if killed == "group":  # the run and its workers at once (the programs have
                _kill_group(proc)  # their own)
            proc.kill()
            proc.wait(timeout=30)  # not its pipes: a worker that outlived it would hold them
            for stream in (proc.stdout, proc.stderr):
                assert stream is not None
                stream.close()
        assert _all_gone(pidfile) == []


def _kill_group(proc: subprocess.Popen[str]) -> None:
    """SIGKILL to the process group of ``proc`` (started in a session of its own: the arena's
    run and its workers; its programs have groups of their own), quiet where none of it is
    left: an arena that died early (before it recorded its pids) raised ProcessLookupError
    here, on top of the failure that said why. Its pgid is not given to a new process while
    a worker of the group lives."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)


@contextlib.contextmanager
def _nothing_of_the_arena_left(proc: subprocess.Popen[str], pidfile: Path) -> Iterator[None]:
    """Whatever the body raises, nothing of the arena ``proc`` is left after it: its process
    group (a case that kills the run alone left its workers running when it failed, 25
    minutes once) and the program processes it recorded, which a pidfile never written
    (the arena died first) does not turn into a FileNotFoundError over the failure."""
    try:
        yield
    finally:
        _kill_group(proc)
        proc.kill()
        proc.wait(timeout=30)
        recorded = pidfile.read_text().split() if pidfile.exists() else []
        for pid in [int(p) for p in recorded]:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)


def _in_group(pgid: int) -> list[int]:
    """The live processes (not zombies) of process group ``pgid``."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue  # gone between the listing and the read
        if int(fields[2]) == pgid and fields[0] != "Z":
            found.append(int(stat.parent.name))
    return found


def _left_in_group(pgid: int) -> list[int]:
    """:func:`_in_group`, after giving the system a moment to end and reap what was killed."""
    for _ in range(100):
        if not (left := _in_group(pgid)):
            return []
        time.sleep(0.05)
    return left


def test_a_killed_arena_case_that_fails_leaves_nothing_and_says_its_own_failure(tmp_path):
    """The cleanup of the killed-arena cases. An arena that dies before its program records
    its pids: the case's own assertion (it ended early) comes out, not ProcessLookupError
    from killing a group already gone nor FileNotFoundError from the pidfile. A case that
    fails while the arena runs, its workers not ending with it: none of them is left."""
    pidfile = tmp_path / "pids"
    early = _cli("arena", "--policies", "nosuchpolicy,rulebased,rulebased,rulebased",
                 "--hands", "1", "--no-log", "--workers", "2")
    with pytest.raises(AssertionError), _nothing_of_the_arena_left(early, pidfile):
        _wait_for_file(pidfile, early)
    assert early.returncode == 2 and not pidfile.exists()

    bot = _script(tmp_path, "bot.py", MJAI_BOT)
    proc = _cli("arena", "--policies", f"mjai:{BOT_PY} {bot} mute {pidfile},rulebased,rulebased,"
                "rulebased", "--hands", "4", "--no-log", "--workers", "2")
    with pytest.raises(RuntimeError), _nothing_of_the_arena_left(proc, pidfile):
        _wait_for_file(pidfile, proc, settle=0)
        workers = [pid for pid in _in_group(proc.pid) if pid != proc.pid]
        assert len(workers) >= 2, workers
        # frozen: workers that do not end with the run, as in the -2-run cases that failed
        # with die_with_parent taken out of worker_signals (their workers ran on 25 minutes)
        for pid in workers:
            os.kill(pid, signal.SIGSTOP)
        raise RuntimeError("a check of the case failed")
    assert _left_in_group(proc.pid) == []
    assert _all_gone(pidfile) == []


def test_a_listening_seat_with_no_client_says_so_and_answers_a_signal():
    port = free_port()
    proc = _cli("arena", "--policies", f"mjai-tcp:127.0.0.1:{port},rulebased,rulebased,"
                "rulebased", "--hands", "1", "--no-log")
    try:
        assert proc.stderr is not None
        deadline = time.monotonic() + 60
        said = ""
        while "waiting for an mjai client" not in said:
            assert time.monotonic() < deadline and proc.poll() is None, said
            if select.select([proc.stderr], [], [], 1.0)[0]:
                said += proc.stderr.readline()
        assert f"on 127.0.0.1:{port} (up to 60 s)" in said
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=25)
    finally:
        proc.kill()
    assert proc.returncode == 128 + signal.SIGTERM, err
    assert "stopped (SIGTERM)" in err and "Traceback" not in err


def test_a_listening_seat_with_no_client_ends_the_run_in_one_line():
    port = free_port()
    # no client ever comes: the wait is short, as it is waited out whole
    seat = external_seat("riichi", 0, f"mjai-tcp:127.0.0.1:{port}", SeatLimits(connect=0.25))
    players = [seat] + [seat_for("riichi", s, "rulebased") for s in (1, 2, 3)]
    try:
        with pytest.raises(NoClient) as raised:
            play_game(GameConfig("riichi"), players, 3, 0)
    finally:
        for p in players:
            p.close()
    assert str(raised.value) == (f"no mjai client connected to 127.0.0.1:{port} within 0.25 s "
                                 f"(start one, e.g. mjbot mjai --server 127.0.0.1:{port})")


def test_a_helper_in_the_programs_group_goes_though_its_keeper_was_killed(tmp_path):
    """A keeper killed outright (SIGKILL: by the OOM killer, or a user) takes its program with
    it, but a helper the program started in its own group lived on, since ``close`` skipped
    the group kill wherever a keeper had exited. Now what is left of the group goes too."""
    pidfile = tmp_path / "pids"
    script = ("import subprocess, sys, time\n"
              "child = subprocess.Popen([sys.executable, '-S', '-c',\n"
              "                          'import time; time.sleep(600)'])\n"
              f"open({str(pidfile)!r}, 'w').write(str(child.pid))\n"
              "print('ready', flush=True)\n"
              "time.sleep(600)\n")
    proc = LineProcess([sys.executable, "-S", "-c", script])
    try:
        assert proc.read_line(30) == "ready"
        if proc.kept:
            os.kill(proc.pid, signal.SIGKILL)  # the keeper
            proc.proc.wait(timeout=30)
    finally:
        proc.close(grace=0.1)
    assert _all_gone(pidfile) == []


def test_a_program_that_stops_reading_its_input_is_late_not_a_hang():
    """A pipe holds 64 KB: a Botzone history or a stream of mjai events sent to a program
    that never reads them blocked the write, and the table, for ever. The write now has a
    limit, and what was left unsent is said."""
    proc = LineProcess([sys.executable, "-S", "-c", "import time; time.sleep(60)"])
    try:
        with pytest.raises(SeatFault) as fault:
            proc.send("x" * 300_000, limit=0.5)
        assert fault.value.reason == "late" and "did not read its input for 0.5 s" in str(
            fault.value)
    finally:
        proc.close(grace=0.1)
    reader = LineProcess([sys.executable, "-S", "-c", "import sys; n = len(sys.stdin.read()); "
                          "print(n)"])
    try:
        reader.send("y" * 300_000 + "\n", limit=30)  # one that reads takes it all
        reader.end_input()
        assert reader.read_line(30) == "300001"
    finally:
        reader.close()


# Writes file argv[1] to stdout in pieces of 1, 2, 3 ... 7 bytes: lines cut anywhere across
# the reads of the seat.
PIECES = ("import os, sys\n"
          "data, at, size = open(sys.argv[1], 'rb').read(), 0, 1\n"
          "while at < len(data):\n"
          "    os.write(1, data[at:at + size]); at += size; size = size % 7 + 1\n")


def test_a_programs_lines_are_read_whole_however_its_output_is_cut(tmp_path):
    """The lines of a pipeful are split once (taking one at a time off the buffer copied the
    rest of it each time: seconds of CPU for 1 MB of empty lines); each line comes whole,
    in order, however the writes cut it: empty lines, CRLF ends, 100k empty lines at once,
    and a last line without its newline before the end of output."""
    data = (b"a\r\n\nlong " + b"x" * 70_000 + b"\n" + "\u00e9\r\n".encode() + b"\n" * 100_000
            + b"bc\nlast")
    (tmp_path / "out").write_bytes(data)
    proc = LineProcess([sys.executable, "-S", "-c", PIECES, str(tmp_path / "out")])
    try:
        got = []
        while (line := proc.read_line(30)) is not None:
            got.append(line)
    finally:
        proc.close()
    assert got[:4] == ["a", "", "long " + "x" * 70_000, "\u00e9"]
    assert got[4:] == [""] * 100_000 + ["bc", "last"]
    flood = LineProcess([sys.executable, "-S", "-c", "import sys\n"
                         "sys.stdout.write('one\\n' + '\\n' * 100_000 + 'two\\nthr')"])
    try:
        assert flood.read_line(30) == "one"
        flood.end_input()
        assert flood.proc.wait(30) == 0
        assert flood.waiting_lines(2) == (["", ""], 100_001)
        assert flood.read_line(30) == "thr" and flood.read_line(30) is None
    finally:
        flood.close()


# ---------------------------------------------------------------------- figures = the logs


def _logged_tally(log_dir: Path, name: str) -> tuple[int, int]:
    """(decisions, fallbacks) of seat ``name`` as its game logs hold them: its answered
    requests with more than one legal action, and those with a fallback (each with its kind,
    FallbackKind's value, in the frame: a program's fault as the seat counted it)."""
    decisions = fallbacks = 0
    for path in sorted(log_dir.rglob("*.mjlog*")):
        log = read_log(path)
        assert log.header is not None
        players = log.header.extra["players"]
        for frame in log.decisions():
            if players[frame.seat] == name and len(frame.legal) > 1:
                decisions += 1
                fallbacks += bool(frame.fallback)
                assert (frame.fallback_kind in ("late", "failed", "illegal")) \
                    == bool(frame.fallback), frame
    return decisions, fallbacks


@pytest.mark.parametrize("variant,kind,text", [
    ("mcr", "botzone-keep", BOTZONE_KEEP_BOT), ("riichi", "mjai", MJAI_BOT)])
def test_a_bots_decisions_and_fallbacks_are_those_its_game_logs_hold(tmp_path, variant, kind,
                                                                     text, short_banner_grace):
    """A bot that writes garbage on the lines that ask it for no move (Botzone's PASS
    lines, mjai's start_game / end_kyoku) had each such line counted as a decision and a
    fallback: its decisions grew with its faults (a keep-running Botzone bot that plays every
    draw itself read ~85% fallbacks), and the arena's figures were no longer those of its
    game logs. Those faults stay in the program's report; the tally is its decisions."""
    bot = _script(tmp_path, "bot.py", text)
    name = f"{kind}:{BOT_PY} {bot} garbage {tmp_path / 'pids'}"
    good = f"{kind}:{BOT_PY} {bot} good {tmp_path / 'pids'}"
    figures = {}
    for seat0, logs in ((name, tmp_path / "bad"), (good, tmp_path / "good")):
        config = ArenaConfig(variant, (seat0, "rulebased", "rulebased", "rulebased"),
                             hands=1, seed=3, seat_limit=30, log_dir=str(logs))
        summary = summarize(config, run_arena(config), 1.0)
        ours = summary["policies"][seat0]
        assert (ours["decisions"], ours["fallbacks"]) == _logged_tally(logs, seat0)
        figures[seat0] = (summary, ours)
    (bad, bad_ours), (_, good_ours) = figures[name], figures[good]
    assert bad["external_seats"][name]["garbage"] > 0  # still counted, as faults
    assert bad_ours["decisions"] == good_ours["decisions"] > 0  # the same requests
    if variant == "mcr":  # it plays each of its draws: garbage only where PASS goes
        assert bad_ours["fallbacks"] < bad_ours["decisions"]


# Kept running, JSON interaction: every answer is text Botzone cannot read as JSON.
BOTZONE_KEEP_JSON_GARBAGE = textwrap.dedent("""
    import sys
    for line in sys.stdin:
        if line.strip():
            print("{not json")
            print("MARKER", flush=True)
""").replace("MARKER", MARKER)


def test_an_unreadable_json_answer_is_one_garbage_fault_named_as_such(tmp_path):
    """A JSON-interaction bot whose answer is no JSON was counted twice, garbage on the line
    and then 'illegal: no answer to read' on the decision, which named that as the fallback's
    reason: a bot that never answered illegally read 'illegal 56'."""
    bot = _script(tmp_path, "bot.py", BOTZONE_KEEP_JSON_GARBAGE)
    name = f"botzone-keep-json:{BOT_PY} {bot}"
    seat = _mcr_game_with_outside_seat_0(name, 30.0)[1]
    assert seat.report.illegal == 0, seat.report
    # one fault per line, the match's last answer too (no decision or later line reads it)
    assert seat.report.garbage == len(seat.bot.requests), (seat.report, len(seat.bot.requests))
    assert seat.tally.decisions > 0 and seat.tally.fallbacks == seat.tally.decisions
    assert seat.tally.first.startswith("garbage: not JSON"), seat.tally.first


# A Botzone bot (argv: simple|json, 0|1 kept running, EXTRA) that plays what it draws, PASS
# otherwise, and on its third draw prints more than its answer, as EXTRA says: "before", a
# debug line before it; "after", debug, data and two globaldata lines after it (simple;
# a one-shot run checks its data came back); "aftermarker", a debug line after its
# keep-running marker; "twice", after its marker a second answer (PASS) and marker;
# "nonjson", a debug line before its JSON object; "two", the object twice; "blank", a blank
# line after it; "pretty", the object over several lines (indented); "loop", after its marker
# PASS and a marker without end (a loop that forgot to read its input). A turn's lines
# leave in one write (its flush), whatever PYTHONUNBUFFERED says (this machine's environment
# sets it, and print then writes each piece on its own): a turn printed twice is in the pipe
# whole before the next request goes. Printed piece by piece, a loaded machine could send
# that request between the pieces, and a turn that comes after the next request is that
# request's answer to the seat, as to Botzone (nothing tells the two apart): the seat was
# then one answer behind the bot for as long as the bot answered after the next request.
BOTZONE_EXTRA_OUTPUT = textwrap.dedent("""
    import json, sys
    sys.stdout = open(1, "w", buffering=1 << 16, closefd=False)  # written at each flush
    io, keep, extra = sys.argv[1], sys.argv[2] == "1", sys.argv[3]
    requests = []
    def turn(request, data):
        requests.append(request)
        n, parts = len(requests), request.split()
        if not keep and n > 1 and extra == "after" and data != "data" + str(n - 1):
            print("DATA LOST " + repr(data), flush=True)
            sys.exit(0)
        answer = "PLAY " + parts[1] if parts[0] == "2" else "PASS"
        draws = sum(r.startswith("2 ") for r in requests)
        odd = extra if parts[0] == "2" and draws == 3 else ""
        if odd in ("before", "nonjson"):
            print("debug: before")
        if io == "simple":
            print(answer)
            if extra == "after":  # every turn: data must come back each time
                print("debug line", "data" + str(n), "global 1", "global 2", sep="\\n")
        else:
            obj = {"response": answer, "data": "data" + str(n)}
            print(json.dumps(obj, indent=2 if odd == "pretty" else None))
            if odd in ("two", "blank"):
                print(json.dumps(obj) if odd == "two" else "")
        if keep:
            print("MARKER")
            if odd == "aftermarker":
                print("debug: after marker")
            if odd == "twice":  # a second answer, its own turn, answering nothing
                print("PASS" if io == "simple" else json.dumps({"response": "PASS"}))
                print("MARKER")
            while odd == "loop":  # 1000 turns a write
                print((("PASS" if io == "simple" else json.dumps({"response": "PASS"}))
                       + "\\nMARKER\\n") * 1000, end="")
        sys.stdout.flush()
    if io == "simple":
        n = int(sys.stdin.readline())
        history = [sys.stdin.readline().strip() for _ in range(2 * n - 1)]
        requests.extend(history[:-1:2])
        turn(history[-1], sys.stdin.readline().rstrip("\\n"))
    else:
        first = json.loads(sys.stdin.readline())
        requests.extend(first["requests"][:-1])
        turn(first["requests"][-1], first.get("data", ""))
    if keep:
        for line in sys.stdin:
            if line.strip():
                turn(json.loads(line) if io == "json" else line.strip(), "")
""").replace("MARKER", MARKER)


@pytest.mark.parametrize("kind,extra,faults", [
    ("botzone", "after", 0), ("botzone-keep", "after", 0),
    ("botzone-json", "blank", 0), ("botzone-keep-json", "blank", 0),
    ("botzone", "before", 1), ("botzone-keep", "before", 1),
    ("botzone-keep", "aftermarker", 1), ("botzone-keep-json", "aftermarker", 1),
    ("botzone-keep", "twice", 1), ("botzone-keep-json", "twice", 1),
    ("botzone-json", "nonjson", 1), ("botzone-keep-json", "nonjson", 1),
    ("botzone-json", "two", 1), ("botzone-keep-json", "two", 1),
    ("botzone-json", "pretty", 1), ("botzone-keep-json", "pretty", 1)])
def test_a_botzone_bots_extra_output_is_read_as_botzone_reads_it(tmp_path, kind, extra,
                                                                  faults):
    """What a Botzone bot prints besides its answer, on one turn (its third draw), read as
    Botzone reads it. Simple interaction: line 1 is the response, so a debug line before it
    is the answer (garbage, that draw played safe: counted, never put right quietly); lines
    after it are debug, data (passed back next turn) and globaldata, no fault. Kept running:
    a line after the marker is the next turn's first, its response (garbage on a line where
    PASS goes: counted, no decision lost); a whole turn after the marker (its answer
    printed twice) answers no request: counted and dropped before the next request is sent
    (read as that request's answer, it put the seat one answer behind the bot for the rest
    of the match: 3 of 4 decisions lost, 6 illegal). JSON interaction: the output is one
    JSON object line, so a blank line after it (bots following Botzone's own C++ sample
    print one: FastWriter's newline, then endl) is no fault (it was NJ, every turn, the
    bot's every draw played safe); a line that is no JSON before it, a second object, or
    the object over several lines (nothing shows Botzone reads one) is NJ. One fault at
    most, and never a late, illegal or crashed one: the seat stays in step with the bot for
    the rest of the match."""
    bot = _script(tmp_path, "bot.py", BOTZONE_EXTRA_OUTPUT)
    io = "json" if kind.endswith("json") else "simple"
    name = f"{kind}:{BOT_PY} {bot} {io} {int('keep' in kind)} {extra}"
    seat = _mcr_game_with_outside_seat_0(name, 30.0, seed=0)[1]
    report = seat.report
    assert report.garbage == faults and report.illegal == report.late == report.crashed == 0, \
        report
    lost = faults if extra in ("before", "nonjson", "two", "pretty") else 0  # the draw's own
    assert seat.tally.decisions > 3 and seat.tally.fallbacks == lost, (seat.tally.decisions,
                                                                      seat.tally.fallbacks)


@pytest.mark.parametrize("kind", ["botzone-keep", "botzone-keep-json"])
def test_a_kept_botzone_bot_printing_turns_without_end_is_a_flood_and_stopped(tmp_path, kind):
    """A kept-running bot printing whole turns without end between requests (its answer
    and marker in a loop that does not read its input) had 1 MB of them read and dropped
    before each request, each turn a garbage fault, for the rest of the match: never
    stopped, its every later answer one of its loop's (3 million faults and 18 illegal
    moves in one match, seed 11). What it prints answering no request now counts towards
    the run's 1 MB of such output, as an mjai or NTPU program's stray lines do: past it,
    a fatal garbage fault, the bot stopped and the rest of the match played safe."""
    bot = _script(tmp_path, "bot.py", BOTZONE_EXTRA_OUTPUT)
    name = f"{kind}:{BOT_PY} {bot} {'json' if kind.endswith('json') else 'simple'} 1 loop"
    with capture_logs() as logs:
        seat = _mcr_game_with_outside_seat_0(name, 30.0, seed=11)[1]
    report = seat.report
    faults = [e for e in logs if e["event"] == "outside program fault"]
    flood = [i for i, e in enumerate(faults)
             if "bytes of turns answering no request (a flood)" in e["detail"]]
    assert len(flood) == 1 and faults[flood[0]]["reason"] == "garbage", report
    # stopped: no fault after it (its loop's PASS read for a draw before it: illegal)
    assert flood[0] == len(faults) - 1 and report.late == report.crashed == 0, report
    assert seat.tally.decisions > 3 and seat.tally.fallbacks > 0, seat.tally.decisions


# ---------------------------------------------------------------------- bounded output

# Writes its first words, 20 MB of numbered debug lines in large writes, its last words, then
# one line on stdout; exits 3 once its input ends (or at once with "exit" as argv[1]).
NOISY = textwrap.dedent("""
    import sys
    err = sys.stderr.buffer
    err.write(b"FIRST: loading the model\\n")
    for block in range(20):
        err.write(b"".join(b"noise %09d\\n" % (block * 65536 + i) for i in range(65536)))
    err.write(b"LAST: the real reason\\n")
    err.flush()
    print("done", flush=True)
    sys.stdin.read()
    sys.exit(3)
""")
NOISY_BYTES = len("FIRST: loading the model\n") + 20 * 65536 * 16 + len("LAST: the real reason\n")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the keeper runs on Linux")
def test_a_program_printing_endless_stderr_keeps_its_head_and_tail_within_a_bound():
    """A program's stderr went whole to a temporary file each run: a bot printing debug output
    without end could fill the disk during a game. Its keeper now keeps the head and the tail
    (in order) within a fixed size, counts what it left out, and the program is never held
    up: it writes all 20 MB and answers while nobody reads its stderr."""
    from adapter.local.external.keeper import KEPT_HEAD, KEPT_TAIL

    proc = LineProcess([PY, "-S", "-c", NOISY])
    try:
        assert proc.read_line(30) == "done"
        proc.end_input()
        assert proc.read_line(30) is None
        note = proc.exit_note("ended its output")
        assert "(exit 3)" in note and note.endswith("LAST: the real reason'"), note
        assert os.fstat(proc.stderr.fileno()).st_size <= KEPT_HEAD + 21 + KEPT_TAIL
        said, left_out = proc._kept_stderr()
        assert said.startswith(b"FIRST: loading the model\nnoise 000000000\n")
        assert len(said) == KEPT_HEAD + KEPT_TAIL and left_out == NOISY_BYTES - len(said)
        tail = said[KEPT_HEAD:].split(b"\n")[1:-2]  # whole lines, in order, up to the last
        numbers = [int(line.split()[1]) for line in tail]
        assert numbers == list(range(numbers[0], 20 * 65536)), numbers[:3]
    finally:
        proc.close(grace=0.1)
    assert proc.left_out == left_out


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the keeper runs on Linux")
def test_an_outside_seat_reports_and_logs_the_stderr_it_left_out(tmp_path):
    bot = _script(tmp_path, "bot.py", BOTZONE_KEEP_BOT.replace(
        "mode, pidfile = sys.argv[1], sys.argv[2]",
        "mode, pidfile = sys.argv[1], sys.argv[2]\n"
        "sys.stderr.write('x' * 3_000_000); sys.stderr.flush()"))
    pidfile = tmp_path / "pids"
    name = f"botzone-keep:{BOT_PY} {bot} good {pidfile}"
    with capture_logs() as logs:
        _, seat = _mcr_game_with_outside_seat_0(name, 30)
    report = seat.report.as_dict()
    assert report["first_fault"] is None
    assert report["stderr_left_out"] == 3_000_000 - 16384 - 65536
    trimmed = [e for e in logs if e["event"] == "outside program stderr trimmed"]
    assert len(trimmed) == 1 and trimmed[0]["left_out"] == report["stderr_left_out"]
    assert _all_gone(pidfile) == []


def test_a_botzone_bot_printing_lines_without_end_is_garbage_not_a_memory_sink(tmp_path):
    """A kept bot's turn was gathered line by line until its marker or its limit: one printing
    lines without end grew the seat's memory at pipe speed for the whole limit. Past 1 MB a
    turn (Botzone's OLE) it is a garbage fault, and the bot is stopped."""
    bot = _script(tmp_path, "bot.py", "while True:\n    print('PASS')\n")
    with capture_logs() as logs:
        _, seat = _mcr_game_with_outside_seat_0(f"botzone-keep:{BOT_PY} {bot}", 3)
    assert seat.report.garbage == 1 and seat.report.late == 0, seat.report
    assert "more than 1048576 bytes of output in one turn" in seat.report.first
    assert any(e.get("reason") == "garbage" for e in logs)


# An NTPU program that throws what it drew and passes on every other ask; argv[1]: "stale"
# prints 200 lines answering no ask after each answer, "flood" 5 MB of them after its first
# throw, in one write (then plays on), "trailing" 60 KB of them with each answer, in the
# answer's write; "thinking" prints a debug line before its first throw, flushed, then
# thinks 0.2 s before it replies.
NTPU_STRAY = textwrap.dedent("""
    import sys, time
    mode, last, flooded = sys.argv[1], None, False
    for line in sys.stdin:
        parts = line.split()
        if not parts:
            continue
        if parts[0] == "/close":
            break
        if parts[0] == "/ready":
            print("/ready", flush=True)
        elif parts[0] in ("/mo", "/initCard"):
            last = parts[-1]
        elif parts[0] == "/ask":
            reply = "/throw " + last if parts[1] == "throw" else "/pass"
            if mode == "thinking" and parts[1] == "throw" and not flooded:
                flooded = True
                print("debug: throwing", last, flush=True)
                time.sleep(0.2)
            if mode == "trailing":
                sys.stdout.write(reply + "\\n" + ("trail " + "x" * 93 + "\\n") * 600)
                sys.stdout.flush()
                continue
            if mode == "stale":  # in the answer's own write: a separate one could come
                # after the seat's next ask under load, and be read as that ask's answer
                sys.stdout.write(reply + "\\n" + "stale\\n" * 200)
                sys.stdout.flush()
                continue
            print(reply, flush=True)
            if mode == "flood" and parts[1] == "throw" and not flooded:
                flooded = True
                sys.stdout.write(("flood " + "x" * 93 + "\\n") * 50_000)
            sys.stdout.flush()
""")


def _taiwan_game_with_outside_seat_0(name: str, seed: int = 3):
    players = [seat_for("taiwan16", 0, name, 30.0)] + [
        seat_for("taiwan16", s, "rulebased") for s in (1, 2, 3)]
    try:
        result = play_game(GameConfig("taiwan16"), players, seed, 0)
    finally:
        for p in players:
            p.close()
    return result, players[0]


def test_an_ntpu_programs_stray_lines_are_all_counted_in_a_bounded_number_of_warnings(
        tmp_path):
    """Every line an NTPU program sent that answered no ask was one warning in the log: a
    program printing hundreds between asks wrote hundreds of warnings an ask. The first few
    are logged as they were, the rest counted in the report and said in one warning."""
    bot = _script(tmp_path, "bot.py", NTPU_STRAY)
    with capture_logs() as logs:
        _, seat = _taiwan_game_with_outside_seat_0(f"ntpu:{BOT_PY} {bot} stale")
    faults = [e for e in logs if e["event"] == "outside program fault"]
    more = [e for e in logs if e["event"] == "outside program faults not logged one by one"]
    assert seat.report.crashed == seat.report.late == seat.report.illegal == 0, seat.report
    assert more and all(e["reason"] == "garbage" and e["count"] > 0 for e in more)
    assert len(faults) + sum(e["count"] for e in more) == seat.report.garbage
    assert len(faults) <= 3 * len(more) + 3 < seat.report.garbage, len(faults)


def test_an_ntpu_program_flooding_lines_between_asks_is_garbage_and_stopped(tmp_path):
    """Before an ask the stray lines were read while any were ready: a program flooding
    them kept the seat reading (and logging a warning a line) for as long as the flood
    lasted, its memory growing. Past 1 MB of them in a run it is a fatal garbage fault: the
    program is stopped, its turn played safe, and the game goes on."""
    bot = _script(tmp_path, "bot.py", NTPU_STRAY)
    with capture_logs() as logs:
        result, seat = _taiwan_game_with_outside_seat_0(f"ntpu:{BOT_PY} {bot} flood")
    flood = [e for e in logs if e["event"] == "outside program fault"
             and "bytes of lines answering no ask (a flood)" in e["detail"]]
    assert flood and flood[0]["reason"] == "garbage", seat.report
    # per run: up to STALE_LOGGED lines waiting before the ask, as many read in place of
    # its reply, then the flood itself (a reply read a piece of the flood at a time, each
    # piece more warnings: 61-77 a game here, 129 on a loaded machine)
    runs = seat.report.restarts + 1
    faults = [e for e in logs if e["event"] == "outside program fault"]
    assert len(faults) <= (2 * seat_module.STALE_LOGGED + 1) * runs, (len(faults), runs)
    assert seat.tally.fallbacks > 0 and seat.report.restarts > 0, seat.report
    assert result is not None


def test_an_ntpu_programs_debug_line_before_its_reply_is_garbage_and_its_reply_played(
        tmp_path):
    """A line an NTPU program printed before its reply (a debug print, flushed, then it
    thinks) was read as that reply (garbage), and the reply itself, come after the next
    ask was sent, as the next ask's (illegal: a throw where a pass goes): two decisions
    lost, and more where its replies kept coming after the seat's next ask. A line that is
    no line of the protocol is skipped, counted as garbage; the reply after it is played."""
    bot = _script(tmp_path, "bot.py", NTPU_STRAY)
    _, seat = _taiwan_game_with_outside_seat_0(f"ntpu:{BOT_PY} {bot} thinking")
    assert seat.report.garbage == 1 and seat.report.illegal == seat.report.late == 0, \
        seat.report
    assert seat.report.first.endswith("a line before its answer that is no answer")
    assert seat.tally.decisions > 0 and seat.tally.fallbacks == 0, seat.report


def test_an_ntpu_programs_stray_lines_read_with_its_answers_count_toward_a_flood(tmp_path):
    """Only the bytes waiting_lines read itself counted toward the flood limit: stray lines
    that came in one read with an answer (read by read_line, taken as stale before the next
    ask) were warned of but never counted, so a program sending 60 KB of them with every
    answer was never stopped, and a flood was stopped sooner or later as the reads fell.
    Every stray line taken counts now."""
    bot = _script(tmp_path, "bot.py", NTPU_STRAY)
    with capture_logs() as logs:
        _, seat = _taiwan_game_with_outside_seat_0(f"ntpu:{BOT_PY} {bot} trailing")
    flood = [e for e in logs if e["event"] == "outside program fault"
             and "bytes of lines answering no ask (a flood)" in e["detail"]]
    assert flood and flood[0]["reason"] == "garbage", seat.report
    assert seat.report.restarts > 0, seat.report


# ---------------------------------------------------------------------- stray lines

# An mjai bot that plays tsumogiri and, on its fifth draw of a game, prints a debug line on
# stdout before its answer: "buffered" in the answer's own write; "thinking" on its own,
# flushed, then thinks (0.2 s) before it answers, as a bot that logs before it searches does
# (and as any print does where PYTHONUNBUFFERED is set, which this machine's environment sets
# and the bot inherits: print then writes each piece, the newline too, on its own). The
# line: argv[2] where given (before the seat the seat adds), else "debug: discarding PAI".
MJAI_CHATTY = textwrap.dedent("""
    import json, sys, time
    mode, seat, draws = sys.argv[1], int(sys.argv[-1]), 0
    for line in sys.stdin:
        answer = {"type": "none"}
        for event in json.loads(line):
            if event["type"] == "tsumo" and event["actor"] == seat:
                draws += 1
                answer = {"type": "dahai", "actor": seat, "pai": event["pai"],
                          "tsumogiri": True}
        text = json.dumps(answer) + "\\n"
        if draws == 5 and answer["type"] == "dahai":
            debug = (sys.argv[2] if len(sys.argv) > 3
                     else "debug: discarding " + answer["pai"]) + "\\n"
            if mode == "thinking":
                sys.stdout.write(debug)
                sys.stdout.flush()
                time.sleep(0.2)
            else:
                text = debug + text
        sys.stdout.write(text)
        sys.stdout.flush()
""")


@pytest.mark.parametrize("mode", ["buffered", "thinking"])
def test_an_mjai_bots_debug_line_before_its_answer_is_garbage_and_its_answer_played(
        tmp_path, mode):
    """A debug line an mjai bot printed before its answer was read as that answer (garbage),
    and its real answer as the answer to the next line, and so on: the seat stayed one
    answer behind for the rest of the game, every later move illegal (8 garbage lines made
    427 illegal fallbacks of 763 decisions). Lines waiting before a line was sent were then
    skipped as garbage, which put the seat in step again only where the answer had come by
    then: a bot that flushed its debug line and thought before answering ("thinking"), or
    any bot whose answers came after the seat's next line was sent (a loaded machine), was
    read one answer behind for as long as that lasted (46 illegal in a suite run). A line
    that is no JSON is no answer: it is counted as garbage and skipped, and the answer that
    follows it is the answer to its line (waited for BANNER_GRACE after the noise at most),
    so the bot's move is played and the seat never leaves step."""
    bot = _script(tmp_path, "chatty.py", MJAI_CHATTY)
    name = f"mjai:{BOT_PY} {bot} {mode}"
    with capture_logs() as logs:
        summary = _arena("riichi", name, seat_limit=30)
    report = summary["external_seats"][name]
    games = summary["games"]
    assert report["illegal"] == 0, report
    assert report["garbage"] == games, report  # per game: the debug line, and only it
    assert summary["policies"][name]["fallbacks"] == 0
    noise = [e for e in logs if e["event"] == "outside program fault"]
    assert len(noise) == games and all(e["raw"].startswith("debug: discarding ")
                                       for e in noise), noise


@pytest.mark.parametrize("debug", ['{"debug": 1}', "[1, 2]", "42", '"text"',
                                   '{"type": "log", "msg": "x"}', "null"])
@pytest.mark.parametrize("kind", ["mjai", "mjai-tcp"])
def test_an_mjai_bots_json_line_that_is_no_answer_is_garbage_and_its_answer_played(
        tmp_path, kind, debug):
    """A line that is JSON but no mjai answer ({"debug": 1}, a list, a number, a string, an
    object without an answer's type), printed before the answer, was taken for the answer
    (garbage: a safe fallback) and the real answer, come after the next line was sent,
    read as that line's: the seat one answer behind (illegal moves) until a line found one
    waiting. mjai.app fails the bot on such a line as on one that is not JSON (its harness
    reads one line a request and looks up its "type"), so the seat treats it as it treats a
    debug print: counted as garbage, skipped, and the answer after it played in step."""
    if kind == "mjai-tcp":
        port = free_port()
        name = f"mjai-tcp:127.0.0.1:{port}"
        bot = _script(tmp_path, "tcp_chatty.py", MJAI_TCP_CHATTY)
        client = subprocess.Popen([PY, "-S", bot, str(port), "thinking", debug])
        try:
            summary = _arena("riichi", name, seat_limit=30)
        finally:
            client.wait(timeout=60)
    else:
        bot = _script(tmp_path, "bot.py", MJAI_CHATTY)
        name = f"mjai:{BOT_PY} {bot} thinking {debug!r}"
        summary = _arena("riichi", name, seat_limit=30)
    report = summary["external_seats"][name]
    games = summary["games"]
    assert report["illegal"] == report["late"] == 0, report
    assert report["garbage"] == games, report  # per game: the JSON debug line, and only it
    assert summary["policies"][name]["fallbacks"] == 0, summary["policies"][name]


@pytest.mark.parametrize("kind", ["mjai", "ntpu"])
def test_a_debug_line_does_not_shorten_the_answers_limit(tmp_path, monkeypatch, kind):
    """After a debug line the answer was waited for BANNER_GRACE (2 s) at most, the grace
    meant for a banner at start-up: an NTPU program that printed one and thought 3 s, inside
    its 5 s limit, lost that move (and, its debug line taken for the answer, the rest of its
    game: 45 fallbacks of 181 where the same program without the line lost none), as did an
    mjai bot under a --seat-limit. After start-up the answer gets the rest of its limit.
    Here the grace is 0.05 s and the bot thinks 0.2 s after its line, within its limit."""
    monkeypatch.setattr(seat_module, "BANNER_GRACE", 0.05)
    if kind == "ntpu":
        bot = _script(tmp_path, "bot.py", NTPU_STRAY)
        _, seat = _taiwan_game_with_outside_seat_0(f"ntpu:{BOT_PY} {bot} thinking")
        report, tally = seat.report.as_dict(), (seat.tally.decisions, seat.tally.fallbacks)
        games = 1
    else:
        bot = _script(tmp_path, "chatty.py", MJAI_CHATTY)
        name = f"mjai:{BOT_PY} {bot} thinking"
        summary = _arena("riichi", name, seat_limit=30)
        report, games = summary["external_seats"][name], summary["games"]
        tally = (summary["policies"][name]["decisions"], summary["policies"][name]["fallbacks"])
    assert report["garbage"] == games and report["illegal"] == report["late"] == 0, report
    assert tally[0] > 0 and tally[1] == 0, (tally, report)


# An mjai bot that plays tsumogiri and prints a debug line, flushed, before every answer; on
# its third draw of a run it thinks PAUSE seconds (argv[1]) after that line.
MJAI_DEBUG_EVERY_LINE = textwrap.dedent("""
    import json, sys, time
    pause, seat, draws = float(sys.argv[1]), int(sys.argv[-1]), 0
    for line in sys.stdin:
        answer = {"type": "none"}
        for event in json.loads(line):
            if event["type"] == "tsumo" and event["actor"] == seat:
                draws += 1
                answer = {"type": "dahai", "actor": seat, "pai": event["pai"],
                          "tsumogiri": True}
        print("debug: thinking", flush=True)
        if draws == 3 and answer["type"] == "dahai":
            time.sleep(pause)
            draws += 1
        print(json.dumps(answer), flush=True)
""")


def test_an_mjai_bot_late_once_after_its_debug_line_is_in_step_again_at_once(tmp_path):
    """A bot that prints a debug line before every answer and once answers past its limit:
    the debug line was taken for that answer (garbage) and the run marked as one whose
    noise is its answer, for good, so each later debug line was its answer and each real
    answer stale: every later decision of the game a fallback (90 of 357 in 4 games where
    the same bot without the debug line lost 15). Its late answer, a line that can be an
    answer left over unasked, shows it answers after its noise: the noise is skipped
    again, and the bot costs the late move and the few after it (the late answer, and the
    answers after it, are read as the next line's where that line went before they came,
    until a left-over line is skipped before a line)."""
    bot = _script(tmp_path, "debug.py", MJAI_DEBUG_EVERY_LINE)
    name = f"mjai:{BOT_PY} {bot} 1.5"
    summary = _arena("riichi", name, seat_limit=1.0)
    seat = summary["policies"][name]
    # the rest of each game lost: 348 fallbacks of 357 decisions; now a few a game (10 in
    # 4 games on a loaded machine here; 2 to 11 for one late answer in a real arena)
    assert 0 < seat["fallbacks"] <= seat["decisions"] // 4, (seat, summary["external_seats"])


# Runs `mjbot mjai` (argv[1:]) and passes its lines through, but sends its dahai with its
# reach at once, unasked: it echoes the reach to the bot itself and swallows the seat's echo.
MJAI_EAGER_REACH = textwrap.dedent("""
    import json, subprocess, sys
    bot = subprocess.Popen(sys.argv[1:], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                           text=True, bufsize=1)
    def ask(line):
        bot.stdin.write(line)
        bot.stdin.flush()
        return bot.stdout.readline()
    for line in sys.stdin:
        if json.loads(line) == [{"type": "reach", "actor": int(sys.argv[-1])}]:
            continue  # its dahai went with its reach
        answer = ask(line)
        if json.loads(answer)["type"] == "reach":
            echo = json.dumps([{"type": "reach", "actor": int(sys.argv[-1])}]) + "\\n"
            answer += ask(echo)
        sys.stdout.write(answer)
        sys.stdout.flush()
""")


def test_an_mjai_bots_dahai_sent_with_its_reach_is_its_answer_to_the_echo(tmp_path):
    """Lines waiting before a line is sent are skipped (a bot's stray stdout), but not
    before a reach's echo: a dahai the bot sent with its reach answers it, as it did."""
    eager = _script(tmp_path, "eager.py", MJAI_EAGER_REACH)
    name = f"mjai:{BOT_PY} {eager} {MJBOT} mjai --no-log --policy rulebased"
    inside = _inside("riichi")
    outside = _versus_greedy("riichi", name)
    _same_figures(inside, outside, name)
    assert outside["policies"][name]["riichi_rate"] > 0


# An mjai bot that plays tsumogiri, but answers a dahai to the lines that ask for no move
# (start_game, end_kyoku, end_game), where only none goes.
MJAI_EDGE_MOVES = textwrap.dedent("""
    import json, sys
    seat = int(sys.argv[-1])
    for line in sys.stdin:
        events = json.loads(line)
        answer = {"type": "none"}
        for event in events:
            if event["type"] == "tsumo" and event["actor"] == seat:
                answer = {"type": "dahai", "actor": seat, "pai": event["pai"],
                          "tsumogiri": True}
        if events[-1]["type"] in ("start_game", "end_kyoku", "end_game"):
            answer = {"type": "dahai", "actor": seat, "pai": "5m", "tsumogiri": False}
        print(json.dumps(answer), flush=True)
""")


def test_an_mjai_bots_move_where_nothing_goes_is_counted_as_over_tcp(tmp_path):
    """A move answering start_game, end_kyoku or end_game, where only none goes, was taken
    as an answer by the stdin seat and never counted, while the TCP seat counted it
    ('illegal: dahai where nothing goes'), as the README says both do. Counted in the
    program's report, one per such line; not a decision, not a fallback."""
    bot = _script(tmp_path, "edges.py", MJAI_EDGE_MOVES)
    name = f"mjai:{BOT_PY} {bot}"
    with capture_logs() as logs:
        summary = _arena("riichi", name, seat_limit=30)
    report = summary["external_seats"][name]
    edges = 2 * summary["games"] + summary["hands"]  # start_game, end_game; end_kyoku
    assert report["illegal"] == edges, (report, summary["games"], summary["hands"])
    assert report["first_fault"] == "illegal: dahai where nothing goes"
    assert summary["policies"][name]["fallbacks"] == 0
    assert sum(e["event"] == "outside program fault" for e in logs) == edges


# An mjai TCP client for 4 games (one connection each): tsumogiri, and on its fifth draw of
# a game a debug line before its answer, in one write ("buffered"), or on its own, then
# 0.2 s of thought before the answer ("thinking"), as MJAI_CHATTY; argv[3], if given, is
# that line.
MJAI_TCP_CHATTY = textwrap.dedent("""
    import json, socket, sys, time
    port, mode = int(sys.argv[1]), sys.argv[2]
    for game in range(4):
        while True:
            try:
                conn = socket.create_connection(("127.0.0.1", port))
                break
            except OSError:
                time.sleep(0.05)
        reader = conn.makefile("r")
        seat, draws = None, 0
        for line in reader:
            event = json.loads(line)
            answer = {"type": "none"}
            if event["type"] == "hello":
                answer = {"type": "join", "name": "chatty", "room": "default"}
            elif event["type"] == "start_game":
                seat = event["id"]
            elif event["type"] == "tsumo" and event["actor"] == seat:
                draws += 1
                answer = {"type": "dahai", "actor": seat, "pai": event["pai"],
                          "tsumogiri": True}
            text = json.dumps(answer) + "\\n"
            if draws == 5 and answer["type"] == "dahai":
                debug = (sys.argv[3] if len(sys.argv) > 3 else
                         "debug: discarding " + answer["pai"]) + "\\n"
                if mode == "thinking":
                    conn.sendall(debug.encode())
                    time.sleep(0.2)
                else:
                    text = debug + text
            conn.sendall(text.encode())
            if event["type"] == "end_game":
                break
        conn.close()
""")


@pytest.mark.parametrize("mode", ["buffered", "thinking"])
def test_an_mjai_tcp_bots_debug_line_before_its_answer_is_garbage_and_its_answer_played(
        tmp_path, mode):
    """As over stdin: a debug line before an answer left the TCP seat one answer behind
    for the rest of the game; then it cost the answer it came before, and more where the
    answer came after the next event was sent ("thinking"). It is garbage, skipped, and
    the answer after it is the answer to its event."""
    port = free_port()
    name = f"mjai-tcp:127.0.0.1:{port}"
    bot = _script(tmp_path, "tcp_chatty.py", MJAI_TCP_CHATTY)
    client = subprocess.Popen([PY, "-S", bot, str(port), mode])
    try:
        summary = _arena("riichi", name, seat_limit=30)
    finally:
        client.wait(timeout=60)
    report = summary["external_seats"][name]
    assert report["illegal"] == 0, report
    assert report["garbage"] == summary["games"], report  # per game: the debug line
    assert summary["policies"][name]["fallbacks"] == 0


# Kept running (MCR): plays its draw after a pause of PAUSE seconds, PASS to everything else.
BOTZONE_SLOW_DRAW = textwrap.dedent("""
    import sys, time
    def answer(req):
        p = req.split()
        if p[0] == "2":
            time.sleep(float(sys.argv[1]))
            return "PLAY " + p[1]
        return "PASS"
    n = int(sys.stdin.readline())
    lines = [sys.stdin.readline().strip() for _ in range(2 * n - 1)]
    print(answer(lines[-1]))
    print(">>>BOTZONE_REQUEST_KEEP_RUNNING<<<", flush=True)
    for line in sys.stdin:
        if line.strip():
            print(answer(line.strip()))
            print(">>>BOTZONE_REQUEST_KEEP_RUNNING<<<", flush=True)
""")

# An mjai TCP client for 4 games: tsumogiri after a pause of argv[2] seconds, none otherwise.
MJAI_TCP_SLOW_DRAW = textwrap.dedent("""
    import json, socket, sys, time
    port, pause = int(sys.argv[1]), float(sys.argv[2])
    for game in range(4):
        while True:
            try:
                conn = socket.create_connection(("127.0.0.1", port))
                break
            except OSError:
                time.sleep(0.05)
        seat = None
        for line in conn.makefile("r"):
            event = json.loads(line)
            answer = {"type": "none"}
            if event["type"] == "hello":
                answer = {"type": "join", "name": "slow", "room": "default"}
            elif event["type"] == "start_game":
                seat = event["id"]
            elif event["type"] == "tsumo" and event["actor"] == seat:
                time.sleep(pause)
                answer = {"type": "dahai", "actor": seat, "pai": event["pai"],
                          "tsumogiri": True}
            conn.sendall((json.dumps(answer) + "\\n").encode())
            if event["type"] == "end_game":
                break
        conn.close()
""")


def _turn_times(log_dir: Path, name: str) -> list[float]:
    """The logged seconds of ``name``'s turn decisions (more than one legal move)."""
    return [d.elapsed for path in sorted(log_dir.rglob("*.mjlog.msgpack"))
            for d in read_log(path).decisions()
            if d.policy == name and d.request.kind == "turn" and len(d.legal) > 1]


@pytest.mark.parametrize("kind", ["botzone-keep", "mjai-tcp"])
def test_a_seat_that_reads_answers_as_lines_go_logs_the_time_the_answer_took(tmp_path, kind):
    """The Botzone and mjai TCP seats read each line's answer as the line is sent (observe),
    and a decision only takes the answer kept: their decisions were logged as taking the
    microseconds of that, not the pause the program took to answer (033e577 timed the
    decision alone, which is the program's time only where the decision sends the line)."""
    pause = 0.002
    client = None
    if kind == "botzone-keep":
        variant = "mcr"
        name = f"botzone-keep:{BOT_PY} {_script(tmp_path, 'slow.py', BOTZONE_SLOW_DRAW)} {pause}"
    else:
        variant, port = "riichi", free_port()
        name = f"mjai-tcp:127.0.0.1:{port}"
        client = subprocess.Popen([PY, "-S", _script(tmp_path, "slow.py", MJAI_TCP_SLOW_DRAW),
                                   str(port), str(pause)])
    logs = tmp_path / "logs"
    config = ArenaConfig(variant, (name, "rulebased", "rulebased", "rulebased"), hands=1,
                         seed=3, seat_limit=30, log_dir=str(logs))
    try:
        run_arena(config)
    finally:
        if client is not None:
            client.wait(timeout=60)
    times = _turn_times(logs, name)
    assert times and min(times) >= pause, sorted(times)[:5]


@pytest.mark.parametrize("program, said", [
    ("false", "crashed: the program ended its output (exit 1) at its start"),
    ("garbage", "garbage: an answer that is not JSON")])
def test_an_outside_programs_fallback_carries_its_kind(tmp_path, program, said):
    """Every answer carries its fallback's kind for what counts answers (brain/tally.py), and
    an answer whose kind says none was the program's own: an outside seat's safe play, for a
    program that died at its start or answered garbage, said NONE beside its reason."""
    garbage = "import sys\nfor _ in sys.stdin:\n    print('not json', flush=True)\n"
    argv = "/bin/false" if program == "false" else \
        f"{BOT_PY} {_script(tmp_path, 'garbage.py', garbage)}"
    seat = external_seat("riichi", 0, f"mjai:{argv}", SeatLimits(answer=10.0, first=10.0))
    try:
        seat.observe(ev.GameStarted("riichi", 0))
        legal = [ev.Pass(), ev.Discard(1)]
        answer = seat.decide(ev.DecisionRequest("claim"), legal)
    finally:
        seat.close()
    assert answer.fallback.startswith(said) and answer.action == ev.Pass()
    assert answer.kind is FallbackKind.FAILED


# An mjai TCP client that thinks PAUSE seconds over its first turn (once, whatever the number
# of games), one game a connection, connecting again until no seat listens for 5 s.
MJAI_TCP_SLOW_ONCE = textwrap.dedent("""
    import json, socket, sys, time
    port, pause = int(sys.argv[1]), float(sys.argv[2])
    while True:
        waited = time.monotonic()
        while True:
            try:
                conn = socket.create_connection(("127.0.0.1", port))
                break
            except OSError:
                if time.monotonic() - waited > 5:
                    sys.exit(0)
                time.sleep(0.05)
        seat = None
        for line in conn.makefile("r"):
            event = json.loads(line)
            answer = {"type": "none"}
            if event["type"] == "hello":
                answer = {"type": "join", "name": "slow", "room": "default"}
            elif event["type"] == "start_game":
                seat = event["id"]
            elif event["type"] == "tsumo" and event["actor"] == seat:
                time.sleep(pause)
                pause = 0.0
                answer = {"type": "dahai", "actor": seat, "pai": event["pai"],
                          "tsumogiri": True}
            try:
                conn.sendall((json.dumps(answer) + "\\n").encode())
            except OSError:
                break
            if event["type"] == "end_game":
                break
        conn.close()
""")


def test_an_mjai_tcp_bot_is_timed_as_the_mjai_server_times_it(tmp_path):
    """The mjai-tcp seat stands for the original mjai server, which waits 60 s for each
    answer (../shared/protocols/mjai.md), but timed its bot with mjai.app's 2 s: a TCP bot
    that thought 2.5 s over a move, as it may on that server, was late, killed and played
    safe for the rest of the hand. Without --seat-limit it now has the server's 60 s."""
    port = free_port()
    name = f"mjai-tcp:127.0.0.1:{port}"
    client = subprocess.Popen([PY, "-S", _script(tmp_path, "slow.py", MJAI_TCP_SLOW_ONCE),
                               str(port), "2.5"])
    try:
        summary = _arena("riichi", name, seat_limit=None)
    finally:
        client.wait(timeout=60)
    report = summary["external_seats"][name]
    assert report["late"] == 0 and report["first_fault"] is None, report
    assert summary["policies"][name]["fallbacks"] == 0
    assert summary["time_limits"][name] == "the mjai server's 60 s"
    assert time_limit_text(name) == "the mjai server's 60 s"
    assert time_limit_text(name, 5.0) == "--seat-limit 5 s"



# Bots that discard the red dragon on every turn, mostly without holding it (illegal).
MJAI_RED_DRAGON = textwrap.dedent("""
    import json, sys
    seat = int(sys.argv[-1])
    for line in sys.stdin:
        events = json.loads(line)
        last = events[-1]
        answer = {"type": "none"}
        if last["type"] == "tsumo" and last["actor"] == seat:
            answer = {"type": "dahai", "actor": seat, "pai": "C", "tsumogiri": False}
        print(json.dumps(answer), flush=True)
""")
BOTZONE_RED_DRAGON = textwrap.dedent("""
    import itertools, sys
    n = int(sys.stdin.readline())
    requests = [sys.stdin.readline().strip() for _ in range(2 * n - 1)][::2]
    for request in itertools.chain([requests[-1]], sys.stdin):
        if request.strip():
            print("PLAY J1" if request.split()[0] == "2" else "PASS")
            print("MARKER", flush=True)
""").replace("MARKER", MARKER)


@pytest.mark.parametrize("kind, said", [("mjai", "discard C "), ("botzone-keep", "discard J1 ")])
def test_an_illegal_answer_names_its_tiles_as_the_program_wrote_them(tmp_path, kind, said):
    """An illegal move was named in our own notation: an mjai bot that discarded "C" (the
    red dragon) it did not hold read 'discard 7z is not legal on a turn request', a Botzone
    bot's PLAY J1 'discard 7z ... (WA on Botzone)'. The tiles are now in the program's own
    protocol's names, in the table's first fault and in the log."""
    if kind == "mjai":
        name = f"mjai:{BOT_PY} {_script(tmp_path, 'bot.py', MJAI_RED_DRAGON)}"
        variant = "riichi"
    else:
        name = f"botzone-keep:{BOT_PY} {_script(tmp_path, 'bot.py', BOTZONE_RED_DRAGON)}"
        variant = "mcr"
    with capture_logs() as logs:
        summary = _arena(variant, name, seat_limit=30)
    report = summary["external_seats"][name]
    assert report["illegal"] > 0, report
    assert said in report["first_fault"], report["first_fault"]
    details = [e["detail"] for e in logs if e.get("event") == "outside program fault"]
    assert details and all(said in d for d in details if d.startswith("discard")), details


# An mjai bot that plays tsumogiri and quits when it reads end_game, answering nothing.
MJAI_QUITS_AT_END_GAME = textwrap.dedent("""
    import json, sys
    seat = int(sys.argv[-1])
    for line in sys.stdin:
        events = json.loads(line)
        if any(e["type"] == "end_game" for e in events):
            break
        last = events[-1]
        answer = {"type": "none"}
        if last["type"] == "tsumo" and last["actor"] == seat:
            answer = {"type": "dahai", "actor": seat, "pai": last["pai"], "tsumogiri": True}
        print(json.dumps(answer), flush=True)
""")


def test_an_mjai_bot_that_quits_at_end_game_is_no_crash(tmp_path):
    """A bot that leaves its loop at end_game, the game over, was counted as crashed once a
    game ('crashed: the program ended its output (exit 0)', a warning each game): mjai.app's
    harness reads its answer to end_game as an empty line and goes on, no fault. A bot that
    ends its output during the game is still a crash (test_a_bad_mjai_bot_...)."""
    name = f"mjai:{BOT_PY} {_script(tmp_path, 'bot.py', MJAI_QUITS_AT_END_GAME)}"
    with capture_logs() as logs:
        summary = _arena("riichi", name, seat_limit=30)
    report = summary["external_seats"][name]
    assert report["crashed"] == 0 and report["first_fault"] is None, report
    assert not [e for e in logs if e.get("event") == "outside program fault"]


# An mjai bot that plays tsumogiri and dies at end_game: a traceback (exit 1) or a signal.
MJAI_DIES_AT_END_GAME = textwrap.dedent("""
    import json, os, signal, sys
    how, seat = sys.argv[1], int(sys.argv[-1])
    for line in sys.stdin:
        events = json.loads(line)
        if any(e["type"] == "end_game" for e in events):
            if how == "signal":
                os.kill(os.getpid(), signal.SIGKILL)
            raise RuntimeError("its end_game handler failed")
        last = events[-1]
        answer = {"type": "none"}
        if last["type"] == "tsumo" and last["actor"] == seat:
            answer = {"type": "dahai", "actor": seat, "pai": last["pai"], "tsumogiri": True}
        print(json.dumps(answer), flush=True)
""")


@pytest.mark.parametrize("how, said", [("raise", "(exit 1)"), ("signal", "(exit ")])
def test_an_mjai_bot_that_dies_at_end_game_is_still_a_crash(tmp_path, how, said):
    """Every crash at end_game was taken for a bot leaving its loop there: one whose
    end_game handler raised (a traceback, exit 1) or that a signal ended showed no fault,
    nothing in the log. Only a program that exits 0 there is no fault."""
    name = f"mjai:{BOT_PY} {_script(tmp_path, 'bot.py', MJAI_DIES_AT_END_GAME)} {how}"
    summary = _arena("riichi", name, seat_limit=30)
    report = summary["external_seats"][name]
    assert report["crashed"] == summary["games"] and report["late"] == 0, report
    assert report["first_fault"].startswith("crashed: the program ended its output"), report
    assert said in report["first_fault"] and "(exit 0)" not in report["first_fault"], report


# An mjai TCP client as the original mjai client (gimite/mjai tcp_client_game.rb) plays: it
# leaves at end_game without answering it, one game a connection, connecting again until no
# seat listens for 5 s. MODE drop: it also drops its first connection at its first draw.
MJAI_TCP_QUITS_AT_END_GAME = textwrap.dedent("""
    import json, socket, sys, time
    port, mode = int(sys.argv[1]), sys.argv[2]
    while True:
        waited = time.monotonic()
        while True:
            try:
                conn = socket.create_connection(("127.0.0.1", port))
                break
            except OSError:
                if time.monotonic() - waited > 5:
                    sys.exit(0)
                time.sleep(0.05)
        seat = None
        for line in conn.makefile("r"):
            event = json.loads(line)
            answer = {"type": "none"}
            if event["type"] == "end_game":
                break
            if event["type"] == "hello":
                answer = {"type": "join", "name": "ruby", "room": "default"}
            elif event["type"] == "start_game":
                seat = event["id"]
            elif event["type"] == "tsumo" and event["actor"] == seat:
                if mode == "drop":
                    mode = ""
                    break
                answer = {"type": "dahai", "actor": seat, "pai": event["pai"],
                          "tsumogiri": True}
            conn.sendall((json.dumps(answer) + "\\n").encode())
        conn.close()
""")


@pytest.mark.parametrize("mode, crashed", [("quit", 0), ("drop", 1)])
def test_an_mjai_tcp_bot_that_leaves_at_end_game_is_no_crash(tmp_path, mode, crashed):
    """The original mjai client leaves at end_game without answering, and the original
    server reads the closed connection as no answer, no error: the mjai-tcp seat counted it
    crashed ('ended its output (connection closed)') once a game, with a warning each game.
    A connection closed during the game is still a crash."""
    port = free_port()
    name = f"mjai-tcp:127.0.0.1:{port}"
    client = subprocess.Popen([PY, "-S", _script(tmp_path, "ruby.py", MJAI_TCP_QUITS_AT_END_GAME),
                               str(port), mode])
    try:
        with capture_logs() as logs:
            summary = _arena("riichi", name, seat_limit=None)
    finally:
        client.wait(timeout=60)
    report = summary["external_seats"][name]
    assert report["crashed"] == crashed and report["late"] == report["garbage"] == 0, report
    faults = [e for e in logs if e.get("event") == "outside program fault"]
    assert len(faults) == crashed, faults
