"""`mjbot mjai` driven by a harness that replays the recorded mjai game of ../shared/data/mjai
as one seat sees it: in the mjai.app form (a JSON array per line, a real subprocess) and as a
client of a fake mjai TCP server; every answer is valid mjai and possible at that moment."""

from __future__ import annotations

import asyncio
import json
import select
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from adapter.platforms.mjai import MjaiBot, MjaiSettings, run_tcp
from brain.state import TableState
from protocols import events as ev
from protocols import tiles as T
from protocols.mjai import MjaiCodec, check_answer
from replay import replayer
from replay.log import read_log
from tests.in_process import mjbot_here
from tests.line_faults import capture_client_readers, time_out
from tests.shared_data import MJAI_GAME as DATA


def _seen_by(seat: int) -> list[dict[str, Any]]:
    """The recorded game's events as ``seat`` receives them (others' tiles hidden)."""
    out = []
    for line in DATA.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        m = json.loads(line)
        if m["type"] == "start_game":
            m = {**m, "id": seat}
        elif m["type"] == "start_kyoku":
            m = {**m, "tehais": [h if s == seat else ["?"] * 13
                                 for s, h in enumerate(m["tehais"])]}
        elif m["type"] == "tsumo" and m["actor"] != seat:
            m = {**m, "pai": "?"}
        out.append(m)
    return out


def _asks(m: dict[str, Any], seat: int) -> bool:
    """Whether mjai.app ends a batch here: a moment at which ``seat`` may act."""
    kind, actor = m["type"], m.get("actor")
    return (kind in ("tsumo", "chi", "pon", "reach") and actor == seat) or (
        kind in ("dahai", "kakan") and actor != seat) or kind in (
        "start_game", "end_kyoku", "end_game")


def _batches(seat: int) -> list[list[dict[str, Any]]]:
    batches, current = [], []
    for m in _seen_by(seat):
        current.append(m)
        if _asks(m, seat):
            batches.append(current)
            current = []
    if current:
        batches.append(current)
    return batches


def _check_answers(seat: int, batches: list[list[dict[str, Any]]],
                   answers: list[dict[str, Any]]) -> dict[str, int]:
    """Every answer is valid mjai and possible on the table as the recording has it."""
    codec, state = MjaiCodec(), TableState("riichi")
    kinds: dict[str, int] = {}
    for batch, answer in zip(batches, answers, strict=True):
        assert check_answer(answer) is None, answer
        last: Any = None
        for m in batch:
            for item in codec.feed(m):
                if isinstance(item, ev.GameStarted):
                    state = TableState("riichi", item.seat)
                if isinstance(item, ev.DecisionRequest):
                    last = item
                elif not hasattr(item, "message"):
                    state.apply(item)
        kinds[answer["type"]] = kinds.get(answer["type"], 0) + 1
        if answer["type"] != "none":
            assert answer["actor"] == seat
        own_turn = isinstance(last, ev.DecisionRequest) and last.kind == "turn"
        if answer["type"] == "dahai":
            assert T.from_mjai(answer["pai"]) in state.hand, \
                (answer, [T.to_mjai(t) for t in state.hand])
        if answer["type"] in ("reach", "ankan", "kakan"):
            assert own_turn
        if answer["type"] in ("chi", "pon", "daiminkan"):
            assert last is not None and last.kind == "claim"
            for t in answer["consumed"]:
                assert T.from_mjai(t) in state.hand
        if own_turn and batch[-1]["type"] == "tsumo":
            assert answer["type"] != "none", "our own draw needs a move"
    return kinds


