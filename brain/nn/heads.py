"""The network's action heads: every legal action has one output index, and back.

Layout of the :data:`NUM_ACTIONS` logits (the per-kind heads first, as one 1x1 convolution
gives them, then the scalar heads of one dense layer):

=========  =======================================================
0..33      discard kind k
34..67     discard kind k declaring riichi
68..101    closed kan of kind k
102..135   added kan of kind k
136..138   chi with the claimed tile lowest / middle / highest
139        pon
140        open kan
141        win (ron, tsumo, robbing a kan)
142        pass
143        abortive draw (nine terminals)
144        nuki
=========  =======================================================

Several legal actions can share an index (a red five and a plain one: "discard 5m"); the
index then stands for the *last* of them in the legal set's canonical order
(:mod:`brain.actions`: the red five sorts just before the plain one, so the plain tile is
played and the red one kept). Illegal outputs are impossible by construction: the logits of
indices no legal action maps to are masked before the argmax.
"""

from __future__ import annotations

from typing import Any, cast

import numpy as np

from protocols import events as ev
from protocols import tiles as T

KINDS = 34
DISCARD, RIICHI, CLOSED_KAN, ADDED_KAN = 0, 34, 68, 102
PER_KIND_HEADS = 4
CHI_LOW, CHI_MID, CHI_HIGH, PON, OPEN_KAN, WIN, PASS, ABORTIVE, NUKI = range(136, 145)
SCALAR_HEADS = 9
NUM_ACTIONS = PER_KIND_HEADS * KINDS + SCALAR_HEADS


class UnmappedAction(ValueError):
    """An action the heads have no index for (a chi without the claimed tile, a flower)."""


def action_index(action: Any, claimed: int | None = None) -> int:
    """The head index of ``action``; ``claimed``: the offered tile of a claim (chi needs it)."""
    if isinstance(action, ev.Discard):
        k = T.kind(action.tile)
        if k >= KINDS:
            raise UnmappedAction(f"no head for discarding {action.tile}")
        return (RIICHI if action.riichi else DISCARD) + k
    if isinstance(action, ev.Kan):
        if action.kind == "open_kan":
            return OPEN_KAN
        if not action.tiles:
            raise UnmappedAction(f"no head for a {action.kind} without tiles")
        k = T.kind(action.tiles[0])
        return (CLOSED_KAN if action.kind == "closed_kan" else ADDED_KAN) + k
    if isinstance(action, ev.Chi):
        if claimed is None:
            raise UnmappedAction("a chi needs the claimed tile")
        c = T.kind(claimed)
        own = sorted(T.kind(t) for t in action.tiles)
        if c < own[0]:
            return CHI_LOW
        return CHI_MID if c < own[1] else CHI_HIGH
    simple = {ev.Pon: PON, ev.Win: WIN, ev.Pass: PASS, ev.AbortiveDraw: ABORTIVE, ev.Nuki: NUKI}
    try:
        return simple[type(action)]
    except KeyError:
        raise UnmappedAction(f"no head for {action!r}") from None


def legal_map(legal: list[Any], claimed: int | None = None) -> dict[int, Any]:
    """Head index -> the legal action it stands for (the last in ``legal``'s order where several
    share an index)."""
    out: dict[int, Any] = {}
    for a in legal:
        out[action_index(a, claimed)] = a
    return out


def mask(indices: Any) -> np.ndarray:
    """A boolean vector over the heads, True at ``indices``."""
    m = np.zeros(NUM_ACTIONS, dtype=bool)
    m[list(indices)] = True
    return m


NO_LEGAL_ACTION = "no legal action to choose from"


def masked_argmax(logits: np.ndarray, legal_mask: np.ndarray) -> int:
    """The best legal index: illegal logits are set to -inf first (at least one is legal)."""
    if not legal_mask.any():
        raise ValueError(NO_LEGAL_ACTION)
    return int(np.argmax(np.where(legal_mask, logits, -np.inf)))


def masked_softmax(logits: np.ndarray, legal_mask: np.ndarray) -> np.ndarray:
    """Probabilities over the heads, zero outside the legal mask. An empty mask is refused as
    :func:`masked_argmax` refuses it: all -inf would give NaNs that pass on unnoticed."""
    if not legal_mask.any():
        raise ValueError(NO_LEGAL_ACTION)
    z = np.where(legal_mask, logits, -np.inf)
    z = z - z.max()
    e = np.exp(z)
    return cast(np.ndarray, e / e.sum())
