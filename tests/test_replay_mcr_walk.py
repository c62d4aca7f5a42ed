"""An MCR entrant studying games offline: the Botzone bot's own logs, the judge's logs and
the tools that read them (`mjbot replay`, `review`, `view`), as the README tells them."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from protocols import events as ev
from tests.in_process import mjbot_here

# a one-shot turn after our own concealed kong: the judge's `3 0 GANG` names no tile, only
# our earlier answer `GANG W1` does
KONG_TURN = "\n".join([
    "5", "0 0 1", "PASS", "1 0 0 0 0 W1 W1 W1 W2 W3 B4 B5 B6 T7 T8 T9 F1 F1", "PASS",
    "2 W1", "GANG W1", "3 0 GANG", "PASS", "2 B5", "", ""]) + "\n"


def _bot_log(tmp_path: Path, turn: str) -> Path:
    """The game log a real `mjbot botzone` one-shot process writes for ``turn``."""
    done = subprocess.run([sys.executable, "-m", "adapter.cli", "botzone", "--no-keep-running",
                           "--log-dir", str(tmp_path / "logs")], input=turn,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    (log,) = (tmp_path / "logs").rglob("*.mjlog.msgpack")
    return log


def test_reparse_reads_the_botzone_bots_own_log_with_its_concealed_kong(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # --reparse said "no codec for platform 'botzone'" for every log the Botzone bot wrote,
    # and a codec not told our answers could not read our own concealed kong again
    log = _bot_log(tmp_path, KONG_TURN)
    done = mjbot_here(capsys, "replay", str(log), "--reparse")
    assert done.returncode == 0, done.stderr
    assert "reparse: 5/5 events, identical: True" in done.stdout


JUDGE_LOG = Path(__file__).parent / "data" / "botzone_judge_log.json"  # the official judge's


def _mahjonggb_fan(hand13: list[str], win: str, self_drawn: bool) -> int:
    """MahjongGB's total for the concealed hand (Botzone tile names), seat and round East."""
    import MahjongGB

    fans = MahjongGB.MahjongFanCalculator(
        pack=(), hand=tuple(hand13), winTile=win, flowerCount=0, isSelfDrawn=self_drawn,
        is4thTile=False, isAboutKong=False, isWallLast=False, seatWind=0, prevalentWind=0)
    return sum(points for points, _ in fans)


def test_mcr_commentary_says_a_wait_short_of_8_on_a_discard_can_still_win_by_self_draw(
        capsys: pytest.CaptureFixture[str]) -> None:
    # the judge log's seat 2 went ready on 4s 7s: 7s scores 7 on a discard but 9 self-drawn
    # (不求人 for 门前清 and 自摸); the line said "only 4s reach 8 fan", as if 7s could not win
    done = mjbot_here(capsys, "replay", str(JUDGE_LOG), "--seat", "2", "--commentary")
    assert done.returncode == 0, done.stderr
    assert ("seat 2 discards 3s: ready on 4s 7s, but only 4s reach 8 fan on a discard; 7s "
            "only by self-draw.") in done.stdout
    hand = ["W3", "W4", "W5", "W6", "W7", "W8", "B2", "B3", "B4", "T5", "T6", "T8", "T8"]
    assert _mahjonggb_fan(hand, "T7", False) == 7 and _mahjonggb_fan(hand, "T7", True) == 9


def test_mcr_commentary_ready_hand_winnable_only_by_self_draw() -> None:
    from replay.review.commentary import FAN_MINIMUM, explain
    from tests.review_positions import discard, legal, mcr_state

    turn = ev.DecisionRequest("turn")
    state = mcr_state("345678m888s88p35p", draw="7z")
    comment = explain(state, turn, legal(state, turn), discard(state, "7z"))
    assert comment.factor == FAN_MINIMUM
    assert comment.sentence == ("discards 7z: ready on 4p (4 left) but below 8 fan on a "
                                "discard: it can win only by self-draw (on 4p).")
    assert comment.facts["waits_8_fan"] == "" and \
        comment.facts["waits_8_fan_self_draw_only"] == "4p"
    hand = ["W3", "W4", "W5", "W6", "W7", "W8", "T8", "T8", "T8", "B8", "B8", "B3", "B5"]
    assert _mahjonggb_fan(hand, "B4", False) == 7 and _mahjonggb_fan(hand, "B4", True) == 9
