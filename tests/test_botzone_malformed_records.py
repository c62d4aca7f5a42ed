"""Edited or damaged Botzone records (the preprocessed human games, a judge log) are refused in
one line saying where and what was wrong, not with a Python error's repr (IndexError('list
index out of range'), AttributeError: 'list' object has no attribute 'values'), and a file an
editor saved with a byte-order mark still reads."""

from __future__ import annotations

import functools
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from replay.formats import botzone_human, botzone_log
from replay.record import CutShort, RecordError
from tests.in_process import mjbot_here
from tests.shared_data import BOTZONE_HUMAN_GAMES, BOTZONE_JUDGE_LOG

HUMAN = BOTZONE_HUMAN_GAMES.read_text().splitlines()[0]


def _human(edit: Callable[[dict[str, Any]], None]) -> str:
    game = json.loads(HUMAN)
    edit(game)
    return json.dumps(game) + "\n"


def _set(path: tuple[Any, ...], value: Any) -> Callable[[dict[str, Any]], None]:
    def edit(game: dict[str, Any]) -> None:
        target: Any = game
        for key in path[:-1]:
            target = target[key]
        target[path[-1]] = value
    return edit


@pytest.mark.parametrize(("edit", "said"), [
    (_set(("actions", 0, 4), [2]),
     "line 1, step 4: player 0's action [2] is none of [0], [2, t], [3, 'mid t'], [4, t], "
     "[5], [5, t], [6] or [7]"),
    (_set(("actions", 1, 4), 2), "line 1, step 4: player 1's action 2 is none of"),
    (_set(("actions", 0, 4), [1, "W1"]), "line 1, step 4: player 0's action [1, 'W1'] is none"),
    (_set(("first_player",), "two"), "line 1: first_player is 'two', not 0..3"),
    (_set(("round_wind",), True), "line 1: round_wind is True, not 0..3"),
    (_set(("tiles", 0), 5), "line 1: tiles is not 4 lists, one a player"),
    (_set(("actions",), "x"), "line 1: actions is not 4 lists, one a player"),
], ids=["no-tile", "not-a-list", "a-draw-code", "first-player", "wind", "tiles", "actions"])
def test_an_edited_human_game_is_refused_saying_what_is_wrong(
        edit: Callable[[dict[str, Any]], None], said: str) -> None:
    with pytest.raises(RecordError) as refused:
        botzone_human.loads(_human(edit))
    assert said in str(refused.value)


def test_a_human_file_cut_inside_its_only_game_says_so() -> None:
    with pytest.raises(RecordError, match=r"line 1 is not JSON \(.*\), and the file ends on "
                                          r"it: cut short\?"):
        botzone_human.loads(HUMAN[:500])


JUDGE = json.loads(BOTZONE_JUDGE_LOG.read_text())


def _judge(edit: Callable[[dict[str, Any]], None]) -> str:
    data = json.loads(json.dumps(JUDGE))
    edit(data)
    return json.dumps(data, ensure_ascii=False)


def _entry(action: str) -> int:
    return next(n for n, e in enumerate(JUDGE["log"]) if isinstance(e.get("output"), dict)
                and (e["output"].get("display") or {}).get("action") == action)


def _output(action: str, key: str, value: Any) -> Callable[[dict[str, Any]], None]:
    def edit(data: dict[str, Any]) -> None:
        data["log"][_entry(action)]["output"][key] = value
    return edit


