"""``mjbot bench mc --calibrate GAMES``: do the playouts end hands as real hands end?

A playout's value is only as good as the world it simulates. Seeded games of four
``rulebased`` players are played; from seat 0's turn decisions past the early game (a choice
to make, no win on offer) the playouts of the move ``rulebased`` made are run, and their
shares of hands that end in our win, an opponent's win (our deal-in among them) or a draw are
set beside how those same hands really ended, self-draws and our deal-ins apart (a playout
fold that never deals in shows as a deal-in share far below the real one). A playout world
that ends our hands too rarely in our win cannot tell an attacking candidate from another.
"""

from __future__ import annotations

import copy
from typing import Any

import numpy as np

from adapter.local.game import GameConfig, play_game
from adapter.local.seat import BrainSeat
from brain.policies.mc.config import McConfig
from brain.policies.mc.playout import (
    DEAL_IN,
    DRAW,
    OPP_RON,
    OPP_TSUMO,
    OPPONENT_WINS,
    OUR_RON,
    OUR_TSUMO,
    OUR_WINS,
)
from brain.policies.mc.policy import playout_engine
from brain.policies.mc.root import build_table, candidates
from brain.policies.mc.values import OurWins
from protocols import events as ev

FIRST_TURN = 6  # positions from this turn of ours on: the early game is all shape
EVERY = 3  # one position in this many (neighbouring turns of a hand say much the same)
PLAYOUTS = 64


class _Recorder(BrainSeat):
    """Seat 0: ``rulebased`` that keeps its turn positions (with the move it made) and how
    each of its hands ended, by hand number."""

    def __init__(self, variant: str) -> None:
        super().__init__(variant, 0, "rulebased")
        self.hand = -1
        # (state, request, legal, the action played, hand number)
        self.found: list[tuple[Any, ev.DecisionRequest, list[Any], Any, int]] = []
        self.ends: dict[int, str] = {}

    def observe(self, event: Any) -> None:
        if isinstance(event, ev.RoundStarted):
            self.hand += 1
        elif isinstance(event, ev.RoundWon):
            self.ends.setdefault(self.hand, _how_won(event, self.state.seat))
        elif isinstance(event, ev.RoundDrawn):
            self.ends.setdefault(self.hand, "draw")
        super().observe(event)

    def decide(self, request: ev.DecisionRequest, legal: list[Any] | None = None) -> Any:
        if legal is None:
            legal = self.brain.legal(self.state, request)
        keep = (request.kind == "turn" and self.state.turn >= FIRST_TURN and len(legal) > 1
                and not any(isinstance(a, ev.Win) for a in legal))
        snapshot = copy.deepcopy(self.state) if keep else None
        answer = super().decide(request, legal)
        if snapshot is not None:
            self.found.append((snapshot, request, legal, answer.action, self.hand))
        return answer


def _how_won(event: ev.RoundWon, us: int) -> str:
    """"us"/"us_tsumo", "deal_in", "opponent"/"opponent_tsumo": who won, and how."""
    tsumo = event.from_seat is None or event.from_seat == event.winner
    if event.winner == us:
        return "us_tsumo" if tsumo else "us"
    if tsumo:
        return "opponent_tsumo"
    return "deal_in" if event.from_seat == us else "opponent"


# the real hands' ends in the playouts' outcome codes, so one tally serves both
OUTCOME_OF = {"draw": DRAW, "us_tsumo": OUR_TSUMO, "us": OUR_RON, "deal_in": DEAL_IN,
              "opponent_tsumo": OPP_TSUMO, "opponent": OPP_RON}


def calibrate(variant: str, games: int, models: Any, config: McConfig,
              seed: int = 0) -> dict[str, Any]:
    """Real and simulated shares of how the hands ended, from the same positions."""
    real = np.zeros(6)
    simulated = np.zeros(6)
    positions = 0
    rng = np.random.default_rng(seed)
    for game in range(games):
        seat0 = _Recorder(variant)
        players = [seat0] + [BrainSeat(variant, s, "rulebased") for s in (1, 2, 3)]
        play_game(GameConfig(variant), players, seed=seed, game=game)
        for i in range(0, len(seat0.found), EVERY):
            state, request, legal, played, hand = seat0.found[i]
            start = next((c.start for c in candidates(state, request, legal)
                          if c.start is not None and c.action == played), None)
            if start is None or hand not in seat0.ends:
                continue
            positions += 1
            real[OUTCOME_OF[seat0.ends[hand]]] += 1
            engine = playout_engine(state, build_table(state, models.estimate(state)),
                                    OurWins(state), [start], config)
            outcome = engine.run([start], PLAYOUTS, rng).outcome
            simulated += np.bincount(outcome.ravel(), minlength=6)
    return {"games": games, "positions": positions, "playouts_per_position": PLAYOUTS,
            "real": _shares(real), "playouts": _shares(simulated)}


def _shares(counts: np.ndarray) -> dict[str, float]:
    """Shares of the ways a hand ended, from counts by outcome code."""
    total = max(float(counts.sum()), 1.0)
    return {"our_win": float(counts[list(OUR_WINS)].sum()) / total,
            "our_self_draw": float(counts[OUR_TSUMO]) / total,
            "opponent_win": float(counts[list(OPPONENT_WINS)].sum()) / total,
            "opponent_self_draw": float(counts[OPP_TSUMO]) / total,
            "our_deal_in": float(counts[DEAL_IN]) / total,
            "draw": float(counts[DRAW]) / total}


def calibration_text(result: dict[str, Any]) -> list[str]:
    real, sim = result["real"], result["playouts"]
    lines = [f"  calibration: {result['positions']} positions of {result['games']} "
             f"rule-based games, {result['playouts_per_position']} playouts of the move "
             "played from each; how the hand ended, real / playouts"]
    for key, name in (("our_win", "our win"), ("our_self_draw", "  of which a self-draw"),
                      ("opponent_win", "an opponent's win"),
                      ("opponent_self_draw", "  of which a self-draw"),
                      ("our_deal_in", "  of which our deal-in"), ("draw", "a draw")):
        lines.append(f"    {name:<24} {100 * real[key]:5.1f}% / {100 * sim[key]:5.1f}%")
    return lines
