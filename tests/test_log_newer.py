"""Game logs that a later mjbot wrote: an event type, a frame kind, a field this version does
not know. An older reader stopped at the first one, with one line (``log cut at byte 64051 of
173158 (... unknown object type 'FuritenShown')``), and lost the rest of the game. Now what it
does not know is skipped and counted, said once, and the rest of the log read; damage is still
damage, and this version's writer refuses what its reader would not know.

The newer logs are a real local-table game's frames with frames and fields written by hand,
as a newer writer packs them."""

from __future__ import annotations

import dataclasses
import inspect
import json
import urllib.request
from pathlib import Path
from typing import Any

import msgpack
import pytest

from protocols import events as ev
from replay import schema
from replay.log import GameLogWriter, LogError, parse_log, read_log
from replay.version import build_version
from tests.in_process import mjbot_here
from tests.log_samples import log_frames, sample_header, write_frames
from tests.serve_helpers import mjbot_view
from tests.viewer_fixtures import practice_game

NEW_TYPE = "WaitShown"  # an event a newer mjbot writes, as it wrote FuritenShown
NEWER = "0.2.0+g0123456789ab"  # the version such an mjbot writes in its header


def _newer(frames: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], int]:
    """The frames as a newer writer would have written the game: a NEW_TYPE event after
    every discard, a "clock" frame after every hand, a field of its own in every draw and in
    the header, and in every decision frame. Returns them and how many NEW_TYPE events
    there are."""
    out: list[dict[str, Any]] = []
    shown = 0
    for frame in frames:
        frame = dict(frame)
        if frame["k"] == "header":
            frame["build"] = "abc123"
            frame["mjbot_version"] = NEWER
        event: dict[str, Any] = frame.get("event") or {}
        if frame["k"] == "event" and event["type"] == "TileDrawn":
            frame["event"] = {**event, "seen_at": 0.25}
        if frame["k"] == "decision":
            frame["thinking_ms"] = 3
        out.append(frame)
        if frame["k"] == "event" and event["type"] == "TileDiscarded":
            out.append({"k": "event", "t": frame["t"],
                        "event": {"type": NEW_TYPE, "seat": event["seat"], "tiles": [1, 2]}})
            shown += 1
        if frame["k"] == "hand":
            out.append({"k": "clock", "t": frame["t"], "drift": 0.001})
    return out, shown


@pytest.fixture(scope="module")
def logs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """A real local-table game (``old``: as this version wrote it) and the same game as a
    newer writer wrote it (``new``), side by side in one folder."""
    folder = tmp_path_factory.mktemp("games")
    source = log_frames(practice_game(tmp_path_factory.mktemp("played")))
    old = write_frames(folder / "old.mjlog.msgpack", source)
    frames, shown = _newer(source)
    new = write_frames(folder / "new.mjlog.msgpack", frames)
    hands = sum(f["k"] == "hand" for f in source)
    draws = sum(f["k"] == "event" and f["event"]["type"] == "TileDrawn" for f in source)
    decisions = sum(f["k"] == "decision" for f in source)
    assert shown > 0 and hands > 1  # the first new event comes long before the log's end
    assert decisions > 0
    return {"folder": folder, "old": old, "new": new, "shown": shown, "hands": hands,
            "draws": draws, "decisions": decisions}


def _note(logs: dict[str, Any]) -> str:
    return (f"written by mjbot {NEWER}, this is {build_version()}: skipped what this "
            "version does not know: "
            f"'clock' frame ({logs['hands']}), Header.build (1), TileDrawn.seen_at "
            f"({logs['draws']}), {NEW_TYPE} ({logs['shown']}), decision.thinking_ms "
            f"({logs['decisions']}); the rest of the log is read")


def test_the_reader_skips_what_a_newer_mjbot_added_and_reads_the_rest(
        logs: dict[str, Any]) -> None:
    old, new = read_log(logs["old"]), read_log(logs["new"])
    assert new.truncated is None and new.complete
    assert old.header is not None
    assert new.header == dataclasses.replace(old.header, mjbot_version=NEWER)
    assert new.frames == old.frames and new.footer == old.footer
    assert new.skipped == {NEW_TYPE: logs["shown"], "'clock' frame": logs["hands"],
                           "TileDrawn.seen_at": logs["draws"], "Header.build": 1,
                           # a decision frame's field was dropped without a word
                           "decision.thinking_ms": logs["decisions"]}
    assert new.newer_note() == _note(logs)
    assert old.skipped == {} and old.newer_note() is None


