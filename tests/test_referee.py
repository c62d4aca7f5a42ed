"""The local referee against hands laid out tile by tile: claim priority, furiten, abortive
draws, MCR's wall-empty rules and penalties, Taiwan's open-kong restriction and dead end, and
the value of sample wins."""

import pytest

from brain.rules.mcr import payments
from protocols import events as ev
from protocols import tiles as T
from tests.narrowing import tile_of
from tests.table_helpers import events_of, layout_wall, outcome_of, play_hand, take_when_legal

P5 = T.parse_mpsz("5p")[0]


def _wins(seat):
    return events_of(seat, ev.RoundWon)


def _drawn(seat):
    return events_of(seat, ev.RoundDrawn)


# ---------------------------------------------------------------------- riichi: claims


RIICHI_DEALER = "222z333z444z666z7z"


def test_pon_beats_chi():
    wall = layout_wall("riichi", [RIICHI_DEALER, "67p123m789m1s1s9s9s5z", "55p456m789s22s5z5z3s",
                                  "234s678s1p9p2m8m7z1z6s"], draws="5p")
    _, seats = play_hand("riichi", wall, {1: take_when_legal(ev.Chi), 2: take_when_legal(ev.Pon)})
    chi_offers = [legal for req, legal in seats[1].requests
                  if req.kind == "claim" and any(isinstance(a, ev.Chi) for a in legal)]
    assert chi_offers, "the chi was offered"
    calls = events_of(seats[0], ev.MeldCalled)
    assert calls[0].seat == 2 and calls[0].kind == "pon" and calls[0].from_seat == 0


def test_ron_beats_pon_and_chi():
    wall = layout_wall("riichi", [RIICHI_DEALER, "67p123m789m1s1s9s9s5z", "55p456m789s22s5z5z3s",
                                  "234m456m678m34p55s"], draws="5p")
    _, seats = play_hand("riichi", wall, {1: take_when_legal(ev.Chi), 2: take_when_legal(ev.Pon),
                                          3: take_when_legal(ev.Win)})
    wins = _wins(seats[0])
    assert [(w.winner, w.from_seat) for w in wins] == [(3, 0)]
    assert not events_of(seats[0], ev.MeldCalled)


def test_double_ron_both_win_sticks_to_the_first():
    wall = layout_wall("riichi", [RIICHI_DEALER, "123s456s789s111z5p", "19m19p19s5z5z6z7z8p8p7p",
                                  "234m456m678m34p55s"], draws="5p")
    referee, seats = play_hand("riichi", wall, {1: take_when_legal(ev.Win),
                                                3: take_when_legal(ev.Win)}, sticks=1, honba=1)
    wins = _wins(seats[0])
    assert [(w.winner, w.from_seat) for w in wins] == [(1, 0), (3, 0)]
    assert sum(wins[0].deltas) == 1000  # the riichi stick, to the seat nearer the discarder
    assert sum(wins[1].deltas) == 0
    assert outcome_of(referee).sticks == 0 and outcome_of(referee).reason == "win"


def test_triple_ron_is_an_abortive_draw():
    wall = layout_wall("riichi", [RIICHI_DEALER, "123s456s789s111z5p", "789m111p222p333p5p",
                                  "234m456m678m34p55s"], draws="5p")
    _, seats = play_hand("riichi", wall, {s: take_when_legal(ev.Win) for s in (1, 2, 3)})
    assert not _wins(seats[0])
    assert _drawn(seats[0])[0].reason == "triple_ron"


def test_furiten_after_discarding_a_wait():
    def decline_then_default(state, request, legal):
        if request.kind == "turn" and ev.Win() in legal:
            return ev.Discard(state.last_draw)  # pass up the self-draw: now furiten on 5p
        return take_when_legal(ev.Win)(state, request, legal)

    wall = layout_wall("riichi", [RIICHI_DEALER, "123s456s789s111z5p", "19m19p19s5z5z6z7z8p8p7p",
                                  "234s678s1p9p2m8m7z3z6s"], draws="9m5p5p")
    _, seats = play_hand("riichi", wall, {1: decline_then_default})
    offered_win = [req for req, legal in seats[1].requests if ev.Win() in legal]
    assert offered_win and all(req.kind == "turn" for req in offered_win)  # self-draw only
    discards = events_of(seats[1], ev.TileDiscarded)
    assert any(d.seat == 2 and T.kind(d.tile) == T.kind(P5) for d in discards)
    assert not any(w.winner == 1 for w in _wins(seats[1]))


