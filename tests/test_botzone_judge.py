"""The local Botzone judge: a match between four real `mjbot botzone` processes, the verdicts
for bots that break the protocol, and the judge log that `mjbot replay` reads."""

import sys

import pytest

from adapter.fakes.botzone_judge import BotProcess, BotzoneJudge
from adapter.platforms.botzone import KEEP_RUNNING
from replay.formats import botzone_log
from tests.in_process import mjbot_here
from tests.narrowing import header_of

# What starts the stdlib-only bots written here: no site (-S), so not this venv's
# site-packages and their .pth files (the editable install's finder), half of a bare Python
# start's CPU; a judged match starts three or four of them.
BARE_PY = (sys.executable, "-S")

# A keep-running bot in simple interaction that plays each tile it draws and passes on every
# other line: the opponents of a bot under test whose verdict is all a test looks at (an
# `mjbot botzone` in their place cost ~0.4 s of start-up apiece, and answered as legally).
PLAYS_ITS_DRAWS = (
    "import sys\n"
    "def answer(request):\n"
    "    parts = request.split()\n"
    "    return 'PLAY ' + parts[1] if parts[0] == '2' else 'PASS'\n"
    "n = int(sys.stdin.readline())\n"
    "lines = [sys.stdin.readline().strip() for _ in range(2 * n - 1)]\n"
    "print(answer(lines[-1])); print('" + KEEP_RUNNING + "', flush=True)\n"
    "for line in sys.stdin:\n"
    "    if line.strip():\n"
    "        print(answer(line.strip())); print('" + KEEP_RUNNING + "', flush=True)\n")


def judge_with(seat: int, mode: str, command: list[str], seed: int = 1) -> BotzoneJudge:
    """A match of ``seed`` with ``command`` at ``seat`` in ``mode`` and PLAYS_ITS_DRAWS, kept
    running, at the other seats."""
    judge = BotzoneJudge([mode if s == seat else "keep" for s in range(4)], seed)
    for s, bot in enumerate(judge.bots):
        bot.command = command if s == seat else [*BARE_PY, "-c", PLAYS_ITS_DRAWS]
    return judge


def test_a_match_between_four_keep_running_bots():
    # seed 8: won after 27 request lines (seed 3 took 126), a PENG and a HU among them
    result = BotzoneJudge(["keep"] * 4, seed=8).play()
    assert result.verdicts == {}, result.reason
    assert sum(result.scores) == 0
    assert result.reason in ("win", "exhaustive")
    record = botzone_log.loads(__import__("json").dumps(result.log))
    assert record.variant == "mcr" and len(record.hands()) == 1
    assert all(len(s) > 10 for s in result.turn_seconds)


def test_a_call_that_loses_priority_does_not_leak_its_discard():
    # found by a 150-match soak: seat 1's CHI lost to a PENG, and its named discard was later
    # played for it instead of its next answer (a WA that was the judge's fault)
    result = BotzoneJudge(["keep"] * 4, seed=100_003 + 105).play()
    assert result.verdicts == {}, result.reason


def test_one_shot_bots_carry_data_between_process_starts():
    command = (sys.executable, "-m", "adapter.cli", "botzone", "--no-log")
    for mode in ("simple", "json"):
        bot = BotProcess(1, mode, command, limit=30, later_limit=30)
        assert bot.request("0 1 2") == "PASS"
        assert bot.request("1 0 0 0 0 W1 W2 W3 W4 W5 W6 W7 W8 W9 B1 B1 B2 B3") == "PASS"
        assert '"v": 1' in bot.data
        assert bot.request("3 0 DRAW") == "PASS"
        bot.close()


def _fake(script):
    return (*BARE_PY, "-c", script)


def _answers(rule: str) -> str:
    """A keep-running bot in simple interaction that plays each tile it draws and answers
    ``rule`` (an expression of ``parts``, the request's words) to every other line."""
    return PLAYS_ITS_DRAWS.replace("else 'PASS'", f"else ({rule})")


