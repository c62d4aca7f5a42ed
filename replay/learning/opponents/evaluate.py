"""The figures of issue 16 section 1 for a trained model on a dataset, with the baselines.

* ``tenpai_auc`` over every (decision, opponent) pair; ``tenpai_auc_no_riichi`` over the
  pairs whose opponent has not declared riichi (seed 002's protocol: its 0.777 leaves riichi
  positions out, since a riichi hand is known to be ready);
* ``wait_auc`` over the 34 kinds of every ready opponent (label: the kind completes its hand);
* ``deal_in_auc`` over the 34 kinds of every pair (label: ready and the kind completes it):
  the product ``LP = P(tenpai) * P(wait)`` the mc policy uses;
* ``value_mae``: mean absolute error, in the points the viewer would pay, of the expected
  value of every legal winning kind of a ready opponent.

:func:`by_style` takes the same figures over the pairs whose observed seat played each
policy (a league style, ``nn``, ...), each with a bootstrap interval by wall.

Baselines: tenpai "iff riichi" (the riichi flag as the score), "by calls" (the number of open
melds as the score: one AUC for "tenpai iff >= N calls" over every N, the baseline of the
variants without riichi), "by turn" (discards so far); waits: a genbutsu / suji heuristic
(:func:`heuristic_danger`); value: the training set's mean.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from brain.opponents.features import KIND_NAMES
from brain.opponents.models import OpponentModels
from replay.learning.opponents.data import OpponentData
from replay.learning.opponents.metrics import (
    auc,
    bootstrap_auc_ci,
    bootstrap_auc_diff_ci,
    bootstrap_ci,
    mae,
)

CHUNK = 8192
_GENBUTSU = KIND_NAMES.index("genbutsu")
_PASSED = KIND_NAMES.index("passed_since_riichi")
_SUJI = KIND_NAMES.index("suji_full")
_HONOUR = KIND_NAMES.index("honour")
_VISIBLE3 = KIND_NAMES.index("visible_3")
_VISIBLE4 = KIND_NAMES.index("visible_4")


def heuristic_danger(z: np.ndarray) -> np.ndarray:
    """The textbook reading of a river as a score (higher = more likely a wait): 0 genbutsu
    or passed since the riichi, 1 a full suji or an honour with three or four copies seen,
    2 anything else."""
    zf = z.astype(np.float32)
    safe = (zf[..., _GENBUTSU] > 0) | (zf[..., _PASSED] > 0)
    dead_honour = (zf[..., _HONOUR] > 0) & ((zf[..., _VISIBLE3] > 0) | (zf[..., _VISIBLE4] > 0))
    half = (zf[..., _SUJI] > 0) | dead_honour
    return np.where(safe, 0.0, np.where(half, 1.0, 2.0))


def predict(models: OpponentModels, data: OpponentData) -> dict[str, np.ndarray]:
    """P(tenpai) for every pair; P(wait) and the expected value for every row of ``z``."""
    tenpai = np.concatenate([
        models.tenpai_probability(data.x[lo:lo + CHUNK].astype(np.float32))
        for lo in range(0, len(data.tenpai), CHUNK)] or [np.zeros(0)])
    waits, values = [], []
    for lo in range(0, len(data.k_pair), CHUNK):
        x = data.x[data.k_pair[lo:lo + CHUNK]].astype(np.float32)
        z = data.z[lo:lo + CHUNK].astype(np.float32)
        waits.append(models.wait_probability(x, z))
        values.append(models.expected_value(x, z))
    empty = np.zeros((0, 34))
    return {"tenpai": tenpai, "wait": np.concatenate(waits or [empty]),
            "value": np.concatenate(values or [empty])}


def evaluate(models: OpponentModels, data: OpponentData, bootstrap: int = 0,
             seed: int = 0, pr: dict[str, np.ndarray] | None = None) -> dict[str, Any]:
    """The figures above (``bootstrap`` > 0: 95% intervals over hands for the AUCs; ``pr``:
    :func:`predict`'s answer when the caller has it already)."""
    if pr is None:
        pr = predict(models, data)
    y = data.tenpai
    no_riichi = data.riichi == 0
    win = data.win
    ready = data.ready_rows
    waits, wait_p = data.waits[ready], pr["wait"][ready]
    out: dict[str, Any] = {
        "pairs": len(y), "ready_pairs": int(y.sum()),
        "tenpai_rate": float(y.mean()) if len(y) else None,
        "tenpai_auc": auc(pr["tenpai"], y),
        "tenpai_auc_no_riichi": auc(pr["tenpai"][no_riichi], y[no_riichi]),
        "wait_auc": auc(wait_p, waits),
        "deal_in_auc": _deal_in_auc(pr, data),
        "value_mae": mae(pr["value"][win], data.points[win]),
        "value_rows": int(win.sum()),
        "baseline": {
            "tenpai_auc_riichi": auc(data.riichi, y),
            "tenpai_auc_calls": auc(data.calls, y),
            "tenpai_auc_turn": auc(data.turn, y),
            "tenpai_auc_no_riichi_calls": auc(data.calls[no_riichi], y[no_riichi]),
            "wait_auc_genbutsu_suji": auc(heuristic_danger(data.z[ready]), waits),
            "value_mae_mean": mae(np.full(int(win.sum()), models.meta.get("value_mean", 0.0)),
                                  data.points[win]),
        },
    }
    if bootstrap > 0:
        out["tenpai_auc_ci95"] = bootstrap_ci(
            lambda r: auc(pr["tenpai"][r], y[r]), data.hand, bootstrap, seed)
        nr = np.nonzero(no_riichi)[0]
        out["tenpai_auc_no_riichi_ci95"] = bootstrap_ci(
            lambda r: auc(pr["tenpai"][nr[r]], y[nr[r]]), data.hand[nr], bootstrap, seed)
        out["wait_auc_ci95"] = bootstrap_ci(
            lambda r: auc(wait_p[r], waits[r]), data.hand[data.k_pair[ready]], bootstrap, seed)
    return out


def _deal_in_auc(pr: dict[str, np.ndarray], data: OpponentData) -> float | None:
    """AUC of LP = P(tenpai) x P(wait) over every pair and kind (label: the opponent is ready
    and the kind completes its hand); None unless the data holds per-kind rows for every pair
    (``load(..., kinds="all")``)."""
    if len(data.k_pair) != len(data.tenpai):
        return None
    lp = pr["tenpai"][data.k_pair][:, None] * pr["wait"]
    return auc(lp, data.waits)


def by_style(models: OpponentModels, data: OpponentData, styles: list[str],
             bootstrap: int = 0, seed: int = 0, versus: OpponentModels | None = None
             ) -> dict[str, dict[str, Any]]:
    """The figures per style: over the (decision, opponent) pairs whose opponent seat played
    that policy, whatever the viewer played. ``bootstrap`` > 0 adds 95% intervals over walls
    for the three AUCs and the value MAE (``ci95``); ``versus``: another model's figures on
    the same pairs, and the differences with paired intervals (:func:`paired_figures`)."""
    out: dict[str, dict[str, Any]] = {}
    for style in styles:
        part = data.take(np.nonzero(data.pairs_of(style))[0])
        out[style] = style_figures(models, part, bootstrap, seed)
        if versus is not None and len(part.tenpai):
            out[style]["versus"] = paired_figures(models, versus, part, bootstrap, seed)
    return out


PAIRED = ("tenpai_auc", "wait_auc", "deal_in_auc", "value_mae")


def paired_figures(models: OpponentModels, other: OpponentModels, data: OpponentData,
                   bootstrap: int = 0, seed: int = 0) -> dict[str, Any]:
    """``other``'s figures on the same pairs and ``diff`` = ours minus its, with 95% intervals
    of the difference when both are read on the same resamples of walls (``diff_ci95``)."""
    pa, pb = predict(models, data), predict(other, data)
    ours = evaluate(models, data, pr=pa)
    theirs = evaluate(other, data, pr=pb)
    out: dict[str, Any] = {k: theirs[k] for k in PAIRED}
    out["diff"] = {k: None if ours[k] is None or theirs[k] is None else ours[k] - theirs[k]
                   for k in PAIRED}
    out["diff_ci95"] = {}
    if bootstrap <= 0:
        return out
    y, hand = data.tenpai, data.hand
    ready = data.ready_rows
    win_r, win_k = np.nonzero(data.win)
    truth = data.points[win_r, win_k]
    va, vb = pa["value"][win_r, win_k], pb["value"][win_r, win_k]
    ci = out["diff_ci95"]
    ci["tenpai_auc"] = bootstrap_auc_diff_ci(pa["tenpai"], pb["tenpai"], y, hand, bootstrap,
                                             seed)
    ci["wait_auc"] = bootstrap_auc_diff_ci(pa["wait"][ready], pb["wait"][ready],
                                           data.waits[ready], hand[data.k_pair[ready]],
                                           bootstrap, seed)
    ci["value_mae"] = bootstrap_ci(lambda r: _mae_diff(va[r], vb[r], truth[r]),
                                   hand[data.k_pair[win_r]], bootstrap, seed)
    ci["deal_in_auc"] = None
    if len(data.k_pair) == len(data.tenpai):
        la = pa["tenpai"][data.k_pair][:, None] * pa["wait"]
        lb = pb["tenpai"][data.k_pair][:, None] * pb["wait"]
        ci["deal_in_auc"] = bootstrap_auc_diff_ci(la, lb, data.waits, hand[data.k_pair],
                                                  bootstrap, seed)
    return out


def _mae_diff(a: np.ndarray, b: np.ndarray, truth: np.ndarray) -> float | None:
    ma, mb = mae(a, truth), mae(b, truth)
    return None if ma is None or mb is None else ma - mb


def style_figures(models: OpponentModels, data: OpponentData, bootstrap: int = 0,
                  seed: int = 0) -> dict[str, Any]:
    """One style's row: pairs, AUCs (tenpai, wait, deal-in), value MAE and their intervals."""
    if not len(data.tenpai):
        return {"pairs": 0, "ready_pairs": 0, "tenpai_auc": None, "wait_auc": None,
                "deal_in_auc": None, "value_mae": None, "value_rows": 0, "ci95": {}}
    pr = predict(models, data)
    full = evaluate(models, data, pr=pr)
    row: dict[str, Any] = {k: full[k] for k in (
        "pairs", "ready_pairs", "tenpai_rate", "tenpai_auc", "tenpai_auc_no_riichi",
        "wait_auc", "deal_in_auc", "value_mae", "value_rows")}
    row["walls"] = int(np.unique(data.hand).size)
    row["baseline"] = {k: full["baseline"][k] for k in (
        "tenpai_auc_riichi", "tenpai_auc_calls", "wait_auc_genbutsu_suji", "value_mae_mean")}
    row["ci95"] = _intervals(pr, data, bootstrap, seed) if bootstrap > 0 else {}
    return row


def _intervals(pr: dict[str, np.ndarray], data: OpponentData, rounds: int, seed: int
               ) -> dict[str, tuple[float, float] | None]:
    """95% intervals over walls (``data.hand``) of the tenpai, wait and deal-in AUCs and the
    value MAE."""
    y = data.tenpai
    ready = data.ready_rows
    waits, wait_p = data.waits[ready], pr["wait"][ready]
    win_r, win_k = np.nonzero(data.win)
    value_p, value_y = pr["value"][win_r, win_k], data.points[win_r, win_k]
    out = {
        "tenpai_auc": bootstrap_auc_ci(pr["tenpai"], y, data.hand, rounds, seed),
        "wait_auc": bootstrap_auc_ci(wait_p, waits, data.hand[data.k_pair[ready]], rounds, seed),
        "value_mae": bootstrap_ci(lambda r: mae(value_p[r], value_y[r]),
                                  data.hand[data.k_pair[win_r]], rounds, seed),
        "deal_in_auc": None,
    }
    if len(data.k_pair) == len(data.tenpai):
        lp = pr["tenpai"][data.k_pair][:, None] * pr["wait"]
        out["deal_in_auc"] = bootstrap_auc_ci(lp, data.waits, data.hand[data.k_pair], rounds,
                                              seed)
    return out
