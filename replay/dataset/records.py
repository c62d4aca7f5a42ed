"""Rows of one game, collected as the game is played (or read), then turned into arrays.

Self-play and imports both go through :class:`BlockBuilder`: a hand is opened when it starts,
each decision is added with the four seats' states at that moment, the hand is closed with its
outcome, and the game with its final scores. :meth:`BlockBuilder.block` gives the game as one
:class:`Block` of schema arrays, which the shard writer concatenates in a fixed order.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from brain.state import TableState
from protocols import events as ev
from replay.dataset import schema as S
from replay.dataset.snapshot import view_row
from replay.dataset.truth import TruthOracle


@dataclass
class Block:
    """Schema arrays of whole games: ``arrays[name]`` for every field; ``hand_index`` counts
    from 0 within the block."""

    arrays: dict[str, np.ndarray]

    @property
    def decisions(self) -> int:
        return int(self.arrays["seat"].shape[0])

    @property
    def hands(self) -> int:
        return int(self.arrays["h_game"].shape[0])

    @staticmethod
    def concat(blocks: Sequence[Block]) -> Block:
        """One block of several, in order, with ``hand_index`` renumbered."""
        if not blocks:
            return Block({f.name: f.empty(0) for f in S.FIELDS.values()})
        out: dict[str, np.ndarray] = {}
        offsets = np.cumsum([0] + [b.hands for b in blocks[:-1]])
        for field in S.FIELDS.values():
            parts = [b.arrays[field.name] for b in blocks]
            if field.name == "hand_index":
                parts = [p + int(o) for p, o in zip(parts, offsets, strict=True)]
            out[field.name] = np.concatenate(parts)
        return Block(out)


@dataclass(frozen=True)
class HandStart:
    game: int
    number: int
    seed: int
    round: tuple[int, int, int, int, int]  # ROUND_COLUMNS
    players: tuple[int, int, int, int]
    scores: tuple[int, ...]


class BlockBuilder:
    """Collects the rows of one game. ``policies``: the names that ``policy`` fields index."""

    def __init__(self, variant: str, policies: Sequence[str]) -> None:
        self.variant = variant
        self.policies = tuple(policies)
        self.oracle = TruthOracle(variant)
        self._decisions: dict[str, list[Any]] = {f.name: [] for f in S.DECISION_FIELDS}
        self._hands: dict[str, list[Any]] = {f.name: [] for f in S.HAND_FIELDS}
        self._game_hands: list[int] = []
        self._hand: int | None = None

    def policy_index(self, name: str) -> int:
        if name not in self.policies:
            raise S.DatasetError(f"policy {name!r} is not one of the dataset's "
                                 f"{list(self.policies)}")
        return self.policies.index(name)

    # ---------------------------------------------------------------- hands and games

    def start_hand(self, start: HandStart) -> None:
        h = self._hands
        self._hand = len(h["h_game"])
        self._game_hands.append(self._hand)
        h["h_game"].append(start.game)
        h["h_number"].append(start.number)
        h["h_seed"].append(start.seed)
        h["h_round"].append(list(start.round))
        h["h_players"].append(list(start.players))
        h["h_scores_before"].append(list(start.scores[:4]))
        h["h_deltas"].append([0, 0, 0, 0])
        h["h_reason"].append(S.end_reason("other"))
        h["h_wins"].append([[S.PAD] * 3 for _ in range(S.MAX_WINS)])
        h["h_final_scores"].append([0, 0, 0, 0])
        h["h_final_ranks"].append([S.PAD] * 4)

    def end_hand(self, reason: str, deltas: Sequence[int],
                 wins: Sequence[tuple[int, int | None, int]]) -> None:
        """``wins``: (winner, from seat or None for a self-draw, value) in order."""
        if self._hand is None:
            raise S.DatasetError("a hand ended that never started")
        if len(wins) > S.MAX_WINS:
            raise S.DatasetError(f"{len(wins)} wins in one hand, the schema holds {S.MAX_WINS}")
        h = self._hands
        h["h_deltas"][self._hand] = [int(d) for d in deltas[:4]]
        h["h_reason"][self._hand] = S.end_reason("win" if wins else reason)
        for i, (winner, from_seat, value) in enumerate(wins):
            h["h_wins"][self._hand][i] = [winner, S.PAD if from_seat is None else from_seat,
                                          value]
        self._hand = None

    def end_game(self, scores: Sequence[int], ranks: Sequence[int] | None) -> None:
        for i in self._game_hands:
            self._hands["h_final_scores"][i] = [int(s) for s in scores[:4]]
            self._hands["h_final_ranks"][i] = list(ranks) if ranks else [S.PAD] * 4
        self._game_hands = []

    # ---------------------------------------------------------------- decisions

    def decision(self, views: Sequence[TableState], seat: int, request: ev.DecisionRequest,
                 legal: Sequence[Any], action: Any, policy: str, fallback: bool = False) -> None:
        """One decision of ``seat``, taken before ``action`` changes anything: ``views[s]`` is
        seat s's own state (``views[seat]`` is what the decider knew)."""
        if self._hand is None:
            raise S.DatasetError("a decision outside a hand")
        if len(legal) > S.MAX_LEGAL:
            raise S.DatasetError(f"{len(legal)} legal actions, the schema holds {S.MAX_LEGAL}")
        codes = [S.action_code(a) for a in legal]
        d = self._decisions
        d["hand_index"].append(self._hand)
        d["seat"].append(seat)
        d["request"].append(S.REQUEST_KINDS.index(request.kind))
        d["request_tile"].append(S.PAD if request.tile is None else request.tile)
        d["request_from"].append(S.PAD if request.from_seat is None else request.from_seat)
        d["policy"].append(self.policy_index(policy))
        d["fallback"].append(1 if fallback else 0)
        d["legal"].append(codes + [[S.PAD] * S.ACTION_WIDTH] * (S.MAX_LEGAL - len(codes)))
        d["legal_count"].append(len(codes))
        d["action"].append(S.action_code(action))
        d["action_index"].append(list(legal).index(action) if action in legal else S.PAD)
        for name, value in view_row(views[seat]).items():
            d[name].append(value)
        for name, value in self.oracle.row(views, seat).items():
            d[name].append(value)

    @property
    def decisions(self) -> int:
        return len(self._decisions["seat"])

    def block(self) -> Block:
        """Everything collected so far as arrays (call after :meth:`end_game`)."""
        arrays: dict[str, np.ndarray] = {}
        for fields, columns in ((S.DECISION_FIELDS, self._decisions),
                                (S.HAND_FIELDS, self._hands)):
            for f in fields:
                values = columns[f.name]
                arrays[f.name] = (np.asarray(values, dtype=f.dtype).reshape(len(values), *f.shape)
                                  if values else f.empty(0))
        return Block(arrays)