@pytest.mark.parametrize(("edit", "said"), [
    (_output("DRAW", "display", "x"),
     f"entry {_entry('DRAW')}: its output's display and content must be objects"),
    (_output("DRAW", "content", ["2 W1"]),
     f"entry {_entry('DRAW')}: its output's display and content must be objects"),
    (_set(("players",), 5), "'players' is 5, not a list"),
    (_set(("scores",), ["a"]), "the final 'scores' ['a'] are not 4 numbers"),
    (_set(("scores",), [float("nan"), 0, 0, 0]),
     "the final 'scores' [nan, 0, 0, 0] are not 4 numbers"),
    (_set(("scores",), [float("inf"), 0, 0, 0]),
     "the final 'scores' [inf, 0, 0, 0] are not 4 numbers"),
    (lambda d: d["log"][_entry("HU")]["output"]["display"].update(fan=[{"value": 1}]),
     f"entry {_entry('HU')} (HU): no 'name'"),
    (_set(("initdata", "quan"), [1]), "initdata: 'quan' is [1], not a wind 0-3"),
    (lambda d: d["log"][_entry("INIT")]["output"]["display"].update(quan=7),
     f"entry {_entry('INIT')}: 'quan' is 7, not a wind 0-3"),
], ids=["display", "content", "players", "scores", "scores-nan", "scores-infinity",
        "fan-name", "initdata-quan", "init-quan"])
def test_an_edited_judge_log_is_refused_saying_what_is_wrong(
        edit: Callable[[dict[str, Any]], None], said: str) -> None:
    with pytest.raises(RecordError) as refused:
        botzone_log.loads(_judge(edit))
    assert said in str(refused.value)


