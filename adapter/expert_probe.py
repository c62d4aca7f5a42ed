"""How much an expert's corrections can be trusted, before hours go into its data.

Expert iteration teaches the network the answers where ``mc`` overrules the network's move.
If a second search of the same position, on other random numbers, does not repeat an
overrule, the correction is the search's noise, and no network learns it. This plays games
at the local table with the expert's fast move in every seat and, at each turn with a choice
of discards, searches twice (``seed`` 1 and 2 over the ``MJBOT_MC`` options): it counts how
often the first search overrules the fast move, and how often the second repeats that.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any, TypedDict

from adapter.local.game import GameConfig, play_game
from adapter.local.seat import BrainSeat
from brain.brain import Answer
from brain.policies.mc.config import McConfig
from brain.policies.mc.policy import McPolicy
from brain.policies.mc.root import outcome_key
from protocols import events as ev


class ProbeFigures(TypedDict):
    """What ``mjbot nn probe-expert`` prints (and writes as JSON): the shares are None where
    there was nothing to share out (no turns, no overrules)."""

    turns: int
    overrule_share: float | None
    overrules: int
    overrules_repeated: float | None
    overrules_overruled_again: float | None
    searches_agree: float | None
    gate_held: int
    games: int  # games played to their end
    stopped: str  # why the probe stopped before its last game ("SIGTERM", "SIGINT"), or ""
    examples: list[dict[str, str]]


def _share(part: int, whole: int) -> float | None:
    """``part / whole`` to four places, None for an empty whole (no division by zero)."""
    return round(part / whole, 4) if whole else None


@dataclass
class ProbeTally:
    """Turns probed, the first search's overrules of the fast move, the second's repeats."""

    turns: int = 0
    agree: int = 0  # the two searches gave the same answer
    overruled: int = 0  # the first search did not play the fast move
    repeated: int = 0  # ... and the second played the first's answer
    overruled_again: int = 0  # ... or at least did not play the fast move either
    gate_held: int = 0  # the first search's gate kept the fast move
    games: int = 0
    stopped: str = ""
    examples: list[dict[str, str]] = field(default_factory=list)

    def add(self, fast: Any, first: Any, second: Any, held: bool) -> None:
        """One turn's three answers, compared as outcomes (a discard by kind: which copy goes
        is no correction)."""
        f, a, b = outcome_key(fast), outcome_key(first), outcome_key(second)
        self.turns += 1
        self.agree += a == b
        self.gate_held += held
        if a != f:
            self.overruled += 1
            self.repeated += a == b
            self.overruled_again += b != f
            if len(self.examples) < 20:
                self.examples.append({"fast": repr(fast), "first": repr(first),
                                      "second": repr(second)})

    def figures(self) -> ProbeFigures:
        return {"turns": self.turns, "overrule_share": _share(self.overruled, self.turns),
                "overrules": self.overruled,
                "overrules_repeated": _share(self.repeated, self.overruled),
                "overrules_overruled_again": _share(self.overruled_again, self.overruled),
                "searches_agree": _share(self.agree, self.turns),
                "gate_held": self.gate_held, "games": self.games, "stopped": self.stopped,
                "examples": self.examples}


class ProbeSeat(BrainSeat):
    """A seat played by the fast move's policy that, at its turns, asks the two searches too
    (their answers are only counted: the game is the fast move's), in the game's first
    ``hands`` hands (0: every hand)."""

    def __init__(self, variant: str, seat: int, fast: str, searches: tuple[McPolicy, McPolicy],
                 tally: ProbeTally, hands: int = 0,
                 stop: Callable[[], str] = lambda: "") -> None:
        super().__init__(variant, seat, fast)
        self.searches = searches
        self.probe_tally = tally
        self.hands = hands
        self.stop = stop
        self.hands_begun = 0

    def observe(self, event: Any) -> None:
        super().observe(event)
        if isinstance(event, ev.RoundStarted):
            self.hands_begun += 1

    def decide(self, request: ev.DecisionRequest, legal: list[Any] | None = None) -> Answer:
        answer = super().decide(request, legal)
        if (request.kind == "turn" and legal and (not self.hands or self.hands_begun <= self.hands)
                and sum(isinstance(a, ev.Discard) for a in legal) > 1 and not self.stop()):
            first, second = self.searches
            a = first.decide(self.state, request, legal).action
            held = first.stats.held
            b = second.decide(self.state, request, legal).action
            self.probe_tally.add(answer.action, a, b, held)
        return answer


def probe_expert(variant: str, config: McConfig, games: int, seed: int,
                 hands: int = 0, stop: Callable[[], str] = lambda: "") -> ProbeTally:
    """Play ``games`` games from wall seed ``seed`` and tally the two searches' answers at
    every seat's turns of each game's first ``hands`` hands (0: all; the rest of a game is
    the fast move's alone, so more walls cost less search). The searches always simulate (the
    switch would play the fast move unsearched, which is no correction). Once ``stop()``
    names a reason, no turn is searched any more: the game in play ends at the fast move's
    speed, no other starts, and the tally is what was searched till then (a stop lost hours
    of searches, the process ending with nothing printed)."""
    base = replace(config, always_simulate=True)
    searches = (McPolicy(replace(base, seed=1)), McPolicy(replace(base, seed=2)))
    tally = ProbeTally()
    for game in range(games):
        if stop():
            break
        seats = [ProbeSeat(variant, s, base.fast, searches, tally, hands, stop)
                 for s in range(4)]
        try:
            play_game(GameConfig(variant), seats, seed, game)
        finally:
            for seat in seats:
                seat.close()
        if not stop():
            tally.games += 1
    tally.stopped = stop()
    return tally
