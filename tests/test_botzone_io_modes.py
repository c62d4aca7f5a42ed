"""Botzone's ways of running a bot (../shared/protocols/botzone.md, "Bot I/O modes"): simple
and JSON interaction one-shot, and keep running in simple and in JSON form, each played through
the CLI and through the upload zip under the local judge, which reads every answer as strictly
as Botzone does (in JSON interaction: one line, one JSON object, every turn)."""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from adapter.fakes.botzone_judge import DEFAULT_COMMAND, MODES, BotzoneJudge
from adapter.platforms.botzone import KEEP_RUNNING
from adapter.platforms.botzone_bundle import build_botzone_bundle
from tests.test_botzone_bundle import bare_python  # noqa: F401  (the fixture)
from tests.test_botzone_judge import BARE_PY, judge_with

# a seed whose hand ends after 27 request lines (cheap for one-shot bots); as rulebased plays
# it, seat 3 answers PLAY, PENG and finally HU
SHORT_MATCH = 8
DEAL = "1 0 0 0 0 B5 F1 W8 T2 T8 B1 W5 T2 B9 W9 T2 B2 B2"


def _json_line(line: str) -> dict[str, Any]:
    """One answer in JSON interaction: must be one JSON object on one line."""
    assert line.endswith("\n") and "\n" not in line[:-1], line
    obj = json.loads(line)
    assert isinstance(obj, dict) and isinstance(obj["response"], str), line
    return obj


