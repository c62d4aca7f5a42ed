"""Self-play (or imported) dataset rows as the network's training examples, numpy only.

Each decision row is turned back into the deciding seat's :class:`~brain.state.TableState`
(``replay.dataset.snapshot.restore``) and encoded by the very function the ``nn`` policy plays
with (:func:`brain.nn.encoding.encode`), so training and play cannot drift apart. Kept: rows
with a real choice (two or more legal actions, no win among them: the policy always wins), the
player's own answer (no fallback, a legal action) and, with ``policies``, only the players named.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from brain.nn.encoding import encode, encoding_for, num_planes
from brain.nn.heads import NUM_ACTIONS, action_index, legal_map
from brain.rules.variant import variant_of
from protocols import events as ev
from replay.dataset import schema as S
from replay.dataset.loader import ShuffledLoader
from replay.dataset.snapshot import restore

FIELDS = ["seat", "request", "request_tile", "request_from", "policy", "fallback", "legal",
          "legal_count", "action", "action_index", "h_deltas",
          *[f.name for f in S.DECISION_FIELDS if f.name.startswith("v_")]]
# value head target: the hand's score change / the variant's Variant.value_scale (about 2-4
# standard deviations of a hand's change in rulebased self-play: riichi 4,300 points, MCR 27,
# Taiwan 2,200)


@dataclass
class Examples:
    """``x`` (N, planes, 34) float32; ``mask`` (N, 145) bool; ``target`` (N,) head index of
    the answer; ``value`` (N,) the hand's score change of the decider / ``Variant.value_scale``;
    ``source`` (N,) the decision_id in its dataset, ``dataset`` (N,) which of the
    directories."""

    x: np.ndarray
    mask: np.ndarray
    target: np.ndarray
    value: np.ndarray
    source: np.ndarray
    dataset: np.ndarray

    def __len__(self) -> int:
        return int(self.target.shape[0])

    def take(self, rows: np.ndarray) -> Examples:
        return Examples(self.x[rows], self.mask[rows], self.target[rows], self.value[rows],
                        self.source[rows], self.dataset[rows])


def request_of(row: dict[str, np.ndarray]) -> ev.DecisionRequest:
    tile, source = int(row["request_tile"]), int(row["request_from"])
    return ev.DecisionRequest(S.REQUEST_KINDS[int(row["request"])],
                              tile=None if tile == S.PAD else tile,
                              from_seat=None if source == S.PAD else source)


def load_examples(dirs: Sequence[str | Path], max_decisions: int = 0, seed: int = 0,
                  policies: Sequence[str] | None = None, encoding: int | None = None
                  ) -> Examples:
    """Encode the kept rows of every dataset in ``dirs`` (all of one variant; about
    ``max_decisions`` kept in all, a seeded sample, 0: all) with encoding version
    ``encoding`` (None: the variant's, :func:`~brain.nn.encoding.encoding_for`)."""
    loaders = [ShuffledLoader(d, batch_size=4096, seed=seed, fields=FIELDS) for d in dirs]
    variants = {loader.manifest["variant"] for loader in loaders}
    if len(variants) != 1:
        raise S.DatasetError(f"the datasets hold several variants: {sorted(variants)}")
    variant = variants.pop()
    version = encoding_for(variant) if encoding is None else encoding
    per_dir = max_decisions // len(dirs) if max_decisions else 0
    # one preallocated array (trimmed at the end without a copy): a list of per-row planes
    # stacked afterwards would hold the largest array twice
    cap = sum(min(len(lo), per_dir) if per_dir else len(lo) for lo in loaders)
    x = np.empty((cap, num_planes(version), 34), dtype=np.float32)
    m = np.zeros((cap, NUM_ACTIONS), dtype=bool)
    target = np.empty(cap, dtype=np.int64)
    value = np.empty(cap, dtype=np.float32)
    source = np.empty(cap, dtype=np.int64)
    dataset = np.empty(cap, dtype=np.int16)
    n = 0
    for d_index, loader in enumerate(loaders):
        names = list(loader.manifest["policies"])
        wanted = None if policies is None else {i for i, p in enumerate(names) if p in policies}
        kept = 0
        for batch in loader.epoch(0):
            for i in range(batch["seat"].shape[0]):
                if per_dir and kept >= per_dir:
                    break
                row = {k: a[i] for k, a in batch.items()}
                if not _example(variant, row, wanted, x[n], m[n], target, n, version):
                    continue
                value[n] = (float(row["h_deltas"][int(row["seat"])])
                            / variant_of(variant).value_scale)
                source[n] = int(row["decision_id"])
                dataset[n] = d_index
                kept += 1
                n += 1
            if per_dir and kept >= per_dir:
                break
    if not n:
        raise S.DatasetError("no decision with a choice in the datasets")
    return Examples(x[:n], m[:n], target[:n], value[:n], source[:n], dataset[:n])


def _example(variant: str, row: dict[str, np.ndarray], wanted: set[int] | None,
             x: np.ndarray, m: np.ndarray, target: np.ndarray, n: int, version: int) -> bool:
    """Write row's planes into ``x``, its legal heads into ``m`` and its answer's head into
    ``target[n]``; False (nothing written) for a row that is not kept."""
    count = int(row["legal_count"])
    if count < 2 or int(row["fallback"]) or int(row["action_index"]) < 0:
        return False
    if wanted is not None and int(row["policy"]) not in wanted:
        return False
    legal = [S.decode_action(r) for r in row["legal"][:count]]
    if any(isinstance(a, ev.Win) for a in legal):
        return False
    request = request_of(row)
    by_index = legal_map(legal, request.tile)
    if len(by_index) < 2:
        return False
    target[n] = action_index(S.decode_action(row["action"]), request.tile)
    m[list(by_index)] = True
    x[...] = encode(restore(variant, int(row["seat"]), row), request, version)
    return True