# ---------------------------------------------------------------------- riichi: aborts


def test_nine_terminals():
    wall = layout_wall("riichi", ["19m19p19s1234567z", "2345678m234567p", "2345678s234567p",
                                  "66m66p66s77m77p77s3p"], draws="5m")
    referee, seats = play_hand("riichi", wall, {0: take_when_legal(ev.AbortiveDraw)})
    assert _drawn(seats[0])[0].reason == "nine_terminals"
    assert outcome_of(referee).dealer_keeps


def test_four_winds():
    wall = layout_wall("riichi", ["2345678m234567p", "2345678s234567p", "2345678m234567s",
                                  "9999m9999p999s1p2z"], draws="1z1z1z1z")
    _, seats = play_hand("riichi", wall)
    assert _drawn(seats[0])[0].reason == "four_winds"
    assert len(events_of(seats[0], ev.TileDiscarded)) == 4


def test_four_riichi():
    def riichi_tsumogiri(state, request, legal):
        return next((a for a in legal if isinstance(a, ev.Discard) and a.riichi
                     and a.tile == state.last_draw), None)

    wall = layout_wall("riichi", ["123m456m789m123p4p", "123s456s789s567p8p", "111z222z333z55z66z",
                                  "234m567m234s567s9s"], draws="7z7z7z4z")
    referee, seats = play_hand("riichi", wall, {s: riichi_tsumogiri for s in range(4)})
    assert _drawn(seats[0])[0].reason == "four_riichi"
    assert len(events_of(seats[0], ev.RiichiAccepted)) == 4
    assert outcome_of(referee).sticks == 4
    assert referee.scores == [24000] * 4


def test_four_kans_by_different_seats():
    def closed_kan(state, request, legal):
        return next((a for a in legal if isinstance(a, ev.Kan) and a.kind == "closed_kan"), None)

    wall = layout_wall("riichi", ["111m22m33m44m55m6m7m", "111p22p33p44p55p6p7p",
                                  "111s22s33s44s55s6s7s", "111z222z333z444z5z"],
                       draws="1m1p1s1z")
    _, seats = play_hand("riichi", wall, {s: closed_kan for s in range(4)})
    kans = events_of(seats[0], ev.MeldCalled)
    assert [k.seat for k in kans] == [0, 1, 2, 3]
    assert len(events_of(seats[0], ev.DoraRevealed)) == 4
    assert _drawn(seats[0])[0].reason == "four_kans"


def test_nagashi_mangan_is_paid_in_place_of_the_noten_payments():
    """Seat 1 discards only terminals and honours, none called: at the exhaustive draw it is
    paid a non-dealer mangan self-draw (4000 from the dealer, 2000 from each other seat), as
    at Tenhou, and nobody pays for being noten."""
    def terminals_only(state, request, legal):
        if request.kind != "turn":
            return None
        ends = [a for a in legal if isinstance(a, ev.Discard) and not a.riichi
                and T.kind(a.tile) in T.TERMINALS_AND_HONOURS]
        return next((a for a in ends if a.tile == state.last_draw), ends[0])

    wall = layout_wall("riichi", ["234m567m234p567p5s", "19m19p19s1234567z", "345m678m345p678p6s",
                                  "2345678m2345s67p"])
    referee, seats = play_hand("riichi", wall, {1: terminals_only})
    drawn = _drawn(seats[0])[0]
    assert drawn.reason == "nagashi"
    assert drawn.deltas == (-4000, 8000, -2000, -2000)
    assert referee.scores == [21000, 33000, 23000, 23000]


