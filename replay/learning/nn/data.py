"""Self-play (or imported) dataset rows as the network's training examples, numpy only.

Each decision row is turned back into the deciding seat's :class:`~brain.state.TableState`
(``replay.dataset.snapshot.restore``) and encoded by the very function the ``nn`` policy plays
with (:func:`brain.nn.encoding.encode`), so training and play cannot drift apart. Kept: rows
with a real choice (two or more legal actions, no win among them: the policy always wins), the
player's own answer (no fallback, a legal action) and, with ``policies``, only the players named.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from brain.nn.encoding import ENCODING_VERSION, encode, num_planes
from brain.nn.heads import NUM_ACTIONS, action_index, legal_map
from brain.rules.variant import variant_of
from protocols import events as ev
from replay.dataset import schema as S
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

    def part(self, lo: int, hi: int) -> Examples:
        """Rows ``lo:hi`` as views (no copy)."""
        return Examples(self.x[lo:hi], self.mask[lo:hi], self.target[lo:hi], self.value[lo:hi],
                        self.source[lo:hi], self.dataset[lo:hi])

    @staticmethod
    def empty(n: int, version: int = ENCODING_VERSION) -> Examples:
        """Room for ``n`` examples of encoding ``version`` (masks cleared; the rest to be
        written)."""
        return Examples(np.empty((n, num_planes(version), 34), dtype=np.float32),
                        np.zeros((n, NUM_ACTIONS), dtype=bool), np.empty(n, dtype=np.int64),
                        np.empty(n, dtype=np.float32), np.empty(n, dtype=np.int64),
                        np.empty(n, dtype=np.int16))

    def write(self, i: int, variant: str, row: dict[str, np.ndarray], heads: tuple[int, list[int]],
              source: int, dataset: int, version: int = ENCODING_VERSION) -> None:
        """Encode ``row`` (kept, with ``heads`` from :func:`kept_heads`) into slot ``i`` with
        encoding ``version`` (the one the network trained reads)."""
        encode_row(variant, row, self.x[i], version)
        self.mask[i] = False
        self.mask[i, heads[1]] = True
        self.target[i] = heads[0]
        self.value[i] = value_of(variant, row)
        self.source[i] = source
        self.dataset[i] = dataset


def request_of(row: dict[str, np.ndarray]) -> ev.DecisionRequest:
    tile, source = int(row["request_tile"]), int(row["request_from"])
    return ev.DecisionRequest(S.REQUEST_KINDS[int(row["request"])],
                              tile=None if tile == S.PAD else tile,
                              from_seat=None if source == S.PAD else source)


def kept_heads(row: dict[str, np.ndarray], wanted: set[int] | None
               ) -> tuple[int, list[int]] | None:
    """The answer's head and the legal heads of a row that is kept (a real choice, the
    player's own legal answer, a wanted player), else None. Reads no table state, so counting
    the kept rows costs a fraction of encoding them."""
    count = int(row["legal_count"])
    if count < 2 or int(row["fallback"]) or int(row["action_index"]) < 0:
        return None
    if wanted is not None and int(row["policy"]) not in wanted:
        return None
    legal = [S.decode_action(r) for r in row["legal"][:count]]
    if any(isinstance(a, ev.Win) for a in legal):
        return None
    tile = int(row["request_tile"])
    claimed = None if tile == S.PAD else tile
    by_index = legal_map(legal, claimed)
    if len(by_index) < 2:
        return None
    return action_index(S.decode_action(row["action"]), claimed), list(by_index)


def encode_row(variant: str, row: dict[str, np.ndarray], x: np.ndarray,
               version: int = ENCODING_VERSION) -> None:
    """Write the deciding seat's planes for ``row`` into ``x`` (planes, 34)."""
    x[...] = encode(restore(variant, int(row["seat"]), row), request_of(row), version)


def value_of(variant: str, row: dict[str, np.ndarray]) -> float:
    """The value head's target: the decider's score change / the variant's value scale."""
    return float(row["h_deltas"][int(row["seat"])]) / variant_of(variant).value_scale
