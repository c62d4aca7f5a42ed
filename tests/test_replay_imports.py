"""Imports and exports against the real recorded data in ../shared/data (skipped without it)."""

from __future__ import annotations

import dataclasses
import itertools
import json
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from brain.rules import rules_for
from brain.state import TableState
from protocols import events as ev
from replay import replayer
from replay.formats import botzone_log, mjai_log, mjlog, tenhou6
from replay.record import GameRecord, RecordError, canonical, seat_view
from tests.shared_data import BOTZONE_JUDGE_LOG, DATA

TENHOU6 = sorted((DATA / "tenhou" / "convlog_tenhou6_json").glob("*.json")) + sorted(
    (DATA / "tenhou" / "mjx_pairs").glob("*.tenhou6.json"))
MJLOGS = sorted((DATA / "tenhou" / "mjx_pairs").glob("*.mjlog"))
MJAI = sorted((DATA / "mjai").glob("*.jsonl"))
BOTZONE = BOTZONE_JUDGE_LOG


def _json_objects(text: str) -> list[object]:
    text = text.strip()
    try:
        return [json.loads(text)]
    except json.JSONDecodeError:
        return [json.loads(line) for line in text.splitlines() if line.strip()]


@pytest.mark.parametrize("path", TENHOU6, ids=lambda p: p.name)
def test_tenhou6_imports_and_exports_equal(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    record = tenhou6.loads(text)
    assert isinstance(record.events[0], ev.GameStarted)
    assert any(isinstance(e, ev.RoundWon | ev.RoundDrawn) for e in record.events)
    assert _json_objects(tenhou6.dumps(record)) == _json_objects(text)


@pytest.mark.parametrize("path", MJLOGS, ids=lambda p: p.name)
def test_mjlog_imports_to_the_events_of_its_tenhou6_twin(path: Path) -> None:
    record = mjlog.loads(path.read_text(encoding="utf-8"))
    twin = path.with_name(path.name.replace(".mjlog", ".tenhou6.json"))
    hands = record.hands()
    assert hands and all(isinstance(h[0], ev.RoundStarted) for h in hands)
    assert isinstance(record.events[-1], ev.GameEnded)
    if not twin.exists():
        # no twin: its tenhou.net/6 export must import back to the same events
        again = tenhou6.loads(tenhou6.dumps(record))
        assert again.events[1:] == record.events[1:]
        return
    other = tenhou6.loads(twin.read_text(encoding="utf-8"))
    # names differ (the JSON twins are anonymised); every other event is identical
    assert record.events[1:] == other.events[1:]


def test_mjlog_wins_carry_tenhou_yaku_and_score_text() -> None:
    record = mjlog.loads((DATA / "tenhou" / "mjx_pairs" / "double-ron.mjlog").read_text())
    wins = [e for e in record.events if isinstance(e, ev.RoundWon)]
    assert wins and all(w.yaku and w.detail.endswith(("点", "点∀")) for w in wins)
    # a double ron: two wins on the same discard, one after the other
    assert any(a.from_seat is not None and a.from_seat == b.from_seat and a.win_tile == b.win_tile
               for a, b in itertools.pairwise(wins))


@pytest.mark.parametrize("path", MJAI, ids=lambda p: p.name)
def test_mjai_imports_and_exports_equal(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    record = mjai_log.loads(text)
    assert _json_objects(mjai_log.dumps(record)) == _json_objects(text)
    wins = [e for e in record.events if isinstance(e, ev.RoundWon)]
    assert wins and all(w.value >= 1 and w.hand for w in wins)


def test_tenhou6_game_exports_to_mjai_and_back_to_the_same_events() -> None:
    record = tenhou6.loads((DATA / "tenhou" / "convlog_tenhou6_json" / "chankan.json").read_text())
    again = mjai_log.loads(mjai_log.dumps(record))
    def core(events: list[object]) -> list[object]:
        return [e for e in events if isinstance(e, ev.TileDiscarded | ev.MeldCalled
                                                | ev.RiichiDeclared | ev.DoraRevealed)]
    assert core(again.events) == core(record.events)


def test_botzone_judge_log_win_matches_our_mcr_scoring() -> None:
    record = botzone_log.loads(BOTZONE.read_text(encoding="utf-8"))
    win = next(e for e in record.events if isinstance(e, ev.RoundWon))
    logged = json.loads(BOTZONE.read_text())["log"]
    hu = next(x["output"]["display"] for x in logged
              if isinstance(x.get("output"), dict) and x["output"]["display"]["action"] == "HU")
    assert win.winner == hu["player"] and win.value == hu["fanCnt"]
    assert win.deltas == tuple(hu["score"])
    # the hand we rebuilt from the request lines scores the judge's fans under our MCR rules
    state = TableState("mcr", win.winner)
    for e in seat_view(record, win.winner):
        if isinstance(e, ev.RoundWon):
            break
        state.apply(e)
    concealed = sorted([*state.hand, win.win_tile] if win.from_seat is not None else state.hand)
    assert concealed == sorted(win.hand)
    score = rules_for("mcr").win_score(state, win.win_tile, win.from_seat)
    assert score is not None and score.value == hu["fanCnt"]
    assert sorted((n, v) for n, v in score.items) == sorted(
        (f["name"], f["value"] * f["cnt"]) for f in hu["fan"])
    assert score.deltas == tuple(hu["score"])


def test_seat_view_hides_what_a_seat_cannot_see() -> None:
    record = tenhou6.loads((DATA / "tenhou" / "convlog_tenhou6_json" / "rinshan.json").read_text())
    view = seat_view(record, 2)
    assert view[0].seat == 2
    for e in view:
        if isinstance(e, ev.RoundStarted):
            assert e.hands == () and len(e.hand) == 13
        if isinstance(e, ev.TileDrawn) and e.seat != 2:
            assert e.tile is None
    # the view replays cleanly into a table state
    state = TableState("riichi", 2)
    for e in view:
        state.apply(e)


def test_decisions_are_derived_for_any_seat() -> None:
    path = DATA / "tenhou" / "mjx_pairs" / "2017040900gm-00a9-0000-af5434e3.mjlog"
    for seat in range(4):
        rep = replayer.load(path, seat)
        turns = [d for d in rep.decisions if d.request.kind == "turn"]
        assert turns
        for d in rep.decisions:
            assert any(replayer.action_key(a) == replayer.action_key(d.action) for a in d.legal)


@pytest.mark.parametrize("text, match", [
    ("not json at all", "tenhou6: not JSON"),
    ('{"log": [[[0,0,0],[1,2,3,4]]]}', "17 entries"),
    ('{"title":["",""],"name":["a","b","c","d"],"log":[[[0,0,0],[25000,25000,25000,25000],'
     '[99],[],' + ",".join(["[]"] * 12) + ',["流局",[0,0,0,0]]]]}', "bad tile code 99"),
])
def test_tenhou6_bad_input_names_the_problem(text: str, match: str) -> None:
    with pytest.raises(RecordError, match=match):
        tenhou6.loads(text)


@pytest.mark.parametrize("loader, text, match", [
    (mjlog.loads, "<mjloggm><INIT seed='x'/></mjloggm>", "mjlog: bad <INIT>"),
    (mjlog.loads, "<html/>", "root element"),
    (mjai_log.loads, '{"type":"start_game"}\n{"type":"warp"}', "unknown event type 'warp'"),
    (mjai_log.loads, '{"type":"start_game"}\nnope', "line 2 is not JSON"),
    (botzone_log.loads, '{"log": 5}', "expected a judge log"),
])
def test_other_importers_name_the_problem(loader: Callable[[str], object], text: str,
                                         match: str) -> None:
    with pytest.raises(RecordError, match=match):
        loader(text)


@pytest.mark.parametrize("path", sorted((DATA / "tenhou" / "dnovikoff_mjlog").glob("*.xml")),
                         ids=lambda p: p.name)
def test_other_mjlogs_survive_export_to_tenhou6_and_mjai(path: Path) -> None:
    record = mjlog.loads(path.read_text(encoding="utf-8"))
    assert tenhou6.loads(tenhou6.dumps(record)).events[1:] == record.events[1:]
    again = mjai_log.loads(mjai_log.dumps(record))
    moves = (ev.TileDrawn, ev.TileDiscarded, ev.MeldCalled, ev.DoraRevealed, ev.RiichiDeclared)

    def norm(events: list[object]) -> list[object]:
        # both readers put a meld's tiles in one order (canonical); kept as a check of it
        return [dataclasses.replace(e, tiles=canonical(e.tiles)) if isinstance(e, ev.MeldCalled)
                else e for e in events if isinstance(e, moves)]

    assert norm(again.events) == norm(record.events)


# --------------------------------------------------------------------------- scores and draws

# sanma.xml is named so, but its game is four-player (GO type 2113 has no 0x10 three-player
# bit, and UN names four players): it is checked as the others are
SCORED = [*TENHOU6, *MJLOGS, *MJAI, *sorted((DATA / "tenhou" / "dnovikoff_mjlog").glob("*.xml"))]


def _load(path: Path) -> GameRecord:
    text = path.read_text(encoding="utf-8")
    reader = {".jsonl": mjai_log.loads, ".json": tenhou6.loads}.get(path.suffix, mjlog.loads)
    return reader(text)


def _final(record: GameRecord) -> tuple[int, ...]:
    end = record.events[-1]
    assert isinstance(end, ev.GameEnded)
    return end.scores


def test_mjai_scores_add_up_hand_by_hand_to_the_logs_own() -> None:
    """Each start_kyoku's scores are the log's own: what we read must reach them hand by hand
    (a reach_accepted takes the 1000-point deposit; hora deltas do not hold it), and the end
    must be what the last hand leaves (seat 3's last riichi: 20,600, not 21,600)."""
    path = DATA / "mjai" / "local_match_seed10000_2000.mjai.jsonl"
    lines = [json.loads(x) for x in path.read_text().splitlines() if x.strip()]
    logged = [x["scores"] for x in lines if x["type"] == "start_kyoku"]
    record = mjai_log.loads(path.read_text())
    state = TableState("riichi", 0)
    reached: list[list[int]] = []
    for e in seat_view(record, 0):
        if isinstance(e, ev.RoundStarted | ev.GameEnded) and reached:
            assert list(e.scores) == state.scores
        state.apply(e)
        if isinstance(e, ev.RoundStarted):
            reached.append(list(e.scores))
    assert reached == logged
    assert _final(record) == (-4900, 77900, 6400, 20600) and sum(_final(record)) == 100000


@pytest.mark.parametrize("path", SCORED, ids=lambda p: p.name)
def test_final_scores_and_tenpai_survive_export_to_mjai(path: Path) -> None:
    record = _load(path)
    again = mjai_log.loads(mjai_log.dumps(record))
    assert _final(again) == _final(record)

    def draws(r: GameRecord) -> list[ev.RoundDrawn]:
        return [e for e in r.events if isinstance(e, ev.RoundDrawn)]

    assert draws(again) == draws(record)


def test_an_exhaustive_draw_names_its_tenpai_seats_in_mjai() -> None:
    record = tenhou6.loads((DATA / "tenhou" / "convlog_tenhou6_json" / "ryukyoku.json")
                           .read_text())
    draw = next(json.loads(x) for x in mjai_log.dumps(record).splitlines()
                if json.loads(x)["type"] == "ryukyoku")
    assert draw["tenpais"] == [True, True, False, False]
    assert all(("?" in h) != flag for h, flag in zip(draw["tehais"], draw["tenpais"],
                                                     strict=True))
    # what each kind of log writes is read: the flags, else the shown hands, else our own
    for drop in ((), ("tenpais",), ("tenpais", "tehais")):
        lines = [json.loads(x) for x in mjai_log.dumps(record).splitlines()]
        text = "\n".join(json.dumps({k: v for k, v in x.items()
                                     if x["type"] != "ryukyoku" or k not in drop})
                         for x in lines)
        tenpai = next(e.tenpai for e in mjai_log.loads(text).events
                      if isinstance(e, ev.RoundDrawn))
        assert tenpai == (0, 1), drop


@settings(max_examples=40, deadline=None)
@given(share=st.floats(min_value=0.0, max_value=1.0))
def test_an_mjlog_cut_short_shows_the_moves_before_the_cut(share: float) -> None:
    """A capture that stopped or a download broken off: the tags read whole come out as the
    same events as the whole file's first ones, and the replay says the file is cut."""
    path = DATA / "tenhou" / "mjx_pairs" / "2010110100gm-00a9-0000-de3472e8.mjlog"
    text = path.read_text()
    whole = mjlog.loads(text)
    first_hand = text.index("<INIT") + text[text.index("<INIT"):].index("/>") + 2
    cut = first_hand + int(share * (text.rindex("</mjloggm>") - first_hand))
    record = mjlog.loads(text[:cut])
    assert "cut" in record.meta and "cut" not in whole.meta
    assert record.events == whole.events[:len(record.events)]
    rep = replayer.from_record(record, 0, "cut.mjlog")
    assert any(note.startswith("the file is cut short") for note in rep.notes)
