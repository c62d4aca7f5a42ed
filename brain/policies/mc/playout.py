"""Seed 002's playouts of the rest of a hand, for every candidate and playout at once.

Each row is one playout of one candidate action. Rows advance in lockstep, one turn per step:
the seat to move draws from the tiles we cannot see (a random order of the unseen multiset per
playout, the same for every candidate: common random numbers make the candidates' differences
far less noisy than their values), then

- we (relative seat 0) win if the rules accept the hand, else discard by the one-player policy
  (:mod:`brain.policies.mc.oneplayer`), declare riichi on becoming ready with a closed hand,
  and fold for the rest of the hand when the expected loss of the discard exceeds ``kappa``
  times P(win | shanten, draws left) times a typical win (the paper's ODEV, one step deep);
  folded, we neither win (Taiwan's last draw included, though the table lets any drawer win
  by it: our discards since the fold count as safe tiles we do not hold, so the row's hand is
  no longer ours) nor deal in;
- an opponent is two variables, as in the paper: *ready*, drawn at the start from the model's
  P(tenpai) and switched on at each of its draws with probability WPET (its waits drawn once
  per playout, kind by kind, from the model's P(kind wins | ready)), and *folded*, switched on
  at a draw facing a riichi with probability FP (ready or not). A ready opponent wins on its
  draw or on a discard of a waiting kind; it discards what it drew (tsumogiri), which we may
  win on; a folded one neither wins nor deals in;
- where the variant ends the hand on the draw that empties the live wall (Taiwan:
  ``Variant.last_draw_ends``), that drawer, we or an opponent, wins by it or the hand is drawn
  at once: no discard follows it, so nobody wins on one (riichi's last drawer still discards:
  houtei).

Results are each row's score changes (relative seats: 0 us, 1..3 the next seats) with the way
the hand ended, so a caller can turn them into a utility (points, placement) and check them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import cast

import numpy as np

from brain.policies.mc.oneplayer import choose_discards, wait_sets
from brain.policies.mc.paid import PaidShapes
from brain.policies.mc.values import OurWins, Payments, melds_key
from brain.rules.variant import variant_of
from brain.shanten import shanten_batch
from brain.state import Meld

# How a playout ended.
DRAW, OUR_TSUMO, OUR_RON, DEAL_IN, OPP_TSUMO, OPP_RON = range(6)
OUR_WINS = (OUR_TSUMO, OUR_RON)
OPPONENT_WINS = (DEAL_IN, OPP_TSUMO, OPP_RON)  # our deal-in among them
RIICHI_STICK = 1000.0
PLAN_KEEP = 30.0  # MCR plan bias: above any connection count, so among equal shanten the
# plan decides (root.plan_bias)
PLAN_SWAP = PLAN_KEEP / 2  # a bias gap only a plan makes, not the lone-tile order


@dataclass(frozen=True)
class Start:
    """One candidate's position right after its action (relative seats)."""

    hand: np.ndarray  # (34,) concealed counts: 3k+1, or 3k+2 when ``discard_first``
    melds: tuple[Meld, ...]
    closed: bool
    riichi: bool  # declared (at the root or before)
    actor: int  # the seat that moves first
    discard_first: bool = False  # a chow/pung: we discard before anyone draws
    banned: int = -1  # a kind that first discard may not be (kuikae)
    stick: bool = False  # our riichi stick went down with this action


@dataclass(frozen=True)
class Table:
    """What every candidate shares: the unseen tiles, the walls and the opponents."""

    variant: str
    pool: np.ndarray  # (34,) copies we have not seen
    walls: np.ndarray  # (4,) draws left per relative seat
    shared_wall: bool  # one live wall (riichi, Taiwan) or one per seat (MCR)
    tenpai: np.ndarray  # (3,) P(opponent 1..3 is ready)
    wait: np.ndarray  # (3, 34) P(kind wins | ready)
    value: np.ndarray  # (3, 34) what we pay on a deal-in of the kind
    declared: np.ndarray  # (3,) bool riichi declared
    opp_draws: np.ndarray  # (3,) draws each has made this hand
    our_draws: int
    our_river: np.ndarray  # (34,) bool kinds we discarded (riichi's furiten)
    can_riichi: bool
    win_value: float  # a typical win of ours (the fold rule's scale)
    dealer_rel: int
    wpet: np.ndarray  # hazard of becoming ready at each draw
    p_win: np.ndarray  # (7, D) P(win within d draws | shanten s)


