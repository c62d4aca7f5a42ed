"""The ``nn`` policy: the residual network of brain/nn over the seat's planes, masked to the
legal actions, argmax (issue 17).

It plays only with trained weights: the shipped brain/data/nn_VARIANT.npz, or the file named by
the environment variable ``MJBOT_NN_WEIGHTS`` (one variant's weights; for other variants the
shipped ones are used). No weights for the variant raise :class:`MissingNetwork` naming what to
do; the adapters check this before a game starts (``require_network``), so a missing model is a
clear refusal and never a silent fallback to another policy.
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np

from brain.nn.encoding import encode
from brain.nn.heads import legal_map, mask, masked_argmax, masked_softmax
from brain.nn.network import MissingNetwork, Network, load_network
from brain.policies.base import Decision, win_if_legal
from brain.rules.variant import VARIANT_NAMES
from brain.shipped import bad_zip_file
from brain.state import TableState
from protocols import events as ev

ENV = "MJBOT_NN_WEIGHTS"
TOP = 3  # candidates written to the game log


def require_network(variant: str) -> Network:
    """The network ``nn`` would play ``variant`` with; :class:`MissingNetwork` if none."""
    path = os.environ.get(ENV, "")
    if path:
        net = load_network("", path)  # any variant: a broken file or path raises here
        if net.variant == variant:
            return net
    return load_network(variant)


def warm() -> None:
    """Read every variant's network that ``nn`` would play (:func:`require_network`: the
    shipped weights, or ``MJBOT_NN_WEIGHTS``'s), once: the fork server that worker processes
    are forked from runs this where the policy plays the network (``mc`` with ``fast=nn``;
    adapter/thinking/warm_network.py), so a fresh worker's first fast move does not read and
    build them itself (some 6 ms a variant on an idle machine, many times that on a busy one,
    where a replacement's first answer was then late in turn). Weights that cannot be read
    are passed over, never the fork server's death (every worker start failed): the decision
    that reads them says what is wrong."""
    for variant in VARIANT_NAMES:
        try:
            require_network(variant)
        except Exception:  # MissingNetwork (none for the variant, a damaged file), or worse
            continue


def unreadable(variant: str, path: str = "") -> str:
    """Why ``nn`` cannot read ``variant``'s network here ("" where it can; ``path``: nn@FILE's
    file, else the shipped or ``MJBOT_NN_WEIGHTS`` one), less the "nn: " a fallback note
    starts with. zipfile is imported only where an error is matched
    (:func:`brain.shipped.bad_zip_file`): an nn zip's every one-shot Botzone turn runs this."""
    try:
        NnPolicy(path=path).network(variant)
    except (MissingNetwork, ValueError, KeyError, OSError, bad_zip_file()) as exc:
        return str(exc).removeprefix("nn: ")
    return ""


def lost_by_upload(variant: str) -> str:
    """:func:`unreadable` for an upload's own network, in the words up to the advice: the
    upload's one line before its game says to rebuild the zip (not to train weights, and
    not twice where a damaged packed member says it too)."""
    why = unreadable(variant).split("; train them")[0]
    return why.removesuffix(": rebuild the bundle")


class NnPolicy:
    name = "nn"
    fast = True  # one forward pass: milliseconds (mjbot bench nn)

    def __init__(self, network: Network | None = None, path: str = "") -> None:
        """``path``: play this weights file's network (another variant's table is refused
        with :class:`MissingNetwork`), not the shipped or ``MJBOT_NN_WEIGHTS`` one."""
        self._network = network
        self._path = path

    def network(self, variant: str) -> Network:
        if self._network is not None and self._network.variant == variant:
            return self._network
        if self._path:
            return load_network(variant, self._path)
        return require_network(variant)

    def decide(self, state: TableState, request: ev.DecisionRequest, legal: list[Any],
               budget: float | None = None) -> Decision:
        win = win_if_legal(legal)
        if win is not None:
            return win
        if len(legal) == 1:
            return Decision(legal[0], ((legal[0], 1.0),))
        net = self.network(state.variant)
        claimed = request.tile
        by_index = legal_map(legal, claimed)
        legal_mask = mask(by_index)
        logits, _value = net.forward(encode(state, request, net.encoding))
        best = masked_argmax(logits, legal_mask)
        probs = masked_softmax(logits, legal_mask)
        order = np.argsort(-probs)[:TOP]
        candidates = tuple((by_index[int(i)], float(probs[i])) for i in order
                           if legal_mask[i])
        return Decision(by_index[best], candidates)