def test_replay_reads_the_rest_and_says_so_once(logs: dict[str, Any],
                                                capsys: pytest.CaptureFixture[str]) -> None:
    runs = {}
    for name in ("old", "new"):
        r = mjbot_here(capsys, "replay", str(logs[name]), "--seat", "0", "--json")
        assert r.returncode == 0, r.stderr
        runs[name] = json.loads(r.stdout)["summary"]
    old, new = runs["old"], runs["new"]
    for key in ("hands", "final_scores", "unfinished", "decisions"):
        assert new[key] == old[key], key
    assert len(new["hands"]) == logs["hands"]
    assert [n for n in new["notes"] if n not in old["notes"]] == [_note(logs)]
    text = mjbot_here(capsys, "replay", str(logs["new"]), "--seat", "0")
    assert text.returncode == 0 and text.stdout.count(f"written by mjbot {NEWER}") == 1
    assert "log cut" not in text.stdout + text.stderr and "Traceback" not in text.stderr


def test_review_reads_the_rest(logs: dict[str, Any],
                               capsys: pytest.CaptureFixture[str]) -> None:
    runs = {}
    for name in ("old", "new"):
        r = mjbot_here(capsys, "--log-level", "warning", "review", str(logs[name]), "--seat",
                       "0", "--policy", "rulebased", "--json", "-")
        assert r.returncode == 0, r.stderr
        runs[name] = json.loads(r.stdout)
    old, new = runs["old"], runs["new"]
    assert new["decisions"] == old["decisions"] > 0 and new["rows"] == old["rows"]
    assert [n for n in new["notes"] if n not in old["notes"]] == [_note(logs)]


def _get(url: str) -> Any:
    with urllib.request.urlopen(url, timeout=60) as response:
        assert response.status == 200
        return json.loads(response.read())


def test_the_viewer_shows_the_rest(logs: dict[str, Any]) -> None:
    with mjbot_view(logs["folder"]) as url:
        outlines = {name: _get(f"{url}api/games/0~{name}.mjlog.msgpack")
                    for name in ("old", "new")}
        old, new = outlines["old"], outlines["new"]
        assert len(new["hands"]) == len(old["hands"]) == logs["hands"]
        for n in range(logs["hands"]):
            assert (_get(f"{url}api/games/0~new.mjlog.msgpack/hands/{n}")
                    == _get(f"{url}api/games/0~old.mjlog.msgpack/hands/{n}")), n
    assert new["complete"] is True
    assert [n for n in new["notes"] if n not in old["notes"]] == [_note(logs)]


def test_a_decision_with_a_newer_action_is_skipped_the_rest_read(tmp_path: Path) -> None:
    """A decision whose action is of a type a newer mjbot added cannot be shown: it is
    skipped as the event is, the frames after it read."""
    path = tmp_path / "g.mjlog.msgpack"
    with GameLogWriter(path, sample_header()) as writer:
        writer.decision(ev.DecisionRequest("turn"), (ev.Discard(5),), ev.Discard(5))
        writer.event(ev.TileDiscarded(1, 5))
    frames = log_frames(path)
    newer = dict(frames[1], action={"type": "Declare", "what": "x"})
    log = read_log(write_frames(path, [frames[0], newer, *frames[1:]]))
    assert log.truncated is None and log.skipped == {"Declare": 1}
    assert [type(f).__name__ for f in log.frames] == ["DecisionFrame", "EventFrame"]


@pytest.mark.parametrize("bad", [
    {"k": "event", "t": 1.0, "event": {"type": "tile drawn", "seat": 0}},  # not a class name
    {"k": "event", "t": 1.0, "event": {"type": 7, "seat": 0}},
    {"k": "event", "t": 1.0, "event": {"type": "TileDrawn", "Seat!": 0}},  # not a field name
    {"k": "event", "t": 1.0, "event": {"type": "TileDrawn", 3: 0}},
    {"k": "event", "t": 1.0, "event": {"type": "TileDrawn"}},  # a field missing
    {"k": "ev\x00nt", "t": 1.0},  # not a frame kind's name
    {"k": "clock"},  # a frame of play with no time
    {"k": "hand", "t": 1.0, "Thinking Ms": 3},  # a known frame's key, not a field name
    {"k": "event", "t": "x", "event": {"type": NEW_TYPE}},
])
def test_damage_is_still_a_cut_not_a_newer_log(tmp_path: Path, bad: dict[str, Any]) -> None:
    """Only names as a writer gives them are taken for a newer version's: anything else
    where a type, a field or a kind should be stops the reader there, as damage did."""
    path = tmp_path / "g.mjlog.msgpack"
    with GameLogWriter(path, sample_header()) as writer:
        writer.event(ev.TileDrawn(1, 5))
    frames = log_frames(path)
    data = write_frames(path, [*frames, bad, *frames[1:]]).read_bytes()
    log = parse_log(data)
    assert log.truncated is not None and log.truncated.reason.startswith("bad frame")
    assert log.skipped == {} and len(log.frames) == 1


def test_a_first_frame_of_a_newer_kind_is_still_not_a_log() -> None:
    data = msgpack.packb({"k": "clock", "t": 0.0}, use_bin_type=True)
    with pytest.raises(LogError, match="not an mjbot game log"):
        parse_log(data)


def test_outside_a_log_an_unknown_field_is_still_an_error() -> None:
    with pytest.raises(schema.SchemaError, match="has no field 'seen_at'"):
        schema.decode({"type": "TileDrawn", "seat": 0, "seen_at": 1})
    with pytest.raises(schema.UnknownType):
        schema.decode({"type": NEW_TYPE})


