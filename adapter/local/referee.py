"""The local table's referee: plays one hand of any variant between four players.

The referee is the platform. It deals from a seeded wall, runs the turn order, asks each seat
exactly what a real platform would ask (a ``turn`` request after its draw or call, a ``claim``
request on another seat's discard only where it has something besides passing, a ``rob_kan``
request on an added kan) and tells each seat only what it may see (its own hand; others' draws
hidden; in MCR and Taiwan others' concealed kongs hidden). It keeps, for every seat, the
:class:`~brain.state.TableState` that seat's events build (for a brain seat, the very state its
brain reads: the same events would build an identical copy), and validates each answer against
the variant's legal actions computed from it.

An illegal answer is treated as the platform would: Botzone (MCR) ends the match with -30 for the
offender and +10 for the others (WA, or WH for a false win); Tenhou and the NTPU server do not
act on it, so the seat's move becomes the safest legal one. Either way it is counted.

Variant rules carried out here (the rules modules decide what is legal and what a win is worth):

* riichi (Tenhou): dead wall of 14, kan dora (closed kan: at once; open/added kan: after the
  next discard), ura dora for riichi winners, double ron (triple ron is an abortive draw; honba
  and sticks to the first after the discarder), abortive draws (nine terminals, four
  riichi, four kans by more than one seat, four winds), exhaustive draw with 3000 noten payments
  or, where a seat's discards are all terminals and honours and none was called, 流し満貫
  (a mangan self-draw's payments to each such seat instead of the noten payments).
* mcr (Botzone judge): four private walls of 34, each seat draws from the end of its own;
  dealer seat 0; a seat due to draw from an empty wall (a kong's replacement included) ends
  the hand (荒庄); one winner (the first after the discarder); HU > PENG = GANG > CHI.
* taiwan16: 16 tiles, replacement draws from the end of the wall, drawn right after the draw
  that leaves 16 tiles (that drawer may only win by it, as at the NYCU lab referee); one winner
  (the first after the discarder); win > kong/pong > chow.
* mass: 108 tiles, drawn when the wall is empty; one winner; win > kong = pung > chow.
"""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from adapter.local.walls import shuffled_wall
from brain.actions import is_listed
from brain.brain import safest_action
from brain.rules import rules_for, variant_of
from brain.state import TableState
from brain.tally import FallbackKind
from protocols import events as ev
from protocols import tiles as T
from replay.record import seat_views

NOTEN_PAYMENT = 3000
NAGASHI, NAGASHI_DEALER = 2000, 4000  # a mangan self-draw's shares
RIICHI_STICK = 1000
MCR_PENALTY, MCR_PENALTY_GAIN = -30, 10


class Player(Protocol):
    """A seat at the local table: sees its events, answers its requests. ``decide`` returns a
    :class:`brain.brain.Answer` (or a bare action). A seat whose ``takes_legal`` is true is
    handed the legal set as ``decide(request, legal)``: the referee's view of a seat is built
    from exactly the events that seat is shown, so its legal set is the one the seat's own
    state gives, and computing it once per request is enough."""

    name: str

    def observe(self, event: Any) -> None: ...

    def decide(self, request: ev.DecisionRequest) -> Any: ...


@dataclass(frozen=True)
class HandSetup:
    """Where a hand stands in its game; ``seed`` fixes the wall, unless ``wall`` gives the
    tiles themselves (in the order a seeded shuffle would: see :class:`_Walls`)."""

    seed: int
    dealer: int = 0
    round_wind: int = 0
    round_number: int = 0
    honba: int = 0
    sticks: int = 0
    scores: tuple[int, ...] = (0, 0, 0, 0)
    wall: tuple[int, ...] = ()


@dataclass
class IllegalAction:
    seat: int
    request: ev.DecisionRequest
    action: Any
    legal: tuple[Any, ...]


