"""`mjbot replay` on a file of no format we know: every format is tried and each says why not."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from replay import formats, replayer
from replay.log import GameLogWriter, Header
from tests.in_process import mjbot_here

ROOT = Path(__file__).resolve().parent.parent
LABELS = ("mjbot msgpack log", "tenhou mjlog XML", "tenhou.net/6 JSON", "mjai JSONL",
          "Botzone judge log", "Botzone human games (preprocessed)", "NYCU SGF",
          "NTPU command log", "Tenhou client transcript")


def _mjbot(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "adapter.cli", *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)


def _header_only(path: Path) -> bytes:
    GameLogWriter(path, Header("test", "riichi", seat=0, game_id="g")).close()
    return path.read_bytes()


NOTES = b"East 1: I drew 5m and threw it.\nThen seat 2 won.\n"
GARBAGE = bytes(range(7, 256)) + b"\x00\x01\x02" * 50
UNKNOWN = {
    "notes.txt": NOTES,
    "garbage.bin": GARBAGE,
    "empty.log": b"",
    "cut-header.mjlog.msgpack": None,  # our own log cut inside its header frame
    "number.json": b"42\n",
}


@pytest.mark.parametrize("name", list(UNKNOWN))
def test_unknown_file_says_which_formats_were_tried(tmp_path: Path, name: str) -> None:
    path = tmp_path / name
    content = UNKNOWN[name]
    if content is None:
        content = _header_only(tmp_path / "whole.mjlog.msgpack")[:7]
    path.write_bytes(content)
    with pytest.raises(formats.UnknownFormat) as info:
        replayer.load(path)
    assert [label for label, _ in info.value.attempts] == list(LABELS)
    assert all(why and "\n" not in why for _, why in info.value.attempts)
    r = _mjbot("replay", str(path))
    assert r.returncode == 2, r.stdout
    assert "Traceback" not in r.stderr
    if name == "garbage.bin":  # binary: one line, not eight formats' "not UTF-8 text"
        own = dict(info.value.attempts)["mjbot msgpack log"]
        assert r.stderr.splitlines() == [
            f"mjbot replay: {path}: not a game log we know: not an mjbot msgpack log ({own}), "
            f"and not UTF-8 text (byte 0x80 at offset 121), which the {len(LABELS) - 1} other "
            "formats are"], r.stderr
        return
    if name == "empty.log":  # nothing there: one line, not nine formats' ways of finding none
        assert r.stderr.splitlines() == [
            f"mjbot replay: {path}: not a game log we know: the file is empty"], r.stderr
        return
    lead = "" if name != "cut-header.mjlog.msgpack" else \
        f" (mjbot msgpack log, by its opening: {dict(info.value.attempts)['mjbot msgpack log']})"
    assert f"{path}: not a game log we know{lead}; tried:" in r.stderr
    lines = r.stderr.splitlines()
    for label in LABELS:  # one line per format, with its reason
        assert sum(line.strip().startswith(f"{label}:") for line in lines) == 1, (label, lines)


def test_plain_text_is_not_read_as_msgpack_frames(tmp_path: Path) -> None:
    path = tmp_path / "notes.txt"
    path.write_bytes(NOTES)
    with pytest.raises(formats.UnknownFormat) as info:
        replayer.load(path)
    reasons = dict(info.value.attempts)
    assert "not XML" in reasons["tenhou mjlog XML"]
    assert "not JSON" in reasons["tenhou.net/6 JSON"]
    assert "line 1" in reasons["NTPU command log"]
    assert "(;" in reasons["NYCU SGF"]


def test_binary_garbage_is_not_text_for_the_text_formats(tmp_path: Path) -> None:
    path = tmp_path / "garbage.bin"
    path.write_bytes(GARBAGE)
    with pytest.raises(formats.UnknownFormat) as info:
        replayer.load(path)
    reasons = dict(info.value.attempts)
    assert all("not UTF-8 text" in reasons[label] for label in LABELS[1:])


def test_a_known_format_is_still_found_whatever_it_starts_with(tmp_path: Path) -> None:
    path = tmp_path / "own.mjlog.msgpack"
    _header_only(path)
    assert formats.read(path.read_bytes(), path).name == "mjbot"
    tenhou6 = tmp_path / "game.json"
    tenhou6.write_text("\n\n  " + '{"log": 3}')  # a broken tenhou6 file: its own reason first
    with pytest.raises(formats.UnknownFormat) as info:
        replayer.load(tenhou6)
    assert "expected an object with a 'log' list" in dict(info.value.attempts)["tenhou.net/6 JSON"]


MARKED = {  # a damaged file of a format its opening names, and what its own reader says
    "judge.json": (b'{"initdata": {}, "log": [{"output": 3}]}', "Botzone judge log"),
    "game.mjlog": (b'<mjloggm ver="2.3"><GO type="169"/><INIT seed="x"/></mjloggm>',
                   "tenhou mjlog XML"),
    "game.sgf": (b"(;GM[taiwan16])", "NYCU SGF"),
    "game6.json": (b'{"title": ["x"], "log": 3}', "tenhou.net/6 JSON"),
}


@pytest.mark.parametrize("name", list(MARKED))
def test_a_damaged_file_leads_with_its_own_formats_refusal(tmp_path: Path, name: str) -> None:
    """The reader of the format the file's opening names speaks first: the user of a damaged
    Botzone log needs the Botzone reader's reason, not eight other formats' reasons."""
    content, label = MARKED[name]
    path = tmp_path / name
    path.write_bytes(content)
    with pytest.raises(formats.UnknownFormat) as info:
        replayer.load(path)
    assert info.value.likeliest == label
    why = dict(info.value.attempts)[label]
    first = str(info.value).splitlines()[0]
    assert first == f"not a game log we know ({label}, by its opening: {why}); tried:"


@pytest.mark.parametrize("name", ["judge.json", "game6.json"])
def test_a_damaged_file_saved_with_a_byte_order_mark_leads_as_well(tmp_path: Path,
                                                                  name: str) -> None:
    """The Botzone readers read a file an editor saved with a byte-order mark (dd21cc6), but
    the opening was looked for at the mark: such a damaged file named no format, and its own
    reader's refusal was one line among the other formats'."""
    content, label = MARKED[name]
    path = tmp_path / name
    path.write_bytes("\ufeff".encode() + content)
    with pytest.raises(formats.UnknownFormat) as info:
        replayer.load(path)
    assert info.value.likeliest == label


@pytest.mark.parametrize("name", ["notes.txt", "number.json", "empty.log"])
def test_a_file_with_no_formats_mark_names_none(tmp_path: Path, name: str) -> None:
    path = tmp_path / name
    path.write_bytes(UNKNOWN[name] or b"")
    with pytest.raises(formats.UnknownFormat) as info:
        replayer.load(path)
    assert info.value.likeliest is None
    assert str(info.value).splitlines()[0] == ("not a game log we know: the file is empty"
                                               if name == "empty.log" else
                                               "not a game log we know; tried:")


@pytest.mark.parametrize("command", [("replay",), ("review",), ("dataset", "import")])
def test_an_empty_file_is_one_line_in_every_command(
        tmp_path: Path, command: tuple[str, ...], capsys: pytest.CaptureFixture[str]) -> None:
    """An empty file (a log whose writer never wrote, a `touch`ed name) was refused by
    `mjbot replay` and `review` with ten lines, every format's way of finding nothing in it
    ('the file is empty', 'not XML (no element found ...)', 'no /start line ...'), and by
    `dataset import` with a pointer to those ten lines. Now one line that says it is empty,
    exit 2, in each."""
    path = tmp_path / "game.mjlog.msgpack"
    path.write_bytes(b"")
    out = ("--out", str(tmp_path / "ds")) if command[0] == "dataset" else ()
    r = mjbot_here(capsys, *command, str(path), *out)
    assert r.returncode == 2, r.stdout
    assert r.stderr.splitlines() == [
        f"mjbot {' '.join(command)}: {path}: not a game log we know: the file is empty"]