def test_a_hu_where_only_pass_goes_is_wa_as_the_judge_rules_it():
    """The official judge checks the answer to the setup, the deal, a draw, one's own discard
    and a GANG for PASS alone (checkInputPASS / checkInputGANG): a HU there is WA. The local
    judge called every HU it was not asking for WH."""
    result = judge_with(0, "simple", list(_fake("print('HU')"))).play()
    assert result.verdicts == {0: "WA"} and result.scores == [-30, 10, 10, 10]
    assert "'0 0 " in result.reason, result.reason  # the line it answered, named
    on_draws = _answers("'HU' if parts[2:3] == ['DRAW'] else 'PASS'")
    result = judge_with(1, "keep", [*BARE_PY, "-c", on_draws]).play()
    assert result.verdicts == {1: "WA"} and "DRAW" in result.reason, result.reason


def test_a_false_hu_on_another_seats_discard_is_wh():
    """Where a seat may win (another seat's discard), a HU short of 8 fan is a false win: WH,
    as the judge scores it (checkHu), whether the referee asked the seat or not."""
    on_discards = _answers("'HU' if parts[2:3] == ['PLAY'] and parts[1] != seat else 'PASS'")
    on_discards = on_discards.replace("n = int(", "seat = '2'\nn = int(")
    result = judge_with(2, "keep", [*BARE_PY, "-c", on_discards]).play()
    assert result.verdicts == {2: "WH"} and result.scores == [10, 10, -30, 10], result.reason


def test_a_bot_that_answers_nonsense_gets_wa():
    # PLAY where only PASS goes
    result = judge_with(1, "simple", list(_fake("print('PLAY W1')"))).play()
    assert result.verdicts == {1: "WA"}


def test_a_wrong_answer_to_the_setup_ends_the_log_after_the_setup_turn(tmp_path, capsys):
    """Botzone's judge sends a turn's lines to all four bots, then checks all four answers: a
    WA on the setup request ends the match right after that turn. The local judge sent the
    deal seat by seat and found seat 2's answer only when its own deal was due: the log held
    a DEAL turn sent to seats 0 and 1 alone, and the setup turn without seat 3."""
    import json

    result = judge_with(2, "simple", list(_fake("print('PLAY W1')"))).play()
    assert result.verdicts == {2: "WA"} and "'0 2 " in result.reason, result.reason
    setup, answers, finish = result.log["log"]
    assert setup["output"]["display"]["action"] == "INIT"
    assert sorted(setup["output"]["content"]) == sorted(answers) == ["0", "1", "2", "3"]
    assert answers["2"]["response"] == "PLAY W1"
    assert finish["output"]["display"] == {"score": [10, 10, -30, 10], "action": "WA",
                                           "player": 2}
    path = tmp_path / "match.json"
    path.write_text(json.dumps(result.log))
    shown = mjbot_here(capsys, "replay", str(path))  # it refused a match with no deal
    assert shown.returncode == 0 and "Traceback" not in shown.stderr, shown.stderr
    assert "note: WA by seat 2 before the deal" in shown.stdout
    assert "final scores [10, 10, -30, 10]" in shown.stdout


def test_a_silent_or_slow_bot():
    judge = judge_with(2, "simple", list(_fake("import sys; sys.exit(3)")))
    assert judge.play().verdicts == {2: "RE"}
    judge = judge_with(3, "simple", list(_fake("import time; time.sleep(3)")))
    judge.bots[3].limit = 0.5
    assert judge.play().verdicts == {3: "TLE"}


def test_the_judge_soak_fails_when_its_bots_fall_back(tmp_path, capsys, monkeypatch):
    """`mjbot botzone-judge` passed a soak whose bots fell back on every answer (only
    verdicts failed it): here mc whose MCR opponent models load but fail every estimate.
    Its summary now counts the fallbacks per mode, and any fails the run in one line. The
    judge runs in the test process (its four bots are the processes that matter)."""
    import json

    import numpy as np

    from brain.opponents.models import model_path

    folder = tmp_path / "broken"
    folder.mkdir()
    with np.load(model_path("mcr")) as shipped:
        arrays = {k: shipped[k] for k in shipped.files}
    arrays["tenpai.wx"] = arrays["tenpai.wx"][:-1]  # one input short: every estimate fails
    np.savez(folder / "opponents_mcr.npz", **arrays)
    with monkeypatch.context() as env:  # the bots' environment, as a user's shell gives it
        env.setenv("MJBOT_MC", f"models={folder},playouts=8")
        done = mjbot_here(capsys, "botzone-judge", "--games", "1", "--modes", "keep",
                          "--policy", "mc")
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr[-2000:]
    said = json.loads(done.stdout)["fallbacks"]["keep"]
    assert said["answers"] > 10 and said["fallbacks"] > 4, said
    assert done.stderr.strip().splitlines()[-1] == (
        f"mjbot botzone-judge: the keep bots fell back on {said['fallbacks']} of "
        f"{said['answers']} answers; first: {said['first']}")
    well = mjbot_here(capsys, "botzone-judge", "--games", "1", "--modes", "keep")
    assert well.returncode == 0, well.stderr[-2000:]
    assert json.loads(well.stdout)["fallbacks"]["keep"]["fallbacks"] == 0


