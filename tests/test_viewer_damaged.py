"""The replay viewer on damaged or hand-edited logs, through a real `mjbot view` process: a
real local-table log with one field of one frame set to a value out of range or of the wrong
type (a tile 200, a seat 9, a score that is text, a tile list that is a number, ...), which
the log's reader takes. Every route answers 200 or a 422 (a hand the table cannot draw: the
log line names the hand), never a 500 with a traceback."""

from __future__ import annotations

import contextlib
import copy
import gzip
import json
import os
import re
import shutil
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.log_samples import log_frames, write_frames
from tests.serve_helpers import PYTHON_ENV, ROOT
from tests.viewer_fixtures import practice_game

ODD = [200, -1, 9, 4, 45, 2**40, "x", "", None, [], {}, 1.5, True, [200], ["x"], [[1]],
       [None], b"\x00"]


def _fields(value: Any, at: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    """Every place in a frame a value can be put (of a list, its first three items)."""
    items = value.items() if isinstance(value, dict) else \
        enumerate(value[:3]) if isinstance(value, list) else ()
    for key, inner in items:
        yield (*at, key)
        yield from _fields(inner, (*at, key))


def _edited(frames: list[dict[str, Any]], index: int, field: tuple[Any, ...],
            value: Any) -> list[dict[str, Any]]:
    edited = copy.deepcopy(frames)
    place = edited[index]
    for key in field[:-1]:
        place = place[key]
    place[field[-1]] = value
    return edited


@contextlib.contextmanager
def _view(folder: Path, log: Path) -> Iterator[str]:
    """`mjbot view FOLDER` as a user starts it, its log (stderr) into ``log``; its base URL.
    Ended with SIGTERM, which it answers with exit 0."""
    with log.open("w") as err:
        proc = subprocess.Popen([sys.executable, "-m", "adapter.cli", "view", str(folder)],
                                cwd=ROOT, env=PYTHON_ENV, stderr=err)
        try:
            found = None
            deadline = time.monotonic() + 30
            while found is None and proc.poll() is None and time.monotonic() < deadline:
                time.sleep(0.05)
                found = re.search(r"(http://127\.0\.0\.1:\d+/)games", log.read_text())
            assert found, log.read_text()
            yield found.group(1)
        finally:
            proc.terminate()
            assert proc.wait(10) == 0


def _get(url: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(url, timeout=60) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()


@pytest.fixture(scope="module")
def source(tmp_path_factory: pytest.TempPathFactory) -> list[dict[str, Any]]:
    return log_frames(practice_game(tmp_path_factory.mktemp("source")))


@pytest.fixture(scope="module")
def viewer(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path, Path]]:
    """One `mjbot view` on a folder the tests write their files into; (URL, folder, log)."""
    folder = tmp_path_factory.mktemp("games")
    log = folder.parent / f"{folder.name}-view.log"
    with _view(folder, log) as url:
        yield url, folder, log


def _asked(url: str, name: str, commentary: bool) -> dict[str, Any]:
    """Every route of the game ``name``: path -> (status, body)."""
    game = f"{url}api/games/0~{name}"
    answers = {"outline": _get(game)}
    if answers["outline"][0] == 200:
        hands = len(json.loads(answers["outline"][1])["hands"])
        answers |= {f"hand {n}": _get(f"{game}/hands/{n}") for n in range(hands)}
    for fmt in ("tenhou6", "mjai"):
        answers[fmt] = _get(f"{url}games/0~{name}/export/{fmt}")
    if commentary:
        answers["commentary"] = _get(f"{game}/commentary")
    return answers


def _no_500(answers: dict[str, Any], log: str) -> None:
    for route, (status, body) in answers.items():
        assert status in (200, 422), (route, status, body[:300])
        if status == 422:
            assert "Traceback" not in body and len(body.splitlines()) == 1, (route, body)
    assert "Traceback" not in log and "Error handling request" not in log, log[-3000:]


def test_a_hand_tile_out_of_range_fails_that_hand_alone(
        viewer: tuple[str, Path, Path], source: list[dict[str, Any]]) -> None:
    """A tile 200 in the second hand's deal: the game's outline was a 500 (an IndexError in
    the outline's pass), every hand and the commentary unshown. Now the game opens, the
    other hands show and that hand is the 422 of a hand the table cannot draw, its log line
    naming the hand."""
    from adapter.serve.viewer import UNREADABLE

    url, folder, log = viewer
    starts = [i for i, f in enumerate(source) if f.get("k") == "event"
              and f["event"]["type"] == "RoundStarted"]
    name = "tile200.mjlog.msgpack"
    write_frames(folder / name, _edited(source, starts[1], ("event", "hands", 0, 0), 200))
    answers = _asked(url, name, commentary=True)
    _no_500(answers, log.read_text())
    assert answers["outline"][0] == 200
    assert answers["hand 1"] == (422, UNREADABLE)
    assert all(status == 200 for route, (status, _) in answers.items()
               if route.startswith("hand ") and route != "hand 1"), answers.keys()
    lines = [x for x in log.read_text().splitlines() if "tile200" in x]
    assert any('"reasons": "hand 2: ' in x for x in lines), lines


def test_a_damaged_hand_has_no_commentary_and_the_others_have_theirs(
        viewer: tuple[str, Path, Path], source: list[dict[str, Any]]) -> None:
    """The same tile 200 in the second hand's deal: the commentary was a 422 for the whole
    game (the table's IndexError at that hand), no hand's sentences shown. Now that hand is
    skipped with a one-line note naming it (its reason logged, not sent), and every other
    hand has its commentary, as it has without the damage."""
    url, folder, log = viewer
    starts = [i for i, f in enumerate(source) if f.get("k") == "event"
              and f["event"]["type"] == "RoundStarted"]
    write_frames(folder / "whole.mjlog.msgpack", source)
    name = "no-comment.mjlog.msgpack"
    write_frames(folder / name, _edited(source, starts[1], ("event", "hands", 0, 0), 200))
    status, text = _get(f"{url}api/games/0~{name}/commentary")
    assert status == 200, text
    body = json.loads(text)
    assert body["skipped"] == [{"hand": 1, "note": "no commentary for hand 2: the log's moves "
                                "there do not fit the table (a damaged or edited log)"}]
    whole = json.loads(_get(f"{url}api/games/0~whole.mjlog.msgpack/commentary")[1])
    assert whole["skipped"] == []
    assert body["subtitles"] == [r for r in whole["subtitles"] if r["hand"] != 1]
    assert {r["hand"] for r in body["subtitles"]} == set(range(len(starts))) - {1}
    lines = [x for x in log.read_text().splitlines() if name in x]
    assert any('"event": "viewer: no commentary for a hand"' in x and '"hand": "hand 2"' in x
               and "IndexError" in x for x in lines), lines
    assert "Traceback" not in log.read_text()


@settings(max_examples=30, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_a_damaged_field_is_a_200_or_a_422_never_a_500(
        viewer: tuple[str, Path, Path], source: list[dict[str, Any]], data: Any) -> None:
    url, folder, log = viewer
    index = data.draw(st.integers(0, len(source) - 1), label="frame")  # header and footer too
    fields = list(_fields(source[index]))
    field = data.draw(st.sampled_from(fields), label="field")
    value = data.draw(st.sampled_from(ODD) | st.integers(-3, 300), label="value")
    name = f"edited-{len(list(folder.iterdir()))}.mjlog.msgpack"
    write_frames(folder / name, _edited(source, index, field, value))
    answers = _asked(url, name, commentary=data.draw(st.booleans(), label="commentary"))
    answers["list"] = _get(f"{url}api/games?q={name}")
    _no_500(answers, log.read_text())
    assert len(json.loads(answers["list"][1])["games"]) == 1


def test_a_file_replaced_with_the_same_size_and_mtime_is_read_again(
        viewer: tuple[str, Path, Path], source: list[dict[str, Any]]) -> None:
    """``cp -p other.log game.log`` with the two of one size and mtime (an archive unpacked
    over the folder, its mtimes in whole seconds): the list kept the old game's players and
    the game its old hands, the index and the build cache keyed by (path, mtime, size) alone.
    Both read the new file now: ``cp -p`` cannot keep the ctime."""
    url, folder, _log = viewer
    sub = folder / "replaced"
    sub.mkdir()
    game, other = sub / "game.mjlog.msgpack", folder.parent / "other.mjlog.msgpack"
    write_frames(game, source)
    changed = copy.deepcopy(source)
    changed[0]["extra"]["players"] = [p.upper() for p in changed[0]["extra"]["players"]]
    first = next(f for f in changed if f.get("k") == "event"
                 and f["event"]["type"] == "RoundStarted")
    assert first["event"]["dora_indicators"] != [9]
    first["event"]["dora_indicators"] = [9]
    write_frames(other, changed)
    assert game.stat().st_size == other.stat().st_size
    os.utime(other, ns=(game.stat().st_atime_ns, game.stat().st_mtime_ns))

    def shown() -> tuple[Any, Any]:
        games = json.loads(_get(f"{url}api/games?q=replaced")[1])["games"]
        hand = json.loads(_get(f"{url}api/games/0~replaced~game.mjlog.msgpack/hands/0")[1])
        return [g["players"] for g in games], hand["steps"][0]["dora"]

    before = shown()
    subprocess.run(["cp", "-p", str(other), str(game)], check=True)
    assert game.stat().st_mtime_ns == other.stat().st_mtime_ns
    players = [p.upper() for p in source[0]["extra"]["players"]]
    assert shown() == ([players], ["1p"])
    assert before != shown()


def _nested(depth: int) -> dict[str, Any]:
    deep: dict[str, Any] = {}
    for _ in range(depth):
        deep = {"a": deep}
    return deep


def test_fields_nested_900_deep_open_or_are_a_422(
        viewer: tuple[str, Path, Path], source: list[dict[str, Any]]) -> None:
    """A crafted match log (two games in one file) whose second game's rules are nested 900
    deep: packing that game's hands went past pickle's recursion limit and the whole game
    was a 500 at every route. The rules show nowhere: it opens, every hand shows. The same
    depth in a field that is shown (a win's detail, the header's players, the footer's
    result) is a one-line 422 or shows, and the list still lists it."""
    url, folder, log = viewer
    body = source[1:-1]
    match = [source[0], *copy.deepcopy(body), *copy.deepcopy(body), source[-1]]
    starts = [i for i, f in enumerate(match) if f.get("k") == "event"
              and f["event"]["type"] == "GameStarted"]
    assert len(starts) == 2 and starts[1] > 1
    name = "deep-rules.mjlog.msgpack"
    write_frames(folder / name, _edited(match, starts[1], ("event", "rules"), _nested(900)))
    answers = _asked(url, name, commentary=False)
    _no_500(answers, log.read_text())
    assert {status for status, _ in answers.values()} == {200}, answers.keys()

    won = next(i for i, f in enumerate(source) if f.get("k") == "event"
               and f["event"]["type"] == "RoundWon")
    # 1000 deep: past the JSON encoder's limit too, where 900 is not
    shown = [(won, ("event", "detail"), 1000), (0, ("extra", "players"), 900),
             (len(source) - 1, ("result",), 900)]
    for n, (index, field, depth) in enumerate(shown):
        name = f"deep-{n}.mjlog.msgpack"
        write_frames(folder / name, _edited(source, index, field, _nested(depth)))
        _no_500(_asked(url, name, commentary=True), log.read_text())
        status, listed = _get(f"{url}api/games?q=deep-{n}")
        assert status == 200 and len(json.loads(listed)["games"]) == 1, listed[:300]


def _strict(text: str) -> Any:
    """JSON as the page's own parse (JSON.parse) reads it: NaN and Infinity are no JSON."""
    def refuse(word: str) -> Any:
        raise ValueError(f"{word} is not JSON")

    return json.loads(text, parse_constant=refuse)


DETAILS: dict[str, Any] = {"deep": _nested(1000), "bytes": b"\x00", "nan": float("nan"),
                           "infinity": float("-inf")}


@pytest.mark.parametrize("what", list(DETAILS))
def test_a_win_detail_json_cannot_hold_fails_that_hand_alone(
        viewer: tuple[str, Path, Path], source: list[dict[str, Any]], what: str) -> None:
    """A win's detail nested 1000 deep (past the JSON encoder's limit), or bytes: the outline,
    which lists each hand's result, was the 422 of a file the viewer cannot show, so no hand
    of the game opened. Now the outline lists that hand without its result, a note naming
    it; that hand is its own 422, its log line naming it, and every other hand, and the
    commentary, show. A NaN or an infinity was sent as such (`NaN`, `-Infinity`), which is
    no JSON: the page could not parse the outline, so no hand showed; it fails its hand
    alone too, and every 200 is strict JSON."""
    from adapter.serve.viewer import UNREADABLE

    url, folder, log = viewer
    won = next(i for i, f in enumerate(source) if f.get("k") == "event"
               and f["event"]["type"] == "RoundWon")
    hand = sum(1 for f in source[:won] if f.get("k") == "event"
               and f["event"]["type"] == "RoundStarted") - 1
    name = f"{what}-detail.mjlog.msgpack"
    write_frames(folder / name, _edited(source, won, ("event", "detail"), DETAILS[what]))
    answers = _asked(url, name, commentary=True)
    _no_500(answers, log.read_text())
    for route, (status, text) in answers.items():
        if status == 200 and route not in ("tenhou6", "mjai"):
            _strict(text)
    assert answers["outline"][0] == 200, answers["outline"]
    outline = json.loads(answers["outline"][1])
    assert outline["notes"] == [f"hand {hand + 1}: its result cannot be shown (a damaged or "
                                "edited log)"]
    assert outline["hands"][hand]["result"] is None
    assert all(h["result"] is not None for n, h in enumerate(outline["hands"]) if n != hand)
    assert answers[f"hand {hand}"] == (422, UNREADABLE)
    failed = {route for route, (status, _) in answers.items() if status != 200}
    assert failed - {"tenhou6", "mjai"} == {f"hand {hand}"}, failed  # an export: the file's
    lines = [x for x in log.read_text().splitlines() if name in x]
    assert any(f'"reasons": "hand {hand + 1}: ' in x for x in lines), lines


def test_a_nan_in_a_header_or_footer_field_leaves_the_list_json(
        viewer: tuple[str, Path, Path], source: list[dict[str, Any]]) -> None:
    """A NaN or an infinity in a log's header (a player, the start) or its footer's scores went
    into the game list as `NaN` / `Infinity`, which the page's JSON.parse refuses: the whole
    list failed to show. Now such a value is shown as unknown (null; the scores: none) and
    the list is strict JSON, as is the game's outline where it opens."""
    url, folder, log = viewer
    for n, (index, field, value) in enumerate((
            (0, ("extra", "players", 1), float("nan")), (0, ("started",), float("inf")),
            (len(source) - 1, ("scores", 0), float("nan")),
            (0, ("extra", "players"), [{"name": float("-inf")}]))):
        name = f"nan-list-{n}.mjlog.msgpack"
        write_frames(folder / name, _edited(source, index, field, value))
        status, text = _get(f"{url}api/games?q={name}")
        assert status == 200, text[:300]
        (game,) = _strict(text)["games"]
        if field == ("scores", 0):
            assert "scores" not in game and "our_rank" not in game
        status, text = _get(f"{url}api/games/0~{name}")
        if status == 200:  # (a header value JSON cannot hold: shown unknown, with a note)
            _strict(text)
        else:
            assert status == 422 and len(text.splitlines()) == 1, text[:300]
    assert "Traceback" not in log.read_text()


def test_bytes_in_a_header_field_leave_the_list_json(
        viewer: tuple[str, Path, Path], source: list[dict[str, Any]]) -> None:
    """Bytes where a log's header holds text (its start, a player, the platform; a map keyed
    by bytes): every game list request that listed the log was a 500 with a traceback
    (`TypeError: Object of type bytes is not JSON serializable`), and the page showed no
    game at all. Such a value is shown as unknown (null) now, the list strict JSON."""
    url, folder, log = viewer
    for n, (field, value, shown) in enumerate((
            (("started",), b"\x00\xff", ("started", None)),
            (("extra", "players", 1), b"x", ("players", 1, None)),
            (("platform",), b"local", ("platform", None)),
            (("extra", "players", 2), {b"k": 1}, ("players", 2, None)))):
        name = f"bytes-list-{n}.mjlog.msgpack"
        write_frames(folder / name, _edited(source, 0, field, value))
        status, text = _get(f"{url}api/games?q={name}")
        assert status == 200, text[:300]
        (game,) = _strict(text)["games"]
        place: Any = game
        for key in shown[:-2]:
            place = place[key]
        assert place[shown[-2]] is shown[-1], game
    assert "Traceback" not in log.read_text()


def test_a_detail_nested_just_past_the_limit_in_the_outline_fails_its_hand_alone() -> None:
    """The outline tried each hand's fields alone once the whole failed: a win's detail
    nested just past the encoder's limit where it sits in the outline (body, hands, hand,
    result: three levels more than alone) passed alone, nothing was dropped, and the game was
    the file's 422 again (a real `mjbot view`: details 982 and 984 deep, where 980 and 986
    opened). The depth is found here, where the whole outline first fails."""
    from adapter.serve.viewer import _outline_json

    def outline(depth: int) -> dict[str, Any]:
        won = {"label": "E1", "result": {"kind": "win", "detail": _nested(depth)}}
        return {"notes": [], "hands": [{"label": "E2", "result": None}, won]}

    for depth in range(200, 3000):  # up to the first the outline cannot hold whole
        try:
            text = gzip.decompress(_outline_json("g", outline(depth)))
        except ValueError as exc:
            pytest.fail(f"a detail {depth} deep: the whole game unshown ({exc})")
        if not text.startswith(b'{"notes": [], '):  # (not read back: as deep as it was sent)
            break
    body = json.loads(text)
    assert body["notes"] == ["hand 2: its result cannot be shown (a damaged or edited log)"]
    assert body["hands"] == [{"label": "E2", "result": None}, {"label": "E1", "result": None}]


MJX_LINES = (ROOT / "tests/data/shared/tenhou/mjx_pairs"
             / "2010110100gm-00a9-0000-de3472e8.tenhou6.json")
MJAI_LOG = ROOT / "tests/data/shared/mjai/local_match_seed10000_2000.mjai.jsonl"
MJLOG = ROOT / "tests/data/shared/tenhou/dnovikoff_mjlog/pao.xml"


def _cut_at_hand(name: str, text: str) -> str:
    """``text`` cut at the end of its second hand, as a writer stopped between two hands."""
    if name.endswith(".tenhou6.json"):  # a hand a line
        return "".join(text.splitlines(keepends=True)[:2])
    if name.endswith(".jsonl"):  # after the second end_kyoku's line
        lines = text.splitlines(keepends=True)
        ends = [n for n, line in enumerate(lines) if '"end_kyoku"' in line]
        return "".join(lines[:ends[1] + 1])
    ends = [m.end() for m in re.finditer(r"<AGARI[^>]*/>|<RYUUKYOKU[^>]*/>", text)]
    return text[:ends[1]]


@pytest.mark.parametrize("whole", [MJX_LINES, MJAI_LOG, MJLOG], ids=lambda p: p.suffix)
def test_a_file_cut_between_hands_is_shown_cut(viewer: tuple[str, Path, Path],
                                               whole: Path) -> None:
    """A tenhou.net/6 file in lines (mjx's form, a hand a line) cut at a line's end read as a
    finished game, its hands' sum taken as final scores; and the viewer showed every import
    as complete, an mjai log with no end_game and an mjlog whose XML ends early among them,
    with no word of the cut that `mjbot replay` notes. Each shows as cut now, as our own cut
    logs do (not complete, a note saying so), and the whole file does not."""
    url, folder, _log = viewer
    cut = folder / f"cut-{whole.name}"
    cut.write_text(_cut_at_hand(whole.name, whole.read_text(encoding="utf-8")),
                   encoding="utf-8")
    shutil.copy(whole, folder / whole.name)
    shown = json.loads(_get(f"{url}api/games/0~{cut.name}")[1])
    assert shown["complete"] is False and len(shown["hands"]) == 2, shown["notes"]
    assert any(n.startswith("the file is cut short: ") for n in shown["notes"]), shown["notes"]
    assert shown["final_scores"] is None
    full = json.loads(_get(f"{url}api/games/0~{whole.name}")[1])
    assert full["complete"] is True and len(full["hands"]) > 2, full["notes"]
    assert not any("cut" in n for n in full["notes"]) and full["final_scores"] is not None



def test_a_command_log_that_ends_inside_a_hand_is_shown_cut(
        viewer: tuple[str, Path, Path]) -> None:
    """An NTPU client's command log cut inside a hand: `mjbot replay` says "the log ends
    inside a hand", the viewer showed it complete with no note. It shows it cut now."""
    url, folder, _log = viewer
    whole = ROOT / "tests/data/shared/ntpu/lab_referee/MJServerLog_1795525388_Player1.log"
    lines = whole.read_text(encoding="utf-8").splitlines()
    cut = folder / "cut-Player1.log"
    cut.write_text("\n".join(lines[:-8]) + "\n", encoding="utf-8")
    shown = json.loads(_get(f"{url}api/games/0~{cut.name}")[1])
    assert shown["complete"] is False, shown["notes"]
    assert "the log ends inside a hand: the moves before the cut are shown" in shown["notes"]
    shutil.copy(whole, folder / whole.name)
    full = json.loads(_get(f"{url}api/games/0~{whole.name}")[1])
    assert full["complete"] is True and full["notes"] == [], full["notes"]


def test_a_header_whose_extra_is_no_map_is_one_line(
        viewer: tuple[str, Path, Path], source: list[dict[str, Any]]) -> None:
    """A header whose ``extra`` is a list: the log's reader took it, and `mjbot replay` and
    the viewer's outline read it as a map (an AttributeError: a traceback, a 500). The reader
    refuses it in one line now (exit 2; the viewer's 422), and the list still lists it."""
    from adapter.serve.viewer import UNREADABLE

    url, folder, log = viewer
    name = "extra-list.mjlog.msgpack"
    path = write_frames(folder / name, _edited(source, 0, ("extra",), [[1]]))
    run = subprocess.run([sys.executable, "-m", "adapter.cli", "replay", str(path)], cwd=ROOT,
                         env=PYTHON_ENV, capture_output=True, text=True, timeout=120)
    assert run.returncode == 2 and "Traceback" not in run.stderr, run.stderr
    assert "malformed header frame: extra must be a map, got list" in run.stderr
    assert _get(f"{url}api/games/0~{name}") == (422, UNREADABLE)
    assert len(json.loads(_get(f"{url}api/games?q={name}")[1])["games"]) == 1
    assert "Traceback" not in log.read_text()


@pytest.mark.parametrize("value", [None, [1]], ids=["null", "list"])
def test_a_header_whose_policy_config_is_no_map_still_opens(
        viewer: tuple[str, Path, Path], source: list[dict[str, Any]], value: Any) -> None:
    """A header whose ``policy_config`` is null or a list (a hand-edited log, another tool's):
    nothing reads it as a map, and the log opened in `mjbot replay` and the viewer as any
    other. The check that refuses an ``extra`` that is no map refused it too (exit 2, a 422).
    It opens again."""
    url, folder, log = viewer
    name = f"policy-config-{type(value).__name__}.mjlog.msgpack"
    path = write_frames(folder / name, _edited(source, 0, ("policy_config",), value))
    run = subprocess.run([sys.executable, "-m", "adapter.cli", "replay", str(path)], cwd=ROOT,
                         env=PYTHON_ENV, capture_output=True, text=True, timeout=120)
    assert run.returncode == 0 and "final scores" in run.stdout, run.stderr
    answers = _asked(url, name, commentary=False)
    _no_500(answers, log.read_text())
    assert answers["outline"][0] == 200 and answers["hand 0"][0] == 200


def test_a_damaged_last_hand_keeps_the_games_end_and_the_next_games_players(
        viewer: tuple[str, Path, Path], source: list[dict[str, Any]]) -> None:
    """A tile 200 in a game's last hand: the outline's pass skipped every event after it up
    to the next hand's start, the game's end and the next game's start among them, so the
    outline had no final scores (a complete game with no result), and in a match log (two
    games in one file) the second game's hands showed the first game's players. That hand
    alone fails now: the game's end and the next game's players are kept."""
    from adapter.serve.viewer import UNREADABLE

    url, folder, log = viewer
    whole = "whole-for-last-hand.mjlog.msgpack"
    write_frames(folder / whole, source)
    expected = json.loads(_get(f"{url}api/games/0~{whole}")[1])

    def event_at(frames: list[dict[str, Any]], kind: str) -> list[int]:
        return [i for i, f in enumerate(frames) if f.get("k") == "event"
                and f["event"]["type"] == kind]

    last = event_at(source, "RoundStarted")[-1]
    discard = next(i for i in event_at(source, "TileDiscarded") if i > last)
    name = "damaged-last-hand.mjlog.msgpack"
    write_frames(folder / name, _edited(source, discard, ("event", "tile"), 200))
    answers = _asked(url, name, commentary=False)
    _no_500(answers, log.read_text())
    shown = json.loads(answers["outline"][1])
    assert answers[f"hand {len(shown['hands']) - 1}"] == (422, UNREADABLE)
    assert expected["final_scores"] and shown["final_scores"] == expected["final_scores"]

    body = source[1:-1]
    second = copy.deepcopy(body)
    start = next(f for f in second if f.get("k") == "event"
                 and f["event"]["type"] == "GameStarted")
    start["event"]["names"] = [f"second-{n}" for n in range(4)]
    match = [source[0], *copy.deepcopy(body), *second, source[-1]]
    name = "damaged-match.mjlog.msgpack"
    write_frames(folder / name, _edited(match, discard, ("event", "tile"), 200))
    shown = json.loads(_get(f"{url}api/games/0~{name}")[1])
    hands = len(expected["hands"])
    assert [h["names"] for h in shown["hands"][hands:]] \
        == [start["event"]["names"]] * hands


def test_a_header_field_json_cannot_hold_is_shown_unknown_not_the_files_422(
        viewer: tuple[str, Path, Path], source: list[dict[str, Any]]) -> None:
    """Bytes where a header's text belongs (its start time, its platform, its policy, its
    game id): the outline could not be encoded, and the whole game was the file's 422 with
    every hand in it sound. Now that field is shown as unknown (null), a note names it, the
    log line says which, and the game opens with every hand the whole file has."""
    url, folder, log = viewer
    name = "whole-header.mjlog.msgpack"
    write_frames(folder / name, source)
    status, text = _get(f"{url}api/games/0~{name}")
    assert status == 200, text[:300]
    whole = json.loads(text)
    for field, key in (("started", "started"), ("platform", "source"), ("policy", "policy"),
                       ("game_id", "game_id")):
        name = f"bytes-{field}.mjlog.msgpack"
        write_frames(folder / name, _edited(source, 0, (field,), b"\x00"))
        status, text = _get(f"{url}api/games/0~{name}")
        assert status == 200, (field, text[:300])
        outline = _strict(text)
        assert outline[key] is None and whole[key] is not None
        assert f"the log's {key} is unreadable (a damaged or edited header): shown as " \
            "unknown" in outline["notes"]
        assert outline["hands"] == whole["hands"]
        assert _get(f"{url}api/games/0~{name}/hands/0")[0] == 200
        lines = [x for x in log.read_text().splitlines() if name in x]
        assert any("a game's value cannot be shown" in x and f'"field": "{key}"' in x
                   for x in lines), lines
    assert "Traceback" not in log.read_text()


def test_an_export_of_a_discard_that_names_no_tile_is_the_files_422(
        viewer: tuple[str, Path, Path]) -> None:
    """An mjai log whose tsumogiri discard names no tile ("pai":"0x"): the viewer's tenhou6
    export wrote it as a sound tsumogiri (200, the damage silently gone from the file the
    user downloads). Now neither export writes it: a 422, the log line naming the hand, the
    event, its line and the name."""
    from tests.shared_data import MJAI_GAME

    url, folder, log = viewer
    lines = MJAI_GAME.read_text(encoding="utf-8").splitlines()
    assert lines[11] == '{"type":"dahai","actor":0,"pai":"9p","tsumogiri":true}'
    lines[11] = '{"type":"dahai","actor":0,"pai":"0x","tsumogiri":true}'
    name = "discard-0x.mjai.jsonl"
    (folder / name).write_text("\n".join(lines) + "\n", encoding="utf-8")
    for fmt in ("tenhou6", "mjai"):
        status, text = _get(f"{url}games/0~{name}/export/{fmt}")
        assert status == 422, (fmt, status, text[:300])
    said = [x for x in log.read_text().splitlines() if name in x]
    assert any("hand 1 (E1-0) cannot be exported" in x and "at line 12" in x
               and "'0x' is not a tile" in x for x in said), said