@dataclass
class HandOutcome:
    """``wins``: (winner, from_seat or None, value) per win; ``deltas``: the hand's score change
    including riichi sticks; ``reason``: the draw reason or "win"; ``sticks``: riichi sticks left
    on the table afterwards; ``riichi`` / ``called``: per seat, whether it declared riichi /
    made a chow, pung or open kong (a player's style, which the arena reports)."""

    reason: str
    deltas: list[int]
    wins: list[tuple[int, int | None, int]] = field(default_factory=list)
    dealer_keeps: bool = False
    sticks: int = 0
    illegal: list[IllegalAction] = field(default_factory=list)
    penalty_seat: int | None = None
    riichi: list[bool] = field(default_factory=lambda: [False] * 4)
    called: list[bool] = field(default_factory=lambda: [False] * 4)

    @property
    def is_win(self) -> bool:
        return bool(self.wins)


_TURN = ev.DecisionRequest("turn")  # requests are immutable: one for every turn


class _HandOver(Exception):
    """Raised inside a hand when it ends; carries nothing, the outcome is on the referee."""


class _Walls:
    """The tiles still to be drawn, per variant. Layout of the shuffled tiles: MCR — seat i's
    private wall is tiles[34i:34i+34], dealt and drawn from its end; others — seat i's hand is
    tiles[n*i:n*(i+1)], the live wall follows and is drawn from the front; riichi keeps the
    last 14 as the dead wall (4 replacement tiles, then indicator / ura pairs); Taiwan and mass
    draw replacements from the end of the live wall."""

    def __init__(self, variant: str, seed: int, hand_size: int,
                 wall: tuple[int, ...] = ()) -> None:
        self.variant = variant
        self.spec = spec = variant_of(variant)
        tiles = list(wall) if wall else shuffled_wall(variant, seed)
        self.dora: list[int] = []
        self.ura: list[int] = []
        if spec.private_walls:
            # Botzone 复式: seat i owns tiles[34i:34i+34], deals and draws from its end.
            self.private = [tiles[34 * i:34 * i + 34] for i in range(4)]
            self.hands = [[w.pop() for _ in range(hand_size)] for w in self.private]
            return
        self.hands = [tiles[hand_size * i:hand_size * (i + 1)] for i in range(4)]
        rest = tiles[4 * hand_size:]
        if spec.dead_wall:
            self.dead = rest[-spec.dead_wall:]
            self.live = rest[:-spec.dead_wall]
            self.rinshan = self.dead[:4]
            self.indicators = self.dead[4:14:2]
            self.ura_indicators = self.dead[5:14:2]
            self.dora = [self.indicators[0]]
            self.draws_left = len(self.live)
        else:
            self.live = rest
            self.draws_left = len(rest) - spec.wall_reserve

    @property
    def initial_remaining(self) -> int:
        if self.spec.private_walls:
            return sum(len(w) for w in self.private)
        return self.draws_left

    def can_draw(self, seat: int) -> bool:
        if self.spec.private_walls:
            return bool(self.private[seat])
        return self.draws_left > 0

    def draw(self, seat: int, replacement: bool) -> int:
        if self.spec.private_walls:
            return self.private[seat].pop()
        self.draws_left -= 1
        if self.spec.dead_wall:
            return self.rinshan.pop(0) if replacement else self.live.pop(0)
        return self.live.pop() if replacement else self.live.pop(0)

    def reveal_kan_dora(self) -> int:
        indicator = self.indicators[len(self.dora)]
        self.dora.append(indicator)
        return indicator


class DecisionObserver(Protocol):
    """Told of every answer before the referee acts on it, while ``referee.views`` still hold
    every seat's state at the moment of the request (the self-play dataset reads them)."""

    def __call__(self, referee: HandReferee, seat: int, request: ev.DecisionRequest,
                 legal: list[Any], answer: Any) -> None: ...


class HandLog(Protocol):
    """What the referee writes each event and answer to: a game log (replay.log's
    GameLogWriter), or a test's capture of the full-information events."""

    def event(self, event: Any) -> None: ...

    def decision(self, request: ev.DecisionRequest, legal: Iterable[Any], action: Any,
                 policy: str = "", candidates: Iterable[tuple[Any, float]] = (),
                 elapsed: float = 0.0, fallback: str = "", seat: int | None = None,
                 *, fallback_kind: str = "") -> None: ...