def test_riichi_ron_value_dealer_ittsu():
    # dealer 123m456m789m123p4p waits on 4p alone: ittsu 2 han, 40 fu (tanki) = 3900
    wall = layout_wall("riichi", ["123m456m789m123p4p", "2345678s234567p", "2345678m666z1z55s",
                                  "888p999p999s1p1z3z2z"], draws="7z4p", dead="1s2s3s4s6z")
    referee, seats = play_hand("riichi", wall, {0: take_when_legal(ev.Win)})
    (win,) = _wins(seats[0])
    assert (win.winner, win.from_seat, win.value) == (0, 1, 2)
    assert win.deltas == (3900, -3900, 0, 0)
    assert referee.scores == [28900, 21100, 25000, 25000]


def test_riichi_illegal_answer_is_replaced_by_the_safest_move_and_counted():
    nine_pin = T.parse_mpsz("9p")[0]
    answered: list[bool] = []

    def bad_once(state, request, legal):
        if request.kind == "turn" and not answered:
            answered.append(True)
            return ev.Discard(nine_pin)  # not in hand
        return None

    wall = layout_wall("riichi", [RIICHI_DEALER, "2345678m234567p", "2345678s234567p",
                                  "66m66p66s77m77p77s3p"], draws="5m")
    referee, seats = play_hand("riichi", wall, {0: bad_once})
    first = events_of(seats[1], ev.TileDiscarded)[0]
    assert first.seat == 0 and first.tsumogiri and T.tile_name(first.tile) == "5m"
    assert len(outcome_of(referee).illegal) == 1 and outcome_of(referee).illegal[0].seat == 0
    assert outcome_of(referee).reason in ("exhaustive", "win")


# ---------------------------------------------------------------------- MCR (Botzone judge)


def test_mcr_false_win_costs_thirty():
    referee, seats = play_hand("mcr", (), {0: lambda s, r, legal: ev.Win()}, seed=0)
    assert _drawn(seats[0])[0].reason == "false_win"
    assert outcome_of(referee).deltas == [-30, 10, 10, 10]
    assert outcome_of(referee).penalty_seat == 0 and len(outcome_of(referee).illegal) == 1


def test_mcr_pass_on_own_draw_is_wrong_answer():
    referee, seats = play_hand("mcr", (), {2: lambda s, r, legal: ev.Pass()}, seed=3)
    assert _drawn(seats[0])[0].reason == "illegal_action"
    assert outcome_of(referee).deltas == [10, 10, -30, 10]


def test_mcr_no_claims_when_the_next_wall_is_empty():
    seat3_draws = "5p1z2z3z4z5z6z7z1s2s3s4s5s6s7s8s9s9m8p9p5p"
    wall = layout_wall("mcr", ["2468m2468p2468s8m", "55p123m456m789m23p", "1357m1379p1357s9s",
                               "1122m3344z6677s8s"], draws=["", "", "", seat3_draws])
    _, seats = play_hand("mcr", wall)
    offers = [(req, legal) for req, legal in seats[1].requests
              if req.kind == "claim" and req.from_seat == 3 and T.kind(tile_of(req)) == T.kind(P5)]
    assert len(offers) == 1, "only the first 5p is offered; the last one comes with seat 0's "\
                             "wall empty, where a PENG would be WA"
    assert any(isinstance(a, ev.Pon) for a in offers[0][1])
    assert len([e for e in seats[0].events if isinstance(e, ev.TileDrawn) and e.seat == 3]) == 21
    assert _drawn(seats[0])[0].reason == "exhaustive"


# Seat 0 holds three whites; seat 1's 21st (last) draw is the fourth, discarded when seat 0's
# own wall is already empty but seat 2's still has a tile: the judge accepts PENG and GANG.
LATE_HANDS = ["123m456p789s1z555z", "111m222p333s4446z", "888m888p888s2223z", "777m777p777s1367z"]
LATE_SEAT1_DRAWS = "2m3m4m5m6m7m2s3s4s5s6s1p3p4p5p6p7p8p4m5m5z"
WHITE = T.parse_mpsz("5z")[0]


def _late_white(kind):
    def script(state, request, legal):
        if request.kind == "claim" and request.tile == WHITE:
            return next((a for a in legal if isinstance(a, kind)), None)
        return None
    return script