# ---------------------------------------------------------------------- a judge never hangs

# Answers its first input (read whole for a one-shot bot, a line for a kept one), then stops
# reading and never answers again.
STOPS_READING = (
    "import json, sys, time\n"
    "keep, json_io = sys.argv[1] == 'keep', sys.argv[2] == 'json'\n"
    "first = sys.stdin.readline() if keep else ''\n"
    "if keep and not json_io:\n"
    "    [sys.stdin.readline() for _ in range(2 * int(first) - 1)]\n"
    "if keep:\n"
    "    print(json.dumps({'response': 'PASS'}) if json_io else 'PASS')\n"
    "    print('" + KEEP_RUNNING + "', flush=True)\n"
    "time.sleep(60)\n")
HUGE = "3 0 PLAY " + "W1 " * 100_000  # 300 KB: more than a pipe holds


def _verdict_within(bot: BotProcess, line: str, seconds: float = 60.0) -> str:
    """The verdict on ``line``, asked in a thread so that a judge that hangs fails the test
    (after ``seconds``, far past the bot's limit) instead of hanging it."""
    import concurrent.futures

    from adapter.fakes.botzone_judge import Verdict

    def ask() -> str:
        try:
            return f"answered {bot.request(line)!r}"
        except Verdict as verdict:
            return verdict.code

    pool = concurrent.futures.ThreadPoolExecutor(1)
    try:
        return pool.submit(ask).result(timeout=seconds)
    finally:
        pool.shutdown(wait=False)


@pytest.mark.parametrize("mode", ["simple", "json", "keep", "keep-json"])
def test_a_bot_that_stops_reading_gets_tle_not_a_hung_judge(mode):
    """A keep-running turn was written with a blocking write: a bot that stopped reading its
    input hung the judge for ever once the pipe was full. Every mode now gives it TLE within
    its turn's limit (a one-shot bot gets the whole, here huge, history on stdin)."""
    keep = mode.startswith("keep")
    bot = BotProcess(0, mode, (*BARE_PY, "-c", STOPS_READING, "keep" if keep else "once",
                               "json" if mode.endswith("json") else "simple"),
                     limit=1.0, later_limit=1.0)
    bot.command = bot.command[:-1]  # the script takes no --keep-running
    try:
        if keep:
            assert bot.request("0 0 0") == "PASS"
        else:
            bot.requests.append(HUGE)
            bot.responses.append("PASS")
        assert _verdict_within(bot, HUGE) == "TLE"
    finally:
        bot.close()


@pytest.mark.parametrize("mode,script", [
    ("simple", "import sys\nsys.stdin.read()\nwhile True: print('PASS' * 100)"),
    ("json", "import sys\nsys.stdin.read()\nwhile True: sys.stdout.write('x' * 65536)"),
    ("keep", "while True: print('PASS')"),  # lines without end, never the marker
    ("keep-json", "import sys\nwhile True: sys.stdout.write('{' * 65536)"),  # one endless line
])
def test_a_bot_that_prints_without_end_gets_ole_not_a_judge_out_of_memory(mode, script):
    """A turn's output was gathered whole until the limit: a bot printing without end (lines,
    or one line with no newline) grew the judge's memory by what a pipe carries in 6 s. Past
    1 MB a turn it is OLE, one of Botzone's verdicts."""
    bot = BotProcess(0, mode, (*BARE_PY, "-c", script), limit=30.0, later_limit=30.0)
    bot.command = bot.command[:-1]
    try:
        assert _verdict_within(bot, "0 0 0") == "OLE"
    finally:
        bot.close()


# ---------------------------------------------------------------------- a bot's stderr