def test_json_keep_running_answers_every_turn_as_one_json_object_line():
    """The issue's reproduction: turn 2 on was answered as a bare `PASS` line, which Botzone
    rejects as malformed JSON."""
    proc = subprocess.Popen([sys.executable, "-m", "adapter.cli", "botzone", "--keep-running",
                             "--json", "--no-log"], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    stdin, stdout = proc.stdin, proc.stdout
    assert stdin is not None and stdout is not None and proc.stderr is not None
    answers = []

    def turn(text: str) -> str:
        stdin.write(text + "\n")
        stdin.flush()
        answers.append(_json_line(stdout.readline()))
        assert stdout.readline().strip() == KEEP_RUNNING
        return answers[-1]["response"]

    try:
        assert turn('{"requests":["0 0 1"],"responses":[]}') == "PASS"
        assert turn(json.dumps(DEAL)) == "PASS"
        # later requests as JSON strings, bare lines or whole objects: all answered in JSON
        played = turn("2 W1")
        assert played.startswith("PLAY "), played  # our own draw: a discard
        assert turn(json.dumps(f"3 0 {played}")) == "PASS"
        assert turn(json.dumps({"requests": ["3 1 DRAW"]})) == "PASS"
    finally:
        stdin.close()
        proc.wait(timeout=30)
    assert json.loads(answers[0]["data"])["v"] == 1
    assert proc.returncode == 0, proc.stderr.read()


@pytest.fixture(scope="module")
def entries(tmp_path_factory, bare_python):  # noqa: F811
    """How each entry is started: the installed CLI, and the upload zip in a Python with only
    numpy and MahjongGB (neither logging its games into the checkout)."""
    bundle = build_botzone_bundle(tmp_path_factory.mktemp("bundle"))
    return {"cli": (*DEFAULT_COMMAND, "--no-log"), "zip": (bare_python, str(bundle), "--no-log")}


def test_a_kept_bot_given_a_first_turn_short_of_its_lines_answers_with_stdin_open():
    """A kept-running bot whose first turn announces more lines than come (\"2\", one
    request, and the writer keeps stdin open, as a user's script may) waited for the missing
    lines for ever: no answer, no error. Botzone writes a turn whole, so the lines that do not
    follow the first within a second are not coming: the turn is read as it is, the error
    named on stderr with the raw input and PASS answered."""
    proc = subprocess.Popen([*DEFAULT_COMMAND, "--no-log", "--keep-running"],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
    try:
        proc.stdin.write("2\n0 1 1\n")
        proc.stdin.flush()
        proc.wait(timeout=60)  # the input stays open all along
        assert proc.stdout.readline() == "PASS\n"
        error = proc.stderr.read()
        assert "2 turns need 3 request/response lines" in error, error
        assert "'2\\n0 1 1\\n'" in error and "Traceback" not in error, error
        assert proc.returncode == 0
    finally:
        proc.kill()
        proc.wait()
        for stream in (proc.stdin, proc.stdout, proc.stderr):
            stream.close()


def test_a_kept_bot_answers_a_first_json_turn_without_its_newline():
    """A kept-running bot's first turn, one JSON line, written without its newline by a
    writer that keeps stdin open: the bot waited for the newline for ever. What came is read
    as the line once nothing more follows within a second: the turn is answered and the bot
    keeps running."""
    proc = subprocess.Popen([*DEFAULT_COMMAND, "--no-log", "--keep-running"],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
    try:
        proc.stdin.write('{"requests": ["0 1 1"], "responses": []}')
        proc.stdin.flush()
        assert select.select([proc.stdout], [], [], 60)[0], "no answer in 60 s"
        assert _json_line(proc.stdout.readline())["response"] == "PASS"
        assert proc.stdout.readline().strip() == KEEP_RUNNING
        proc.stdin.close()
        assert proc.wait(timeout=60) == 0
        assert "Traceback" not in proc.stderr.read()
    finally:
        proc.kill()
        proc.wait()
        for stream in (proc.stdin, proc.stdout, proc.stderr):
            stream.close()


@pytest.mark.parametrize("entry", ["cli", "zip"])
def test_json_mode_answers_bad_input_in_json_with_a_one_line_error(entries, entry):
    r = subprocess.run([*entries[entry], "--json", "--no-keep-running"], input="1\n0 1 1\n\n",
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and "Traceback" not in r.stderr
    assert "--json" in r.stderr and "'1\\n0 1 1" in r.stderr  # what was wrong, the raw input
    assert len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert _json_line(r.stdout)["response"] == "PASS"


@pytest.mark.parametrize("entry", ["cli", "zip"])
@pytest.mark.parametrize("keep", ["--keep-running", "--no-keep-running"])
@pytest.mark.parametrize("text", ["not a number\n", '{"requests": [', "2\n0 1 1\n"])
def test_unreadable_input_is_passed_and_the_process_exits_0(entries, entry, keep, text):
    """An input that cannot be read at all (no turn count, broken JSON, turns missing) was
    answered PASS, then exit 2: Botzone judges each run with a verdict beside its output, and
    an answer from a run it does not judge OK is dropped, a lost match. Now the error is one
    line on stderr with the raw input, the answer PASS, and the exit 0, in both entries."""
    r = subprocess.run([*entries[entry], keep], input=text, capture_output=True, text=True,
                       timeout=60)
    assert r.returncode == 0 and "Traceback" not in r.stderr, r.stderr
    first = r.stdout.split("\n")[0]
    assert (json.loads(first)["response"] if first.startswith("{") else first) == "PASS"
    assert len(r.stderr.strip().splitlines()) == 1 and repr(text[:10])[1:-1] in r.stderr


@pytest.mark.parametrize("entry", ["cli", "zip"])
@pytest.mark.parametrize("mode", MODES)
def test_each_io_mode_plays_a_match_the_strict_judge_accepts(entries, entry, mode):
    # seat 3 plays in the mode under test, the others keep running (one-shot seats are slow)
    result = BotzoneJudge(["keep", "keep", "keep", mode], SHORT_MATCH, entries[entry],
                          limit=30, later_limit=30).play()
    assert result.verdicts == {}, result.reason
    assert result.reason in ("win", "exhaustive") and sum(result.scores) == 0
    assert len(result.turn_seconds[3]) > 10


@pytest.mark.skipif((os.cpu_count() or 1) < 2 or not Path("/proc/self/task").is_dir(),
                    reason="OpenBLAS starts no thread of its own on one core; threads are "
                    "counted in Linux's /proc")
@pytest.mark.parametrize("given", ["unset", "empty"])
@pytest.mark.parametrize("entry", ["cli", "zip"])
def test_the_bot_loads_numpy_with_one_blas_thread(entries, entry, given):
    """numpy's OpenBLAS started a thread per core as the bot imported it, which doubled the
    import's CPU and slowed every one-shot turn (a process start each) beside other work.
    The bot, kept running after its first answer, is one thread: the environment names no
    thread count here (this suite's conftest sets one for the processes it starts), or names
    an empty one (``OPENBLAS_NUM_THREADS=``), which OpenBLAS reads as none given."""
    env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_NUM_THREADS"}
    if given == "empty":
        env["OPENBLAS_NUM_THREADS"] = ""
    proc = subprocess.Popen([*entries[entry], "--keep-running"], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
    try:
        proc.stdin.write("1\n0 0 1\n\n\n")
        proc.stdin.flush()
        answer = proc.stdout.readline().strip()
        while (line := proc.stdout.readline()) and line.strip() != KEEP_RUNNING:
            pass
        assert answer == "PASS" and line.strip() == KEEP_RUNNING, proc.stderr.read()
        threads = len(os.listdir(f"/proc/{proc.pid}/task"))
    finally:
        proc.stdin.close()
        proc.wait(timeout=30)
    assert threads == 1


# ---------------------------------------------------------------------- the judge's strictness

PASS_JSON = 'import sys; sys.stdin.read(); print(\'{"response": "PASS"}\')'
KEEP_JSON_THEN_BARE = (
    "import json, sys\n"
    "sys.stdin.readline()\n"
    "print(json.dumps({'response': 'PASS'})); print('" + KEEP_RUNNING + "', flush=True)\n"
    "for line in sys.stdin:\n"
    "    print('PASS'); print('" + KEEP_RUNNING + "', flush=True)\n")
KEEP_JSON_PASS = (  # answers JSON to JSON-encoded requests only
    "import json, sys\n"
    "sys.stdin.readline()\n"
    "print(json.dumps({'response': 'PASS'})); print('" + KEEP_RUNNING + "', flush=True)\n"
    "for line in sys.stdin:\n"
    "    ok = isinstance(json.loads(line), str)\n"
    "    print(json.dumps({'response': 'PASS'}) if ok else 'not a JSON string')\n"
    "    print('" + KEEP_RUNNING + "', flush=True)\n")


def _judge_with(seat: int, mode: str, script: str) -> BotzoneJudge:
    return judge_with(seat, mode, [*BARE_PY, "-c", script])  # stdlib-only bots


@pytest.mark.parametrize("script", [
    "print('PASS')",  # a bare line
    'print(\'{"response":\\n "PASS"}\')',  # an object over two lines
    "print('[\"PASS\"]')",  # JSON, but not an object
    'print(\'{"response": "PASS"}\'); print(\'{"response": "PASS"}\')',  # two objects
])
def test_json_one_shot_answers_that_are_not_one_json_object_line_lose_as_nj(script):
    result = _judge_with(2, "json", "import sys; sys.stdin.read()\n" + script).play()
    assert result.verdicts == {2: "NJ"} and result.scores == [10, 10, -30, 10]


def test_a_bare_line_in_a_later_json_keep_running_turn_loses_as_nj():
    result = _judge_with(1, "keep-json", KEEP_JSON_THEN_BARE).play()
    assert result.verdicts == {1: "NJ"}, result.reason


def test_json_keep_running_turns_carry_the_request_as_a_json_string():
    # the bot answers every JSON-encoded request with a JSON PASS: the judge accepts each such
    # answer, until a PASS on the bot's own draw breaks the rules (WA, not NJ)
    result = _judge_with(3, "keep-json", KEEP_JSON_PASS).play()
    assert result.verdicts == {3: "WA"}, result.reason


def test_a_json_answer_in_simple_interaction_is_wa():
    result = _judge_with(0, "simple", PASS_JSON).play()
    assert result.verdicts == {0: "WA"}, result.reason
