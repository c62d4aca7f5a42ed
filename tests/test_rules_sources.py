"""Riichi rules earlier sessions left unconfirmed, each settled against a named source: the
reference implementations of Tenhou's rules (mjx-project/mjx include/mjx/internal/state.cpp,
Equim-chan/Mortal libriichi/src/arena/board.rs, which quotes https://tenhou.net/man/#RULE) and
the real Tenhou records in ../shared/data."""

from __future__ import annotations

from typing import Any

from brain.state import TableState
from protocols import events as ev
from protocols import tiles as T
from tests.table_helpers import events_of, layout_wall, outcome_of, play_hand, take_when_legal

RIICHI_DEALER = "222z333z444z666z7z"


def test_double_ron_pays_the_honba_to_the_first_winner_only() -> None:
    """Tenhou's double ron is 上家取り for the honba as for the sticks: the seat nearer the
    discarder gets them, the other winner its plain hand value (mjx State::Ron zeroes honba
    and riichi for the second RON; Mortal's handle_hora sets honba_left to 0 after the first
    winner). The discarder pays 300 per honba once, not once per winner."""
    wall = layout_wall("riichi", [RIICHI_DEALER, "123s456s789s111z5p", "19m19p19s5z5z6z7z8p8p7p",
                                  "234m456m678m34p55s"], draws="5p")
    scripts = {1: take_when_legal(ev.Win), 3: take_when_legal(ev.Win)}
    wins = {}
    for honba in (0, 2):
        _, seats = play_hand("riichi", wall, scripts, sticks=1, honba=honba)
        wins[honba] = events_of(seats[0], ev.RoundWon)
    first, second = wins[2]
    assert (first.winner, second.winner) == (1, 3)
    assert first.deltas == (wins[0][0].deltas[0] - 600, wins[0][0].deltas[1] + 600, 0, 0)
    assert second.deltas == wins[0][1].deltas  # as if there were no honba


def test_a_double_rons_second_winner_is_exported_at_its_hand_value() -> None:
    """tenhou.net/6 JSON gives each win's value without the honba it was paid ("30符2飜2000点"
    in Tenhou's own records at any honba); the export took 300 per honba off the second winner
    too, who is paid none (above): 1400点 for its 2000 at 2 honba."""
    import json

    from adapter.local.referee import HandReferee, HandSetup
    from replay.formats import tenhou6
    from replay.record import GameRecord
    from tests.nycu_fixtures import Capture
    from tests.table_helpers import ScriptedSeat

    wall = layout_wall("riichi", [RIICHI_DEALER, "123s456s789s111z5p", "19m19p19s5z5z6z7z8p8p7p",
                                  "234m456m678m34p55s"], draws="5p")
    texts = {}
    for honba in (0, 2):
        scripts = {1: take_when_legal(ev.Win), 3: take_when_legal(ev.Win)}
        seats = [ScriptedSeat("riichi", s, scripts.get(s)) for s in range(4)]
        capture = Capture()
        referee = HandReferee("riichi", seats, capture)
        referee.emit(ev.GameStarted("riichi", 0))
        referee.play(HandSetup(seed=0, wall=wall, scores=(25000,) * 4, sticks=1, honba=honba))
        result = json.loads(tenhou6.dumps(GameRecord("riichi", "local", capture.events)))
        texts[honba] = [win[3] for win in result["log"][0][-1][2::2]]
    assert texts[2] == texts[0] == ["跳満12000点", "30符2飜2000点"]


def _terminals_only(state: TableState, request: ev.DecisionRequest,
                    legal: list[Any]) -> ev.Pon | ev.Discard | None:
    """Pon whatever is offered; discard only terminals and honours (the drawn tile first)."""
    pon = next((a for a in legal if isinstance(a, ev.Pon)), None)
    if request.kind == "claim":
        return pon
    if request.kind != "turn":
        return None
    ends = [a for a in legal if isinstance(a, ev.Discard) and not a.riichi
            and T.kind(a.tile) in T.TERMINALS_AND_HONOURS]
    return next((a for a in ends if a.tile == state.last_draw), ends[0])