@dataclasses.dataclass(frozen=True)
class _Unregistered:
    seat: int


def test_this_version_never_writes_what_its_reader_skips(tmp_path: Path) -> None:
    """Skipping must not hide our own bugs: an event this version's reader does not know
    cannot be written by it (the writer refuses it, the file unchanged), and every event,
    action and request class of protocols/events.py is one the schema reads."""
    path = tmp_path / "g.mjlog.msgpack"
    writer = GameLogWriter(path, sample_header())
    before = path.stat().st_size
    with pytest.raises(schema.SchemaError, match="cannot encode _Unregistered"):
        writer.event(_Unregistered(0))
    writer.close()
    assert read_log(path).frames == [] and path.stat().st_size == before
    classes = [c for _, c in inspect.getmembers(ev, inspect.isclass)
               if dataclasses.is_dataclass(c) and c.__module__ == ev.__name__]
    for cls in classes:
        assert cls.__name__ in schema._TYPES, f"{cls.__name__} is not in the log's schema"


def test_continuing_a_newer_log_keeps_what_it_wrote(logs: dict[str, Any],
                                                    tmp_path: Path) -> None:
    """A log continued (``append``, a Botzone match played one process per turn) was cut
    back to its last frame this version reads: a newer version's frames after it were
    removed from the file. They are kept now, and the frames added go after them."""
    path = tmp_path / "g.mjlog.msgpack"
    path.write_bytes(logs["new"].read_bytes())
    writer = GameLogWriter(path, sample_header(), append=True)
    writer.event(ev.PlatformNotice("continued"))
    writer.close()
    assert writer.repaired_bytes == 0
    assert path.read_bytes().startswith(logs["new"].read_bytes())
    log = read_log(path)
    assert log.truncated is None and log.skipped[NEW_TYPE] == logs["shown"]
    assert list(log.events())[-1] == ev.PlatformNotice("continued")


def test_a_log_with_nothing_newer_costs_no_bookkeeping_per_frame(logs: dict[str, Any]) -> None:
    """Reading a log is what the viewer, replay and review wait on: the count of what a newer
    mjbot added cost a Counter made and merged for every frame, some 10 % of the read of a
    long log (480 hands, 22 MB: 1.00 s against 0.93 s before). Nothing newer in a log costs
    nothing per frame: the calls into collections' code do not grow with the frames."""
    import sys
    from types import FrameType

    calls = 0

    def profile(frame: FrameType, event: str, arg: object) -> None:
        nonlocal calls
        if event == "call" and frame.f_code.co_filename.endswith(
                ("collections/__init__.py", "collections\\__init__.py")):
            calls += 1

    data = logs["old"].read_bytes()
    sys.setprofile(profile)
    try:
        log = parse_log(data)
    finally:
        sys.setprofile(None)
    assert len(log.frames) > 1000 and log.skipped == {}
    assert calls < 10, f"{calls} calls into collections for {len(log.frames)} frames"


def test_the_readmes_note_is_the_one_the_reader_writes() -> None:
    """The README quotes the note for a log whose newer writer added a WaitShown event and a
    seen_at field: it showed the names in another order than the reader writes them. Its
    reader's version is the README's example, where the note names this build's."""
    from replay.log import GameLog

    note = GameLog(Path("g"), None, [], None, None,
                   {NEW_TYPE: 327, "TileDrawn.seen_at": 327}, (NEWER,)).newer_note()
    assert note is not None
    note = note.replace(f"this is {build_version()}:", "this is 0.1.0+g99a2b4f50935:")
    readme = " ".join((Path(__file__).parents[1] / "README.md").read_text().split())
    assert f"`{note}`" in readme


def test_an_export_of_a_newer_log_says_what_it_leaves_out(logs: dict[str, Any], tmp_path: Path,
                                                          capsys: pytest.CaptureFixture[str]
                                                          ) -> None:
    """`mjbot replay LOG --export` is the one command that reads one of our logs and writes
    the game again (compression and a continued log keep the file's bytes): what the reader
    skipped was left out of the export without a word, the export passing for the whole
    game. It is written (the rest of the game, as this version reads it) and the skipped
    names and counts said on stderr."""
    for fmt in ("tenhou6", "mjai"):
        runs = {}
        for name in ("old", "new"):
            out = tmp_path / f"{name}.{fmt}"
            runs[name] = mjbot_here(capsys, "replay", str(logs[name]), "--export", fmt, "-o",
                                    str(out))
            assert runs[name].returncode == 0, runs[name].stderr
        assert (tmp_path / f"new.{fmt}").read_text() == (tmp_path / f"old.{fmt}").read_text()
        assert runs["old"].stderr == ""
        assert runs["new"].stderr == (f"mjbot replay: {logs['new']}: {_note(logs)}; the export "
                                      "leaves out what was skipped\n")
