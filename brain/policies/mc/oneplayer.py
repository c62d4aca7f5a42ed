"""The fast one-player move used inside playouts, for many hands at once (numpy).

Greedy as in seed 001: never raise the shanten number. A drawn tile that does not lower it is
discarded at once (the hand stays as it was, so nothing needs computing); a tile that does
lower it costs one batched shanten call over every discard, and the discard is chosen among
those that keep the new shanten by how little the tile connects to the rest of the hand (lone
honours, then lone terminals, then loose middle tiles; the kinds of ``keep`` last). The
connection count stands in for the useful-tile count of ``greedy``: it is a few array shifts
instead of a table walk per discard, and picks the same tile in most hands.
"""

from __future__ import annotations

import numpy as np

from brain.shanten import shanten_batch

KINDS = 34
BIG = np.int16(99)

# Discard preference of a tile that connects to nothing (higher goes first).
_LONE = np.zeros(KINDS, np.float32)
for _k in range(27):
    _LONE[_k] = {0: 2.0, 8: 2.0, 1: 1.0, 7: 1.0}.get(_k % 9, 0.0)
_LONE[27:] = 3.0


def static_bias(keep: dict[int, float] | None = None) -> np.ndarray:
    """Per-kind discard preference of a lone tile; ``keep``: kinds to hold on to (dora,
    value honours) and by how much."""
    bias = _LONE.copy()
    for k, w in (keep or {}).items():
        bias[k] -= w
    return bias


def connectivity(hands: np.ndarray) -> np.ndarray:
    """(M, 34): how much each kind's tiles are worth to the hand's shape: copies (pairs and
    sets), neighbours one away (twice) and two away, within the suit."""
    h = hands.astype(np.int16)
    out = np.zeros(h.shape, np.int16)
    out += 3 * np.maximum(h - 1, 0)
    suits = h[:, :27].reshape(-1, 3, 9)
    padded = np.zeros((suits.shape[0], 3, 13), np.int16)
    padded[:, :, 2:11] = suits
    near = (2 * (padded[:, :, 1:10] + padded[:, :, 3:12])
            + padded[:, :, 0:9] + padded[:, :, 4:13])
    out[:, :27] += near.reshape(-1, 27)
    return out


def discard_shanten(hands: np.ndarray, banned: np.ndarray | None = None,
                    regular_only: bool = False) -> np.ndarray:
    """(M, 34) shanten after discarding each kind from each (3k+2)-tile hand; BIG where the
    kind is not held (or is ``banned``: an (M,) kind per row, -1 for none). ``regular_only``:
    the variant has no seven pairs or thirteen orphans (Taiwan)."""
    m = hands.shape[0]
    held = hands > 0
    if banned is not None:
        rows = np.flatnonzero(banned >= 0)
        held[rows, banned[rows]] = False
    r, k = np.nonzero(held)
    trial = hands[r].copy()
    trial[np.arange(r.size), k] -= 1
    out = np.full((m, KINDS), BIG, np.int16)
    if r.size:
        out[r, k] = shanten_batch(trial, regular_only)
    return out


def choose_discards(hands: np.ndarray, bias: np.ndarray, banned: np.ndarray | None = None,
                    regular_only: bool = False, allowed: np.ndarray | None = None
                    ) -> tuple[np.ndarray, np.ndarray]:
    """The greedy discard of each (3k+2)-tile hand and the shanten it leaves: (kinds (M,),
    shanten (M,)). Ties in shanten go to the least connected tile, then to ``bias`` ((34,),
    or (M, 34): one per hand), then to the lowest kind. ``allowed`` ((M, 34) bool): the only
    kinds a row may discard (a plan kept at the cost of shanten), where it holds one."""
    after = discard_shanten(hands, banned, regular_only)
    if allowed is not None:  # a plan that leaves nothing to discard yields to the shape
        free = after.copy()
        after = np.where(allowed, after, BIG)
        stuck = np.flatnonzero(after.min(axis=1) >= BIG)
        after[stuck] = free[stuck]
    if banned is not None:  # a ban that leaves nothing to discard (a call keeping only the
        # called kind, which MCR allows) is lifted: the row must discard what it holds
        stuck = np.flatnonzero(after.min(axis=1) >= BIG)
        if stuck.size:
            after[stuck] = discard_shanten(hands[stuck], None, regular_only)
    best = after.min(axis=1)
    score = np.atleast_2d(bias) - connectivity(hands).astype(np.float32)
    score = np.where(after == best[:, None], score, -np.inf)
    return score.argmax(axis=1).astype(np.int16), best


def wait_sets(hands: np.ndarray, regular_only: bool = False) -> np.ndarray:
    """(M, 34) bool: kinds that complete each (3k+1)-tile hand (all False if not ready); a kind
    already held four times is no wait."""
    m = hands.shape[0]
    can = hands < 4
    r, k = np.nonzero(can)
    trial = hands[r].copy()
    trial[np.arange(r.size), k] += 1
    out = np.zeros((m, KINDS), bool)
    if r.size:
        out[r, k] = shanten_batch(trial, regular_only) == -1
    return out