@pytest.mark.parametrize("kind", [ev.Pon, ev.Kan])
def test_mcr_late_claim_with_the_claimers_own_wall_empty(kind):
    wall = layout_wall("mcr", LATE_HANDS, draws=["", LATE_SEAT1_DRAWS, "", ""])
    referee, seats = play_hand("mcr", wall, {0: _late_white(kind)})
    offers = [legal for req, legal in seats[0].requests
              if req.kind == "claim" and req.tile == WHITE]
    assert len(offers) == 1 and any(isinstance(a, kind) for a in offers[0])
    assert seats[0].state.seat_walls is not None
    calls = events_of(seats[0], ev.MeldCalled)
    assert [(c.seat, c.kind) for c in calls] == [(0, "pon" if kind is ev.Pon else "open_kan")]
    # after a PENG seat 1 is due to draw from its empty wall; after a GANG seat 0 is, for its
    # replacement: either way the hand is drawn (荒庄), nobody pays
    assert _drawn(seats[0])[0].reason == "exhaustive"
    assert outcome_of(referee).deltas == [0, 0, 0, 0] and not outcome_of(referee).illegal


def test_mcr_one_winner_first_after_discarder_and_botzone_payments():
    wall = layout_wall("mcr", ["123m456m789m1234p", "1122m3344p5566s7z", "7788m6699p8899s7z",
                               "5678p357z111z234s"], draws=["7z", "", "", ""])
    _, seats = play_hand("mcr", wall, {1: take_when_legal(ev.Win), 2: take_when_legal(ev.Win)})
    (win,) = _wins(seats[0])
    assert (win.winner, win.from_seat) == (1, 0)
    assert win.value >= 24 and any("七对" in y for y in win.yaku)
    assert win.deltas == (-(8 + win.value), 24 + win.value, -8, -8)
    assert win.deltas == payments(_ctx_from(win, seat=1), win.value)


def test_mcr_knitted_straight_win_is_paid_as_the_judge_values_it():
    # 147m 258p 369s + 123s + 44z, won on 3s: PyMahjongGB 1.4 says 组合龙 12 + 门前清 2 +
    # 独听・边张 1 = 15, the judge 14 (no wait fan on a knitted-straight tile); the table pays 14
    wall = layout_wall("mcr", ["999m999p999s5556z", "147m258p12369s44z", "888m888p888s2223z",
                               "777m777p777s1367z"], draws=["3s", "", "", ""])
    referee, seats = play_hand("mcr", wall, {1: take_when_legal(ev.Win)})
    (win,) = _wins(seats[0])
    assert (win.winner, win.from_seat) == (1, 0)
    assert win.value == 14 and not any("边张" in y for y in win.yaku)
    assert win.deltas == (-(8 + 14), 24 + 14, -8, -8)
    assert outcome_of(referee).wins == [(1, 0, 14)]


def test_mcr_kongs_the_judge_allows_are_offered_and_accepted():
    # Seat 0 is dealt 1111m and draws 9p: a concealed kong on a tile other than the one just
    # drawn. Seat 1 pungs 2p and keeps the fourth; a round later, on another draw, it adds it
    # to that older pung. Each kong goes out as the Botzone answer and comes back through the
    # local judge's reading of it before the referee plays it.
    from adapter.fakes.botzone_judge import BotzoneJudge
    from protocols.botzone import BotzoneCodec
    judge = BotzoneJudge(["keep"] * 4, seed=0)
    p2, s9 = T.parse_mpsz("2p9s")
    offered: dict[str, ev.Kan] = {}
    drawn = [None, None]  # the tile each seat had just drawn when it kongs

    def as_judged(seat, request, action):
        return judge.seats[seat]._action(BotzoneCodec().encode(action), request)

    def seat0(state, request, legal):
        kan = next((a for a in legal if isinstance(a, ev.Kan)), None)
        if request.kind == "turn" and kan is not None:
            offered["closed"], drawn[0] = kan, state.last_draw
            return as_judged(0, request, kan)
        if request.kind == "turn" and p2 in state.hand:
            return ev.Discard(p2)
        return None

    def seat1(state, request, legal):
        if request.kind == "claim" and request.tile == p2:
            return next(a for a in legal if isinstance(a, ev.Pon))
        if request.kind == "turn" and state.called_this_turn is not None:
            return ev.Discard(s9)
        kan = next((a for a in legal if isinstance(a, ev.Kan)), None)
        if request.kind == "turn" and kan is not None:
            offered["added"], drawn[1] = kan, state.last_draw
            return as_judged(1, request, kan)
        return None

    try:
        wall = layout_wall("mcr", ["1111m2p456s789s11z", "345m678m222p9s335z",
                                   "888m888p888s2223z", "777m777p777s1367z"],
                           draws=["9p8p", "4s", "", ""])
        referee, seats = play_hand("mcr", wall, {0: seat0, 1: seat1})
    finally:
        judge.pool.shutdown()
    assert offered["closed"].kind == "closed_kan" and T.kind(offered["closed"].tiles[0]) == 0
    assert offered["added"] == ev.Kan("added_kan", (p2,))
    kongs = [(c.seat, c.kind) for c in events_of(seats[0], ev.MeldCalled)]
    assert kongs[:3] == [(0, "closed_kan"), (1, "pon"), (1, "added_kan")]
    assert drawn == T.parse_mpsz("9p4s")
    assert not outcome_of(referee).illegal and outcome_of(referee).penalty_seat is None


