"""The figures the opponent models are judged by: rank AUC with ties, mean absolute error, and
a bootstrap over hands for the small real-game sets. numpy only, no scikit-learn."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np


def auc(scores: np.ndarray, labels: np.ndarray) -> float | None:
    """P(a random positive scores above a random negative), ties counting one half
    (Mann-Whitney U from mid-ranks). None when either class is absent."""
    s = np.asarray(scores, np.float64).ravel()
    y = np.asarray(labels).ravel().astype(bool)
    pos = int(y.sum())
    neg = y.size - pos
    if pos == 0 or neg == 0:
        return None
    _, inverse, counts = np.unique(s, return_inverse=True, return_counts=True)
    ends = np.cumsum(counts)
    mid_rank = ends - (counts - 1) / 2.0  # ranks 1..n; tied values share their mean rank
    ranks = mid_rank[inverse]
    return float((ranks[y].sum() - pos * (pos + 1) / 2.0) / (pos * neg))


def mae(predicted: np.ndarray, actual: np.ndarray) -> float | None:
    p = np.asarray(predicted, np.float64).ravel()
    if p.size == 0:
        return None
    return float(np.abs(p - np.asarray(actual, np.float64).ravel()).mean())


def bootstrap_ci(metric: Callable[[np.ndarray], float | None], groups: np.ndarray,
                 rounds: int = 200, seed: int = 0) -> tuple[float, float] | None:
    """95% percentile interval of ``metric(indices)`` when whole groups (hands) are resampled
    with replacement; ``metric`` gets the row indices of one resample."""
    ids, inverse = np.unique(groups, return_inverse=True)
    if ids.size < 2:
        return None
    members = np.argsort(inverse, kind="stable")
    starts = np.searchsorted(inverse[members], np.arange(ids.size))
    sizes = np.bincount(inverse, minlength=ids.size)
    rng = np.random.default_rng(seed)
    values = []
    for _ in range(rounds):
        pick = rng.integers(0, ids.size, ids.size)
        rows = np.concatenate([members[starts[g]:starts[g] + sizes[g]] for g in pick])
        v = metric(rows)
        if v is not None:
            values.append(v)
    if not values:
        return None
    lo, hi = np.percentile(values, [2.5, 97.5])
    return float(lo), float(hi)
