"""Rows of one game, written into arrays as the game is played (or read).

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
from replay.dataset.snapshot import Columns, write_view
from replay.dataset.truth import TruthOracle

_HAND_NAMES = frozenset(f.name for f in S.HAND_FIELDS)


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

    @property
    def games(self) -> int:
        return int(np.unique(self.arrays["h_game"]).shape[0])

    def before(self, game: int) -> Block:
        """The rows of the games numbered below ``game`` (games are in order: a prefix)."""
        hands = int(np.searchsorted(self.arrays["h_game"], game))
        decisions = int(np.searchsorted(self.arrays["hand_index"], hands))
        return Block({f.name: self.arrays[f.name][:hands if f.name in _HAND_NAMES else decisions]
                      for f in S.FIELDS.values()})

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
        self._decisions = Columns(S.DECISION_FIELDS)
        self._hands = Columns(S.HAND_FIELDS, capacity=16)
        self._game_hands: list[int] = []
        self._hand: int | None = None

    def policy_index(self, name: str) -> int:
        if name not in self.policies:
            raise S.DatasetError(f"policy {name!r} is not one of the dataset's "
                                 f"{list(self.policies)}")
        return self.policies.index(name)

    # ---------------------------------------------------------------- hands and games

    def start_hand(self, start: HandStart) -> None:
        i = self._hands.add_row()
        h = self._hands.arrays
        self._hand = i
        self._game_hands.append(i)
        h["h_game"][i] = start.game
        h["h_number"][i] = start.number
        h["h_seed"][i] = start.seed
        h["h_round"][i] = start.round
        h["h_players"][i] = start.players
        h["h_scores_before"][i] = start.scores[:4]
        h["h_reason"][i] = S.end_reason("other")

    def end_hand(self, reason: str, deltas: Sequence[int],
                 wins: Sequence[tuple[int, int | None, int]]) -> None:
        """``wins``: (winner, from seat or None for a self-draw, value) in order."""
        if self._hand is None:
            raise S.DatasetError("a hand ended that never started")
        if len(wins) > S.MAX_WINS:
            raise S.DatasetError(f"{len(wins)} wins in one hand, the schema holds {S.MAX_WINS}")
        h, i = self._hands.arrays, self._hand
        h["h_deltas"][i] = deltas[:4]
        h["h_reason"][i] = S.end_reason("win" if wins else reason)
        for j, (winner, from_seat, value) in enumerate(wins):
            h["h_wins"][i, j] = [winner, S.PAD if from_seat is None else from_seat, value]
        self._hand = None

    def end_game(self, scores: Sequence[int], ranks: Sequence[int] | None) -> None:
        h = self._hands.arrays
        for i in self._game_hands:
            h["h_final_scores"][i] = scores[:4]
            h["h_final_ranks"][i] = ranks if ranks else [S.PAD] * 4
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
        i = self._decisions.add_row()
        d = self._decisions.arrays
        d["hand_index"][i] = self._hand
        d["seat"][i] = seat
        d["request"][i] = S.REQUEST_KINDS.index(request.kind)
        d["request_tile"][i] = S.PAD if request.tile is None else request.tile
        d["request_from"][i] = S.PAD if request.from_seat is None else request.from_seat
        d["policy"][i] = self.policy_index(policy)
        d["fallback"][i] = 1 if fallback else 0
        if legal:
            d["legal"][i, :len(legal)] = [S.action_code(a) for a in legal]
        d["legal_count"][i] = len(legal)
        d["action"][i] = S.action_code(action)
        d["action_index"][i] = list(legal).index(action) if action in legal else S.PAD
        write_view(views[seat], d, i)
        # a turn without a discard (Taiwan's last draw: win or pass) ends the hand
        discards = request.kind != "turn" or any(isinstance(a, ev.Discard) for a in legal)
        self.oracle.write(views, seat, d, i, discard_follows=discards)

    @property
    def decisions(self) -> int:
        return self._decisions.rows

    def row(self, i: int) -> dict[str, np.ndarray]:
        """Decision ``i`` as written so far (arrays without the row axis)."""
        if not 0 <= i < self._decisions.rows:
            raise IndexError(f"decision {i} of {self._decisions.rows}")
        return {name: array[i] for name, array in self._decisions.arrays.items()}

    def block(self) -> Block:
        """Everything collected so far as arrays (call after :meth:`end_game`)."""
        return Block({**self._decisions.finished(), **self._hands.finished()})