def test_files_saved_with_a_byte_order_mark_read(tmp_path: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    for name, source in (("human.json", BOTZONE_HUMAN_GAMES), ("judge.json", BOTZONE_JUDGE_LOG)):
        path = tmp_path / name
        path.write_text("\ufeff" + source.read_text(), encoding="utf-8")
        done = mjbot_here(capsys, "replay", str(path))
        assert done.returncode == 0, done.stderr
        assert "WIN " in done.stdout


def test_the_cli_names_the_file_and_the_fault_without_a_traceback(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "edited.json"
    path.write_text(_human(_set(("actions", 0, 4), [2])))
    done = mjbot_here(capsys, "replay", str(path))
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert str(path) in done.stderr.splitlines()[0]
    assert "Botzone human games (preprocessed): line 1, step 4: player 0's action [2] is " \
           "none of" in done.stderr


@pytest.mark.parametrize("keep", [0.5, 0.99])
def test_a_cut_judge_log_is_called_cut_as_a_judge_log(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], keep: float) -> None:
    """A Botzone judge log cut short was refused as "tenhou.net/6 JSON cut short": the
    judge-log reader, tried first (its opening names it), said only "not JSON", and the
    tenhou.net/6 reader after it calls any JSON object that ends early cut. The judge-log
    reader says it in its own name; another reader's "cut short" no longer speaks for
    a file its opening gives to a format that did not say so (an mjai line cut short).
    Since the bare list's cut is read up to the cut, so is the object's (it was refused
    whole, "nothing before the cut can be read", though each entry of its 'log' list is
    whole JSON of its own as the bare list's are): the test asserted that refusal before;
    the object cut before its 'log' list is still refused, in one line."""
    from protocols import events as ev

    data = BOTZONE_JUDGE_LOG.read_bytes()
    path = tmp_path / "judge.json"
    path.write_bytes(data[:int(len(data) * keep)])
    text = data[:int(len(data) * keep)].decode("utf-8", errors="ignore")  # fan names
    chars = len(text)
    done = mjbot_here(capsys, "replay", str(path))
    assert done.returncode == 0 and done.stderr == "", done.stderr
    assert (f"note: the file is cut short: the JSON ends at char {chars} inside entry "
            in done.stdout and "of its 'log' list: its " in done.stdout)
    whole = botzone_log.loads(data.decode("utf-8")).events
    cut = botzone_log.loads(text)
    assert cut.events == whole[:len(cut.events)] and len(cut.events) > 2
    assert not any(isinstance(e, ev.GameEnded | ev.RoundWon) for e in cut.events)
    path.write_bytes(data[:100])  # inside its 'initdata', before the 'log' list
    done = mjbot_here(capsys, "replay", str(path))
    assert done.returncode == 2 and done.stderr.strip() == (
        f"mjbot replay: {path}: Botzone judge log cut short: the JSON ends at char 100 "
        "before its 'log' list (nothing before the cut can be read)")
    mjai = tmp_path / "game.mjai.jsonl"
    mjai.write_text('{"type":"start_game","names":["a","b"', encoding="utf-8")
    done = mjbot_here(capsys, "replay", str(mjai))
    assert done.returncode == 2 and "cut short:" not in done.stderr.splitlines()[0]
    assert done.stderr.startswith(f"mjbot replay: {mjai}: not a game log we know (mjai JSONL, "
                                  "by its opening: line 1 is not JSON"), done.stderr


def test_a_judge_log_object_cut_reads_up_to_the_cut() -> None:
    """The object form cut at each place its entries tell apart: inside an entry of its
    'log' list (the entries before it read), after its last entry before the list closes,
    and after the list (its final 'scores' read whole or not): the game reads whole from
    the list's last entry on, its end the judge's, the cut said."""
    from protocols import events as ev

    text = BOTZONE_JUDGE_LOG.read_text(encoding="utf-8")
    data = json.loads(text)
    whole = botzone_log.loads(text).events
    assert list(data) == ["initdata", "log", "scores"] and isinstance(whole[-1], ev.GameEnded)
    n = len(data["log"])
    head = json.dumps({"initdata": data["initdata"], "log": data["log"][:30]},
                      ensure_ascii=False)[:-2]  # the list and object left open
    kept = len(head) + 40  # inside entry 30
    at = head + ", " + json.dumps(data["log"][30], ensure_ascii=False)
    cut = botzone_log.loads(at[:kept])
    assert cut.meta["cut"] == (f"the JSON ends at char {kept} inside entry 30 of its 'log' "
                               "list: its 30 whole entries are read")
    assert cut.events == whole[:len(cut.events)] and len(cut.events) > 2
    listed = text.rindex("]", 0, text.index('"scores"'))  # the 'log' list's close
    ends = {listed: f"after entry {n - 1} of its 'log' list, before the list closes",
            text.index('"scores"') + 11: "after its 'log' list, before its object closes",
            len(text.rstrip()) - 1: "after its 'log' list, before its object closes"}
    for end, where in ends.items():
        read = botzone_log.loads(text[:end])
        assert read.meta["cut"] == (f"the JSON ends at char {end} {where}: its {n} whole "
                                    "entries are read"), end
        assert read.events == whole, end
    first = text.index('"log"') + 12  # inside entry 0
    with pytest.raises(CutShort, match=f"^botzone: the JSON ends at char {first} inside the "
                       "first entry of its 'log' list \\(nothing before the cut can be read"):
        botzone_log.loads(text[:first])


def test_a_judge_log_written_as_a_bare_list_and_cut_reads_up_to_the_cut(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The judge log as a bare JSON list of its entries (the reader takes that form), cut:
    it was "not JSON" and then every format's refusal, where the object form is named cut.
    Each entry is whole JSON of its own, so the entries before the cut are read, the hand
    unfinished, and the note names the cut; cut after the last entry (only the closing `]`
    lost) the game reads whole, the cut still said; cut inside the first entry, nothing is
    read and the refusal names the cut in one line."""
    from protocols import events as ev

    entries = json.loads(BOTZONE_JUDGE_LOG.read_text(encoding="utf-8"))["log"]
    text = json.dumps(entries, ensure_ascii=False)
    whole = botzone_log.loads(text).events
    assert isinstance(whole[-1], ev.GameEnded)
    kept = len(json.dumps(entries[:57], ensure_ascii=False)) + 40  # inside entry 57
    cut = botzone_log.loads(text[:kept])
    assert cut.meta["cut"] == (f"the JSON list ends at char {kept} inside entry 57: its 57 "
                               "whole entries are read")
    assert cut.events == whole[:len(cut.events)] and len(cut.events) > 2
    assert not any(isinstance(e, ev.GameEnded | ev.RoundWon) for e in cut.events)
    path = tmp_path / "judge.json"
    path.write_text(text[:kept], encoding="utf-8")
    done = mjbot_here(capsys, "replay", str(path))
    assert done.returncode == 0 and done.stderr == "", done.stderr
    assert (f"note: the file is cut short: the JSON list ends at char {kept} inside entry 57"
            in done.stdout and "unfinished (the log ends inside this hand)" in done.stdout)
    ended = botzone_log.loads(text[:-1])
    assert ended.events == whole and ended.meta["cut"] == (
        f"the JSON list ends at char {len(text) - 1} after entry {len(entries) - 1}, before "
        f"the list closes: its {len(entries)} whole entries are read")
    path.write_text(text[:30], encoding="utf-8")
    done = mjbot_here(capsys, "replay", str(path))
    assert done.returncode == 2 and done.stderr.strip() == (
        f"mjbot replay: {path}: Botzone judge log cut short: the JSON list ends at char 30 "
        "inside its first entry (nothing before the cut can be read)")


JUDGE_TEXT = BOTZONE_JUDGE_LOG.read_text(encoding="utf-8")
# the judge log as a bare list of its entries, one line and indented, as a user may save it
LIST_TEXTS = [json.dumps(json.loads(JUDGE_TEXT)["log"], ensure_ascii=False, indent=indent)
              for indent in (None, 1)]


@functools.cache
def _whole_events(text: str) -> list[Any]:
    return botzone_log.loads(text).events


def _read_up_to_the_cut(text: str, kept: int) -> None:
    """``text`` cut after ``kept`` characters reads as the whole's events up to the cut, or,
    cut before its first whole entry or before the deal, is refused as cut."""
    from protocols import events as ev
    from replay.record import CutShort

    whole = _whole_events(text)
    try:
        cut = botzone_log.loads(text[:kept])
    except CutShort as exc:
        assert "\n" not in str(exc) and ("inside its first entry" in str(exc)
                                         or "before the deal" in str(exc)), exc
        return
    assert cut.meta["cut"].startswith(f"the JSON list ends at char {kept} "), cut.meta
    ended = isinstance(cut.events[-1], ev.GameEnded)
    got = cut.events[:-1] if ended else cut.events
    assert got == whole[:len(got)] and (not ended or cut.events[-1] == whole[-1])


def test_a_bare_list_judge_log_cut_after_a_minus_sign_reads_up_to_the_cut(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Cut right after the '-' of a negative number (every entry's canHu is [-4, -4, ...]:
    about one cut in a hundred of the real log), the file was "not JSON" and every format's
    refusal: the JSON parser refuses a lone '-' where it stands, not at the end of the text,
    so the reader did not see the cut. It reads up to the cut like any other cut, in the
    object form too (read up to its cut since left9's 7f60d89)."""
    for text in LIST_TEXTS:
        minus = [k + 1 for k, c in enumerate(text) if c == "-"]
        assert len(minus) > 100
        for kept in minus:
            _read_up_to_the_cut(text, kept)
    with pytest.raises(RecordError, match="not JSON"):  # whole, then a stray '-': no cut
        botzone_log.loads(LIST_TEXTS[0] + " -")
    kept = LIST_TEXTS[0].index("-", 3000) + 1
    path = tmp_path / "judge.json"
    path.write_text(LIST_TEXTS[0][:kept], encoding="utf-8")
    done = mjbot_here(capsys, "replay", str(path))
    assert done.returncode == 0 and done.stderr == "", done.stderr
    assert f"note: the file is cut short: the JSON list ends at char {kept} " in done.stdout
    kept = JUDGE_TEXT.index("-", 3000) + 1
    path.write_text(JUDGE_TEXT[:kept], encoding="utf-8")
    done = mjbot_here(capsys, "replay", str(path))
    assert done.returncode == 0 and done.stderr == "", done.stderr
    assert f"note: the file is cut short: the JSON ends at char {kept} inside entry " in done.stdout


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(LIST_TEXTS), st.floats(0, 1, exclude_max=True))
def test_a_bare_list_judge_log_cut_anywhere_reads_up_to_the_cut(text: str,
                                                                 where: float) -> None:
    """The real judge log as a bare list, cut at any character: the whole's events up to
    the cut, or one line saying it is cut, never "not JSON"."""
    _read_up_to_the_cut(text, 1 + int(where * (len(text) - 1)))
