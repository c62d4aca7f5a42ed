"""A whole game at the local table: hands in order, dealer and winds, the end and placement.

riichi (Tenhou): 25000 each, east-only (default) or east-south; the dealer keeps the seat after
winning or being ready at an exhaustive draw (and after an abortive draw), honba grow on a
dealer repeat or a draw; riichi sticks carry over and go to the top at the end. After the last
hand the game goes on into the next wind (sudden death, at most one wind) until someone has
30000; it ends at once when a score drops below zero, and at the last hand when the dealer
repeats while first with 30000 or more. Ties in placement go to the seat nearer the first
dealer, as on Tenhou.

mcr: one Botzone match is one hand: seat 0 deals, the prevalent wind comes from the seed.
taiwan16 and mass: ``hands`` hands, the dealer moving on every hand, scores from 0.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from adapter.local.referee import HandOutcome, HandReferee, HandSetup, IllegalAction, Player
from adapter.local.walls import hand_seed
from brain.rules.game_end import game_over
from brain.rules.variant import variant_of
from protocols import events as ev
from replay.log import Footer, GameLogWriter

RIICHI_START = variant_of("riichi").start_score
RIICHI_LENGTHS = {"east": 0, "south": 1}


@dataclass(frozen=True)
class GameConfig:
    variant: str
    riichi_length: str = "east"  # "east" (tonpuusen) or "south" (hanchan)
    hands: int = 4  # taiwan16 / mass: hands per game (the dealer moves each hand)

    def rules(self) -> dict[str, Any]:
        spec = variant_of(self.variant)
        if spec.dealer_repeats:  # a game of wind rounds
            return {"length": self.riichi_length, "start": spec.start_score,
                    **dict(spec.game_rules)}
        if spec.one_hand_game:
            return dict(spec.game_rules)
        return {"hands": self.hands, **dict(spec.game_rules)}


@dataclass
class GameResult:
    scores: list[int]
    ranks: list[int] | None  # 1..4 per seat (riichi), else None
    hands: list[HandOutcome] = field(default_factory=list)
    illegal: list[IllegalAction] = field(default_factory=list)


def set_length(variant: str, hands: int = GameConfig.hands) -> str | None:
    """What a game of ``variant`` is, in words, where its length is set (``hands``:
    taiwan16's and mass's hands a game); None for riichi, whose game runs over its winds as
    long as its length (east, south) and the scores say: what `--length` and a serve
    session's ``length`` are for, and ``hands`` is not."""
    spec = variant_of(variant)
    if spec.dealer_repeats:
        return None
    return ("one hand (one Botzone match)" if spec.one_hand_game
            else f"{hands} hands, the dealer moving on every hand")


def placement(scores: list[int], first_dealer: int = 0) -> list[int]:
    """Rank 1..4 of each seat: higher score first, ties to the seat nearer the first dealer."""
    order = sorted(range(4), key=lambda s: (-scores[s], (s - first_dealer) % 4))
    ranks = [0] * 4
    for rank, seat in enumerate(order, start=1):
        ranks[seat] = rank
    return ranks


def play_game(config: GameConfig, players: Sequence[Player], seed: int, game: int,
              log: GameLogWriter | None = None, referee: HandReferee | None = None) \
        -> GameResult:
    """Play one game; every event goes to each player (its own view) and to ``log``.
    ``referee``: a HandReferee (subclass) for these players, where a platform stand-in needs
    to see the events first."""
    referee = referee or HandReferee(config.variant, players, log)
    names = tuple(p.name for p in players)
    for player in players:  # outside programs load side by side (ExternalSeat.launch_ahead)
        launch = getattr(player, "launch_ahead", None)
        if launch is not None:
            launch()
    referee.emit(ev.GameStarted(config.variant, 0, names, config.rules()))
    if variant_of(config.variant).dealer_repeats:
        result = _play_riichi(config, referee, seed, game)
    else:
        result = _play_fixed(config, referee, seed, game)
    referee.emit(ev.GameEnded(tuple(result.scores)))
    if log is not None:
        log.close(Footer({"ranks": result.ranks, "hands": len(result.hands),
                          "illegal_actions": len(result.illegal)}, tuple(result.scores)))
    return result


def _play_riichi(config: GameConfig, referee: HandReferee, seed: int, game: int) -> GameResult:
    last_wind = RIICHI_LENGTHS[config.riichi_length]
    scores = [RIICHI_START] * 4
    wind, number, honba, sticks = 0, 0, 0, 0
    result = GameResult(scores, None)
    while True:
        setup = HandSetup(hand_seed(seed, game, len(result.hands)), dealer=number,
                          round_wind=wind, round_number=number, honba=honba, sticks=sticks,
                          scores=tuple(scores))
        outcome = referee.play(setup)
        result.hands.append(outcome)
        result.illegal.extend(outcome.illegal)
        scores = list(referee.scores)
        sticks = outcome.sticks
        keeps = outcome.dealer_keeps
        honba = honba + 1 if keeps or not outcome.is_win else 0
        if game_over(wind, number, number, last_wind, keeps, scores):
            break
        if not keeps:
            number += 1
            if number == 4:
                number, wind = 0, wind + 1
    scores[placement(scores).index(1)] += sticks * 1000
    result.scores = scores
    result.ranks = placement(scores)
    return result


def _play_fixed(config: GameConfig, referee: HandReferee, seed: int, game: int) -> GameResult:
    scores = [0, 0, 0, 0]
    result = GameResult(scores, None)
    one_hand = variant_of(config.variant).one_hand_game
    count = 1 if one_hand else config.hands
    for h in range(count):
        wall_seed = hand_seed(seed, game, h)
        if one_hand:
            setup = HandSetup(wall_seed, dealer=0, round_wind=random.Random(wall_seed).randrange(4),
                              scores=tuple(scores))
        else:
            setup = HandSetup(wall_seed, dealer=h % 4, round_number=h % 4, scores=tuple(scores))
        outcome = referee.play(setup)
        result.hands.append(outcome)
        result.illegal.extend(outcome.illegal)
        scores = list(referee.scores)
    result.scores = scores
    return result
