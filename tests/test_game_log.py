"""The game-log writer and reader: round trip, cut files, a killed writer, secrets."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import BinaryIO

import msgpack
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from protocols import events as ev
from replay import schema
from replay.log import (
    DecisionFrame,
    EventFrame,
    Footer,
    GameLogWriter,
    HandEndFrame,
    Header,
    LogError,
    RxFrame,
    TxFrame,
    log_path,
    parse_log,
    read_log,
)
from tests.log_samples import sample_hand, sample_header, write_steps

ROOT = Path(__file__).resolve().parent.parent


def _write_game(path: Path, hands: int = 2, secrets: tuple[str, ...] = ()) -> None:
    w = GameLogWriter(path, sample_header(), secrets=secrets)
    w.event(ev.GameStarted("riichi", 1, ("a", "b", "c", "d"), {"aka": 1, "length": "east"}))
    for h in range(hands):
        write_steps(w, sample_hand(h))
    w.event(ev.GameEnded((20000, 40000, 20000, 20000)))
    w.close(Footer({"rank": 1}, (20000, 40000, 20000, 20000)))


def _expected_frames(hands: int = 2) -> list[object]:
    """The frames in order, with the timestamps left out (compared separately)."""
    out: list[object] = [("event", ev.GameStarted("riichi", 1, ("a", "b", "c", "d"),
                                                  {"aka": 1, "length": "east"}))]
    for h in range(hands):
        for method, arg in sample_hand(h):
            if method == "decision":
                assert isinstance(arg, tuple), arg
                req, legal, action, policy, cands, elapsed, fallback = arg
                out.append(("decision", req, tuple(legal), action, policy, tuple(cands),
                            elapsed, fallback))
            else:
                out.append((method, arg))
            if method == "event" and isinstance(arg, ev.RoundWon):
                out.append(("hand",))
    out.append(("event", ev.GameEnded((20000, 40000, 20000, 20000))))
    return out


def _strip(frame: object) -> tuple[object, ...]:
    if isinstance(frame, RxFrame):
        return ("rx", frame.raw)
    if isinstance(frame, TxFrame):
        return ("tx", frame.raw)
    if isinstance(frame, EventFrame):
        return ("event", frame.event)
    if isinstance(frame, DecisionFrame):
        return ("decision", frame.request, frame.legal, frame.action, frame.policy,
                frame.candidates, frame.elapsed, frame.fallback)
    assert isinstance(frame, HandEndFrame)
    return ("hand",)


def test_round_trip_reads_back_identical(tmp_path: Path) -> None:
    path = tmp_path / "g.mjlog.msgpack"
    _write_game(path)
    log = read_log(path)
    assert log.header == sample_header()
    assert log.header.policy_config == {"depth": 2, "weights": [1.0, 0.5]}
    assert [_strip(f) for f in log.frames] == _expected_frames()
    assert log.footer is not None and log.footer.scores == (20000, 40000, 20000, 20000)
    assert log.footer.result == {"rank": 1} and log.footer.ended
    assert log.truncated is None and log.complete
    times = [f.t for f in log.frames]
    assert times == sorted(times)
    # bytes stay bytes, text stays text
    assert isinstance(log.frames[1].raw, bytes)
    assert any(isinstance(f, TxFrame) and isinstance(f.raw, str) for f in log.frames)


def test_cut_at_every_offset_reads_every_complete_frame(tmp_path: Path) -> None:
    path = tmp_path / "g.mjlog.msgpack"
    _write_game(path, hands=1)
    data = path.read_bytes()
    # the end offset of each complete object in the file
    unpacker = msgpack.Unpacker(raw=False)
    unpacker.feed(data)
    ends = []
    for _ in unpacker:
        ends.append(unpacker.tell())
    assert ends[-1] == len(data)
    full = [_strip(f) for f in read_log(path).frames]
    for cut in range(len(data)):
        log = parse_log(data[:cut])
        complete = sum(1 for e in ends if e <= cut)  # header + frames + footer
        frames_expected = max(0, min(complete - 1, len(full)))
        assert [_strip(f) for f in log.frames] == full[:frames_expected], cut
        assert (log.header is not None) == (complete >= 1)
        assert log.footer is None
        if cut in ends or cut == 0:
            assert log.truncated is None
        else:
            assert log.truncated is not None
            assert log.truncated.offset == max([0, *[e for e in ends if e <= cut]])
            assert log.truncated.size == cut
            assert "cut" in log.truncated.reason


def test_garbage_tail_is_reported_not_raised(tmp_path: Path) -> None:
    path = tmp_path / "g.mjlog.msgpack"
    _write_game(path, hands=1)
    good = path.read_bytes()
    for tail in (b"\xc1", b"\x05\x06", msgpack.packb({"k": "nonsense"}), msgpack.packb([1, 2])):
        path.write_bytes(good + tail)
        log = read_log(path)
        assert log.truncated is not None and log.truncated.offset == len(good)
        assert log.footer is not None


def test_not_a_log_is_a_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "x.msgpack"
    path.write_bytes(msgpack.packb({"k": "rx", "t": 0.0, "raw": "hello"}))
    with pytest.raises(LogError, match="not an mjbot game log"):
        read_log(path)
    path.write_bytes(b"{not msgpack")
    with pytest.raises(LogError, match="not an mjbot game log"):
        read_log(path)


def test_append_continues_after_a_damaged_tail(tmp_path: Path) -> None:
    path = tmp_path / "match.mjlog.msgpack"
    w = GameLogWriter(path, sample_header())
    w.rx("1 0 0 0 0 W1 W2")
    w.close()
    with open(path, "ab") as f:
        f.write(msgpack.packb({"k": "rx", "t": 1.0, "raw": "2 W3"})[:-2])  # killed mid-frame
    w2 = GameLogWriter(path, sample_header(), append=True)
    assert w2.repaired_bytes > 0
    w2.rx("2 W4")
    w2.close(Footer({}, (1, 2, 3, 4)))
    log = read_log(path)
    assert [f.raw for f in log.frames] == ["1 0 0 0 0 W1 W2", "2 W4"]
    assert log.complete


def test_secrets_never_reach_the_file(tmp_path: Path) -> None:
    secret = "ID1234ABCD-5678efgh"
    encoded = "".join(f"%{b:02X}" for b in secret.encode())
    path = tmp_path / "s.mjlog.msgpack"
    w = GameLogWriter(path, sample_header(), secrets=[secret])
    w.tx(f'<HELO name="{secret}" tid="f0" sx="M"/>')
    w.rx(f'<HELO uname="{encoded}" auth="x"/>'.encode())
    w.event(ev.GameStarted("riichi", 0, (secret, "b", "c", "d")))
    w.event(ev.PlatformNotice(f"welcome {secret.lower()} / {secret}"))
    w.close()
    data = path.read_bytes()
    for form in (secret, encoded, encoded.lower()):
        assert form.encode() not in data
    log = read_log(path)
    assert log.frames[0].raw == '<HELO name="***" tid="f0" sx="M"/>'
    assert log.frames[2].event.names[0] == "***"


def test_writer_fills_start_time_and_version(tmp_path: Path) -> None:
    path = tmp_path / "v.mjlog.msgpack"
    GameLogWriter(path, Header("botzone", "mcr", seat=2)).close()
    header = read_log(path).header
    assert header is not None and header.started[:4].isdigit() and header.mjbot_version
    assert header.format == 1


def test_log_path_groups_by_platform_and_day(tmp_path: Path) -> None:
    import datetime as dt

    p = log_path(tmp_path, "botzone", "match/42 x", dt.datetime(2026, 11, 21, 9, 5, 7))
    assert p == tmp_path / "botzone" / "2026-11-21" / "090507-match_42_x.mjlog.msgpack"


def test_sigkill_mid_game_leaves_a_readable_log(tmp_path: Path) -> None:
    path = tmp_path / "killed.mjlog.msgpack"
    script = (
        "import sys\n"
        "from replay.log import GameLogWriter\n"
        "from tests.log_samples import sample_header, sample_hand, write_steps\n"
        "w = GameLogWriter(sys.argv[1], sample_header())\n"
        "n = 0\n"
        "while True:\n"
        "    write_steps(w, sample_hand(n))\n"
        "    n += 1\n"
        "    print(n, flush=True)\n"
    )
    proc = subprocess.Popen([sys.executable, "-c", script, str(path)], cwd=ROOT,
                            stdout=subprocess.PIPE, text=True,
                            env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert proc.stdout is not None
    hands_done = 0
    while hands_done < 20:
        line = proc.stdout.readline()
        assert line, "writer process ended early"
        hands_done = int(line)
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=10)
    assert proc.returncode == -signal.SIGKILL
    log = read_log(path)
    assert log.header == sample_header()
    assert log.footer is None
    per_hand = len(sample_hand(0)) + 1  # + the hand-end frame
    assert len(log.frames) >= hands_done * per_hand
    wins = [f for f in log.frames
            if isinstance(f, EventFrame) and isinstance(f.event, ev.RoundWon)]
    assert len(wins) >= hands_done


_tiles = st.integers(0, 44)
_seats = st.integers(0, 3)
_events = st.one_of(
    st.builds(ev.TileDrawn, _seats, st.none() | _tiles, st.booleans()),
    st.builds(ev.TileDiscarded, _seats, _tiles, st.none() | st.booleans()),
    st.builds(ev.MeldCalled, _seats, st.sampled_from(ev.MELD_KINDS),
              st.lists(_tiles, max_size=4).map(tuple), st.none() | _tiles, st.none() | _seats),
    st.builds(ev.RoundStarted, st.integers(0, 3), _seats, st.integers(0, 20), st.integers(0, 9),
              st.lists(st.integers(-10**6, 10**6), min_size=4, max_size=4).map(tuple),
              st.lists(_tiles, max_size=5).map(tuple), st.lists(_tiles, max_size=17).map(tuple),
              hands=st.lists(st.lists(_tiles, max_size=14).map(tuple), max_size=4).map(tuple)),
    st.builds(ev.RoundWon, _seats, st.none() | _seats, st.lists(_tiles).map(tuple), _tiles,
              st.integers(0, 100),
              st.lists(st.integers(-10**9, 10**9), min_size=4, max_size=4).map(tuple),
              st.lists(st.text(max_size=8)).map(tuple)),
    st.builds(ev.PlatformNotice, st.text()),
    st.builds(ev.DecisionRequest, st.sampled_from(ev.REQUEST_KINDS),
              st.none() | st.frozensets(st.sampled_from(ev.ACTION_KINDS)),
              st.none() | st.floats(allow_nan=False), st.none() | _tiles, st.none() | _seats),
    st.builds(ev.Kan, st.sampled_from(ev.KAN_KINDS), st.lists(_tiles, max_size=4).map(tuple)),
    st.builds(ev.Discard, _tiles, st.booleans()),
)


@settings(max_examples=300, deadline=None)
@given(_events)
def test_schema_round_trip_property(obj: object) -> None:
    packed = msgpack.packb(schema.encode(obj), use_bin_type=True)
    assert schema.decode(msgpack.unpackb(packed, raw=False)) == obj


@pytest.mark.parametrize("bad", [
    {"type": "Nope"}, {"type": "TileDrawn", "colour": 1}, {"type": "TileDiscarded"}, [1, 2], 5,
    {"type": "GameStarted", "variant": "riichi", "seat": 0, "rules": [1]},
])
def test_schema_rejects_bad_maps_by_name(bad: object) -> None:
    with pytest.raises(schema.SchemaError):
        schema.decode(bad)


class _FailingFile:
    """A file on a full disk: every flush fails with ENOSPC, and every write too unless
    ``buffered`` (the bytes then wait in the buffer, as a small frame's do)."""

    def __init__(self, real: BinaryIO | None, buffered: bool = False) -> None:
        assert real is not None, "the writer's file is open"
        self.real = real
        self.buffered = buffered

    def _full(self, *args: object) -> None:
        raise OSError(28, "No space left on device")

    flush = _full

    def write(self, data: bytes) -> None:
        if not self.buffered:
            self._full()

    def fileno(self) -> int:
        return self.real.fileno()

    def close(self) -> None:
        self.real.close()
        self._full()


def test_a_failure_report_that_cannot_be_written_either_does_not_stop_play(
        tmp_path: Path) -> None:
    """on_failure reports the failed write on stderr (mjbot botzone) or through structlog,
    which prints to stderr: stderr redirected to a file on the same full disk fails as well.
    That second OSError came out of the frame method, out of the turn the log must not
    cost; it is dropped now, and the log is closed all the same."""
    told: list[OSError] = []

    def report(exc: OSError) -> None:
        told.append(exc)
        raise OSError(28, "No space left on device (stderr)")

    w = GameLogWriter(tmp_path / "g.mjlog.msgpack", sample_header(), on_failure=report)
    w._file = _FailingFile(w._file)  # type: ignore[assignment]  # duck-typed: no BinaryIO
    w.event(ev.PlatformNotice("a frame the disk has no room for"))
    w.event(ev.PlatformNotice("and one after it"))
    w.close(Footer({}, (0, 0, 0, 0)))
    assert len(told) == 1 and w.closed and w.failure is told[0]


def test_a_log_flushed_per_hand_reports_its_failed_flush_as_any_other(tmp_path: Path) -> None:
    """end_hand of a log flushed once per hand flushed outside the guard: its failure was
    raised even with on_failure, where every other write and sync is reported once."""
    told: list[OSError] = []
    w = GameLogWriter(tmp_path / "g.mjlog.msgpack", sample_header(), flush_per_hand=True,
                      on_failure=told.append)
    w._file = _FailingFile(w._file, buffered=True)  # type: ignore[assignment]  # duck-typed
    w.end_hand()
    w.end_hand()
    assert len(told) == 1 and w.closed


def test_a_new_log_is_never_written_through_a_link_nor_over_a_file_made_meanwhile(
        tmp_path: Path) -> None:
    """A new log's name was taken where `exists()` said so: a link to nowhere at that name
    (what another program, or a removed target, leaves) was opened for writing and the log
    went to the link's target, outside the log folder; and a file another writer made between
    the look and the open (two serves on one folder, one game id in one second) was
    truncated. The log now takes the next name past anything there, and opens its file only
    if it is still not there."""
    import datetime as dt

    when = dt.datetime(2026, 11, 29, 6, 0, 0)
    header = sample_header()
    first = log_path(tmp_path, header.platform, header.game_id, when)
    first.parent.mkdir(parents=True)
    target = tmp_path / "elsewhere.bin"
    first.symlink_to(target)
    writer = GameLogWriter.create(tmp_path, header, when=when)
    writer.close()
    assert not target.exists() and first.is_symlink()
    assert writer.path.parent == first.parent and writer.path != first
    assert read_log(writer.path).header is not None
    # the open itself refuses a name made since the look, and leaves that file as it was
    theirs = first.with_name("theirs" + first.name)
    theirs.write_bytes(b"another writer's log")
    with pytest.raises(FileExistsError):
        GameLogWriter(theirs, header, exclusive=True)
    assert theirs.read_bytes() == b"another writer's log"