def test_nagashi_mangan_holds_with_the_seats_own_calls_and_a_karaten_hand_is_noten() -> None:
    """Two Tenhou rules at one exhaustive draw.

    流し満貫 is lost only by a discard that is no terminal or honour or that another seat
    calls; the seat's own calls do not matter (mjx State::ApplyOpen clears has_nm of the seat
    called from only; Mortal's update_nagashi_mangan clears the chi/pon/kan target only):
    seat 1 pons the dealer's 1m and is still paid a non-dealer mangan.

    A hand whose only wait is a tile it holds all four of in its concealed hand (2222s345p
    678p789m waits on a fifth 2s) is not ready at Tenhou (https://mj-news.net/?p=38310:
    天鳳ルールでは…手牌に4枚ある場合はノーテン扱い; a pon and a single wait on the same tile
    is ready): seat 3 is not among the ready seats; the dealer and seat 2 are."""
    wall = layout_wall("riichi", ["234m567m234p567p5s", "11m9m19p19s123456z",
                                  "345m678m345p678p6s", "2222s345p678p789m"], draws="1m")
    referee, seats = play_hand("riichi", wall, {1: _terminals_only})
    (pon,) = events_of(seats[0], ev.MeldCalled)
    assert (pon.seat, pon.kind, pon.from_seat) == (1, "pon", 0)
    (drawn,) = events_of(seats[0], ev.RoundDrawn)
    assert drawn.reason == "nagashi" and drawn.tenpai == (0, 2)
    assert drawn.deltas == (-4000, 8000, -2000, -2000)
    assert outcome_of(referee).dealer_keeps


def test_pao_with_a_second_yakuman_makes_the_liable_seat_pay_the_whole_hand() -> None:
    """Tenhou's rule page (https://tenhou.net/man/#RULE, quoted in Mortal's
    libriichi/src/arena/board.rs handle_hora):
    複合役満を含む得点を、ツモ＝全額・ロン＝折半で支払う。積み棒は包。
    大三元 fed by seat 1, with 字一色 beside it: on a self-draw seat 1 pays both yakuman and
    the honba; on seat 3's discard seat 3 pays half the hand, seat 1 the other half and the
    honba."""
    import dataclasses

    from brain.rules import rules_for
    from tests.rules_helpers import ctx, meld

    melds = (meld("pon", "555z", from_seat=1), meld("pon", "666z", from_seat=2),
             meld("pon", "777z", from_seat=1))
    win = ctx("11122z", "2z", melds, seat=0, from_seat=3, dealer=2, honba=1, pao_seat=1)
    riichi = rules_for("riichi")
    ron = riichi.score(win)
    assert ron is not None and ron.limit == "2x yakuman"
    assert ron.deltas == (64300, -32300, 0, -32000)
    tsumo = riichi.score(dataclasses.replace(win, from_seat=None))
    assert tsumo is not None and tsumo.deltas == (64300, -64300, 0, 0)


def test_a_pao_win_on_a_discard_is_written_at_its_whole_value() -> None:
    """Tenhou's ``ten`` (and a tenhou.net/6 score line) is the hand's value, whoever pays it:
    on a discard with pao the discarder pays half and the liable seat the other half and the
    honba (above), so the value is what both paid less the honba; it was read off the
    discarder alone (31700 for the 64000 double yakuman at 1 honba)."""
    from brain.rules import rules_for
    from protocols.tenhou_values import hand_points
    from tests.rules_helpers import ctx, meld

    melds = (meld("pon", "555z", from_seat=1), meld("pon", "666z", from_seat=2),
             meld("pon", "777z", from_seat=1))
    riichi = rules_for("riichi")
    for from_seat in (3, 1, None):  # another seat's discard, the liable seat's, a self-draw
        win = ctx("11122z", "2z", melds, seat=0, from_seat=from_seat, dealer=2, honba=1,
                  pao_seat=1)
        score = riichi.score(win)
        assert score is not None
        won = ev.RoundWon(0, from_seat, win.concealed, win.win_tile, score.value,
                          score.deltas, pao_seat=1)
        assert hand_points(won, honba=1) == 64000, (from_seat, score.deltas)


def test_pao_counts_an_earlier_concealed_kong_of_the_set() -> None:
    """大三元's liability holds when one of the first two dragon sets is a concealed kong:
    the seat that fed the third (by pon or open kan) pays (ja.wikipedia 大三元 / 大三元の包:
    2副露のうち1つもしくは2つが暗槓であっても包は成立する; mjx Hand::HasPao counts closed
    kans among the sets, only the last may not be one). Mortal's update_paos counts pons and
    open kans only: it differs here, and no Tenhou record in ../shared/data has the case."""
    from brain.rules.riichi import pao_seat
    from tests.rules_helpers import meld

    melds = (meld("closed_kan", "5555z"), meld("pon", "666z", from_seat=2),
             meld("pon", "777z", from_seat=3))
    assert pao_seat(melds) == 3
    winds = (meld("closed_kan", "1111z"), meld("closed_kan", "2222z"),
             meld("pon", "333z", from_seat=1), meld("open_kan", "4444z", from_seat=2))
    assert pao_seat(winds) == 2