@pytest.mark.parametrize("seat", [0, 1])
def test_a_full_game_through_the_stdin_form(tmp_path: Path, seat: int) -> None:
    batches = _batches(seat)
    text = "".join(json.dumps(b) + "\n" for b in batches)
    done = subprocess.run([sys.executable, "-m", "adapter.cli", "mjai", str(seat),
                           "--log-dir", str(tmp_path)], input=text, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "Traceback" not in done.stderr
    answers = [json.loads(line) for line in done.stdout.splitlines()]
    assert len(answers) == len(batches)
    kinds = _check_answers(seat, batches, answers)
    assert kinds.get("dahai", 0) > 20
    (path,) = list(tmp_path.rglob("*.mjlog.msgpack"))
    log = read_log(path)
    assert log.complete and len(log.decisions()) > 20
    assert replayer.reparse(replayer.load(str(path)))["identical"]


def test_the_seat_argument_holds_where_start_game_does_not_name_the_seat(
        tmp_path: Path) -> None:
    """mjai.app passes the seat as the first argument: a start_game without ``id`` played
    seat 0 whatever the argument said (every answer of the game for the wrong seat)."""
    seat = 2
    batches = _batches(seat)[:40]
    sent = [[{k: v for k, v in m.items() if k != "id"} for m in batches[0]], *batches[1:]]
    text = "".join(json.dumps(b) + "\n" for b in sent)
    done = subprocess.run([sys.executable, "-m", "adapter.cli", "mjai", str(seat),
                           "--no-log"], input=text, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0 and '"mjai: bad input"' not in done.stderr, done.stderr[-2000:]
    answers = [json.loads(line) for line in done.stdout.splitlines()]
    kinds = _check_answers(seat, batches, answers)
    assert kinds.get("dahai", 0) > 3
    bad = subprocess.run([sys.executable, "-m", "adapter.cli", "mjai", "7", "--no-log"],
                         input="", capture_output=True, text=True, timeout=60)
    assert bad.returncode != 0 and "must be 0..3, got 7" in bad.stderr


def test_bad_lines_are_answered_none_and_logged(tmp_path: Path) -> None:
    lines = ["not json", '[{"type": "bogus"}]', '{"no": "type"}',
             '[{"type": "start_game", "id": 0, "names": ["a", "b", "c", "d"]}]',
             '[{"type": "tsumo", "actor": 0, "pai": "9x"}]', "[]"]
    done = subprocess.run([sys.executable, "-m", "adapter.cli", "mjai", "--log-dir",
                           str(tmp_path)], input="\n".join(lines) + "\n", capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0 and "Traceback" not in done.stderr
    answers = [json.loads(line) for line in done.stdout.splitlines()]
    assert answers == [{"type": "none"}] * len(lines)
    assert "unknown type 'bogus'" in done.stderr and "bad tile" in done.stderr


async def test_a_full_game_as_a_client_of_an_mjai_server(tmp_path: Path) -> None:
    seat = 2
    events = _seen_by(seat)
    answers: list[dict[str, Any]] = []
    served = asyncio.Event()

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.write(b'{"type":"hello","protocol":"mjsonp","protocol_version":3}\n')
        await writer.drain()
        answers.append(json.loads(await reader.readline()))
        for m in events:
            writer.write((json.dumps(m) + "\n").encode())
            await writer.drain()
            answers.append(json.loads(await asyncio.wait_for(reader.readline(), 10)))
        writer.close()
        served.set()

    server = await asyncio.start_server(serve, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    bot = MjaiBot(MjaiSettings(name="mjbot-test", log_dir=str(tmp_path)))
    async with server:
        summary = await asyncio.wait_for(run_tcp("127.0.0.1", port, bot), 300)
        await asyncio.wait_for(served.wait(), 10)
    assert answers[0] == {"type": "join", "name": "mjbot-test", "room": "default"}
    assert len(answers) == len(events) + 1
    assert not summary.errors
    _check_answers(seat, [[m] for m in events], answers[1:])

def _assert_stopped_log(folder: Path) -> None:
    (path,) = list(folder.rglob("*.mjlog.msgpack"))
    log = read_log(path)
    assert log.footer is not None and log.truncated is None
    assert log.footer.result.get("stopped") is True and log.footer.result.get("unfinished")
    assert replayer.summarize(replayer.load(str(path)))["unfinished"] == "stopped on request"


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_in_a_game_closes_its_log_as_stopped(tmp_path: Path, signum: int) -> None:
    """The stdin form stopped in the middle of a game: exit 128 + the signal, no traceback,
    the log's footer says the game was stopped (SIGTERM left it without a footer, Ctrl-C
    with one that read as a finished game)."""
    seat = 1
    proc = subprocess.Popen([sys.executable, "-m", "adapter.cli", "mjai", str(seat),
                             "--log-dir", str(tmp_path)], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert proc.stdin is not None and proc.stdout is not None
    try:
        for batch in _batches(seat)[:12]:
            proc.stdin.write(json.dumps(batch) + "\n")
            proc.stdin.flush()
            json.loads(proc.stdout.readline())
        proc.send_signal(signum)
        code = proc.wait(20)
        err = proc.stderr.read() if proc.stderr else ""
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert code == 128 + signum, err[-2000:]
    assert f"stopped ({signal.Signals(signum).name})" in err and "Traceback" not in err
    _assert_stopped_log(tmp_path)


def test_a_signal_in_the_middle_of_a_decision_stops_the_stdin_form(tmp_path: Path) -> None:
    """A signal that lands while the policy thinks (mc searching, about 2 s of a 3 s budget):
    the stop was raised inside the policy, taken there for its failure (a fallback), and the
    bot played on. The signal goes at the first answer that takes over half a second."""
    seat = 1
    proc = subprocess.Popen([sys.executable, "-m", "adapter.cli", "mjai", str(seat), "--policy",
                             "mc", "--budget", "3", "--log-dir", str(tmp_path)],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    assert proc.stdin is not None and proc.stdout is not None
    try:
        for i, batch in enumerate(_batches(seat)[:60]):
            proc.stdin.write(json.dumps(batch) + "\n")
            proc.stdin.flush()
            if i > 0 and not select.select([proc.stdout], [], [], 0.5)[0]:
                break  # thinking (the first answer waits for the imports)
            json.loads(proc.stdout.readline())
        else:
            pytest.fail("mc never searched for half a second")
        proc.send_signal(signal.SIGTERM)
        code = proc.wait(20)
        err = proc.stderr.read() if proc.stderr else ""
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert code == 128 + signal.SIGTERM, err[-2000:]
    assert "raised Stopped" not in err and "Traceback" not in err
    _assert_stopped_log(tmp_path)


async def _scripted_server(events: list[dict[str, Any]], held: asyncio.Event | None = None) \
        -> tuple[asyncio.Server, int]:
    """A loopback mjai server that greets, sends ``events`` one by one (each answered), and
    then closes the line, or, given ``held``, sets it and waits for the client to end the
    connection; with its port."""

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.write(b'{"type":"hello","protocol":"mjsonp","protocol_version":3}\n')
        await writer.drain()
        await reader.readline()
        for m in events:
            writer.write((json.dumps(m) + "\n").encode())
            await writer.drain()
            await reader.readline()
        if held is None:
            writer.close()
            return
        held.set()
        await reader.read()

    server = await asyncio.start_server(serve, "127.0.0.1", 0)
    return server, server.sockets[0].getsockname()[1]



async def test_sigterm_in_a_game_on_an_mjai_server(tmp_path: Path) -> None:
    """The TCP client stopped by SIGTERM in the middle of a game: the same."""
    answered = asyncio.Event()  # then the server waits on: the client ends the connection
    server, port = await _scripted_server(_seen_by(0)[:30], held=answered)
    async with server:
        proc = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "adapter.cli", "mjai", "--server", f"127.0.0.1:{port}",
            "--log-dir", str(tmp_path), stderr=asyncio.subprocess.PIPE)
        try:
            await asyncio.wait_for(answered.wait(), 120)
            proc.send_signal(signal.SIGTERM)
            _out, err = await asyncio.wait_for(proc.communicate(), 20)
        finally:
            if proc.returncode is None:
                proc.kill()
                await proc.wait()
    assert proc.returncode == 128 + signal.SIGTERM, err.decode()[-2000:]
    assert "stopped (SIGTERM)" in err.decode() and "Traceback" not in err.decode()
    _assert_stopped_log(tmp_path)


async def test_a_game_the_server_cuts_is_logged_unfinished(tmp_path: Path) -> None:
    """The server closes the line in the middle of a game: the footer says the game did not
    end (it read as a finished game), and not that it was stopped."""
    server, port = await _scripted_server(_seen_by(3)[:25])
    async with server:
        await asyncio.wait_for(run_tcp("127.0.0.1", port, MjaiBot(
            MjaiSettings(log_dir=str(tmp_path)))), 120)
    (path,) = list(tmp_path.rglob("*.mjlog.msgpack"))
    log = read_log(path)
    assert log.footer is not None and log.footer.result.get("unfinished") is True
    assert "stopped" not in log.footer.result
    assert replayer.summarize(replayer.load(str(path)))["unfinished"] == \
        "the session ended before the game did"


async def test_a_server_that_drops_the_line_in_a_game_is_a_failed_session(tmp_path: Path) -> None:
    """The server closes the line in the middle of a game: ``mjbot mjai --server`` exited 0
    (only its game log said the game was cut). It now exits 1 with one line, as ``mjbot
    tenhou`` and ``mjbot ntpu`` do; the original server's own close after ``end_game`` is
    still a session played to its end, exit 0."""
    events = _seen_by(1)
    assert events[-1]["type"] == "end_game"
    for played, code in ((25, 1), (len(events), 0)):
        folder = tmp_path / str(played)
        server, port = await _scripted_server(events[:played])
        async with server:
            proc = await asyncio.create_subprocess_exec(
                sys.executable, "-m", "adapter.cli", "mjai", "--server", f"127.0.0.1:{port}",
                "--log-dir", str(folder), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
            _out, err = await asyncio.wait_for(proc.communicate(), 120)
        text = err.decode()
        assert proc.returncode == code, text[-2000:]
        assert "Traceback" not in text
        said = [line for line in text.splitlines() if line.startswith("mjbot mjai:")]
        assert said == ([] if code == 0 else
                        ["mjbot mjai: the server closed the connection before end_game"])
        (path,) = list(folder.rglob("*.mjlog.msgpack"))
        assert replayer.summarize(replayer.load(str(path)))["unfinished"] == (
            None if code == 0 else "the session ended before the game did")


async def test_the_servers_error_before_it_drops_the_line_is_told_to_the_user(
        tmp_path: Path) -> None:
    """The original server sends ``error`` when it rejects an answer and then ends the game:
    the user read only "the server closed the connection before end_game" (the reason was
    in the game log alone). The reason is now on the log stream and in that last line."""
    events = [*_seen_by(0)[:6], {"type": "error", "message": "invalid dahai: 9z"}]
    server, port = await _scripted_server(events)
    async with server:
        proc = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "adapter.cli", "mjai", "--server", f"127.0.0.1:{port}",
            "--log-dir", str(tmp_path), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        _out, err = await asyncio.wait_for(proc.communicate(), 120)
    text = err.decode()
    assert proc.returncode == 1 and "Traceback" not in text, text[-2000:]
    said = [line for line in text.splitlines() if line.startswith("mjbot mjai:")]
    assert said == ["mjbot mjai: the server closed the connection before end_game (its last "
                    "error: invalid dahai: 9z)"]
    assert '"mjai: the server reported an error"' in text


@pytest.mark.parametrize("events", [20, 1])
async def test_a_server_silent_in_a_game_is_given_up_not_waited_for_for_ever(
        tmp_path: Path, events: int) -> None:
    """A server that stops sending in the middle of a game but keeps the connection open (it
    hung, or its host or the line died without a FIN): the client waited for ever. Past
    ``--idle-limit`` it gives the line up: one line, exit 1, the game logged unfinished.
    Before start_game (players still joining) silence is no fault. Silent right after
    start_game (``events`` 1): the next read began before start_game was taken, with no
    limit, and waited for ever."""
    answered = asyncio.Event()
    server, port = await _scripted_server(_seen_by(2)[:events], held=answered)
    async with server:
        proc = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "adapter.cli", "mjai", "--server", f"127.0.0.1:{port}",
            "--idle-limit", "1", "--log-dir", str(tmp_path), stdout=subprocess.PIPE,
            stderr=subprocess.PIPE)
        _out, err = await asyncio.wait_for(proc.communicate(), 120)
    text = err.decode()
    assert answered.is_set()
    assert proc.returncode == 1 and "Traceback" not in text, text[-2000:]
    said = [line for line in text.splitlines() if line.startswith("mjbot mjai:")]
    assert said == ["mjbot mjai: the server sent nothing for 1 s in a game; the line was "
                    "given up before end_game"]
    (path,) = list(tmp_path.rglob("*.mjlog.msgpack"))
    assert replayer.summarize(replayer.load(str(path)))["unfinished"] == \
        "the session ended before the game did"


async def test_an_over_long_or_too_deeply_nested_line_from_the_server_is_answered_none(
        tmp_path: Path) -> None:
    """A line over asyncio's 64 KiB limit ended the TCP client with a ValueError traceback,
    and JSON nested too deeply for the parser with a RecursionError: each is now one error
    and one ``none``, and the lines after it are read where the server's lines start."""
    seat = 2
    events = _seen_by(seat)[:8]
    hostile = ['{"type": "dahai", "actor": 3, "pai": "' + "x" * 200_000 + '"}',
               "[" * 100_000 + "]" * 100_000]
    answers: list[dict[str, Any]] = []
    served = asyncio.Event()

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.write(b'{"type":"hello","protocol":"mjsonp","protocol_version":3}\n')
        await writer.drain()
        answers.append(json.loads(await reader.readline()))
        for line in [*hostile, *(json.dumps(m) for m in events)]:
            writer.write((line + "\n").encode())
            await writer.drain()
            answers.append(json.loads(await asyncio.wait_for(reader.readline(), 10)))
        writer.close()
        served.set()

    server = await asyncio.start_server(serve, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    bot = MjaiBot(MjaiSettings(log_dir=str(tmp_path)))
    async with server:
        summary = await asyncio.wait_for(run_tcp("127.0.0.1", port, bot), 60)
        await asyncio.wait_for(served.wait(), 10)
    assert answers[1:3] == [{"type": "none"}] * 2
    assert len(answers) == 1 + len(hostile) + len(events)
    _check_answers(seat, [[m] for m in events], answers[3:])
    assert any("over the 65536-byte limit" in e for e in summary.errors)
    assert any("nested too deeply" in e for e in summary.errors)


def test_too_deeply_nested_json_on_stdin_is_answered_none_and_kept_in_the_game_log(
        tmp_path: Path) -> None:
    nested = "[" * 100_000 + "]" * 100_000
    lines = ['[{"type": "start_game", "id": 0, "names": ["a", "b", "c", "d"]}]', nested,
             "not json"]
    done = subprocess.run([sys.executable, "-m", "adapter.cli", "mjai", "--log-dir",
                           str(tmp_path)], input="\n".join(lines) + "\n", capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr[-2000:]
    assert [json.loads(line) for line in done.stdout.splitlines()] == [{"type": "none"}] * 3
    assert "nested too deeply" in done.stderr
    (path,) = list(tmp_path.rglob("*.mjlog.msgpack"))
    raws = [f.raw for f in read_log(path).frames if type(f).__name__ == "RxFrame"]
    assert raws == lines


def test_a_line_over_the_limit_on_stdin_is_cut_said_and_answered(tmp_path: Path) -> None:
    """The stdin form read a line whole, however long: a writer that never ended its line
    (``mjbot mjai < /dev/zero``) grew the bot until the kernel killed it (exit 137), where
    the TCP form keeps a line's first LINE_LIMIT bytes. The stdin form now cuts it at
    STDIN_LINE_LIMIT (1 MiB: a bad line under it is still logged whole), says so once,
    answers it, and reads on."""
    import io

    from adapter.platforms.mjai import STDIN_LINE_LIMIT, run_stdio

    start = '[{"type": "start_game", "id": 0, "names": ["a", "b", "c", "d"]}]'
    long_line = '[{"type": "dahai", "actor": 3, "pai": "' + "x" * 1_200_000 + '"}]'
    data = "\n".join([start, long_line, "not json"]) + "\n"
    stdin = io.TextIOWrapper(io.BytesIO(data.encode()))
    stdout = io.StringIO()
    summary = run_stdio(MjaiBot(MjaiSettings(log_dir=str(tmp_path))), stdin, stdout)
    assert [json.loads(line) for line in stdout.getvalue().splitlines()] == [{"type": "none"}] * 3
    cut = [e for e in summary.errors if f"over the {STDIN_LINE_LIMIT}-byte limit" in e]
    assert len(cut) == 1 and f"a line of {len(long_line) + 1} bytes" in cut[0], summary.errors


def test_bench_mjai_extra_lists_what_mjai_needs():
    """`pip install -e '.[mjai]'` brings loguru and requests with their own dependencies (the
    old `--no-deps ... requests` line left requests without urllib3 & co)."""
    import tomllib

    extras = tomllib.loads((Path(__file__).resolve().parent.parent / "pyproject.toml")
                           .read_text())["project"]["optional-dependencies"]
    names = {req.split(">")[0].split("=")[0].strip() for req in extras["mjai"]}
    assert {"loguru", "requests"} <= names
    assert "mjai" not in names  # its mahjong~=1.2 pin cannot resolve beside our mahjong 2


def test_bench_mjai_without_the_package_names_what_is_missing(capsys):
    import importlib.util

    if importlib.util.find_spec("mjai") is not None:
        pytest.skip("the opt-in mjai package is installed here")
    done = mjbot_here(capsys, "bench", "mjai", "--games", "1")
    assert done.returncode == 2 and "Traceback" not in done.stderr
    lines = done.stderr.splitlines()
    assert len(lines) == 1, lines
    assert "needs the module" in lines[0] and "pip install -e '.[mjai]'" in lines[0]


async def test_a_line_that_times_out_ends_the_tcp_session_quietly(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A read that fails with ETIMEDOUT (an OSError, not a ConnectionError) ended the client
    with a traceback; it is now the end of the session, like a closed line."""
    readers = capture_client_readers(monkeypatch)

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.write(b'{"type":"hello","protocol":"mjsonp","protocol_version":3}\n')
        await writer.drain()
        await reader.readline()  # join
        time_out(readers[0])
        await asyncio.sleep(5)
        writer.close()

    server = await asyncio.start_server(serve, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    bot = MjaiBot(MjaiSettings(log_dir=str(tmp_path)))
    async with server:
        summary = await asyncio.wait_for(run_tcp("127.0.0.1", port, bot), 30)
    assert summary.answers == 1 and not summary.finished


def test_bytes_that_are_not_utf8_under_a_strict_locale_are_answered_none() -> None:
    """Where the locale decodes stdin strictly (en_US.UTF-8; PYTHONIOENCODING stands in for
    it here), one stray byte ended the stdin form with a UnicodeDecodeError traceback."""
    import os
    env = {**os.environ, "PYTHONIOENCODING": "utf-8:strict"}
    done = subprocess.run([sys.executable, "-m", "adapter.cli", "mjai", "--no-log"],
                          input=b'[{"type": "start_game", "id": 0}]\n\xff\xfe\n[]\n',
                          capture_output=True, env=env, timeout=60)
    assert done.returncode == 0 and b"Traceback" not in done.stderr, done.stderr[-2000:]
    assert [json.loads(line) for line in done.stdout.splitlines()] == [{"type": "none"}] * 3
    assert b"not JSON" in done.stderr


def test_connect_timeout_is_the_users_as_in_ntpu() -> None:
    """`mjbot mjai --server` kept trying for a fixed 10 s (ntpu has --connect-timeout):
    a bot started before its server, or one whose server is late, could not say how long
    to wait. Nobody listens here: one line after the given half second, exit 1."""
    from tests.serve_helpers import free_port

    port = free_port()
    done = subprocess.run(
        [sys.executable, "-m", "adapter.cli", "mjai", "--server", f"127.0.0.1:{port}",
         "--connect-timeout", "0.5", "--no-log"],
        capture_output=True, text=True, timeout=8)  # the old fixed 10 s would not end here
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
    assert done.stderr.strip().splitlines()[-1].startswith(
        f"mjbot mjai: cannot connect to 127.0.0.1:{port}")


def test_a_game_log_that_cannot_grow_mid_game_leaves_every_batch_answered(tmp_path: Path) -> None:
    """The stdin form on a full disk: the log's header fits, a frame in the first hand does
    not. That write ended the session (exit 1, 'cannot write its output', the rest of the
    game unanswered); now the failure is logged once and every batch is still answered."""
    from tests.full_disk import mjbot_on_a_full_disk

    batches = _batches(0)
    text = "".join(json.dumps(b) + "\n" for b in batches)
    done = mjbot_on_a_full_disk("mjai", "0", "--log-dir", str(tmp_path), input=text,
                                file_bytes=3000)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "Traceback" not in done.stderr
    assert done.stderr.count("game log write failed") == 1
    answers = [json.loads(line) for line in done.stdout.splitlines()]
    assert len(answers) == len(batches)
    _check_answers(0, batches, answers)


@pytest.mark.parametrize("answer", [
    {"type": []}, {"type": {"dahai": 1}}, {"type": "chi", "actor": 0, "target": 3, "pai": "3m",
                                          "consumed": 5},
    {"type": "ankan", "actor": 0, "consumed": None}])
def test_an_answer_of_the_wrong_shape_is_named_not_raised(answer: dict[str, Any]) -> None:
    """An outside mjai bot's answer is read by check_answer (adapter/local/external): a
    ``type`` that is a list or an object, or ``consumed`` that is no list, raised TypeError
    there, and every game the bot sat in ended as a referee error with a traceback instead of
    one garbage fault of the bot's."""
    problem = check_answer(answer)
    assert problem is not None and "\n" not in problem