class HandReferee:
    """Plays one hand. ``players``: four seats; ``log``: the game's full-information log;
    ``observer``: called with every answer (see :class:`DecisionObserver`)."""

    def __init__(self, variant: str, players: Sequence[Player],
                 log: HandLog | None = None,
                 observer: DecisionObserver | None = None) -> None:
        self.variant = variant
        self.spec = variant_of(variant)
        self.rules = rules_for(variant)
        self.players = players
        self.log = log
        self.observer = observer
        # A seat that declares ``shares_state`` (a BrainSeat) builds its ``state`` from exactly
        # the events this view would get, so the referee reads that state instead of keeping a
        # second copy fed the same events; every other seat gets a view of the referee's own.
        self._own_view = [not getattr(p, "shares_state", False) for p in players]
        self.views: list[TableState] = [
            TableState(variant, s) if own else players[s].state  # type: ignore[attr-defined]
            for s, own in enumerate(self._own_view)]
        # a platform's server side seated at the table (an outside NTPU program) gives ids to
        # tiles from the full-information events, before any seat is told
        self._servers = [p for p in players if getattr(p, "sees_full_events", False)]
        self.asked_legal: list[Any] = []  # the legal actions of the request being asked
        self.outcome: HandOutcome | None = None
        # the game's start until a hand is dealt: a game stopped before its first hand
        # still has scores to close its log with
        self.scores: list[int] = [self.spec.start_score] * 4

    # ------------------------------------------------------------------ plumbing

    def emit(self, event: Any) -> None:
        """One full-information event: to the log as is, to each seat as it may see it."""
        if self.log is not None:
            self.log.event(event)
        for server in self._servers:
            server.full_event(event)  # type: ignore[attr-defined]
        for seat, seen in enumerate(seat_views(event, self.variant)):
            if self._own_view[seat]:
                self.views[seat].apply(seen)
            self.players[seat].observe(seen)

    def ask(self, seat: int, request: ev.DecisionRequest,
            legal: list[Any] | None = None) -> Any:
        """The seat's answer, validated; an illegal one is handled as the platform would."""
        view = self.views[seat]
        if legal is None:
            legal = self.rules.legal_actions(view, request)
        self.asked_legal = legal  # a platform stand-in's seat reads it rather than recompute
        player = self.players[seat]
        if getattr(player, "takes_legal", False):
            answer = player.decide(request, legal)  # type: ignore[call-arg]
        else:
            answer = player.decide(request)
        action = getattr(answer, "action", answer)
        if self.observer is not None:
            self.observer(self, seat, request, legal, answer)
        if self.log is not None:
            kind = getattr(answer, "kind", None)  # an answer's (a bare action has none)
            self.log.decision(request, legal, action, getattr(answer, "policy", ""),
                              getattr(answer, "candidates", ()), getattr(answer, "elapsed", 0.0),
                              getattr(answer, "fallback", ""), seat=seat,
                              fallback_kind=kind.value if isinstance(kind, FallbackKind) else "")
        if is_listed(action, legal):
            return action
        self._outcome.illegal.append(IllegalAction(seat, request, action, tuple(legal)))
        if self.log is not None:  # the log says what happened; the seats are not told
            self.log.event(ev.PlatformNotice(
                f"illegal action from seat {seat}: {action!r} on a {request.kind} request"))
        if self.spec.botzone_penalties:
            self._penalty(seat, "false_win" if isinstance(action, ev.Win) else "illegal_action")
        return safest_action(view, legal)

    # ------------------------------------------------------------------ the hand

    def play(self, setup: HandSetup) -> HandOutcome:
        self.setup = setup
        self.scores = list(setup.scores)
        self.sticks = setup.sticks
        self._outcome = HandOutcome("", [0, 0, 0, 0], sticks=setup.sticks)
        self.walls = _Walls(self.variant, setup.seed, self.rules.hand_size, setup.wall)
        self.kan_seats: list[int] = []
        self.pending_dora = 0
        self.riichi_seats: set[int] = set()
        self.emit(ev.RoundStarted(
            round_wind=setup.round_wind, dealer=setup.dealer, honba=setup.honba,
            sticks=setup.sticks, scores=tuple(self.scores),
            dora_indicators=tuple(self.walls.dora), round_number=setup.round_number,
            wall_remaining=self.walls.initial_remaining,
            hands=tuple(tuple(h) for h in self.walls.hands)))
        with contextlib.suppress(_HandOver):  # every ending raises it, with the outcome set
            self._run(setup.dealer)
        outcome = self._outcome
        outcome.sticks = self.sticks
        self.outcome = outcome
        return outcome

    def _run(self, seat: int) -> None:
        draw, replacement = True, False
        while True:
            if draw:
                # MCR draws kong replacements from the seat's own wall too: empty, it is 荒庄
                if (not replacement or self.spec.private_walls) and not self.walls.can_draw(seat):
                    self._exhaustive_draw()
                tile = self.walls.draw(seat, replacement)
                self.emit(ev.TileDrawn(seat, tile, replacement))
                if self.spec.last_draw_ends and not self.walls.can_draw(seat):
                    self._last_draw(seat)
            action = self.ask(seat, _TURN)
            if isinstance(action, ev.Win):
                self._win_self_draw(seat)
            if isinstance(action, ev.AbortiveDraw):
                self._draw_hand("nine_terminals")
            if isinstance(action, ev.Kan):
                self._own_kan(seat, action)
                draw, replacement = True, True
                continue
            seat, draw, replacement = self._discard(seat, action)

    def _last_draw(self, seat: int) -> None:
        """Taiwan: the draw that leaves the reserve ends the hand, as at the NYCU lab referee
        (its records end on that draw): the drawer is asked only whether it wins, and never
        discards, so no seat can win on a discard after it."""
        legal = self.rules.legal_actions(self.views[seat], _TURN)  # Win where it wins, Pass
        if len(legal) > 1 and isinstance(self.ask(seat, _TURN, legal), ev.Win):
            self._win_self_draw(seat)
        self._exhaustive_draw()

    def _own_kan(self, seat: int, action: ev.Kan) -> None:
        view = self.views[seat]
        self._reveal_pending_dora()
        if action.kind == "closed_kan":
            self.emit(ev.MeldCalled(seat, "closed_kan", tuple(action.tiles)))
            self.kan_seats.append(seat)
            if self.spec.has_dora:
                self.emit(ev.DoraRevealed(self.walls.reveal_kan_dora()))
            return
        added = action.tiles[0]
        pon = next(m for m in view.melds if m.kind == "pon" and m.tiles
                   and T.kind(m.tiles[0]) == T.kind(added))
        self.emit(ev.MeldCalled(seat, "added_kan", (*pon.tiles, added), added, pon.from_seat))
        self.kan_seats.append(seat)
        self._claims(seat, added, "rob_kan")
        if self.spec.has_dora:
            self.pending_dora += 1

    def _discard(self, seat: int, action: ev.Discard) -> tuple[int, bool, bool]:
        """Play a discard and its claims; returns (next seat, draw?, replacement draw?)."""
        view = self.views[seat]
        tsumogiri = view.last_draw is not None and action.tile == view.last_draw
        if action.riichi:
            self._outcome.riichi[seat] = True
            self.emit(ev.RiichiDeclared(seat))
        self.emit(ev.TileDiscarded(seat, action.tile, tsumogiri))
        self._reveal_pending_dora()
        call = self._claims(seat, action.tile, "claim")
        if action.riichi:
            self.scores[seat] -= RIICHI_STICK
            self.sticks += 1
            self._outcome.deltas[seat] -= RIICHI_STICK
            self.emit(ev.RiichiAccepted(seat, tuple(self.scores)))
            self.riichi_seats.add(seat)
            if len(self.riichi_seats) == 4:
                self._draw_hand("four_riichi")
        if self.spec.has_riichi:
            self._check_riichi_aborts(call is None)
        if call is None:
            return (seat + 1) % 4, True, False
        caller, meld_action = call
        self._call(caller, seat, action.tile, meld_action)
        if isinstance(meld_action, ev.Kan):
            if self.spec.has_dora:
                self.pending_dora += 1
            return caller, True, True
        return caller, False, False

    def _check_riichi_aborts(self, no_call: bool) -> None:
        if len(self.kan_seats) == 4 and len(set(self.kan_seats)) > 1:
            self._draw_hand("four_kans")
        view = self.views[0]
        if no_call and view.turn == 4 and not view.calls_made:
            firsts = {T.kind(s.river[0].tile) for s in view.seats if s.river}
            if len(firsts) == 1 and next(iter(firsts)) in T.WINDS and all(
                    len(s.river) == 1 for s in view.seats):
                self._draw_hand("four_winds")

    def _reveal_pending_dora(self) -> None:
        while self.pending_dora:
            self.pending_dora -= 1
            self.emit(ev.DoraRevealed(self.walls.reveal_kan_dora()))

    def _call(self, caller: int, discarder: int, tile: int, action: Any) -> None:
        if isinstance(action, ev.Chi):
            kind, own = "chi", tuple(action.tiles)
        elif isinstance(action, ev.Pon):
            kind, own = "pon", tuple(action.tiles)
        else:
            kind, own = "open_kan", tuple(action.tiles)
            self.kan_seats.append(caller)
        tiles = tuple(sorted((*own, tile), key=T.sort_key))
        self._outcome.called[caller] = True
        self.emit(ev.MeldCalled(caller, kind, tiles, tile, discarder))

    # ------------------------------------------------------------------ claims

    def _claims(self, discarder: int, tile: int, kind: str) -> tuple[int, Any] | None:
        """Ask every seat with something to do; resolve by priority. Returns the winning call
        (seat, action), or None when everyone passed; a win ends the hand."""
        answers: list[tuple[int, Any]] = []
        request = ev.DecisionRequest(kind, tile=tile, from_seat=discarder)  # the same for all
        for offset in (1, 2, 3):
            seat = (discarder + offset) % 4
            legal = self.rules.legal_actions(self.views[seat], request)
            if len(legal) == 1 and isinstance(legal[0], ev.Pass):
                continue
            answers.append((seat, self.ask(seat, request, legal)))
        winners = [s for s, a in answers if isinstance(a, ev.Win)]
        if winners:
            self._win_on_discard(winners, discarder, tile, robbing=kind == "rob_kan")
        for wanted in ((ev.Pon, ev.Kan), (ev.Chi,)):
            for seat, a in answers:
                if isinstance(a, wanted):
                    return seat, a
        return None

    # ------------------------------------------------------------------ endings

    def _win_self_draw(self, seat: int) -> None:
        tile = self.views[seat].last_draw
        assert tile is not None
        self._score_win(seat, None, tile, robbing=False, with_sticks=True)
        self._finish("win", dealer_keeps=seat == self.setup.dealer)

    def _win_on_discard(self, winners: list[int], discarder: int, tile: int,
                        robbing: bool) -> None:
        if self.spec.multi_ron and len(winners) == 3:
            self._draw_hand("triple_ron")
        if not self.spec.multi_ron:
            winners = winners[:1]  # head bump: the first seat after the discarder
        for i, seat in enumerate(winners):
            self._score_win(seat, discarder, tile, robbing, with_sticks=i == 0)
        self._finish("win", dealer_keeps=self.setup.dealer in winners)

    def _score_win(self, seat: int, from_seat: int | None, tile: int, robbing: bool,
                   with_sticks: bool) -> None:
        view = self.views[seat]
        ctx = self.rules.context(view, tile, from_seat, robbing)
        ura: tuple[int, ...] = ()
        if self.spec.has_riichi:
            if ctx.riichi or ctx.double_riichi:
                ura = tuple(self.walls.ura_indicators[:len(self.walls.dora)])
            # a double ron's second winner gets neither the sticks nor the honba (Tenhou's
            # 上家取り: mjx State::Ron, Mortal's handle_hora); the discarder pays them once
            ctx = dataclasses.replace(ctx, ura_dora_indicators=ura,
                                      sticks=self.sticks if with_sticks else 0,
                                      honba=ctx.honba if with_sticks else 0)
        score = self.rules.score(ctx)
        if score is None:  # the legal set said this is a win: a rules bug, not a player's
            raise RefereeError(f"seat {seat} won on {T.tile_name(tile)} but the rules score "
                               f"no win for {T.to_mpsz(ctx.concealed)}")
        if with_sticks and self.spec.has_riichi:
            self.sticks = 0
        deltas = list(score.deltas)
        for s in range(4):
            self.scores[s] += deltas[s]
            self._outcome.deltas[s] += deltas[s]
        self._outcome.wins.append((seat, from_seat, score.value))
        limit = f" {score.limit}" if score.limit else ""
        fu = f"{score.fu}符" if score.fu else ""
        self.emit(ev.RoundWon(
            winner=seat, from_seat=from_seat, hand=tuple(ctx.concealed), win_tile=tile,
            value=score.value, deltas=tuple(deltas),
            yaku=score.item_texts(),
            ura_dora_indicators=ura, pao_seat=ctx.pao_seat, detail=f"{fu}{limit}".strip()))

    def _exhaustive_draw(self) -> None:
        if not self.spec.noten_payments:
            self._draw_hand("exhaustive")
        tenpai = [s for s in range(4) if self.views[s].waits()]
        deltas = [0, 0, 0, 0]
        nagashi = [s for s in range(4) if self.spec.has_riichi and _nagashi(self.views[s])]
        if nagashi:
            # Tenhou's 流し満貫: a mangan self-draw's payments for each such seat, in place of
            # the noten payments (the honba is not paid, the sticks stay on the table)
            for seat in nagashi:
                for s in range(4):
                    if s != seat:
                        pay = NAGASHI_DEALER if self.setup.dealer in (s, seat) else NAGASHI
                        deltas[s] -= pay
                        deltas[seat] += pay
            self._draw_hand("nagashi", deltas, tuple(tenpai),
                            dealer_keeps=self.setup.dealer in tenpai)
        if 0 < len(tenpai) < 4:
            for s in range(4):
                deltas[s] = (NOTEN_PAYMENT // len(tenpai) if s in tenpai
                             else -NOTEN_PAYMENT // (4 - len(tenpai)))
        self._draw_hand("exhaustive", deltas, tuple(tenpai),
                        dealer_keeps=self.setup.dealer in tenpai)

    def _draw_hand(self, reason: str, deltas: list[int] | None = None,
                   tenpai: tuple[int, ...] = (), dealer_keeps: bool | None = None) -> None:
        deltas = deltas or [0, 0, 0, 0]
        for s in range(4):
            self.scores[s] += deltas[s]
            self._outcome.deltas[s] += deltas[s]
        self.emit(ev.RoundDrawn(reason, tuple(deltas), tenpai))
        # riichi abortive draws keep the dealer; so does an exhaustive draw with the dealer ready
        keeps = dealer_keeps if dealer_keeps is not None else self.spec.dealer_repeats
        self._finish(reason, dealer_keeps=keeps)

    def _penalty(self, seat: int, reason: str) -> None:
        """Botzone's verdict on a wrong answer: -30 for the offender, +10 for each other seat;
        the match is over."""
        deltas = [MCR_PENALTY_GAIN] * 4
        deltas[seat] = MCR_PENALTY
        self._outcome.penalty_seat = seat
        self._draw_hand(reason, deltas, dealer_keeps=False)

    def _finish(self, reason: str, dealer_keeps: bool) -> None:
        self._outcome.reason = reason
        self._outcome.dealer_keeps = dealer_keeps
        raise _HandOver


def _nagashi(view: TableState) -> bool:
    """流し満貫: every discard of this seat a terminal or an honour, and none taken by a call."""
    river = view.me.river
    return bool(river) and all(T.kind(r.tile) in T.TERMINALS_AND_HONOURS and not r.claimed
                               for r in river)


class RefereeError(RuntimeError):
    """The referee found itself in a state the rules do not allow (a bug, never a player's
    fault): the game is abandoned and counted."""
