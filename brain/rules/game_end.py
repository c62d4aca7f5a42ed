"""When a riichi game is over: Tenhou's rule, which the local table ends its games by and the
tenhou.net/6 reader judges a file cut between two hands by (7143658 repeated the table's rule
there: replay may not import adapter). Here both import the one function."""

from __future__ import annotations

from collections.abc import Sequence

TARGET = 30000  # the score a game's end waits for (Tenhou's 30000 returned)


def game_over(wind: int, number: int, dealer: int, last_wind: int, dealer_keeps: bool,
              scores: Sequence[int]) -> bool:
    """Whether a riichi game is over after the hand ``(wind, number)`` (0 = east) that
    ``dealer`` dealt (seat ``number`` at the local table): ``last_wind`` 0 for an east game,
    1 for a south one; ``dealer_keeps``: the dealer won or was ready at an exhaustive draw
    (or the hand ended in an abortive draw); ``scores`` after the hand. Over when a score is
    below zero; from the last hand of the last wind on, when someone has 30000 and the
    dealer moves on, or repeats while first (ties go to the seat nearer the first dealer,
    seat 0); in the extra wind (sudden death) once anyone has 30000, and at its end
    whatever the scores."""
    if min(scores) < 0:
        return True
    top = max(scores)
    first = min(s for s in range(4) if scores[s] == top)
    if (wind, number) >= (last_wind, 3) and top >= TARGET and (
            wind > last_wind or not dealer_keeps or first == dealer):
        return True
    return not dealer_keeps and number == 3 and wind > last_wind
