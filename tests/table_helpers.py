"""Building hands at the local table for referee tests: walls laid out tile by tile, and a
scripted seat (a real :class:`~adapter.local.referee.Player` whose moves a test chooses)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from adapter.local.referee import HandOutcome, HandReferee, HandSetup
from adapter.local.walls import tile_set
from brain.rules import rules_for
from brain.state import TableState
from protocols import events as ev
from protocols import tiles as T

Script = Callable[[TableState, ev.DecisionRequest, list[Any]], Any]


class ScriptedSeat:
    """Tsumogiri and pass unless ``script`` answers (it returns None to leave it to the
    default). Records every request with its legal set, and every event it saw."""

    def __init__(self, variant: str, seat: int, script: Script | None = None) -> None:
        self.name = f"scripted{seat}"
        self.state = TableState(variant, seat)
        self.rules = rules_for(variant)
        self.script = script
        self.requests: list[tuple[ev.DecisionRequest, list[Any]]] = []
        self.events: list[Any] = []

    def observe(self, event: Any) -> None:
        self.events.append(event)
        self.state.apply(event)

    def decide(self, request: ev.DecisionRequest) -> Any:
        legal = self.rules.legal_actions(self.state, request)
        self.requests.append((request, legal))
        if self.script is not None:
            action = self.script(self.state, request, legal)
            if action is not None:
                return action
        if request.kind != "turn":
            return ev.Pass()
        drawn = self.state.last_draw
        return ev.Discard(drawn if drawn is not None else self.state.hand[-1])


def _take(pool: list[int], text: str) -> list[int]:
    out = []
    for t in T.parse_mpsz(text) if text else []:
        if t not in pool:
            raise ValueError(f"no {T.tile_name(t)} left for the wall")
        pool.remove(t)
        out.append(t)
    return out


def layout_wall(variant: str, hands: list[str], draws: list[str] | str = "",
                dead: str = "") -> tuple[int, ...]:
    """A full wall: ``hands`` (mpsz per seat), then ``draws`` in order (a string: the shared
    live wall in draw order; a list of four: MCR's per-seat draws), the unused tiles, and for
    riichi ``dead`` at the front of the dead wall (replacements, then indicator/ura pairs)."""
    pool = tile_set(variant)
    size = rules_for(variant).hand_size
    dealt = [_take(pool, h) for h in hands]
    for seat, h in enumerate(dealt):
        if len(h) != size:
            raise ValueError(f"seat {seat}: {len(h)} tiles, need {size}")
    if variant == "mcr":
        per_seat = [_take(pool, d) for d in (draws or ["", "", "", ""])]
        walls: list[int] = []
        for seat in range(4):
            own = dealt[seat] + per_seat[seat]
            while len(own) < 34:
                own.append(pool.pop(0))
            walls.extend(reversed(own))  # dealt and drawn from the end
        return tuple(walls)
    live = _take(pool, draws if isinstance(draws, str) else "".join(draws))
    dead_front = _take(pool, dead)
    if variant == "riichi":
        dead_wall = dead_front + [pool.pop() for _ in range(14 - len(dead_front))]
        return tuple([t for h in dealt for t in h] + live + pool + dead_wall)
    return tuple([t for h in dealt for t in h] + live + pool)


def play_hand(variant: str, wall: tuple[int, ...], scripts: dict[int, Script] | None = None,
              **setup: Any) -> tuple[HandReferee, list[ScriptedSeat]]:
    scripts = scripts or {}
    seats = [ScriptedSeat(variant, s, scripts.get(s)) for s in range(4)]
    referee = HandReferee(variant, seats)
    scores = (25000,) * 4 if variant == "riichi" else (0,) * 4
    referee.emit(ev.GameStarted(variant, 0))
    seed = setup.pop("seed", 0)
    referee.play(HandSetup(seed=seed, wall=wall, scores=setup.pop("scores", scores), **setup))
    return referee, seats


def outcome_of(referee: HandReferee) -> HandOutcome:
    """The outcome of the hand the referee played; a hand that never ended fails the test."""
    assert referee.outcome is not None, "the referee played no hand to its end"
    return referee.outcome


def events_of(seat: ScriptedSeat, kind: type) -> list[Any]:
    return [e for e in seat.events if isinstance(e, kind)]


def take_when_legal(*kinds: type) -> Script:
    """A script that plays the first legal action of the given kinds (else the default)."""
    def script(state: TableState, request: ev.DecisionRequest, legal: list[Any]) -> Any:
        for kind in kinds:
            for a in legal:
                if isinstance(a, kind) and not (isinstance(a, ev.Discard) and not a.riichi):
                    return a
        return None
    return script