# A keep-running bot that passes on every line and says 150 fallback notes amid 60 MB of
# debug lines before its first answer, and 2 more amid 40 MB once its input ends.
NOISY_NOTES = (
    "import sys\n"
    "err = sys.stderr.buffer\n"
    "def noise(mb):\n"
    "    for _ in range(mb * 16): err.write(b'n' * 65535 + b'\\n')\n"
    "def notes(first, count, mb):\n"
    "    for i in range(first, first + count):\n"
    "        err.write(b'mjbot botzone: fallback (late: %d)\\n' % i); noise(mb)\n"
    "n = int(sys.stdin.readline())\n"
    "[sys.stdin.readline() for _ in range(2 * n - 1)]\n"
    "notes(0, 30, 2)\n"
    "notes(30, 120, 0)\n"
    "print('PASS'); print('" + KEEP_RUNNING + "', flush=True)\n"
    "for line in sys.stdin:\n"
    "    print('PASS'); print('" + KEEP_RUNNING + "', flush=True)\n"
    "noise(20); notes(150, 2, 10)\n")

# Runs one kept NOISY_NOTES bot for three lines in a fresh process (argv[1]: the script) and
# prints its notes and how much the process's memory grew meanwhile (peak, in KB).
MEASURED = (
    "import json, resource, sys\n"
    "from adapter.fakes.botzone_judge import BotProcess\n"
    "bot = BotProcess(0, 'keep', (sys.executable, '-S', '-c', sys.argv[1]), 30.0, 30.0)\n"
    "bot.command = bot.command[:-1]\n"
    "before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss\n"
    "answers = [bot.request(line) for line in ('0 0 0', '3 1 PLAY W1', '3 2 PLAY W2')]\n"
    "bot.close()\n"
    "grew = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before\n"
    "print(json.dumps({'answers': answers, 'count': bot.fallback_count,\n"
    "                  'kept': bot.fallbacks, 'grew': grew}))\n")