@dataclass(frozen=True)
class Params:
    wpet_scale: float = 2.0
    wait_scale: float = 0.5
    fold_ready: float = 0.03
    fold_unready: float = 0.1
    kappa: float = 1.0
    plan_strict: bool = False  # MCR: keep to the plan at the cost of shanten (_plan_allowed)
    calls: bool = False  # we chow and pung in the playouts (variants without riichi: _our_call)
    exact_ready: bool = True  # MCR: a ready hand waits only on what the fan calculator pays,
    # and a discard into ready is chosen by those waits (_exact_discards)
    exact_step: bool = False  # MCR: ... and one step short, by the draws into such a hand


class Abandoned(Exception):
    """A batch given up midway (:meth:`Playouts.run`'s ``stop``): none of it counts."""


@dataclass
class Result:
    deltas: np.ndarray  # (C, n, 4) score changes, relative seats
    outcome: np.ndarray  # (C, n) DRAW ... OPP_RON
    folded: np.ndarray  # (C, n) bool we folded
    trace: dict[str, np.ndarray] = field(default_factory=dict)  # with check=True


class Playouts:
    """``run(starts, n, rng)``: n playouts of each start, all rows in lockstep."""

    def __init__(self, table: Table, wins: OurWins, params: Params,
                 bias: np.ndarray, call_masks: np.ndarray | None = None) -> None:
        """``bias``: the discard preferences, (34,) or (C, 34) per candidate (MCR's plans);
        ``call_masks``: (C, 2, 34) the kinds each candidate may pung and chow with
        ``params.calls`` (None: any)."""
        self.t = table
        self.call_masks = call_masks
        self.wins = wins
        self.p = params
        self.bias = bias
        self.pay = Payments(table.variant, table.dealer_rel)
        self.riichi_rules = variant_of(table.variant).has_riichi
        # Taiwan: the draw that empties the live wall ends the hand (a self-draw or nothing)
        self.last_draw_ends = variant_of(table.variant).last_draw_ends
        self.regular = variant_of(table.variant).regular_shapes_only  # shapes the rules accept
        # riichi's open hands need a yaku the playouts do not look for: no calls there
        self.calls = params.calls and not self.riichi_rules
        self.tiles = np.repeat(np.arange(34, dtype=np.int8), table.pool.astype(np.int64))
        # MCR: a ready shape is worth only the waits that reach the fan floor
        self.exact = params.exact_ready and variant_of(table.variant).min_fan > 0
        self.exact_step = self.exact and params.exact_step
        self.paid = PaidShapes(wins, table.pool, self.regular)

    # ------------------------------------------------------------------ setup

    def run(self, starts: list[Start], n: int, rng: np.random.Generator,
            check: bool = False, stop: Callable[[], bool] | None = None) -> Result:
        """``n`` playouts of each start. ``stop``: asked before every step of the lockstep
        hand; when it says so the batch is given up (:class:`Abandoned`)."""
        t = self.t
        c = len(starts)
        r = c * n
        self.n = n
        self.cand = np.repeat(np.arange(c), n)
        self.play = np.tile(np.arange(n), c)
        size = self.tiles.size
        self.order = self.tiles[np.argsort(rng.random((n, size)), axis=1)] if size else \
            np.zeros((n, 1), np.int8)
        u_ready = rng.random((n, 3))
        self.owaits = self._sample_waits(rng, n)
        steps = int(t.walls.sum()) + 8
        self.u_step = rng.random((n, steps, 2))
        self.starts = starts
        self.hand = np.stack([s.hand for s in starts]).astype(np.int8)[self.cand]
        self.riichi = np.array([s.riichi for s in starts])[self.cand]
        self.stick = np.array([s.stick for s in starts])[self.cand]
        self.closed = np.array([s.closed for s in starts])[self.cand]
        self.actor = np.array([s.actor for s in starts], np.int8)[self.cand]
        self.first = np.array([s.discard_first for s in starts])[self.cand]
        self.banned = np.array([s.banned for s in starts], np.int16)[self.cand]
        self.fold = np.zeros(r, bool)
        self.alive = np.ones(r, bool)
        self.delta = np.zeros((r, 4))
        self.delta[:, 0] -= np.where(self.stick, RIICHI_STICK, 0.0)
        self.outcome = np.full(r, DRAW, np.int8)
        self.walls = np.tile(t.walls.astype(np.int16), (r, 1))
        self.ptr = np.zeros(r, np.int32)
        self.ready = (u_ready < t.tenpai[None])[self.play]
        self.ofold = np.zeros((r, 3), bool)
        self.odraws = np.tile(t.opp_draws.astype(np.int16), (r, 1))
        self.odeclared = self.ready & t.declared[None]
        self.disc = np.tile(t.our_river, (r, 1))
        self.our_draws = np.full(r, t.our_draws, np.int16)
        self.called: dict[int, tuple[Meld, ...]] = {}  # row -> the melds it called in play
        # the shanten of our 3k+1 hand; a discard-first row gets it after its discard
        self.sh = np.zeros(r, np.int16)
        normal = ~self.first
        if normal.any():
            self.sh[normal] = shanten_batch(self.hand[normal], self.regular)
        self.waits = np.zeros((r, 34), bool)
        self._measure_waits(np.flatnonzero(normal & (self.sh == 0)))
        self.check = check
        if check:
            self.start_hand = self.hand.copy()
            self.drawn = np.zeros((r, 34), np.int16)
            self.dropped = np.zeros((r, 34), np.int16)
            self.all_drawn = np.zeros((r, 34), np.int16)
            self.melded = np.zeros((r, 34), np.int16)  # tiles our hand gave to called melds
        step = 0
        while self.alive.any():
            if stop is not None and stop():
                raise Abandoned(f"a batch of {n} playouts given up at step {step}")
            for a in range(4):
                idx = np.flatnonzero(self.alive & (self.actor == a))
                if idx.size:
                    if a == 0:
                        self._our_turn(idx, step)
                    else:
                        self._opp_turn(idx, a, step)
            step += 1
        trace: dict[str, np.ndarray] = {}
        if check:
            trace = {"start": self.start_hand, "hand": self.hand, "drawn": self.drawn,
                     "dropped": self.dropped, "all_drawn": self.all_drawn,
                     "order": self.order, "melded": self.melded}
        return Result(self.delta.reshape(c, n, 4), self.outcome.reshape(c, n),
                      self.fold.reshape(c, n), trace)

    def _sample_waits(self, rng: np.random.Generator, n: int) -> np.ndarray:
        """(n, 3, 34) each opponent's waits, should it be ready: one kind drawn in proportion
        to P(kind wins | ready) (a ready hand waits on something), then each other kind with
        that probability times ``wait_scale`` (a ready hand waits on 1.5 kinds on average)."""
        wait = self.t.wait
        cum = np.cumsum(wait, axis=1)
        total = np.maximum(cum[:, -1], 1e-12)
        u = rng.random((n, 3)) * total[None]
        first = np.minimum((u[:, :, None] > cum[None]).sum(axis=2), 33)
        out = rng.random((n, 3, 34)) < wait[None] * self.p.wait_scale
        some = cum[:, -1] > 0  # a model that names no kind at all adds none
        out[np.arange(n)[:, None], np.arange(3)[None], first] |= some[None]
        return out

    # ------------------------------------------------------------------ helpers

    def _draw(self, rows: np.ndarray, seat: int) -> np.ndarray:
        d = cast(np.ndarray, self.order[self.play[rows], self.ptr[rows]].astype(np.int64))
        self.ptr[rows] += 1
        if self.t.shared_wall:
            self.walls[rows] -= 1
        else:
            self.walls[rows, seat] -= 1
        if self.check:
            np.add.at(self.all_drawn, (rows, d), 1)
        return d

    def _end(self, rows: np.ndarray, outcome: int) -> None:
        self.alive[rows] = False
        self.outcome[rows] = outcome

    def _exhaustive(self, rows: np.ndarray) -> None:
        if rows.size == 0:
            return
        ready = np.zeros((rows.size, 4), bool)
        ready[:, 0] = (self.sh[rows] == 0) & ~self.fold[rows]
        ready[:, 1:] = self.ready[rows] & ~self.ofold[rows]
        self.pay.exhaustive(self.delta, rows, ready)
        self._end(rows, DRAW)

    def _our_win(self, rows: np.ndarray, hands: np.ndarray, kinds: np.ndarray,
                 from_rel: int | None) -> np.ndarray:
        """Value the candidate wins (``hands`` with the winning tile); returns the mask of
        those the rules accept, and books them."""
        ok = np.zeros(rows.size, bool)
        for j, row in enumerate(rows):
            melds = self._melds(int(row))
            v = self.wins.value(melds, hands[j], int(kinds[j]), from_rel,
                                bool(self.riichi[row]))
            if v is None:
                continue
            ok[j] = True
            self.delta[row] += v
            if self.stick[row]:
                self.delta[row, 0] += RIICHI_STICK
        won = rows[ok]
        self._end(won, OUR_TSUMO if from_rel is None else OUR_RON)
        return ok

    # ------------------------------------------------------------------ our turn

    def _our_turn(self, idx: np.ndarray, step: int) -> None:
        first = self.first[idx]
        draw_rows = idx[~first]
        empty = self.walls[draw_rows, 0] <= 0
        self._exhaustive(draw_rows[empty])
        draw_rows = draw_rows[~empty]
        d_drawn = self._draw(draw_rows, 0)
        self.hand[draw_rows, d_drawn] += 1
        self.our_draws[draw_rows] += 1
        if self.check:
            np.add.at(self.drawn, (draw_rows, d_drawn), 1)
        rows = np.concatenate([draw_rows, idx[first]])
        if rows.size == 0:
            return
        d = np.concatenate([d_drawn, np.full(int(first.sum()), -1, np.int64)])
        hands = self.hand[rows]
        s14 = shanten_batch(hands, self.regular).astype(np.int16)
        won = np.zeros(rows.size, bool)
        tries = np.flatnonzero((d >= 0) & (s14 == -1) & ~self.fold[rows])
        if tries.size:
            won[tries] = self._our_win(rows[tries], hands[tries], d[tries], None)
        keep = ~won
        if self.last_draw_ends:  # the last draw: no discard follows, nobody wins on one
            last = keep & (d >= 0) & (self.walls[rows, 0] <= 0)
            self._exhaustive(rows[last])
            keep &= ~last
        rows, d, hands, s14 = rows[keep], d[keep], hands[keep], s14[keep]
        if rows.size == 0:
            return
        sh = self.sh[rows]
        locked = self.riichi[rows] | self.fold[rows]
        choose = ~locked & ((d < 0) | (s14 < sh) | (s14 == -1))
        if self.exact:  # a ready shape nothing pays for rebuilds like a hand one short
            dead = (sh == 0) & ~self.waits[rows].any(axis=1)
            choose |= ~locked & dead & (s14 <= 0)
        if self.exact_step:  # one step short: any draw may improve the paid draws
            choose |= ~locked & (sh == 1) & (s14 == 1)
        allowed = None
        if self.bias.ndim == 2:  # MCR: a draw the plan keeps replaces a tile it throws
            choose |= ~locked & self._plan_swaps(rows, hands, d)
            if self.p.plan_strict:
                allowed = self._plan_allowed(rows, hands)
                keeps_draw = allowed[np.arange(rows.size), np.maximum(d, 0)]
                choose |= ~locked & (d >= 0) & ~keeps_draw  # the draw may not simply go
        x = d.copy()
        new_sh = sh.copy()
        if choose.any():
            banned = np.where(self.first[rows[choose]], self.banned[rows[choose]], -1)
            bias = (self.bias if self.bias.ndim == 1
                    else self.bias[self.cand[rows[choose]]])  # per candidate (MCR's plans)
            k, best = choose_discards(hands[choose], bias, banned, self.regular,
                                      None if allowed is None else allowed[choose])
            if self.exact:
                k, best = self._exact_discards(rows[choose], hands[choose], k, best, banned)
            x[choose] = k
            new_sh[choose] = best
        self._maybe_fold(rows, x, new_sh, locked)
        self._discard(rows, x, new_sh, choose)

    def _melds(self, row: int) -> tuple[Meld, ...]:
        """The melds beside ``row``'s hand: its candidate's and those it called in play."""
        return self.starts[int(self.cand[row])].melds + self.called.get(row, ())

    def _measure_waits(self, rows: np.ndarray) -> None:
        """The waits of ready ``rows``: every kind that completes the shape, or in MCR only
        the live ones the fan calculator pays (a self-draw is still valued when it comes)."""
        if rows.size == 0:
            return
        if self.exact:  # the paid waits are waits of the shape already: no second pass
            paid = [self.paid.waits(self._melds(int(row)), self.hand[row]) for row in rows]
            self.waits[rows] = np.stack(paid) & self.paid.live[None]
        else:
            self.waits[rows] = wait_sets(self.hand[rows], self.regular)

    def _exact_discards(self, rows: np.ndarray, hands: np.ndarray, picked: np.ndarray,
                        best: np.ndarray, banned: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """MCR: where the greedy discard leaves a ready shape, the one ready on the most
        unseen paid waits (:meth:`PaidShapes.ready_discard`); with ``exact_step``, where it
        leaves one step short or no ready discard is paid, the one with the most draws into
        such a hand (:meth:`PaidShapes.step_discard`). The greedy pick stands where neither
        pays. Returns the discards and the shanten each leaves."""
        out, left_sh = picked.copy(), best.copy()
        groups: dict[tuple[object, ...], tuple[tuple[Meld, ...], int, list[int]]] = {}
        for i in np.flatnonzero(best <= 1):  # asked together per (melds, banned kind)
            melds = self._melds(int(rows[i]))
            b = int(banned[i])
            groups.setdefault((melds_key(melds), b), (melds, b, []))[2].append(int(i))
        for melds, b, members in groups.values():
            idx = np.array(members)
            ready = idx[best[idx] == 0]
            got = dict(zip(ready.tolist(), self.paid.ready_discard_batch(melds, hands[ready], b),
                           strict=True))
            if self.exact_step:
                rest = np.array([i for i in idx.tolist() if got.get(i) is None], np.int64)
                got.update(zip(rest.tolist(), self.paid.step_discard_batch(
                    melds, hands[rest], b, picked[rest]), strict=True))
            for i, x in got.items():
                if x is not None:
                    out[i] = x
        moved = np.flatnonzero(out != picked)  # a step back from a dead ready shape
        if self.exact_step and moved.size:
            left = hands[moved].copy()
            left[np.arange(moved.size), out[moved]] -= 1
            left_sh[moved] = shanten_batch(left, self.regular)
        return out, left_sh

    def _discard(self, rows: np.ndarray, x: np.ndarray, new_sh: np.ndarray,
                 changed: np.ndarray) -> None:
        """Our discard ``x`` (``new_sh`` the shanten it leaves; ``changed``: rows whose hand
        changed shape, whose waits are measured again): the ready opponents may win on it,
        else it goes to the river and the next seat moves."""
        self._deal_in(rows, x)
        alive = self.alive[rows]
        rows, x, new_sh, changed = rows[alive], x[alive], new_sh[alive], changed[alive]
        self.hand[rows, x] -= 1
        if self.check:
            np.add.at(self.dropped, (rows, x), 1)
        self.disc[rows, x] = True
        self.sh[rows] = new_sh
        self.first[rows] = False
        self.actor[rows] = 1
        moved = rows[changed]
        if moved.size:
            self.waits[moved] = False
            self._measure_waits(moved[self.sh[moved] == 0])
            self._declare(moved)

    def _our_call(self, rows: np.ndarray, a: int, d: np.ndarray) -> None:
        """Relative seat ``a`` discarded ``d`` and nobody won on it: we pung it (or chow it
        from our left, ``a`` 3) where the call and its discard lower our shanten, as the
        greedy player does with a draw, and the candidate's plan allows it (``call_masks``);
        the seats between are skipped, as at the table. Ready, folded and riichi hands never
        call."""
        ok = ~self.fold[rows] & ~self.riichi[rows] & (self.sh[rows] > 0)
        rows, d = rows[ok], d[ok]
        if rows.size == 0:
            return
        # the options: pung, and from the left the three chows (the pair of kinds taken)
        shapes = [(0, 0)] + ([(-2, -1), (-1, 1), (1, 2)] if a == 3 else [])
        best_sh = self.sh[rows].copy()
        best_opt = np.full(rows.size, -1, np.int8)
        best_x = np.zeros(rows.size, np.int64)
        hands = self.hand[rows]
        masks = None if self.call_masks is None else self.call_masks[self.cand[rows]]
        lo = np.where(d < 27, d - d % 9, d)
        hi = np.where(d < 27, lo + 8, d)
        for o, (e1, e2) in enumerate(shapes):
            k1, k2 = d + e1, d + e2
            at = np.arange(rows.size)
            if o == 0:
                can = hands[at, d] >= 2
                if masks is not None:
                    can &= masks[at, 0, d]
            else:
                can = (d < 27) & (k1 >= lo) & (k2 <= hi)
                k1c, k2c = np.clip(k1, 0, 33), np.clip(k2, 0, 33)
                can &= (hands[at, k1c] > 0) & (hands[at, k2c] > 0)
                if masks is not None:
                    can &= masks[at, 1, d] & masks[at, 1, k1c] & masks[at, 1, k2c]
            idx = np.flatnonzero(can)
            if idx.size == 0:
                continue
            trial = hands[idx].copy()
            trial[np.arange(idx.size), np.clip(k1[idx], 0, 33)] -= 1
            trial[np.arange(idx.size), np.clip(k2[idx], 0, 33)] -= 1
            bias = self.bias if self.bias.ndim == 1 else self.bias[self.cand[rows[idx]]]
            x, sh = choose_discards(trial, bias, None, self.regular)
            better = sh < best_sh[idx]
            best_sh[idx[better]] = sh[better]
            best_opt[idx[better]] = o
            best_x[idx[better]] = x[better]
        take = np.flatnonzero(best_opt >= 0)
        if take.size == 0:
            return
        for j in take:
            row, kind = int(rows[j]), int(d[j])
            e1, e2 = shapes[best_opt[j]]
            tiles = tuple(sorted((kind, kind + e1, kind + e2)))
            meld = Meld("pon" if best_opt[j] == 0 else "chi", tiles, kind)
            self.called[row] = (*self.called.get(row, ()), meld)
            for k in (kind + e1, kind + e2):
                self.hand[row, k] -= 1
                if self.check:
                    self.melded[row, k] += 1
        taken = rows[take]
        self.closed[taken] = False
        self._discard(taken, best_x[take], best_sh[take].astype(np.int16),
                      np.ones(take.size, bool))

    def _plan_swaps(self, rows: np.ndarray, hands: np.ndarray, drawn: np.ndarray) -> np.ndarray:
        """Rows whose drawn tile the candidate's plan wants far more than some tile held
        (by half the plan's weight: only the plan, not the lone-tile order, asks for a swap);
        their discard is then chosen among all those that keep the shanten."""
        bias = self.bias[self.cand[rows]]
        worst = np.where(hands > 0, bias, -np.inf).max(axis=1)
        wanted = bias[np.arange(rows.size), np.maximum(drawn, 0)]
        return cast(np.ndarray, (drawn >= 0) & (wanted < worst - PLAN_SWAP))

    def _plan_allowed(self, rows: np.ndarray, hands: np.ndarray) -> np.ndarray:
        """(rows, 34) the kinds each row may discard when it keeps to its plan whatever the
        shanten: the kinds the plan throws while it holds any (a flush's other suits), else
        any kind but the last tile of one the plan keeps (a chow plan's nine). The plan's
        kinds are read off the candidate's bias (PLAN_KEEP below, PLAN_KEEP above)."""
        bias = self.bias[self.cand[rows]]
        held = hands > 0
        throw = held & (bias > PLAN_SWAP)
        allowed = held & ~((bias < -PLAN_SWAP) & (hands == 1))
        return cast(np.ndarray, np.where(throw.any(axis=1)[:, None], throw, allowed))

    def _maybe_fold(self, rows: np.ndarray, x: np.ndarray, new_sh: np.ndarray,
                    locked: np.ndarray) -> None:
        """ODEV, one step deep: fold when this discard's expected loss against the ready,
        unfolded opponents exceeds what staying in is worth."""
        active = self.ready[rows] & ~self.ofold[rows]
        ask = ~locked & active.any(axis=1)
        if not ask.any():
            return
        t = self.t
        sub = np.flatnonzero(ask)
        k = x[sub]
        el = (active[sub] * (t.wait[:, k] * t.value[:, k]).T).sum(axis=1)
        left = np.clip(self.walls[rows[sub], 0] // (1 if not t.shared_wall else 4), 0,
                       t.p_win.shape[1] - 1)
        s = np.clip(new_sh[sub], 0, t.p_win.shape[0] - 1)
        gain = self.p.kappa * t.p_win[s, left] * t.win_value
        folds = rows[sub[el > gain]]
        self.fold[folds] = True

    def _deal_in(self, rows: np.ndarray, x: np.ndarray) -> None:
        """Our discard ``x`` against the ready opponents, in turn order (folded rows discard
        a safe tile instead)."""
        done = self.fold[rows].copy()
        for p in range(3):
            hit = ~done & self.ready[rows, p] & ~self.ofold[rows, p] & \
                self.owaits[self.play[rows], p, x]
            if hit.any():
                hr = rows[hit]
                self.pay.ron(self.delta, hr, p + 1, np.zeros(hr.size, np.int64),
                             self.t.value[p, x[hit]])
                self._end(hr, DEAL_IN)
                done |= hit

    def _declare(self, rows: np.ndarray) -> None:
        """Riichi on becoming ready with a closed hand (seed 002's one-player rule)."""
        if not (self.riichi_rules and self.t.can_riichi):
            return
        ok = (self.closed[rows] & ~self.riichi[rows] & ~self.fold[rows]
              & (self.sh[rows] == 0) & (self.walls[rows, 0] >= 4))
        new = rows[ok]
        self.riichi[new] = True
        self.stick[new] = True
        self.delta[new, 0] -= RIICHI_STICK

    # ------------------------------------------------------------------ opponents

    def _opp_turn(self, idx: np.ndarray, a: int, step: int) -> None:
        p = a - 1
        empty = self.walls[idx, a] <= 0
        self._exhaustive(idx[empty])
        rows = idx[~empty]
        if rows.size == 0:
            return
        d = self._draw(rows, a)
        play = self.play[rows]
        active = self.ready[rows, p] & ~self.ofold[rows, p]
        tsumo = active & self.owaits[play, p, d]
        if tsumo.any():
            tr = rows[tsumo]
            self.pay.tsumo(self.delta, tr, a, self.t.value[p, d[tsumo]])
            self._end(tr, OPP_TSUMO)
            keep = ~tsumo
            rows, d, play = rows[keep], d[keep], play[keep]
        if self.last_draw_ends:  # the last draw: no discard follows, nobody wins on one
            last = self.walls[rows, a] <= 0
            self._exhaustive(rows[last])
            rows, d, play = rows[~last], d[~last], play[~last]
        self.odraws[rows, p] += 1
        u = self.u_step[play, min(step, self.u_step.shape[1] - 1)]
        hazard = self.t.wpet[np.clip(self.odraws[rows, p] - 1, 0, self.t.wpet.size - 1)]
        newly = ~self.ready[rows, p] & (u[:, 0] < hazard * self.p.wpet_scale)
        self.ready[rows[newly], p] = True
        if self.riichi_rules:
            self.odeclared[rows[newly], p] = True
            others = [q for q in range(3) if q != p]
            threat = self.riichi[rows] | self.odeclared[rows][:, others].any(axis=1)
            fp = np.where(self.ready[rows, p], self.p.fold_ready, self.p.fold_unready)
            folds = ~self.ofold[rows, p] & threat & (u[:, 1] < fp)
            self.ofold[rows[folds], p] = True
        self.actor[rows] = (a + 1) % 4
        out = ~self.ofold[rows, p]
        rows, d = rows[out], d[out]
        if rows.size == 0:
            return
        # our ron first (the head of the claim order does not matter: double ron is allowed
        # in riichi, and elsewhere we only need that someone won)
        can = ~self.fold[rows] & (self.sh[rows] == 0) & self.waits[rows, d]
        if self.riichi_rules:  # furiten: a wait we threw bars every win on a discard
            can &= ~(self.waits[rows] & self.disc[rows]).any(axis=1)
        if can.any():
            cr = rows[can]
            hands = self.hand[cr].copy()
            hands[np.arange(cr.size), d[can]] += 1
            self._our_win(cr, hands, d[can], a)
        live = self.alive[rows]
        rows, d = rows[live], d[live]
        for q in ((p + 1) % 3, (p + 2) % 3):
            hit = self.alive[rows] & self.ready[rows, q] & ~self.ofold[rows, q] & \
                self.owaits[self.play[rows], q, d]
            if hit.any():
                hr = rows[hit]
                self.pay.ron(self.delta, hr, q + 1, np.full(hr.size, a, np.int64),
                             self.t.value[q, d[hit]])
                self._end(hr, OPP_RON)
        if self.calls:
            live = self.alive[rows]
            self._our_call(rows[live], a, d[live])
