"""``mc``: seed 002's Monte Carlo player with opponent models (brain/ALGORITHMS.md s. 3).

Per decision: the opponent models estimate each other seat's P(ready), waits and values; on
our turn, when the fast move's expected loss is small beside the cost of folding (the paper's
switch) the fast move is played at once; otherwise - and always for calls, kongs and riichi,
which the simulation decides - every candidate action is simulated to the end of the hand
(:mod:`brain.policies.mc.playout`, or seed 003's recursive expectation with ``search=expect``)
and the best Score(t) (:mod:`brain.policies.mc.score`) is played. Gates keep the fast move's
answer unless another beats it clearly on the same playouts: always on a claim (``call_z``),
on our turn where ``turn_z`` or ``turn_margin`` is set.

Anytime: the fast move is published before any simulation, then the best answer after each
batch of playouts, so the brain has something to play at the deadline. With ``playouts`` set
the work per decision is fixed and the random numbers are seeded from the option ``seed`` and
the table, so the same game gives the same moves on any machine, at any speed.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from brain.actions import action_key
from brain.anytime import Progress, Publish
from brain.clock import MONOTONIC, Clock
from brain.policies.base import Decision, Policy, win_if_legal
from brain.policies.baselines import GreedyPolicy
from brain.policies.evaluation import analyse_discards
from brain.policies.mc import expect, score
from brain.policies.mc.config import McConfig, from_env
from brain.policies.mc.models import load_models
from brain.policies.mc.playout import Abandoned, Params, Playouts, Start
from brain.policies.mc.root import (
    Candidate,
    build_table,
    candidates,
    discard_bias,
    outcome_key,
    plan_bias,
    plan_call_masks,
)
from brain.policies.mc.values import OurWins, is_last_hand, utility
from brain.policies.rulebased import RuleBasedPolicy
from brain.rules.variant import VARIANT_NAMES
from brain.shanten import shanten_batch
from brain.state import TableState
from protocols import events as ev
from protocols import tiles as T

MIN_SEARCH_SECONDS = 0.02  # below this the fast move is all there is time for
MAX_BATCH = 128


@dataclass
class SearchStats:
    """What the last decision did (the benchmark and the tests read it)."""

    mode: str = ""  # "win", "only", "fast", "playout", "expect"
    candidates: int = 0
    playouts: int = 0  # per candidate
    batches: int = 0
    seconds: float = 0.0
    rules_calls: int = 0
    sims: list[float] = field(default_factory=list)  # per candidate, in candidate order
    ranked: list[tuple[Any, float]] = field(default_factory=list)  # (action, Score), best first
    held: bool = False  # a gate kept the anchor where the best Score alone was another answer
    abandoned: bool = False  # a batch was given up when the time ran out (none of it counted)


class McPolicy:
    name = "mc"
    fast = False
    anytime = True

    def __init__(self, config: McConfig | None = None, models: Any = None,
                 clock: Clock = MONOTONIC) -> None:
        """``models``: anything with ``estimate(state)`` (default: the variant's shipped
        weights, or those of the ``models`` option); ``clock``: what a time budget is spent
        on (brain/clock.py)."""
        self.config = config or from_env()
        self.clock = clock
        self._models = models
        self._fast = _fast_policy(self.config.fast)
        self.stats = SearchStats()
        self._wins: OurWins | None = None  # our wins' values, kept for the hand

    def _our_wins(self, state: TableState) -> OurWins:
        self._wins = OurWins(state) if self._wins is None else self._wins.reuse(state)
        return self._wins

    def decide(self, state: TableState, request: ev.DecisionRequest, legal: list[Any],
               budget: float | None = None, publish: Publish | None = None) -> Decision:
        started = self.clock.now()
        self.stats = SearchStats()
        win = win_if_legal(legal)
        if win is not None:
            self.stats.mode = "win"
            return win
        cands = candidates(state, request, legal) if len(legal) > 1 else []
        if len(cands) <= 1:
            self.stats.mode = "only"
            return Decision(cands[0].action if cands else legal[0])
        fast = self._fast.decide(state, request, legal)
        if publish is not None:
            publish(Progress(fast.action, fast.candidates, 0))
        cfg = self.config
        models = self._models or load_models(state.variant, cfg.models)
        est = models.estimate(state)
        table = build_table(state, est)
        claim = request.kind != "turn"
        seconds = cfg.time_for(budget, claim)
        if seconds is not None and seconds < MIN_SEARCH_SECONDS:
            self.stats.mode = "fast"
            return fast
        if not claim and not cfg.always_simulate and self._fast_is_enough(
                state, legal, fast, table):
            self.stats.mode = "fast"
            return fast
        cands = shortlist(state, cands, fast.action, table, cfg.attack, cfg.defend)
        if cfg.search == "expect":
            decision = self._expect(state, cands, table, fast.action)
        else:
            searched = self._playouts(state, cands, table, cfg.playouts_for(budget), seconds,
                                      started, publish, fast.action)
            if searched is None:  # not one batch in its time (a starved CPU): the fast move
                self.stats.mode = "fast"
            decision = fast if searched is None else searched
        self.stats.candidates = len(cands)
        self.stats.seconds = self.clock.now() - started
        return decision

    # ------------------------------------------------------------------ the switch

    def _fast_is_enough(self, state: TableState, legal: list[Any], fast: Decision,
                        table: Any) -> bool:
        """The paper's switch, on plain discards only: a riichi, a kong or an abortive draw
        on offer is always simulated."""
        if any(not isinstance(a, ev.Discard) or a.riichi for a in legal):
            return False
        if not isinstance(fast.action, ev.Discard):
            return False
        k = T.kind(fast.action.tile)
        el = score.expected_loss(k, table.tenpai, table.wait, table.value)
        draws = int(table.walls[0]) // (4 if table.shared_wall else 1)
        fold = score.fold_value(state.variant, table.tenpai, table.wait, table.value,
                                table.pool, draws)
        return score.use_fast_move(el, fold, self.config.alpha)

    # ------------------------------------------------------------------ searches

    def _playouts(self, state: TableState, cands: list[Candidate], table: Any, target: int,
                  seconds: float | None, started: float,
                  publish: Publish | None, fast_action: Any = None) -> Decision | None:
        """The best answer of the playouts, or None where not one batch was done. By the
        clock (no ``target``) a batch still running when ``seconds`` are up is given up:
        the stop rule below plans each batch on the pace of those before, and a machine
        that slows down meanwhile (or a first batch, planned on nothing) ran the answer
        past its deadline, the worker killed and replaced."""
        cfg = self.config
        wins = self._our_wins(state)
        sim_idx = [i for i, c in enumerate(cands) if c.start is not None]
        starts = [s for i in sim_idx if (s := cands[i].start) is not None]
        engine = playout_engine(state, table, wins, starts, cfg)
        rng = np.random.default_rng([cfg.seed, _table_key(state, cands)])
        scores_rel = [state.scores[(state.seat + i) % 4] for i in range(4)]
        last = is_last_hand(state)
        sums = np.zeros(len(cands))
        anchor_row = _anchor_index(cands, sim_idx, fast_action, cfg.call_anchor)
        paired = PairedDifference(len(cands))
        turn = TurnGate.build(cands, sim_idx, fast_action, table) \
            if anchor_row is None and cfg.turn_gate else None
        done = 0
        batch = cfg.batch
        decision: Decision | None = None
        stop = None if target or seconds is None else _time_up(self.clock, started + seconds)
        while True:
            nb = min(batch, target - done) if target else batch
            try:
                res = engine.run(starts, nb, rng, stop=stop)
            except Abandoned:
                self.stats.abandoned = True
                break
            u = utility(state.variant, res.deltas.reshape(-1, 4), scores_rel, last,
                        cfg.placement).reshape(len(starts), nb)
            sums[sim_idx] += u.sum(axis=1)
            if anchor_row is not None:
                paired.add(sim_idx, u - u[anchor_row])
            if turn is not None:
                turn.add(u)
            done += nb
            self.stats.batches += 1
            z = cfg.call_gate(state.variant)[0]
            decision = self._best(cands, sums / done, table, done,
                                  paired.lower_bounds(z) if anchor_row is not None else None,
                                  cands[sim_idx[anchor_row]].action if anchor_row is not None
                                  else None, turn)
            if publish is not None:
                publish(decision)
            if target and done >= target:
                break
            if not target:
                elapsed = self.clock.now() - started
                per_playout = elapsed / done
                left = (seconds or 0.0) - elapsed
                if left < per_playout * batch:
                    break
                batch = int(min(MAX_BATCH, max(batch, left / per_playout / 4)))
        self.stats.playouts = done
        self.stats.rules_calls = wins.calls
        return decision

    def _expect(self, state: TableState, cands: list[Candidate], table: Any,
                fast_action: Any = None) -> Decision:
        sims = np.zeros(len(cands))
        for i, c in enumerate(cands):
            if c.start is not None:
                sims[i] = expect.sim(state, table, c.start, self.config.depth,
                                     self._our_wins(state))
        self.stats.mode = "expect"
        anchor = _anchor_index(cands, list(range(len(cands))), fast_action,
                               self.config.call_anchor)
        return self._best(cands, sims, table, 0,
                          anchor=cands[anchor].action if anchor is not None else None)

    def _best(self, cands: list[Candidate], sims: np.ndarray, table: Any,
              work: int, gains: np.ndarray | None = None, anchor: Any = None,
              turn: TurnGate | None = None) -> Progress:
        """The best Score(t), where on a claim any answer other than the anchor (the pass,
        or with ``call_anchor=fast`` the fast move's answer) must beat it by the gate
        (:func:`call_is_clear`); ``gains``: each candidate's lower bound of its gain over
        the anchor (None: no spread measured, the margin alone). ``turn``: on our turn, the
        same for the fast move's discard (the ``turn_z`` / ``turn_margin`` gate)."""
        scored = [(score.score(float(sims[i]), c.discard_kind, table.tenpai, table.wait,
                               table.value), c.action) for i, c in enumerate(cands)]
        best = min(scored, key=lambda x: (-x[0], action_key(x[1])))[1]  # before any gate
        if any(isinstance(c.action, ev.Pass) for c in cands):
            if anchor is None:
                anchor = next(c.action for c in cands if isinstance(c.action, ev.Pass))
            margin = self.config.call_gate(table.variant)[1] * table.win_value
            if gains is None:  # no spread (the expectation search): the margin alone
                anchor_sim = next(float(sims[i]) for i, c in enumerate(cands)
                                  if c.action == anchor)
                gains = sims - anchor_sim
            scored = _hold(scored, anchor, [call_is_clear(float(g), margin) for g in gains])
        elif turn is not None:
            anchor = turn.anchor
            scored = _hold(scored, anchor, turn.clear(self.config.turn_z,
                                                      self.config.turn_margin * table.win_value))
        scored.sort(key=lambda x: (-x[0], action_key(x[1])))
        self.stats.held = scored[0][1] != best
        self.stats.mode = self.stats.mode or "playout"
        self.stats.sims = [float(s) for s in sims]
        self.stats.ranked = [(a, s) for s, a in scored]
        return Progress(scored[0][1], tuple((a, round(s, 1)) for s, a in scored[:5]), work)


class PairedDifference:
    """Each candidate's playouts minus the pass's on the same random numbers: the mean and
    standard error of what calling gains (common random numbers make this far tighter than
    the two values' own errors)."""

    def __init__(self, size: int) -> None:
        self.n = 0
        self.sum = np.zeros(size)
        self.sq = np.zeros(size)

    def add(self, idx: list[int], diff: np.ndarray) -> None:
        self.sum[idx] += diff.sum(axis=1)
        self.sq[idx] += np.square(diff).sum(axis=1)
        self.n += diff.shape[1]

    def lower_bounds(self, z: float) -> np.ndarray:
        """mean - z * standard error, per candidate (the pass itself: 0)."""
        n = max(self.n, 1)
        mean = self.sum / n
        var = np.maximum(self.sq / n - mean * mean, 0.0)
        return mean - z * np.sqrt(var / max(n - 1, 1))


class TurnGate:
    """The turn's gate: each simulated discard's Score minus the fast move's, measured on the
    same playouts. A playout's outcome is scaled by the candidate's survival of its own
    discard (Score = Sim * survival - expected loss) before the two are differenced, so the
    spread is that of Score itself, and the expected losses, which carry no noise, come off
    the mean."""

    def __init__(self, cands: list[Candidate], sim_idx: list[int], row: int,
                 table: Any) -> None:
        terms = [score.score_terms(cands[i].discard_kind, table.tenpai, table.wait,
                                   table.value) for i in sim_idx]
        self.size = len(cands)
        self.sim_idx = sim_idx
        self.row = row
        self.anchor = cands[sim_idx[row]].action
        self.survive = np.array([t[0] for t in terms])
        self.loss = np.array([t[1] for t in terms])
        self.paired = PairedDifference(len(cands))

    @classmethod
    def build(cls, cands: list[Candidate], sim_idx: list[int], fast: Any,
              table: Any) -> TurnGate | None:
        """The gate around the fast move's answer, or None where it was not simulated."""
        row = _simulated_row(cands, sim_idx, fast)
        return None if row is None else cls(cands, sim_idx, row, table)

    def add(self, u: np.ndarray) -> None:
        """One batch: ``u`` (simulated candidates x playouts), the same random numbers in
        each column."""
        scaled = u * self.survive[:, None]
        self.paired.add(self.sim_idx, scaled - scaled[self.row])

    def clear(self, z: float, margin: float) -> list[bool]:
        """Per candidate: does even the pessimistic end of its Score gain over the anchor
        exceed ``margin``? (An unsimulated candidate never does; the anchor always does.)"""
        lower = np.full(self.size, -np.inf)
        bounds = self.paired.lower_bounds(z)[self.sim_idx] - (self.loss - self.loss[self.row])
        lower[self.sim_idx] = bounds
        ok = [bool(x > margin) for x in lower]
        ok[self.sim_idx[self.row]] = True
        return ok


def _time_up(clock: Clock, until: float) -> Callable[[], bool]:
    """Whether ``clock`` has passed ``until``: asked between the steps of a batch."""
    return lambda: clock.now() > until


def _hold(scored: list[tuple[float, Any]], anchor: Any,
          clear: list[bool]) -> list[tuple[float, Any]]:
    """``scored`` with every answer that did not clear its gate ranked just below the anchor."""
    anchor_score = next(s for s, a in scored if a == anchor)
    return [(s, a) if a == anchor or ok else (min(s, anchor_score - 1e-9), a)
            for (s, a), ok in zip(scored, clear, strict=True)]


def call_is_clear(gain_lower_bound: float, margin: float) -> bool:
    """An answer to a claim other than the anchor is worth playing only when even the
    pessimistic end of its measured gain over the anchor exceeds the margin: the playouts'
    ideal fold does not value a closed hand's defence, nor the rules' sense of yaku and speed
    that the fast move's answer carries, so noise-sized gains must not overrule it."""
    return gain_lower_bound > margin


def _anchor_index(cands: list[Candidate], sim_idx: list[int], fast: Any,
                  anchor: str) -> int | None:
    """The anchor's row among the simulated candidates on a claim: the fast move's answer
    with ``anchor == "fast"`` where it was simulated, else the pass (None: no pass on offer,
    not a claim)."""
    rows = {id(cands[i].action): row for row, i in enumerate(sim_idx)}
    passing = next((rows.get(id(c.action)) for c in cands if isinstance(c.action, ev.Pass)),
                   None)
    if passing is None:
        return None
    if anchor == "fast":
        row = _simulated_row(cands, sim_idx, fast)
        if row is not None:
            return row
    return passing


def _simulated_row(cands: list[Candidate], sim_idx: list[int], action: Any) -> int | None:
    """The row among the simulated candidates of the one that is ``action``'s outcome (the
    fast move may name another copy of the kind than the candidate does), or None."""
    key = outcome_key(action)
    return next((row for row, i in enumerate(sim_idx) if outcome_key(cands[i].action) == key),
                None)


def shortlist(state: TableState, cands: list[Candidate], fast: Any, table: Any, attack: int,
              defend: int) -> list[Candidate]:
    """The discards worth simulating: the ``attack`` best by shape, the ``defend`` safest
    by expected loss, and the fast move (with their riichi forms); every other action
    (calls, kongs, pass) stays. Fewer candidates, more playouts each: the choice between
    near-equal shapes is left to the useful-tile count, which playouts resolve only slowly."""
    kinds = sorted({c.discard_kind for c in cands if c.discard_kind >= 0})
    if (not attack and not defend) or len(kinds) <= attack + defend:
        return cands
    info = analyse_discards(state, kinds=set(kinds))
    keep = set(sorted(kinds, key=lambda k: (info[k].shanten, -info[k].useful, k))[:attack])
    el = {k: score.expected_loss(k, table.tenpai, table.wait, table.value) for k in kinds}
    keep |= set(sorted(kinds, key=lambda k: (el[k], k))[:defend])
    if isinstance(fast, ev.Discard):
        keep.add(T.kind(fast.tile))
    return [c for c in cands if c.discard_kind < 0 or c.discard_kind in keep]


def warm() -> None:
    """Build what the first search of a process builds for itself: the shanten batch tables,
    numpy's random module and every variant's shipped opponent models. The fork server that
    worker processes are forked from runs this (adapter/thinking/warm_server.py), so that a
    fresh worker's first search is as fast as its hundredth: under load, a cold one (some
    50 ms of building on an idle machine, four times that on a busy one) ran past its
    deadline, was killed, and its cold replacement did the same."""
    shanten_batch(np.array([[1] * 13 + [0] * 21], np.int8))
    np.random.default_rng(0)
    for variant in VARIANT_NAMES:
        try:
            load_models(variant)
        except Exception:  # no shipped models for the variant (MissingModels), or unreadable
            continue  # or stale weights: never the fork server's death (every worker start
            # failed); the search that reads them says what is wrong


def _fast_policy(name: str) -> Policy:
    """The fast move's policy; ``nn`` is imported on use (the Botzone mc bundle carries no
    network code)."""
    if name == "nn":
        from brain.policies.nn import NnPolicy

        return NnPolicy()
    return RuleBasedPolicy() if name == "rulebased" else GreedyPolicy()


def playout_engine(state: TableState, table: Any, wins: OurWins, starts: list[Start],
                   cfg: McConfig) -> Playouts:
    """The playouts of ``starts`` as ``cfg`` sets them: MCR's plan steering with ``plan``,
    the plan's call masks only where the playouts call (they cost a planner pass each)."""
    bias = discard_bias(state)
    return Playouts(table, wins, params(cfg),
                    plan_bias(state, starts, bias) if cfg.plan else bias,
                    plan_call_masks(state, starts) if cfg.plan and cfg.playout_calls
                    else None)


def params(cfg: McConfig) -> Params:
    """The playout constants of a configuration."""
    return Params(cfg.wpet_scale, cfg.wait_scale, cfg.fold_ready, cfg.fold_unready, cfg.kappa,
                  cfg.plan and cfg.plan_strict, cfg.playout_calls, cfg.exact_ready,
                  cfg.exact_step)


def _table_key(state: TableState, cands: list[Candidate]) -> int:
    """A hash of what this decision is about: the seed of its random numbers."""
    text = repr((state.variant, state.seat, state.round_wind, state.round_number, state.honba,
                 state.turn, sorted(state.hand), state.wall_remaining,
                 [len(s.river) for s in state.seats], [len(s.melds) for s in state.seats],
                 [repr(c.action) for c in cands]))
    return zlib.crc32(text.encode())
