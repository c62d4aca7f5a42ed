"""One end-of-game rule for riichi (Tenhou's, brain.rules.game_end.game_over): the local table
ends its games by it, and the tenhou.net/6 reader judges by it whether a file in lines cut
between two hands stops before its game is over (7143658 repeated the table's rules there,
since replay may not import adapter). The reader keeps a wrapper (the dealer's repeat read off
the hand's end): it must say what the table does."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from adapter.local.game import GameConfig, play_game
from adapter.local.seat import seat_for
from brain.rules.game_end import game_over
from brain.rules.variant import variant_of
from protocols import events as ev
from replay import replayer
from replay.formats import tenhou6
from replay.log import GameLogWriter, Header

DISP = {0: "般東喰赤", 1: "般南喰赤"}  # Tenhou's names of an east and a south game
ABORTIVE = ("nine_terminals", "four_riichi", "triple_ron", "four_kans", "four_winds")
SCORES = st.lists(st.sampled_from([-1000, 0, 8000, 25000, 29900, 30000, 30100, 52000]),
                  min_size=4, max_size=4)


def _end(kind: str, seats: list[int], dealer: int) -> tuple[list[Any], bool]:
    """A hand's end as the local referee writes it, and whether the dealer keeps the deal
    there by the referee's own account (HandOutcome.dealer_keeps)."""
    if kind == "win":
        winners = sorted(set(seats)) or [dealer]
        return ([ev.RoundWon(w, (w + 1) % 4, (), 0, 1000, (0, 0, 0, 0)) for w in winners],
                dealer in winners)
    if kind == "exhaustive":
        tenpai = tuple(sorted(set(seats)))
        return [ev.RoundDrawn("exhaustive", (0, 0, 0, 0), tenpai)], dealer in tenpai
    return [ev.RoundDrawn(kind, (0, 0, 0, 0))], variant_of("riichi").dealer_repeats


@settings(max_examples=400, deadline=None, derandomize=True)
@given(last_wind=st.integers(0, 1), extra=st.integers(-1, 1), number=st.integers(0, 3),
       kind=st.sampled_from(["win", "exhaustive", *ABORTIVE]),
       seats=st.lists(st.integers(0, 3), max_size=3), scores=SCORES)
def test_the_tenhou6_reader_ends_a_game_where_the_local_table_does(
        last_wind: int, extra: int, number: int, kind: str, seats: list[int],
        scores: list[int]) -> None:
    wind = max(0, last_wind + extra)
    events, keeps = _end(kind, seats, number)
    start = ev.RoundStarted(wind, number, scores=(25000,) * 4, round_number=number)
    cut = tenhou6._goes_on({"disp": DISP[last_wind]}, [start, *events], scores)
    assert (cut == "") == game_over(wind, number, number, last_wind, keeps, scores), cut


def _local_game(tmp: Path, length: str, seed: int) -> dict[str, Any]:
    """A real local-table riichi game of four greedy seats, as tenhou.net/6 in one object."""
    path = tmp / f"{length}-{seed}.mjlog.msgpack"
    log = GameLogWriter(path, Header("local", "riichi", extra={
        "players": ["greedy"] * 4, "full_information": True}))
    play_game(GameConfig("riichi", riichi_length=length),
              [seat_for("riichi", s, "greedy") for s in range(4)], seed, 0, log)
    record = replayer.load(path).record
    assert record is not None
    return dict(json.loads(tenhou6.dumps(record)))


@pytest.mark.parametrize(("length", "seed"), [("east", 1), ("east", 2), ("south", 3)])
def test_a_local_game_in_lines_is_over_only_after_its_last_hand(
        tmp_path: Path, length: str, seed: int) -> None:
    """The local table's whole game, written a hand a line without final scores (mjx's
    form), reads as finished; cut after any earlier hand, as cut short."""
    game = _local_game(tmp_path, length, seed)
    game.pop("sc")
    game["rule"] = {"disp": DISP[1 if length == "south" else 0], "aka": 1}
    hands = game.pop("log")
    lines = [json.dumps({**game, "log": [h]}) for h in hands]
    whole = tenhou6.loads("\n".join(lines))
    assert "cut" not in whole.meta and isinstance(whole.events[-1], ev.GameEnded)
    for k in range(2, len(lines)):
        if "流し満貫" in json.dumps(hands[k - 1][-1], ensure_ascii=False):
            continue  # a nagashi mangan's end the reader cannot judge: taken as before
        record = tenhou6.loads("\n".join(lines[:k]))
        assert "with the game not over" in record.meta.get("cut", ""), (k, len(lines))
