"""Opponent models (seed 002): P(tenpai), P(kind completes the hand | tenpai) and the value of
a win, per opponent, from the public table; numpy only."""
