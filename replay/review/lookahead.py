"""The opponent models' view of a replay's decisions, their features worked out for a run of
decisions at once.

A commentary explains each discard and call with the models' P(ready) and deal-in chances
(situation.Opponents). Run one decision at a time, their features (some hundred small numpy
operations, each paying numpy's per-call cost on a single row) were over half of a
commentary's CPU. :class:`Lookahead` walks its own table ahead of the commentary's, takes the
inputs of the next decisions, and works their features out together; the networks still run
one decision at a time, on the same rows as before, so each estimate is the one a decision
alone gets, bit for bit (a batched matrix product rounds differently). A decision's estimate
is used only where its inputs, taken from the commentary's own table, are the ones the walk
took; anywhere else (a damaged hand the walk read otherwise, a variant without models) the
caller works it out alone, as before.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from brain.opponents.features import Features
from brain.opponents.models import OpponentEstimate
from brain.opponents.view import OpponentInputs
from brain.policies.mc.models import MissingModels, load_models
from brain.state import TableState
from replay.replayer import DAMAGED, Replay, TableWalk

CHUNK = 32  # decisions whose features are worked out together
_FIELDS = [f.name for f in dataclasses.fields(OpponentInputs)]


class Lookahead:
    """Estimates for a replay's decisions by number (its ``decisions`` index), a chunk of
    decisions ahead at a time."""

    def __init__(self, replay: Replay) -> None:
        self.replay = replay
        self.table = TableWalk(replay)  # the commentary's walk, on a table of its own
        self.walked = 0  # decisions looked at
        # decision -> (its inputs, its three pairs' opponents, public and kind features)
        self.ready: dict[int, tuple[OpponentInputs, np.ndarray, np.ndarray, np.ndarray]] = {}
        try:
            self.models: Any = load_models(replay.variant)
        except MissingModels:
            self.models = None

    def estimate(self, n: int, state: TableState) -> OpponentEstimate | None:
        """Decision ``n``'s estimate where the walk took the inputs ``state`` gives; None
        where it did not (the caller works the estimate out alone). Only where ``state``'s
        variant is the replay's, whose models these are: a game whose start names another
        (an edited log, its header riichi, its game mass) is estimated by that variant's
        models, or has none, as the commentary alone does."""
        if self.models is None or state.variant != self.models.variant:
            return None
        if n >= self.walked:
            self.ready.clear()
            self._walk(n)
        taken = self.ready.pop(n, None)
        if taken is None:
            return None
        inputs, o, x, z = taken
        try:
            mine = OpponentInputs.from_state(state)
        except DAMAGED:  # the caller works it out alone, and meets the error as before
            return None
        if not all(np.array_equal(getattr(mine, f), getattr(inputs, f)) for f in _FIELDS):
            return None
        m = self.models
        return OpponentEstimate(o, m.tenpai_probability(x), m.wait_probability(x, z),
                                m.expected_value(x, z))

    def _walk(self, first: int) -> None:
        """Take the inputs of decisions ``first`` to ``first + CHUNK`` (those the walk's
        table reads) and work out their features together."""
        replay, taken = self.replay, []
        for n in range(max(first, self.walked), min(first + CHUNK, len(replay.decisions))):
            self.walked = n + 1
            if not self.table.to(replay.decisions[n].index, _passed):
                continue
            try:
                taken.append((n, OpponentInputs.from_state(self.table.state)))
            except DAMAGED:
                continue
        if not taken:
            return
        batch = OpponentInputs(**{f: np.concatenate([getattr(i, f) for _, i in taken])
                                  for f in _FIELDS})
        try:
            features = Features(batch)
            x, z = features.public(), features.kinds()
        except DAMAGED:
            return
        for row, (n, inputs) in enumerate(taken):
            pairs = slice(3 * row, 3 * row + 3)  # the row's three opponents (opponent_pairs)
            self.ready[n] = (inputs, features.o[pairs], x[pairs], z[pairs])


def _passed(_index: int, _why: str) -> None:
    """A hand the walk's table refuses: passed over (the commentary names it, on its own)."""
