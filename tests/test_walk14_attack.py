"""What a hostile peer or a crafted file does to what mjbot exposes (walk14): each attack that
found a defect, on real files, real subprocesses and real sockets on loopback."""

from __future__ import annotations

import asyncio
import contextlib
import gzip
import json
import os
import re
import socket
import subprocess
import sys
import threading
from pathlib import Path

import aiohttp
import msgpack
from hypothesis import given, settings
from hypothesis import strategies as st

from adapter.platforms.mjai import MjaiBot, MjaiSettings
from adapter.serve.status import StatusServer
from adapter.session import KEPT_ERRORS, LOGGED_ERRORS
from protocols.codec import ProtocolError, load_json
from protocols.tenhou import parse_tag
from replay import logzip
from replay.formats.tenhou_client import login_id
from tests.log_samples import log_frames
from tests.viewer_fixtures import platform_game

ROOT = Path(__file__).resolve().parent.parent


def gzip_bomb(sound: Path, path: Path, inflated: int) -> Path:
    """A compressed log that is ``sound``'s header and then its smallest frame again and again,
    some ``inflated`` bytes of them: gzip packs it about 400 to 1 (our logs pack 11 to 1), so
    a small file is a huge log to read (each frame some 370 bytes of Python objects)."""
    frames = [msgpack.packb(f, use_bin_type=True) for f in log_frames(sound)]
    small = min(frames[1:-1], key=len)
    body = frames[0] + small * (inflated // len(small))
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(gzip.compress(body, 9))
    assert len(body) > 100 * path.stat().st_size
    return path


def _refused_by_replay(bomb: Path) -> None:
    """`mjbot replay BOMB` refuses it in one line naming it, exit 2, no traceback."""
    done = subprocess.run([sys.executable, "-m", "adapter.cli", "replay", str(bomb)],
                          capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "Traceback" not in done.stderr
    (line,) = done.stderr.strip().splitlines()
    assert "decompression bomb" in line and str(bomb) in line


def test_a_gzip_bomb_is_refused_in_one_line_by_replay(tmp_path: Path) -> None:
    """`mjbot replay` on a 40 KB compressed log that inflates to 16 MB of one small frame
    repeated read it whole (2 s and 145 MB for that one; a 2.4 MB file inflates to 1 GB and
    took some 14 GB to read, to say only that the game was unfinished). Refused in one line
    now, exit 2, before more than the bound was inflated."""
    bomb = gzip_bomb(platform_game(tmp_path / "sound.mjlog.msgpack"),
                     tmp_path / "bomb.mjlog.msgpack.gz", 16 << 20)
    _refused_by_replay(bomb)


def test_a_gzip_bomb_followed_by_other_bytes_is_refused_as_well(tmp_path: Path) -> None:
    """The same bomb with 11 MB of other bytes after its gzip stream (which the reader leaves
    unread): the bound was the whole file's, 100 times 11 MB, past 1 GiB, so it was read whole
    (as a 2.6 MB bomb that inflates to 1 GiB, padded so, would be: some 12 GB), `mjbot replay`
    rc 0. The bound is now that of the bytes read so far: refused in one line, exit 2."""
    bomb = gzip_bomb(platform_game(tmp_path / "sound.mjlog.msgpack"),
                     tmp_path / "bomb.mjlog.msgpack.gz", 16 << 20)
    with bomb.open("ab") as f:
        f.write(os.urandom(11 << 20))
    assert logzip.inflated_bound(bomb.stat().st_size) == logzip.MAX_INFLATED
    _refused_by_replay(bomb)


def test_the_bound_leaves_our_logs_and_big_ones_alone(tmp_path: Path) -> None:
    """Our own logs, compressed, read back whole; data that packs tightly but inflates to no
    more than FREE_INFLATED reads whatever its ratio; past it, the bound is a ratio."""
    sound = platform_game(tmp_path / "sound.mjlog.msgpack")
    data = sound.read_bytes()
    assert logzip.inflate(gzip.compress(data)) == data
    zeros = bytes(logzip.FREE_INFLATED)
    assert logzip.inflate(gzip.compress(zeros)) == zeros
    try:
        logzip.inflate(gzip.compress(zeros + b"\0"))
    except logzip.Unreadable as exc:
        assert "decompression bomb" in str(exc)
    else:
        raise AssertionError("a bomb one byte past the bound was read")
    assert logzip.inflated_bound(11 << 20) == logzip.MAX_INFLATED


def test_a_gzip_bomb_in_the_log_folder_is_a_422_and_the_list_goes_on(tmp_path: Path) -> None:
    """The viewer (serve's, or `mjbot view`'s) on a folder holding a bomb: its game is the
    422 of a file no reader takes (it read the whole of it first), and the list and the
    sound game beside it answer."""
    root = tmp_path / "logs"
    sound = platform_game(root / "sound.mjlog.msgpack")
    gzip_bomb(sound, root / "bomb.mjlog.msgpack.gz", 16 << 20)

    async def run() -> None:
        server = StatusServer(roots=[str(root)])
        url = await server.start("127.0.0.1", 0)
        try:
            async with aiohttp.ClientSession() as http:
                async with http.get(f"{url}api/games") as listed:
                    assert listed.status == 200
                    names = {g["name"] for g in (await listed.json())["games"]}
                assert names == {"sound.mjlog.msgpack", "bomb.mjlog.msgpack.gz"}
                async with http.get(f"{url}api/games/0~bomb.mjlog.msgpack.gz") as game:
                    assert game.status == 422, await game.text()
                async with http.get(f"{url}api/games/0~sound.mjlog.msgpack") as game:
                    assert game.status == 200
        finally:
            await server.stop()

    asyncio.run(run())


def hostile_server(replies: list[bytes]) -> tuple[socket.socket, threading.Thread]:
    """A TCP server on loopback that answers a client's first bytes with ``replies``, one
    connection, then closes it."""
    listener = socket.create_server(("127.0.0.1", 0))

    def serve() -> None:
        conn, _ = listener.accept()
        with conn:
            conn.recv(65536)
            for reply in replies:
                conn.sendall(reply)
            conn.shutdown(socket.SHUT_WR)
            with contextlib.suppress(OSError):
                while conn.recv(65536):
                    pass

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    return listener, thread


def test_a_tenhou_tag_of_a_million_spaces_is_one_line_not_a_hang(tmp_path: Path) -> None:
    """A Tenhou server (or whoever sits on its plain TCP line) sends, after HELO, one
    NUL-framed tag of 1 MB of spaces (the most the client's TagStream holds). The tag
    pattern backtracked through every way to share the spaces among its parts: 64 KB took 8
    s, this one more than the ten minutes we waited, the event loop held throughout, so the
    client did not even end on SIGTERM (and in `mjbot serve` every session and the status
    page stood still). Read linearly now: one 'not a tag' line, and the client ends when
    the server closes."""
    listener, thread = hostile_server([b'<HELO uname="%4E%6F%4E%61%6D%65"/>\0',
                                       b"<A" + b" " * (1 << 20) + b"x>\0"])
    with listener:
        port = listener.getsockname()[1]
        # a limit far past the fixed client's second, for a hang only
        done = subprocess.run([sys.executable, "-m", "adapter.cli", "tenhou", "--server",
                               f"127.0.0.1:{port}", "--games", "1", "--no-log"],
                              capture_output=True, text=True, cwd=ROOT, timeout=120)
        thread.join(timeout=10)
    assert done.returncode == 1, done.stderr[-2000:]
    assert "Traceback" not in done.stderr
    assert done.stderr.count('"tenhou: bad server input"') == 1
    assert "not a tag" in done.stderr


@settings(max_examples=300, derandomize=True, deadline=None)
@given(st.lists(st.sampled_from(['<', '>', '/', ' ', '"', '=', 'a', 'B', '1', '_', '-', '\t',
                                 '\u3000', 'é', ' a="1"', '<T12/>']), max_size=16))
def test_the_tag_reader_reads_what_the_pattern_did(pieces: list[str]) -> None:
    """parse_tag, read a piece at a time, takes and refuses what the one pattern it replaced
    took and refused (here as the oracle, on texts short enough for it)."""
    def by_pattern(text: str) -> tuple[str, dict[str, str]] | None:
        m = OLD_TAG.match(text.strip())
        return None if m is None else (m.group(1), dict(OLD_ATTR.findall(m.group(2))))

    text = "".join(pieces)
    for candidate in (text, "<" + text, text + "/>", "<" + text + ">"):
        try:
            tag = parse_tag(candidate)
            got: tuple[str, dict[str, str]] | None = (tag.name, tag.attrs)
        except ProtocolError:
            got = None
        assert got == by_pattern(candidate), candidate


OLD_TAG = re.compile(r'^<\s*([A-Za-z][A-Za-z0-9]*)((?:\s+[A-Za-z_][\w-]*\s*=\s*"[^"<>]*")*)'
                     r'\s*/?\s*>$')
OLD_ATTR = re.compile(r'([A-Za-z_][\w-]*)\s*=\s*"([^"<>]*)"')


def test_a_number_of_5000_digits_from_the_mjai_server_is_one_line(tmp_path: Path) -> None:
    """An mjai server whose event holds an integer of 5000 digits: json.loads refuses it
    with a plain ValueError (Python's 4300-digit limit), not the JSONDecodeError every reader
    of outside JSON caught, and `mjbot mjai` (mjai.app's stdin form) ended with a traceback,
    its game lost. It is a line that is not JSON now, answered none, and the game goes on."""
    lines = ['[{"type":"start_game","id":0}]',
             '[{"type":"start_kyoku","bakaze":"E","dora_marker":"1m","kyoku":' + "1" * 5000
             + "}]",
             '[{"type":"end_game"}]']
    done = subprocess.run([sys.executable, "-m", "adapter.cli", "mjai", "0", "--no-log"],
                          input="\n".join(lines) + "\n", capture_output=True, text=True,
                          cwd=ROOT, timeout=120)
    assert "Traceback" not in done.stderr, done.stderr[-2000:]
    assert done.returncode == 0
    assert done.stdout.splitlines() == ['{"type": "none"}'] * 3
    (bad,) = [line for line in done.stderr.splitlines() if "mjai: bad input" in line]
    assert "a number with too many digits" in bad


def test_every_reader_of_outside_json_takes_a_too_long_number_as_not_json() -> None:
    """load_json, which the platform clients, the outside seats and the Botzone bot read
    with: a JSONDecodeError, as for any other text that is not JSON."""
    try:
        load_json("[" + "7" * 5000 + "]")
    except json.JSONDecodeError as exc:
        assert exc.msg == "a number with too many digits"
    else:
        raise AssertionError("read")
    assert load_json("[" + "7" * 4000 + "]") == [int("7" * 4000)]


def test_a_server_sending_only_junk_is_not_a_line_each_nor_kept_each(tmp_path: Path) -> None:
    """A Tenhou server that sends 5,000 tags the client cannot read (100,000 took it 6 s):
    each was an error line (100,000 lines in the journal of `mjbot serve`) and a message kept
    in the session's summary for as long as the line stayed up. The first 20 are a line
    each, then one line a minute with the last and the count since, and one as the session
    ends with the rest: 5,000 counted, some 22 lines."""
    junk = 5000
    listener, thread = hostile_server([b'<HELO uname="%4E%6F%4E%61%6D%65"/>\0',
                                       b"<ZZ/>\0" * junk])
    with listener:
        port = listener.getsockname()[1]
        done = subprocess.run([sys.executable, "-m", "adapter.cli", "tenhou", "--server",
                               f"127.0.0.1:{port}", "--games", "1", "--no-log"],
                              capture_output=True, text=True, cwd=ROOT, timeout=120)
        thread.join(timeout=10)
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr[-2000:]
    said = [json.loads(line) for line in done.stderr.splitlines()
            if '"tenhou: bad server input' in line]
    assert len(said) <= LOGGED_ERRORS + 3, len(said)
    assert said[-1]["total"] == junk
    assert LOGGED_ERRORS + sum(line.get("count", 0) for line in said[LOGGED_ERRORS:]) == junk


def test_a_session_keeps_its_first_errors_and_counts_the_rest() -> None:
    """The summary's messages are the first KEPT_ERRORS; ``error_count`` (the footers', the
    closing lines') counts every one."""
    bot = MjaiBot(MjaiSettings(write_log=False))
    try:
        for n in range(KEPT_ERRORS * 3):
            assert bot.handle(json.dumps({"type": f"teleport{n}"})) == '{"type": "none"}'
        assert len(bot.summary.errors) == KEPT_ERRORS
        assert "teleport0" in bot.summary.errors[0]
        assert bot.summary.error_count == KEPT_ERRORS * 3
    finally:
        bot.close()


def test_a_transcript_of_helo_openings_is_refused_at_once(tmp_path: Path) -> None:
    """A file that opens as a Tenhou client transcript (``Send: <HELO ``) and then holds
    16,000 more ``<HELO `` and no ``>`` (96 KB): the search for the login's name scanned the
    rest of the file from each of them, and `mjbot replay` (as the viewer's build, holding
    the interpreter) was still at it after two minutes. Each is scanned to the end of its
    own tag now: refused in one line, exit 2."""
    crafted = tmp_path / "helo.log"
    crafted.write_text("Send: <HELO " + "<HELO " * 16000 + "\n")
    done = subprocess.run([sys.executable, "-m", "adapter.cli", "replay", str(crafted)],
                          capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr[-2000:]
    (line,) = done.stderr.strip().splitlines()
    assert "no game in it" in line


def test_a_transcript_of_websocket_helo_tags_left_open_is_refused_at_once(
        tmp_path: Path) -> None:
    """The WebSocket login's search, beside the ``<HELO`` one: a file that opens as a client
    transcript (``Send: {``) and then holds 16,000 ``"tag":"HELO"`` and no ``}`` (192 KB). The
    one pattern scanned from each of them to the object's end, here the file's: `mjbot replay`
    took 83 s (the viewer's build as long). Each object is found first, then its tag: refused
    in one line, exit 2, and a login in the WebSocket form is still found (the ID masked)."""
    crafted = tmp_path / "helo.log"
    crafted.write_text("Send: {" + '"tag":"HELO"' * 16000 + "\n")
    done = subprocess.run([sys.executable, "-m", "adapter.cli", "replay", str(crafted)],
                          capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr[-2000:]
    (line,) = done.stderr.strip().splitlines()
    assert "no game in it" in line
    assert login_id('Get: {"tag":"T"}\nSend: {"tag": "HELO", "name": "ID0A1B2C3D-4E5F6A7B", '
                    '"sx": "M"}\n') == "ID0A1B2C3D-4E5F6A7B"


def test_a_transcript_whose_login_name_is_long_is_refused_at_once(tmp_path: Path) -> None:
    """A file that opens as a client transcript whose HELO names a login of 8,000 characters
    (13 KB): a refusal's reasons are masked against each first part of the ID (a reason cut
    inside it), all 8,000 of them as one pattern of 32 million characters, which took
    `mjbot replay` 3 GB and 34 s (the memory and time growing with the square of the
    name). Only the parts that fit in the reason are looked for now: refused in one line, exit
    2, the name shown nowhere."""
    crafted = tmp_path / "helo.log"
    name = "A" * 8000
    crafted.write_text(f'Send: <HELO name="{name}" sx="M"/>\n' + "Get: <ZZZ/>\n" * 400)
    done = subprocess.run([sys.executable, "-m", "adapter.cli", "replay", str(crafted)],
                          capture_output=True, text=True, cwd=ROOT, timeout=15)
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr[-2000:]
    (line,) = done.stderr.strip().splitlines()
    assert "no game in it" in line and "AAA" not in done.stdout + done.stderr
