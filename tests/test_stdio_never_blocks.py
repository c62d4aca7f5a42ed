"""stdin/stdout sessions whose referee stops reading without closing the pipe (left16): each
test runs the real command with its stdout a real pipe that nobody reads, filled."""

from __future__ import annotations

import fcntl
import os
import pty
import resource
import signal
import subprocess
import sys
import termios
import time
import zipfile
from pathlib import Path

import pytest

from adapter.platforms.mjai_bundle import build_mjai_bundle
from replay import replayer
from replay.log import read_log

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"),
                                reason="F_GETPIPE_SZ and FIONREAD on a pipe: Linux")

HAND = "111 112 113 121 122 123 131 132 133 141 142 143 151 152 153 161"
GAME = f"/start MJ 2 mjbot\n/initGame east east 1 1 0\n/initCard {HAND}\n"
READY_REPLY = b"/ready\n"
GUARD = 60.0  # seconds: only a process that never gets there takes this long


def _unread(fd: int) -> int:
    count = bytearray(4)
    fcntl.ioctl(fd, termios.FIONREAD, count)
    return int.from_bytes(count, sys.byteorder)


NTPU = (["ntpu", "--stdio"], GAME.encode(), b"/ready\n", READY_REPLY)
# mjai.app's form: every line an array of events, each answered ("none" to an empty one)
MJAI_NONE = b'{"type": "none"}\n'
MJAI = (["mjai"], b'[{"type": "start_game", "id": 0}]\n', b"[]\n", MJAI_NONE)