def _ctx_from(win, seat):
    from brain.rules.base import WinContext
    return WinContext(concealed=win.hand, melds=(), win_tile=win.win_tile, seat=seat,
                      from_seat=win.from_seat)


# ---------------------------------------------------------------------- Taiwan 16-tile


def test_taiwan_no_open_kong_on_the_previous_seats_discard():
    wall = layout_wall("taiwan16", [
        "1234567z123m456m789m", "555p123s456s789s11p4m6m", "888p2345678m234p67p1p",
        "2345678s999p33z44z11s"], draws="5p1m1m2z8p")
    _, seats = play_hand("taiwan16", wall)
    (legal1,) = [legal for r, legal in seats[1].requests
                       if r.kind == "claim" and T.kind(tile_of(r)) == T.kind(P5)]
    assert any(isinstance(a, ev.Pon) for a in legal1)
    assert not any(isinstance(a, ev.Kan) for a in legal1)
    offers2 = [legal for r, legal in seats[2].requests
               if r.kind == "claim" and r.from_seat == 0 and T.tile_name(tile_of(r)) == "8p"]
    assert offers2 and any(isinstance(a, ev.Kan) and a.kind == "open_kan" for a in offers2[0])


def test_taiwan_drawn_with_sixteen_tiles_left():
    _, seats = play_hand("taiwan16", (), seed=11)
    draws = [e for e in seats[0].events if isinstance(e, ev.TileDrawn)]
    assert len(draws) == 136 - 4 * 16 - 16
    assert _drawn(seats[0])[0].reason == "exhaustive"


def test_taiwan_win_value_and_dealer_pays_one_more_tai():
    # seat 1: 123m456m789m123p456p + 7p waits on 7p alone: 門清 1 + 一條龍 4 (concealed) = 5 tai,
    # and 1 more (莊家) paid by the dealer who discards it: 6, as paid (it read 5)
    wall = layout_wall("taiwan16", [
        "1234567z22s33s44s55s6s", "123m456m789m123p456p7p", "2345678m2345678s8s9s",
        "999m888p99s3z4z5z6z7z7s7s8s"], draws="1z2z3z4z7p")
    _, seats = play_hand("taiwan16", wall, {1: take_when_legal(ev.Win)})
    (win,) = _wins(seats[0])
    assert (win.winner, win.from_seat, win.value) == (1, 0, 6)
    assert win.deltas == (-(1000 + 500 * 6), 1000 + 500 * 6, 0, 0)


@pytest.mark.parametrize("variant", ["riichi", "mcr", "taiwan16", "mass"])
def test_a_seeded_wall_is_the_same_hand_every_time(variant):
    first = [e for e in play_hand(variant, (), seed=7)[1][0].events]
    again = [e for e in play_hand(variant, (), seed=7)[1][0].events]
    other = [e for e in play_hand(variant, (), seed=8)[1][0].events]
    assert first == again and first != other
