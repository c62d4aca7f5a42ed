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


def bootstrap_auc_ci(scores: np.ndarray, labels: np.ndarray, groups: np.ndarray,
                     rounds: int = 200, seed: int = 0) -> tuple[float, float] | None:
    """:func:`bootstrap_ci` of :func:`auc` (the same resamples for the same seed), without
    re-sorting each resample (``groups``: one per row of ``scores``, whose rows may be
    vectors, e.g. a pair's 34 kinds): see :func:`bootstrap_aucs`."""
    return _interval([v for v in bootstrap_aucs(scores, labels, groups, rounds, seed)
                      if v is not None])


def bootstrap_auc_diff_ci(scores: np.ndarray, other: np.ndarray, labels: np.ndarray,
                          groups: np.ndarray, rounds: int = 200, seed: int = 0
                          ) -> tuple[float, float] | None:
    """95% interval of AUC(scores) - AUC(other) on the same rows, both read on the same
    resamples of groups (paired: the walls' luck falls on both models alike, so the interval
    of the difference is far narrower than the two intervals side by side)."""
    a = bootstrap_aucs(scores, labels, groups, rounds, seed)
    b = bootstrap_aucs(other, labels, groups, rounds, seed)
    return _interval([x - y for x, y in zip(a, b, strict=True)
                      if x is not None and y is not None])


def bootstrap_aucs(scores: np.ndarray, labels: np.ndarray, groups: np.ndarray,
                   rounds: int = 200, seed: int = 0) -> list[float | None]:
    """The AUC of each resample of whole groups (None where it lacks a class; [] for fewer
    than two groups). The scores are ranked once and a resample only reweighs each row by how
    many times its group was drawn, so one round costs a few ``bincount`` calls over the rows
    instead of a sort (the deal-in AUC has 34 rows per pair)."""
    shape = np.shape(scores)
    s = np.asarray(scores, np.float64).ravel()
    y = np.asarray(labels).ravel().astype(bool)
    g = np.repeat(np.asarray(groups), int(np.prod(shape[1:], dtype=np.int64)))
    ids, inverse = np.unique(g, return_inverse=True)
    if ids.size < 2:
        return []
    _, tie = np.unique(s, return_inverse=True)  # tie group of each row, in score order
    ties = int(tie.max()) + 1 if tie.size else 0
    pos_rows, neg_rows = inverse[y], inverse[~y]
    pos_tie, neg_tie = tie[y], tie[~y]
    rng = np.random.default_rng(seed)
    values: list[float | None] = []
    for _ in range(rounds):
        pick = rng.integers(0, ids.size, ids.size)
        drawn = np.bincount(pick, minlength=ids.size).astype(np.float64)
        wp, wn = drawn[pos_rows], drawn[neg_rows]
        total_p, total_n = wp.sum(), wn.sum()
        if total_p == 0 or total_n == 0:
            values.append(None)
            continue
        neg_at = np.bincount(neg_tie, wn, minlength=ties)
        below = np.cumsum(neg_at) - neg_at  # negative weight strictly below each tie group
        pos_at = np.bincount(pos_tie, wp, minlength=ties)
        values.append(float((pos_at * (below + neg_at / 2)).sum() / (total_p * total_n)))
    return values


def _interval(values: list[float]) -> tuple[float, float] | None:
    if not values:
        return None
    lo, hi = np.percentile(values, [2.5, 97.5])
    return float(lo), float(hi)