def _start_with_unread_stdout(tmp_path: Path, form: tuple[list[str], bytes, bytes, bytes],
                              *options: str, argv: list[str] | None = None,
                              cwd: Path | None = None) -> tuple[subprocess.Popen[bytes], int]:
    """The command (``form``: its words, the lines that start a game, a line each of whose
    copies is answered with ``reply``) in a game, its stdout a pipe nobody reads, sent more
    lines than the pipe holds replies to; returned once the pipe is full (no room for one
    more reply). Returns the process and the pipe's read end. ``argv``: another command
    line, run in ``cwd`` (the mjai.app upload's bot.py), in place of the words."""
    words, game, line, reply = form
    read_end, write_end = os.pipe()
    if argv is None:
        argv = [sys.executable, "-m", "adapter.cli", *words, "--log-dir", str(tmp_path),
                *options]
    proc = subprocess.Popen(argv, cwd=cwd,
                            stdin=subprocess.PIPE, stdout=write_end, stderr=subprocess.PIPE)
    os.close(write_end)
    assert proc.stdin is not None
    size = fcntl.fcntl(read_end, fcntl.F_GETPIPE_SZ)
    proc.stdin.write(game + line * (2 * size // len(reply)))
    proc.stdin.flush()  # the bot reads it (a thread, or the pipe holds the rest): no block
    # a full pipe: every page of it holds as many replies as fit (a reply is never split
    # across pages: each write of one goes whole into the last page, or into a fresh one)
    page = resource.getpagesize()
    full = size // page * (page // len(reply) * len(reply))
    give_up = time.monotonic() + GUARD
    while _unread(read_end) < full and proc.poll() is None:
        assert time.monotonic() < give_up, "the pipe never filled"
        time.sleep(0.05)
    assert proc.poll() is None, "it ended before its stdout filled"
    return proc, read_end


def _finish(proc: subprocess.Popen[bytes]) -> tuple[int | None, str]:
    """The exit status (None: still running after GUARD seconds: killed) and stderr."""
    try:
        code: int | None = proc.wait(GUARD)
    except subprocess.TimeoutExpired:
        code = None
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.stderr is not None
    return code, proc.stderr.read().decode(errors="replace")


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_a_stop_ends_ntpu_stdio_whose_referee_stopped_reading(tmp_path: Path,
                                                              signum: int) -> None:
    """`mjbot ntpu --stdio` whose referee stops reading (stdout a full pipe, still open):
    the reply was written on the event loop, and the blocked write held the loop, so SIGTERM
    and Ctrl-C were never acted on (asyncio's handler only notes a signal for the loop, and
    the interrupted write was retried): the process ran on until killed, its game log without
    its footer. A thread writes the replies now: the stop ends it at once, 128 + the signal,
    and the game's log says it was stopped."""
    proc, read_end = _start_with_unread_stdout(tmp_path, NTPU)
    try:
        proc.send_signal(signum)
        code, err = _finish(proc)
    finally:
        os.close(read_end)
    assert code == 128 + signum, err[-2000:]
    assert f"mjbot ntpu: stopped ({signal.Signals(signum).name})" in err
    assert "Traceback" not in err
    (path,) = list(tmp_path.rglob("*.mjlog.msgpack"))
    log = read_log(path)
    assert log.footer is not None and log.footer.result.get("stopped") is True
    assert replayer.summarize(replayer.load(str(path)))["unfinished"] == "stopped on request"


def _ended_by_the_reply_limit(tmp_path: Path, form: tuple[list[str], bytes, bytes, bytes],
                              prefix: str, line: str) -> Path:
    """``form`` run with --reply-limit 0.5, its stdout never read and its stdin left open:
    exit 1, ``line`` its one line starting ``prefix``, no traceback. Its game log."""
    proc, read_end = _start_with_unread_stdout(tmp_path, form, "--reply-limit", "0.5")
    try:
        code, err = _finish(proc)  # stdin stays open: only the limit can end it
    finally:
        os.close(read_end)
    assert code == 1, err[-2000:]
    said = [text for text in err.splitlines() if text.startswith(prefix)]
    assert said == [line]
    assert "Traceback" not in err and "Exception ignored" not in err
    (path,) = list(tmp_path.rglob("*.mjlog.msgpack"))
    return path


def test_a_reply_not_taken_within_the_reply_limit_ends_the_session(tmp_path: Path) -> None:
    """A referee that stops reading without closing the pipe, and neither stops us: the
    session hung for ever. A reply it has not taken within --reply-limit (30 s by default)
    ends it as a closed stdout does: one line, exit 1, the game logged as unfinished."""
    path = _ended_by_the_reply_limit(tmp_path, NTPU, "mjbot ntpu:",
                                     "mjbot ntpu: the referee went away: it stopped reading "
                                     "our replies (stdout: none taken for 0.5 s)")
    assert replayer.summarize(replayer.load(str(path)))["unfinished"]


def test_an_mjai_answer_not_taken_within_the_reply_limit_ends_the_session(
        tmp_path: Path) -> None:
    """`mjbot mjai` (mjai.app's stdin form) whose referee stops reading without closing the
    pipe: the answer's write blocked for ever. One not taken within --reply-limit (2 s by
    default, mjai.app's own limit on an answer) ends the session: one line, exit 1, the
    game logged as unfinished."""
    path = _ended_by_the_reply_limit(tmp_path, MJAI, "mjbot mjai:",
                                     "mjbot mjai: the referee went away: it stopped reading "
                                     "our answers (stdout: none taken for 0.5 s)")
    log = read_log(path)
    assert log.footer is not None and log.footer.result.get("unfinished") is True


def test_the_mjai_app_upload_whose_referee_stopped_reading_says_so_in_one_line(
        tmp_path: Path) -> None:
    """The upload's bot.py (mjai.app's `python -u bot.py SEAT`, the same stdin form, 2 s)
    whose stdout filled, nobody reading: it ended in a traceback of RefereeGone. One line
    now, as `mjbot mjai` says it, and exit 1."""
    upload = tmp_path / "workspace"
    with zipfile.ZipFile(build_mjai_bundle(tmp_path / "bundle")) as zf:
        zf.extractall(upload)
    proc, read_end = _start_with_unread_stdout(
        tmp_path, MJAI, argv=[sys.executable, "-u", "bot.py", "0"], cwd=upload)
    try:
        code, err = _finish(proc)  # stdin stays open: only the limit can end it
    finally:
        os.close(read_end)
    assert code == 1, err[-2000:]
    assert "Traceback" not in err, err[-2000:]
    said = [line for line in err.splitlines() if line.startswith("mjbot")]
    assert said == ["mjbot: the referee went away: it stopped reading our answers "
                    "(stdout: none taken for 2 s)"]


def test_a_stop_still_ends_mjai_stdin_whose_referee_stopped_reading(tmp_path: Path) -> None:
    """The mjai stdin form is synchronous: its stop's handler raises in the waiting thread,
    which SIGTERM ended before (the interrupted write) and must still end now that a thread
    writes (the wait for it): 143 at once, the game logged as stopped."""
    proc, read_end = _start_with_unread_stdout(tmp_path, MJAI, "--reply-limit", "600")
    try:
        proc.send_signal(signal.SIGTERM)
        code, err = _finish(proc)
    finally:
        os.close(read_end)
    assert code == 143 and "mjbot mjai: stopped (SIGTERM)" in err, err[-2000:]
    (path,) = list(tmp_path.rglob("*.mjlog.msgpack"))
    log = read_log(path)
    assert log.footer is not None and log.footer.result.get("stopped") is True


LINES = f"/ready\n{GAME}/mo 171\n/ask throw\n/exit\n/close\n"


def test_replies_to_a_file_come_whole_and_in_order(tmp_path: Path) -> None:
    """stdout a regular file (asyncio's pipe transport refuses one): every reply there."""
    out = tmp_path / "replies.txt"
    with out.open("wb") as stdout:
        done = subprocess.run([sys.executable, "-m", "adapter.cli", "ntpu", "--stdio",
                               "--no-log"], input=LINES.encode(), stdout=stdout,
                              stderr=subprocess.PIPE, timeout=GUARD)
    assert done.returncode == 0, done.stderr[-2000:]
    replies = out.read_text().splitlines()
    assert replies[0] == "/ready" and replies[1].startswith("/throw ") and len(replies) == 2


def test_replies_to_a_terminal_leave_it_as_it_was() -> None:
    """stdout a terminal (which stderr shares): every reply there, and the terminal's file
    not left non-blocking (a shell that shares it then failed its reads with EAGAIN)."""
    main, side = pty.openpty()
    try:
        done = subprocess.run([sys.executable, "-m", "adapter.cli", "ntpu", "--stdio",
                               "--no-log"], input=LINES.encode(), stdout=side,
                              stderr=subprocess.PIPE, timeout=GUARD)
        assert done.returncode == 0, done.stderr[-2000:]
        assert os.get_blocking(side)
        shown = os.read(main, 65536).decode().splitlines()
    finally:
        os.close(main)
        os.close(side)
    assert shown[0] == "/ready" and shown[1].startswith("/throw ") and len(shown) == 2


def test_the_reply_limit_goes_with_the_stdin_form() -> None:
    """--reply-limit over TCP would be taken and never applied: refused in one line."""
    done = subprocess.run([sys.executable, "-m", "adapter.cli", "ntpu", "--server",
                           "127.0.0.1:9", "--reply-limit", "5", "--no-log"],
                          capture_output=True, text=True, timeout=GUARD)
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        "mjbot ntpu: --reply-limit goes with --stdio (the limit on a referee that stops "
        "reading our stdout)"]


def test_an_mjai_answer_to_a_paused_terminal_waits_for_it() -> None:
    """`mjbot mjai` at a terminal whose output is paused (Ctrl-S; a slow ssh link blocks the
    same): nobody went away, the user reads. Its answer's write waited for the terminal
    longer than --reply-limit (2 s by default), and the session ended as if a referee had
    stopped reading: exit 1, `the referee went away`. The limit holds for a pipe or a socket
    only: at a terminal (and into a file, on a slow disk) the answer waits as it did."""
    main, side = pty.openpty()
    try:
        termios.tcflow(side, termios.TCOOFF)  # the terminal's output paused: Ctrl-S
        proc = subprocess.Popen([sys.executable, "-m", "adapter.cli", "mjai", "--no-log",
                                 "--reply-limit", "0.5"],
                                stdin=subprocess.PIPE, stdout=side, stderr=subprocess.PIPE)
        assert proc.stdin is not None
        proc.stdin.write(MJAI[1] + MJAI[2] * 3)
        proc.stdin.flush()
        give_up = time.monotonic() + GUARD
        while _unread(proc.stdin.fileno()) and proc.poll() is None:  # read: answering now
            assert time.monotonic() < give_up, "it never read its input"
            time.sleep(0.05)
        proc.stdin.close()
        time.sleep(2.0)  # four times the limit, paused
        termios.tcflow(side, termios.TCOON)  # Ctrl-Q
        code, err = _finish(proc)
        os.set_blocking(main, False)
        try:
            shown = os.read(main, 65536).decode().splitlines()
        except BlockingIOError:  # nothing shown
            shown = []
    finally:
        os.close(main)
        os.close(side)
    assert code == 0, err[-2000:]
    assert shown == [MJAI_NONE.decode().strip()] * 4
