"""MCR fans named as the Botzone judge names them: our rules (and so the arena's logs, the
commentary and review) said PyMahjongGB's 独听・边张 / 独听・嵌张 / 独听・单钓 where a Botzone judge
log says 边张 / 嵌张 / 单钓将; logs written before still read."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from brain.rules import rules_for
from brain.rules.base import WinContext
from brain.rules.mcr import fan_items, pymahjonggb_items
from brain.state import TableState
from protocols import events as ev
from protocols import tiles as T
from replay.formats import botzone_log
from replay.record import view_event
from replay.yaku_names import english

DATA = Path(__file__).parent / "data"


def _judged_and_ours(name: str) -> tuple[list[str], list[str]]:
    """The judge's fan names for the win of the judge log ``name``, and our rules' names for
    the same win replayed from the winner's seat."""
    text = (DATA / name).read_text()
    judge = json.loads(text)
    (hu,) = [e["output"]["display"] for e in judge["log"]
             if isinstance(e.get("output"), dict)
             and (e["output"].get("display") or {}).get("action") == "HU"]
    record = botzone_log.loads(text)
    (won,) = [e for e in record.events if isinstance(e, ev.RoundWon)]
    state = TableState("mcr", won.winner)
    for e in record.events[:record.events.index(won)]:
        state.apply(view_event(e, won.winner, "mcr"))
    score = rules_for("mcr").win_score(state, won.win_tile, won.from_seat)
    assert score is not None and score.value == hu["fanCnt"]
    return sorted(f["name"] for f in hu["fan"]), sorted(name for name, _ in score.items)


@pytest.mark.parametrize("name", ["botzone_judge_kongs/open_kong.json",
                                  "botzone_judge_kongs/added_kong.json"])
def test_our_fans_are_named_as_in_the_botzone_judges_log(name: str) -> None:
    # both wins carry a closed wait: the judge says 嵌张, our rules said 独听・嵌张
    judged, ours = _judged_and_ours(name)
    assert "嵌张" in judged
    assert ours == judged


@pytest.mark.parametrize(("concealed", "win", "library", "judge"), [
    ("12m345p678p123s55s", "3m", "独听・边张", "边张"),
    ("13m345p678p123s55s", "2m", "独听・嵌张", "嵌张"),
    ("123m345p678p123s5s", "5s", "独听・单钓", "单钓将"),
])
def test_each_wait_fan_takes_the_judges_name(concealed: str, win: str, library: str,
                                             judge: str) -> None:
    (tile,) = T.parse_mpsz(win)
    ctx = WinContext(concealed=(*T.parse_mpsz(concealed), tile), melds=(), win_tile=tile, seat=1,
                     from_seat=0, dealer=0, round_wind=T.EAST)
    assert library in dict(pymahjonggb_items(ctx) or ())  # the library's own name
    items = dict(fan_items(ctx) or ())
    assert items.get(judge) == 1 and library not in items
    assert english(f"{judge}(1)", "mcr") == english(f"{library}(1)", "mcr")  # old logs too