def test_a_kept_bots_endless_stderr_is_scanned_for_notes_not_held_whole():
    """A keep-running bot's stderr went to a temporary file that close() read whole into
    memory (and decoded, and split): a bot printing debug output without end filled the disk
    and then the judge's memory. It is now a pipe read as the judge waits on the bot, a
    pipeful at a time: every fallback note is counted (the first 100 kept), nothing else
    held; its notes after its input ends are read too."""
    import json
    import subprocess

    done = subprocess.run([sys.executable, "-c", MEASURED, NOISY_NOTES], capture_output=True,
                          text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    said = json.loads(done.stdout)
    assert said["answers"] == ["PASS"] * 3
    assert said["count"] == 152
    assert said["kept"] == [f"late: {i}" for i in range(100)]
    assert said["grew"] < 30_000, said["grew"]  # KB: 100 MB of stderr went through


@pytest.mark.parametrize("mode", ["simple", "json"])
def test_a_one_shot_bots_notes_after_a_megabyte_of_stderr_are_counted(mode):
    """A one-shot turn's stderr was kept up to 1 MB for its fallback notes and the rest
    dropped: a note said after 1 MB of debug output was not counted, and the match passed
    for the policy's. Every note is counted now, and an RE names the bot's last words."""
    from adapter.fakes.botzone_judge import Verdict

    noise = "import sys\nsys.stdin.read()\nsys.stderr.write(('n' * 99 + '\\n') * 20_000)\n"
    answer = "{\"response\": \"PASS\"}" if mode == "json" else "PASS"
    said = noise + (f"sys.stderr.write('mjbot botzone: fallback (late: 1)\\n')\n"
                    f"print({answer!r})\n")
    bot = BotProcess(0, mode, (*BARE_PY, "-c", said), limit=30.0, later_limit=30.0)
    bot.command = bot.command[:-1]
    try:
        assert bot.request("0 0 0") == "PASS"
        assert (bot.fallback_count, bot.fallbacks) == (1, ["late: 1"])
    finally:
        bot.close()
    mute = BotProcess(0, mode, (*BARE_PY, "-c", noise + "sys.stderr.write('LAST')\n"
                                "sys.exit(3)"), limit=30.0, later_limit=30.0)
    mute.command = mute.command[:-1]
    with pytest.raises(Verdict) as verdict:
        mute.request("0 0 0")
    assert verdict.value.code == "RE" and verdict.value.detail.startswith("no response (exit 3)")
    assert verdict.value.detail.endswith("nnnn\\nLAST'"), verdict.value.detail[-40:]


# A keep-running bot that answers its first line and, once file argv[2] exists (the judge is
# done with its turn and reads no more), fills its stderr pipe, made as large as the system
# lets it (pipe-max-size), with debug lines and one fallback note last, starts a helper that
# holds the pipe and writes to it without end, writes the helper's pid to argv[1] and exits
# without waiting for the end of its input.
LAST_NOTE_THEN_A_HELPER = (
    "import fcntl, os, subprocess, sys, time\n"
    "n = int(sys.stdin.readline())\n"
    "[sys.stdin.readline() for _ in range(2 * n - 1)]\n"
    "print('PASS'); print('" + KEEP_RUNNING + "', flush=True)\n"
    "while not os.path.exists(sys.argv[2]): time.sleep(0.01)\n"
    "most = int(open('/proc/sys/fs/pipe-max-size').read())\n"
    "size = fcntl.fcntl(2, fcntl.F_SETPIPE_SZ, most)\n"
    "note = b'mjbot botzone: fallback (late: 7)\\n'\n"
    "line = b'n' * 999 + b'\\n'\n"
    "noise = line * ((size - len(note)) // len(line))\n"
    "os.write(2, noise + note)\n"  # a pipe write returns once all of it is in the pipe
    "helper = subprocess.Popen([sys.executable, '-S', '-c',\n"
    "                           'import os\\nwhile True: os.write(2, b\"h\" * 4096)'])\n"
    "open(sys.argv[1], 'w').write(str(helper.pid))\n"
    "os._exit(0)\n")


def test_a_kept_bots_last_notes_are_counted_though_a_helper_holds_its_stderr(tmp_path):
    """close() reads at most STDERR_READS (16) pipefuls once the bot has exited, so that a
    helper still holding its stderr and writing without end cannot hold the judge. Evidence
    that this loses none of the bot's notes: the bot says its notes itself, so all of them
    are in the pipe when it exits, ahead of anything a helper writes after, and a pipe holds
    at most pipe-max-size (1 MiB by default, the most an unprivileged bot can ask for):
    16 reads of 64 KB. Here the bot's pipe is that large and full, its note the last bytes it
    wrote; the note is counted and close() returns while the helper still writes."""
    import os
    import signal

    pidfile, go = tmp_path / "helper", tmp_path / "go"
    bot = BotProcess(0, "keep", (*BARE_PY, "-c", LAST_NOTE_THEN_A_HELPER, str(pidfile),
                                 str(go)), limit=30.0, later_limit=30.0)
    bot.command = bot.command[:-1]
    try:
        assert bot.request("0 0 0") == "PASS"
        assert bot.proc is not None
        go.touch()
        bot.proc.wait()  # exited, its pipe full: nothing read from it since its answer
        assert pidfile.read_text()
        bot.close()
        assert (bot.fallback_count, bot.fallbacks) == (1, ["late: 7"])
    finally:
        bot.close()
        if pidfile.exists() and pidfile.read_text():
            with __import__("contextlib").suppress(ProcessLookupError):
                os.kill(int(pidfile.read_text()), signal.SIGKILL)


# A bot that starts a helper holding its stdout and stderr (argv[1]: the file it writes the
# helper's pid to), then, one-shot, answers PASS and exits, or, kept running, exits with
# no answer.
LEAVES_A_HELPER = (
    "import subprocess, sys\n"
    "helper = subprocess.Popen([sys.executable, '-S', '-c', 'import time; time.sleep(120)'])\n"
    "open(sys.argv[1], 'w').write(str(helper.pid))\n"
    "sys.stdin.readline()\n"
    "if sys.argv[2] == 'simple':\n"
    "    print('PASS')\n"
    "sys.exit(3)\n")


@pytest.mark.parametrize("mode", ["simple", "keep"])
def test_a_bot_whose_helper_holds_its_output_is_judged_at_its_exit(tmp_path, mode):
    """A turn was read to the end of the bot's output: a helper it started (holding its
    stdout and stderr) kept that end from coming, and a one-shot bot that answered and
    exited got TLE at the limit, a kept one that exited without an answer TLE, not RE. The
    bot's exit ends its turn now, what it printed read."""
    import os
    import signal

    from adapter.fakes.botzone_judge import Verdict

    pidfile = tmp_path / "helper"
    bot = BotProcess(0, mode, (*BARE_PY, "-c", LEAVES_A_HELPER, str(pidfile), mode),
                     limit=10.0, later_limit=10.0)
    bot.command = bot.command[:-1]
    try:
        if mode == "simple":
            assert bot.request("0 0 0") == "PASS"
        else:
            with pytest.raises(Verdict) as verdict:
                bot.request("0 0 0")
            assert (verdict.value.code, verdict.value.detail) == ("RE", "the bot exited (3)")
    finally:
        bot.close()
        if pidfile.exists() and pidfile.read_text():
            with __import__("contextlib").suppress(ProcessLookupError):
                os.kill(int(pidfile.read_text()), signal.SIGKILL)


def _ends(pid: int) -> bool:
    """Whether process ``pid`` ends (a zombie has: it only waits to be reaped) while the
    system is given a moment to deliver a kill."""
    from pathlib import Path

    for _ in range(100):
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except (FileNotFoundError, IndexError):
            return True
        if state == "Z":
            return True
        __import__("time").sleep(0.05)
    return False


@pytest.mark.parametrize("mode", ["simple", "keep"])
def test_a_bots_helpers_end_with_its_turn_or_its_match(tmp_path, mode):
    """Only the bot was killed: a helper it started outlived the judge (one more each turn
    of a one-shot bot, each holding its pipes). The bot leads its own session now, and its
    group ends with its turn (one-shot) or with its close (kept running)."""
    import os
    import signal

    from adapter.fakes.botzone_judge import Verdict

    pidfile = tmp_path / "helper"
    bot = BotProcess(0, mode, (*BARE_PY, "-c", LEAVES_A_HELPER, str(pidfile), mode),
                     limit=30.0, later_limit=30.0)
    bot.command = bot.command[:-1]
    try:
        with __import__("contextlib").suppress(Verdict):
            bot.request("0 0 0")
        if mode == "keep":
            bot.close()
        assert _ends(int(pidfile.read_text()))
    finally:
        bot.close()
        if pidfile.exists() and pidfile.read_text():
            with __import__("contextlib").suppress(ProcessLookupError):
                os.kill(int(pidfile.read_text()), signal.SIGKILL)


def test_a_kept_bots_lines_past_its_marker_are_kept_for_its_next_turn():
    """A kept turn's lines are sliced off where they lie in what was read (taking one at a
    time off the front copied all the rest each time: 2 s of CPU for 1 MB of empty lines);
    what came after the marker (no marker of its own yet) is the next turn's, read from
    there. (A whole turn there answers no request: the next test.) The bot ends its second
    turn only once its next request has come: the first turn's input ends in its data and
    globaldata lines (blank here), and a bot that took the first of those for the request
    ended the turn at once, a whole turn before the request, dropped, and the judge then
    waited 30 s for an answer (TLE) whenever the bot printed it before the judge looked."""
    script = ("import sys\n"
              "sys.stdin.readline(); sys.stdin.readline()\n"
              "sys.stdout.write('PASS\\n\\nkept\\n" + KEEP_RUNNING + "\\nPLAY W1\\n')\n"
              "sys.stdout.flush()\n"
              "for line in sys.stdin:\n"
              "    if line.strip(): break\n"
              "sys.stdout.write('" + KEEP_RUNNING + "\\n')\n"
              "sys.stdout.flush(); sys.stdin.read()\n")
    bot = BotProcess(0, "keep", (*BARE_PY, "-c", script), limit=30.0, later_limit=30.0)
    bot.command = bot.command[:-1]
    try:
        assert bot.request("0 0 0") == "PASS" and bot.data == "kept"
        assert bot.request("3 1 PLAY W1") == "PLAY W1" and bot.unasked == 0
    finally:
        bot.close()


# PLAYS_ITS_DRAWS that prints its answer to its first draw twice, each copy a whole turn,
# both in one write: written apart, the copy could come after the judge's next request, and
# a turn printed after a request is that request's answer to any reader (a WA, by timing).
# Its stdout is its own buffer, written at each flush: where PYTHONUNBUFFERED is set (this
# machine's environment) print wrote each piece on its own, and the long copy's test failed
# about 1 run in 20 (its first stray turn read as 'PASS' alone).
PRINTS_A_TURN_TWICE = PLAYS_ITS_DRAWS.replace(
    "import sys\n",
    "import sys\nsys.stdout = open(1, 'w', buffering=1 << 16, closefd=False)\n", 1).replace(
    "        print(answer(line.strip())); print('" + KEEP_RUNNING + "', flush=True)\n",
    "        twice = line.startswith('2 ') and not globals().get('done')\n"
    "        print(answer(line.strip())); print('" + KEEP_RUNNING + "', flush=not twice)\n"
    "        if twice:\n"
    "            done = True\n"
    "            print('PASS'); print('" + KEEP_RUNNING + "', flush=True)\n")


def test_a_turn_printed_twice_by_a_kept_bot_is_dropped_and_fails_the_soak():
    """A kept-running bot that printed a whole turn twice (its answer and marker, then PASS
    and the marker again) had the copy read by the judge as its answer to the next request,
    one behind for the rest of the match (its next draw answered PASS: WA), where the
    outside seat at the local table drops such turns. Both now read them the one way
    (``unasked_turns``): whole turns already printed before a request answer none, are
    dropped, and counted; the judge's summary names them and they fail the run, and the
    match plays on in step with the bot."""
    from adapter.fakes.botzone_judge import run_matches

    assert PRINTS_A_TURN_TWICE != PLAYS_ITS_DRAWS
    summary = run_matches(1, ["keep"], seed=1,
                          command=(*BARE_PY, "-c", PRINTS_A_TURN_TWICE))
    assert summary["verdicts"] == {}, summary
    assert summary["unasked"] == {"keep": {"turns": 4, "first": "PASS"}}, summary
    well = run_matches(1, ["keep"], seed=1, command=(*BARE_PY, "-c", PLAYS_ITS_DRAWS))
    assert well["verdicts"] == {} and well["unasked"] == {}, well


def test_a_long_stray_turn_is_shown_in_part_with_what_was_left_out():
    """The summary (printed by `mjbot botzone-judge`, and on its stderr) showed the first
    stray turn whole: a kept bot may print 1 MB in a turn. It now shows its first 300 bytes
    and says how many more there were."""
    from adapter.fakes.botzone_judge import run_matches

    long_copy = PRINTS_A_TURN_TWICE.replace("print('PASS'); print('" + KEEP_RUNNING,
                                            "print('PASS'); print('x' * 5000); print('"
                                            + KEEP_RUNNING)
    assert long_copy != PRINTS_A_TURN_TWICE
    summary = run_matches(1, ["keep"], seed=1, command=(*BARE_PY, "-c", long_copy))
    assert summary["verdicts"] == {}, summary
    assert summary["unasked"] == {"keep": {
        "turns": 4, "first": "PASS\n" + "x" * 295 + " ... (4705 bytes left out)"}}


def test_the_judge_soak_keeps_its_bots_game_logs_out_of_the_real_ones(tmp_path, capsys,
                                                                      monkeypatch):
    """`mjbot botzone-judge` let its bots log where a real Botzone bot logs ($MJBOT_LOG_DIR or
    logs/): four soak games a match among the real matches, listed by the replay viewer as
    Botzone games. With --log-dir they go under DIR/bots, beside the judge logs; without it
    the bots write none."""
    import json

    from replay.log import read_log

    default = tmp_path / "real-logs"
    monkeypatch.setenv("MJBOT_LOG_DIR", str(default))
    monkeypatch.chdir(tmp_path)
    done = mjbot_here(capsys, "botzone-judge", "--games", "1", "--modes", "keep",
                      "--log-dir", "soak")
    assert done.returncode == 0, done.stderr[-2000:]
    assert json.loads(done.stdout)["verdicts"] == {}
    assert [p.name for p in (tmp_path / "soak").glob("*.json")] == ["botzone-judge-s0-g0.json"]
    bot_logs = sorted((tmp_path / "soak" / "bots").rglob("*.mjlog.msgpack"))
    assert len(bot_logs) == 4 and {header_of(read_log(p)).seat for p in bot_logs} == {0, 1, 2, 3}
    assert not default.exists(), list(default.rglob("*"))
    done = mjbot_here(capsys, "botzone-judge", "--games", "1", "--modes", "keep")
    assert done.returncode == 0 and not default.exists(), done.stderr[-2000:]


def test_the_judge_log_names_the_fans_as_the_botzone_judge_does():
    """The local judge log wrote PyMahjongGB's wait fan names (独听・单钓 and the like, in 21 of
    40 soak matches), where a Botzone judge log says 边张 / 嵌张 / 单钓将."""
    from adapter.fakes.botzone_judge import DEFAULT_COMMAND

    # seed 700035: a short match (99 log entries) won with 五门齐 箭刻 幺九刻 and a single wait
    result = BotzoneJudge(["keep", "keep-json"] * 2, seed=700_035,
                          command=(*DEFAULT_COMMAND, "--no-log")).play()
    assert result.verdicts == {} and result.reason == "win", result.reason
    fans = result.log["log"][-1]["output"]["display"]["fan"]
    names = [f["name"] for f in fans]
    assert "单钓将" in names and not any(n.startswith("独听") for n in names), names
    record = botzone_log.loads(__import__("json").dumps(result.log, ensure_ascii=False))
    assert any("单钓将=1" in y for e in record.events for y in getattr(e, "yaku", ())), names


# says a long note (more than the stderr pipe holds: its last write returns while the judge
# is still reading the note), then answers, the marker last, and exits at once
ANSWERS_AND_EXITS = ("import os\n"
                     "os.write(2, b'n\\n' * 100_000)\n"
                     "os.write(1, b'PASS\\n" + KEEP_RUNNING + "\\n')\n"
                     "os._exit(0)\n")


def test_a_kept_bots_answer_before_its_exit_is_its_answer():
    """A kept bot that answers (the marker after it) and exits has answered the turn: the
    judge, woken by its stderr, found it exited before it looked at its output again, and
    gave RE 'the bot exited (0)' with the answer in the pipe. The output is read once more
    after the exit is seen (as LineProcess.read_line does)."""
    bot = BotProcess(0, "keep", (*BARE_PY, "-c", ANSWERS_AND_EXITS), limit=30.0,
                     later_limit=30.0)
    bot.command = bot.command[:-1]
    try:
        assert bot.request("0 0 0") == "PASS"
    finally:
        bot.close()


def test_the_judge_seats_a_policy_per_seat(tmp_path, capsys):
    """`mjbot botzone-judge` seated one --policy in all four seats: two policies could not
    meet under the judge. --policies A,B,C,D seats one per seat, read as the arena reads it
    (LABEL=POLICY too): each seat's bot plays its own (its game log's header says so), and
    the summary gives each seat's points, verdicts and fallbacks under its name."""
    import json

    from replay.log import read_log

    done = mjbot_here(capsys, "botzone-judge", "--games", "1", "--modes", "keep",
                      "--policies", "rb=rulebased,greedy,rulebased,tsumogiri",
                      "--log-dir", str(tmp_path))
    assert done.returncode == 0, done.stderr[-2000:]
    summary = json.loads(done.stdout)
    seats = summary["seats"]
    assert [s["policy"] for s in seats] == ["rb", "greedy", "rulebased", "tsumogiri"]
    judged = json.loads((tmp_path / "botzone-judge-s0-g0.json").read_text("utf-8"))
    assert [s["points"] for s in seats] == judged["log"][-1]["output"]["display"]["score"]
    played = {header_of(read_log(p)).seat: header_of(read_log(p)).policy
              for p in (tmp_path / "bots").rglob("*.mjlog.msgpack")}
    assert played == {0: "rulebased", 1: "greedy", 2: "rulebased", 3: "tsumogiri"}


@pytest.mark.parametrize(("args", "said"), [
    (["--policies", "rulebased,greedy,mc"], "--policies needs four names (one per seat), got 3"),
    (["--policies", "rulebased,greedy,mc,rulebsed"], "unknown policy 'rulebsed'"),
    (["--policies", "rulebased,greedy,mc@budget=0.3,mc"],
     "--policies: seat 2 'mc@budget=0.3': the judge's bots keep to Botzone's own time limits"),
    (["--policies", "rulebased,greedy,mine=botzone:python bot.py,mc"],
     "--policies: seat 2 'mine=botzone:python bot.py' is an outside program"),
    (["--policy", "greedy", "--policies", "rulebased,greedy,mc,mc"],
     "argument --policies: not allowed with argument --policy"),
])
def test_a_seat_the_judge_cannot_play_is_one_line(args, said, capsys):
    done = mjbot_here(capsys, "botzone-judge", "--games", "1", "--modes", "keep", *args)
    assert done.returncode == 2 and done.stdout == "", done.stdout
    assert said in done.stderr and len(done.stderr.strip().splitlines()) <= 2, done.stderr
