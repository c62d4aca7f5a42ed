"""Seed 002's move value and its switch between the fast move and the simulated one.

``LP(p, t) = P(p ready) * P(t wins for p)``, ``EL(p, t) = LP(p, t) * HS(p, t)`` and, for a
discard t,

    Score(t) = Sim(t) * prod_p (1 - LP(p, t)) - sum_p EL(p, t)

where Sim(t) is the mean outcome of the playouts after t (which start once t has passed).
For a call, a pass or a kong nothing is discarded at the root (the discard after a call is
the playout's first move, where deal-ins are played out): Score = Sim.

The switch (the paper's eq. 13): play the fast move when ``sum_p EL(p, fast) / fold value <=
alpha``. The paper's fold value comes from its ODEV; ours is what folding now is expected to
cost: each opponent's P(ready) times the chance it draws one of its waits before the wall
ends, times what its self-draw costs us (a deal-in's value divided among the payers).
"""

from __future__ import annotations

from typing import cast

import numpy as np

from brain.rules.variant import variant_of


def losing_probability(tenpai: np.ndarray, wait: np.ndarray) -> np.ndarray:
    """LP (3, 34)."""
    return cast(np.ndarray, tenpai[:, None] * wait)


def score(sim: float, kind: int, tenpai: np.ndarray, wait: np.ndarray,
          value: np.ndarray) -> float:
    """Score(t) of discarding ``kind`` (-1: no root discard, Score = Sim)."""
    survive, loss = score_terms(kind, tenpai, wait, value)
    return float(sim * survive - loss)


def score_terms(kind: int, tenpai: np.ndarray, wait: np.ndarray,
                value: np.ndarray) -> tuple[float, float]:
    """(prod_p (1 - LP(p, t)), sum_p EL(p, t)): Score(t) = Sim(t) * the first - the second.
    Apart, so a playout's outcome can be scaled into its share of Score before two
    candidates' playouts are differenced (mc's turn gate); (1, 0) with no root discard."""
    if kind < 0:
        return 1.0, 0.0
    lp = losing_probability(tenpai, wait)[:, kind]
    return float(np.prod(1.0 - lp)), float((lp * value[:, kind]).sum())


def expected_loss(kind: int, tenpai: np.ndarray, wait: np.ndarray,
                  value: np.ndarray) -> float:
    """sum_p EL(p, kind)."""
    return float((losing_probability(tenpai, wait)[:, kind] * value[:, kind]).sum())


def fold_value(variant: str, tenpai: np.ndarray, wait: np.ndarray, value: np.ndarray,
               pool: np.ndarray, draws_left: int) -> float:
    """What folding now is expected to cost (positive), floored so the switch's ratio stays
    finite when nobody is near ready."""
    total = max(float(pool.sum()), 1.0)
    spec = variant_of(variant)
    share = spec.tsumo_share
    cost = 0.0
    for p in range(tenpai.shape[0]):
        hit = float((wait[p] * pool).sum()) / total  # P(one draw is a wait)
        win = 1.0 - (1.0 - min(hit, 1.0)) ** max(draws_left, 0)
        w = wait[p].sum()
        mean_value = float((wait[p] * value[p]).sum() / w) if w > 0 else 0.0
        cost += float(tenpai[p]) * win * mean_value * share
    return max(cost, spec.fold_floor)


def use_fast_move(el_fast: float, fold: float, alpha: float) -> bool:
    """The paper's switch: the one-player move when its expected loss is small beside the
    cost of folding."""
    return el_fast / fold <= alpha
