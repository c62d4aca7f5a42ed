"""Riichi rules earlier sessions left unconfirmed, each settled against a named source: the
reference implementations of Tenhou's rules (mjx-project/mjx include/mjx/internal/state.cpp,
Equim-chan/Mortal libriichi/src/arena/board.rs, which quotes https://tenhou.net/man/#RULE) and
the real Tenhou records in ../shared/data."""

from __future__ import annotations

from protocols import events as ev
from tests.table_helpers import events_of, layout_wall, play_hand, take_when_legal

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
