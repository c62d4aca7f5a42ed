"""`mjbot score` with melds beside the concealed tiles (--chi, --pon, --kong, --concealed-kong)
and the winds (--round-wind, --seat-wind): it valued closed hands only, always in an East
round, so an MCR hand with a called pung, a kong, or a wind pung in another round could not be
valued at all. The figures are checked by hand against the MCR fan table (each fan below is
named in its test), MahjongGB's calculator being what brain/rules/mcr.py asks."""

from __future__ import annotations

import pytest

from adapter.cli import main

# 123m 456p 789s is a mixed straight (花龙, 8); 5s the pair, won on a single wait (单钓将, 1);
# the pung beside it is given by the test. Won on seat 3's discard: the winner gets 24 + fan,
# the discarder pays 8 + fan, the others 8 (Botzone's payments).
MCR_WIN = ["score", "123m456p789s55s", "--variant", "mcr", "--win", "5s", "--ron-from", "3"]


def _scored(args: list[str], capsys: pytest.CaptureFixture[str]) -> list[str]:
    assert main(args) == 0
    return capsys.readouterr().out.splitlines()


def test_an_east_pung_is_worth_what_the_round_and_seat_winds_make_it(
        capsys: pytest.CaptureFixture[str]) -> None:
    """East round, the dealer's East seat: the East pung is both the prevalent wind's (圈风刻 2)
    and the seat wind's (门风刻 2); in a South round the seat's alone; in a South round from
    the South seat neither, an honour pung then (幺九刻 1)."""
    east = [*MCR_WIN, "--pon", "111z"]
    assert _scored(east, capsys) == ["value 13: 花龙 8, 圈风刻 2, 门风刻 2, 单钓将 1",
                                     "deltas [37, -8, -8, -21]"]
    assert _scored([*east, "--round-wind", "S"], capsys) == [
        "value 11: 花龙 8, 门风刻 2, 单钓将 1", "deltas [35, -8, -8, -19]"]
    assert _scored([*east, "--round-wind", "s", "--seat-wind", "S"], capsys) == [
        "value 10: 花龙 8, 幺九刻 1, 单钓将 1", "deltas [34, -8, -8, -18]"]
    # the South seat's own South pung in a South round: both winds again, paid to seat 1
    south = [*MCR_WIN[:-2], "--ron-from", "3", "--pon", "222z", "--round-wind", "S",
             "--seat", "1"]
    assert _scored(south, capsys) == ["value 13: 花龙 8, 圈风刻 2, 门风刻 2, 单钓将 1",
                                      "deltas [-8, 37, -8, -21]"]


def test_kongs_and_a_chow_beside_the_hand(capsys: pytest.CaptureFixture[str]) -> None:
    """A concealed kong keeps the hand concealed (门前清 2 on a discard) and is 暗杠 2; an
    exposed one is 明杠 1 and opens the hand; a called chow of the straight opens it too."""
    assert _scored([*MCR_WIN, "--concealed-kong", "1111z"], capsys)[0] == (
        "value 17: 花龙 8, 圈风刻 2, 门风刻 2, 门前清 2, 暗杠 2, 单钓将 1")
    assert _scored([*MCR_WIN, "--kong", "1111z"], capsys)[0] == (
        "value 14: 花龙 8, 圈风刻 2, 门风刻 2, 明杠 1, 单钓将 1")
    chow = ["score", "456p789s55s", "--variant", "mcr", "--win", "5s", "--ron-from", "3",
            "--chi", "123m", "--pon", "111z"]
    assert _scored(chow, capsys)[0] == "value 13: 花龙 8, 圈风刻 2, 门风刻 2, 单钓将 1"


def test_a_riichi_hand_with_a_called_pung(capsys: pytest.CaptureFixture[str]) -> None:
    """Riichi takes the melds too: a red-dragon pung is its one yaku (役牌 中), 30 fu, the
    dealer's ron of 1 han 30 fu is 1500."""
    args = ["score", "123m456p789s55s", "--pon", "777z", "--win", "5s", "--ron-from", "3"]
    assert _scored(args, capsys) == ["value 1: Yakuhai (chun) 1 (30 fu)",
                                     "deltas [1500, 0, 0, -1500]"]


@pytest.mark.parametrize(("args", "said"), [
    (["--pon", "124z"], "--pon 124z: not a pung, which is 3 of one tile"),
    (["--chi", "124m"], "--chi 124m: not a chow, which is three tiles in a row of one suit"),
    (["--chi", "789m1z"], "--chi 789m1z: not a chow"),
    (["--kong", "111z"], "--kong 111z: not a kong, which is 4 of one tile"),
    (["--pon", "111f"], "--pon 111f: a flower is set aside, never melded"),
    (["--pon", "111z", "--pon", "111z"], "HAND 123m456p789s55s and its melds hold more than "
                                         "four of one tile"),
    (["--pon", "111z", "--chi", "123p"], "'123m456p789s55s' is 11 tiles beside 2 meld(s): a "
                                         "mcr win is 14 tiles"),
    # five melds in a 13-tile hand: HAND was to be "-1 tiles"
    (["--pon", "111z", "--pon", "222z", "--pon", "333z", "--pon", "444z", "--pon", "555z"],
     "5 melds: a mcr hand holds at most 4 beside its pair"),
    (["--pon", "111z", "--seat-wind", "S", "--dealer", "0"],
     "--seat-wind S makes seat 3 the dealer (East) with --seat 0, not --dealer 0"),
])
def test_a_meld_or_wind_that_cannot_be_is_one_line(
        args: list[str], said: str, capsys: pytest.CaptureFixture[str]) -> None:
    base = ["score", "123m456p789s55s", "--variant", "mcr", "--win", "5s"]
    assert main([*base, *args]) == 2
    err = capsys.readouterr().err
    assert said in err and len(err.strip().splitlines()) == 1, err


@pytest.mark.parametrize(("args", "said"), [
    (["--pon", "777z", "--riichi"], "--riichi: a hand with a called meld (--chi, --pon, "
                                    "--kong) is open"),
    (["--pon", "777z", "--variant", "taiwan16", "--round-wind", "S"],
     "--round-wind: taiwan16 counts no round wind"),
    (["--pon", "777m", "--variant", "mass", "--seat-wind", "S"], "--seat-wind: mass has no "
                                                                 "winds"),
    (["--pon", "111z", "--variant", "mass"], "--pon 111z: mass has no honours"),
])
def test_what_the_variant_cannot_have_is_one_line(
        args: list[str], said: str, capsys: pytest.CaptureFixture[str]) -> None:
    """A wind the variant's table does not count was taken and valued as if counted."""
    assert main(["score", "123m456p789s55s", "--win", "5s", *args]) == 2
    err = capsys.readouterr().err
    assert said in err and len(err.strip().splitlines()) == 1, err


@pytest.mark.parametrize("chow", ["123m", "213m", "312m", "321m"])
def test_a_chow_in_any_order_is_the_same_chow(
        chow: str, capsys: pytest.CaptureFixture[str]) -> None:
    """A chow typed called tile first (--chi 213m) was passed on in that order, and riichi's
    calculator read it as no chow: "not a winning hand" for a hand of 2 han (一気通貫 open 1,
    役牌 中 1; 30 fu: the dealer's ron is 2900). The tiles are put in the project's one meld
    order first."""
    args = ["score", "456m789m55s", "--chi", chow, "--pon", "777z", "--win", "5s",
            "--ron-from", "3"]
    assert _scored(args, capsys) == ["value 2: Yakuhai (chun) 1, Ittsu 1 (30 fu)",
                                     "deltas [2900, 0, 0, -2900]"]
