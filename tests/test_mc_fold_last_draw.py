"""Our folded playout row at Taiwan's last draw. The table lets any drawer win by the last
tile (adapter/local/referee.py ``_last_draw``), folded or not; a playout row that folded
does not, at the last draw as at every other draw: the playout models folding as seed 002
does (a folded player neither wins nor deals in), and its discards after the fold count as
safe tiles it does not hold, so the hand the row's array still shows is not its hand. This
pins that the last draw is no exception: the folded rows are neither winners nor dealt in there
(that unfolded rows win by it: tests/test_taiwan_last_draw_brain.py)."""

from __future__ import annotations

import numpy as np

from brain.policies.mc.config import McConfig
from brain.policies.mc.playout import (
    DEAL_IN,
    DRAW,
    OPP_TSUMO,
    OUR_RON,
    OUR_TSUMO,
    Playouts,
)
from brain.policies.mc.policy import params
from brain.policies.mc.root import build_table, candidates, discard_bias
from brain.policies.mc.values import OurWins
from brain.rules import rules_for
from protocols import events as ev
from tests.mc_helpers import FixedOpponents, turn_state


def test_a_folded_row_neither_wins_nor_deals_in_at_the_last_draw_as_before_it() -> None:
    left = 8
    state = turn_state("111m222m333p444p55s67s", "1z", "taiwan16", wall=left + 1)
    request = ev.DecisionRequest("turn")
    legal = rules_for("taiwan16").legal_actions(state, request)
    starts = [c.start for c in candidates(state, request, legal) if c.start is not None]
    models = FixedOpponents((0.9, 0.9, 0.9), {k: 0.3 for k in range(34)}, 8000.0)
    table = build_table(state, models.estimate(state))
    engine = Playouts(table, OurWins(state), params(McConfig()), discard_bias(state))
    res = engine.run(starts, 400, np.random.default_rng(7), check=True)
    outcome, folded = res.outcome.ravel(), res.folded.ravel()
    last = res.trace["all_drawn"].sum(axis=1) == int(table.walls[0])  # came to the last draw
    assert (folded & last).any()
    assert not np.isin(outcome[folded], [OUR_TSUMO, OUR_RON, DEAL_IN]).any()
    # at the last draw the hand ends at once: no discard, so no ron of anyone
    assert set(np.unique(outcome[folded & last])) <= {DRAW, OPP_TSUMO}
