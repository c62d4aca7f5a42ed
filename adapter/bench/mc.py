"""``mjbot bench mc``: what the ``mc`` policy costs and how its searches compare.

- playouts: one-player playouts (rows of the lockstep engine: one candidate's rest of the
  hand) per second on one core, over mid-game positions of a seeded rule-based game; the
  reference in the same run is the local table with four ``greedy`` players (hands per
  second, one core): the ratio says what a whole simulated hand costs beside a real one.
- decisions: wall time and playouts per candidate of whole ``mc`` decisions at each budget.
- compare: seed 002's playouts and seed 003's recursive expectation against a long playout
  run (the reference), by top-1 agreement, regret in the reference's own values, and time.
- calibrate: the playouts' shares of hands ending in our win, an opponent's win or a draw
  beside how the same hands really ended (adapter/local/calibration.py).
- soak: hands at the local table with ``mc`` in every seat in turn under a tight limit,
  counting illegal answers, late answers and fallbacks.

Opponents come from the variant's shipped models (or ``--models DIR``). Where none exist the
engine speed is still measured, against a flat estimate that the output names; the decision,
comparison and soak parts need the real models and say so.
"""

from __future__ import annotations

import argparse
import copy
import statistics
import time
import zipfile
from dataclasses import replace
from typing import Any

import numpy as np

from adapter.bench.common import add_bench, report
from adapter.commands import (
    UserInputError,
    add_fallback_argument,
    add_variant_option,
    at_least,
    fallback_verdict,
    positive_seconds,
    require_mc_options,
)
from adapter.local.arena import ArenaConfig, play_unit
from adapter.local.calibration import calibrate, calibration_text
from adapter.local.game import GameConfig, play_game
from adapter.local.seat import BrainSeat
from brain.opponents.models import OpponentEstimate
from brain.policies.mc.config import from_env
from brain.policies.mc.models import MissingModels, load_models
from brain.policies.mc.playout import OUR_WINS
from brain.policies.mc.policy import McPolicy, playout_engine
from brain.policies.mc.root import build_table, candidates
from brain.policies.mc.values import OurWins
from brain.state import TableState
from brain.tally import FallbackTally
from protocols import events as ev

Position = tuple[TableState, ev.DecisionRequest, list[Any]]
BUDGETS = (0.5, 1.0, 3.0)




class FlatOpponents:
    """The engine-speed stand-in where no weights exist: every opponent 30% ready, waiting on
    any live kind alike. Used only by this benchmark, and named in its output."""

    def estimate(self, state: TableState) -> OpponentEstimate:
        seats = np.array([(state.seat + i) % 4 for i in (1, 2, 3)])
        live = np.array([4 - v for v in state.visible], np.float64) > 0
        wait = np.tile(live * 1.5 / max(live.sum(), 1), (3, 1))
        value = np.full((3, 34), state.spec.bench_flat_value)
        return OpponentEstimate(seats, np.full(3, 0.3), wait, value)


def positions(variant: str, games: int = 2, seed: int = 3) -> list[Position]:
    """Seat 0's decisions with a choice in seeded games of four ``rulebased`` players."""
    found: list[Position] = []

    class Recorder(BrainSeat):
        def decide(self, request: ev.DecisionRequest, legal: list[Any] | None = None) -> Any:
            if legal is None:
                legal = self.brain.legal(self.state, request)
            if len(legal) > 1:
                found.append((copy.deepcopy(self.state), request, legal))
            return super().decide(request, legal)

    for g in range(games):
        players = [Recorder(variant, 0, "rulebased")] + [
            BrainSeat(variant, s, "rulebased") for s in (1, 2, 3)]
        play_game(GameConfig(variant), players, seed=seed, game=g)
    return found


def mid_game(found: list[Position], count: int) -> list[Position]:
    """Turn decisions with several discards, spread over the game."""
    turns = [p for p in found if p[1].kind == "turn" and p[0].turn >= 8
             and sum(isinstance(a, ev.Discard) for a in p[2]) >= 6
             and not any(isinstance(a, ev.Win) for a in p[2])]
    step = max(1, len(turns) // max(count, 1))
    return turns[::step][:count]


def opponents(variant: str, directory: str = "") -> tuple[Any, str]:
    """The variant's opponent models; flat ones where none are shipped. Models asked for with
    ``--models DIR`` must be there and readable: without them the decisions, --compare and
    --soak, which need real models, would be left out without a word."""
    try:
        return load_models(variant, directory), "models"
    except MissingModels as exc:
        if directory:
            raise UserInputError(f"--models {directory}: {exc}") from None
        return FlatOpponents(), "flat (no opponent models for this variant)"
    except (ValueError, KeyError, OSError, zipfile.BadZipFile) as exc:
        if not directory:
            raise
        raise UserInputError(f"--models {directory}: opponents_{variant}.npz is not opponent "
                             f"model weights ({type(exc).__name__}: {exc})") from None


def playouts_per_second(found: list[Position], models: Any, seconds: float,
                        per_candidate: int = 32, seed: int = 0) -> dict[str, Any]:
    rng = np.random.default_rng(seed)
    config = from_env()  # MJBOT_MC's plan options reach the playouts measured here
    rows = calls = tries = refused = our_wins = 0
    started = time.perf_counter()
    spent = 0.0
    while spent < seconds:
        for state, request, legal in found:
            table = build_table(state, models.estimate(state))
            wins = OurWins(state)
            starts = [c.start for c in candidates(state, request, legal) if c.start]
            engine = playout_engine(state, table, wins, starts, config)
            t = time.perf_counter()
            result = engine.run(starts, per_candidate, rng)
            spent += time.perf_counter() - t
            rows += len(starts) * per_candidate
            calls += wins.calls
            tries += wins.tries
            refused += wins.refused
            our_wins += int(np.isin(result.outcome, OUR_WINS).sum())
        if time.perf_counter() - started > 10 * seconds:
            break
    return {"playouts": rows, "seconds": round(spent, 3),
            "playouts_per_s": round(rows / spent, 1), "rules_calls": calls,
            "complete_shapes": tries, "refused_by_rules": refused,
            "our_win_share": round(our_wins / max(rows, 1), 4)}


def greedy_table(variant: str, seconds: float, seed: int = 0) -> dict[str, Any]:
    config = ArenaConfig(variant, ("greedy",) * 4, seed=seed)
    hands, unit = 0, 0
    started = time.perf_counter()
    while time.perf_counter() - started < seconds or unit == 0:
        hands += play_unit(config, unit).hands
        unit += 1
    spent = time.perf_counter() - started
    return {"hands": hands, "seconds": round(spent, 3), "hands_per_s": round(hands / spent, 2)}


def decision_times(found: list[Position], models: Any, budgets: tuple[float, ...],
                   seed: int = 0) -> list[dict[str, Any]]:
    """Whole decisions at each budget (the clock decides the work: ``playouts`` unset,
    ``seconds`` 0 so the budget is the only cap; the switch off, so every one searches;
    MJBOT_MC's other options apply, as they do to the playouts/s line)."""
    out = []
    base = replace(from_env(), playouts=0, seconds=0.0, always_simulate=True, seed=seed)
    for b in budgets:
        policy = McPolicy(base, models)
        times, work = [], []
        for state, request, legal in found:
            t = time.perf_counter()
            policy.decide(state, request, legal, budget=b)
            times.append(time.perf_counter() - t)
            work.append(policy.stats.playouts)
        out.append({"budget": b, "decisions": len(times),
                    "median_s": round(statistics.median(times), 3),
                    "max_s": round(max(times), 3),
                    "median_playouts_per_candidate": statistics.median(work),
                    "late": sum(t > b for t in times)})
    return out


def compare(found: list[Position], models: Any, reference: int = 1024,
            seed: int = 0) -> list[dict[str, Any]]:
    """Each search against a long playout run (another seed): agreement, regret in the
    reference's values, time per decision. Other options come from MJBOT_MC (e.g.
    ``attack=0,defend=0`` to weigh every discard)."""
    base = replace(from_env(), always_simulate=True, seed=seed + 1000)
    ref_scores: list[dict[str, float]] = []
    for state, request, legal in found:
        p = McPolicy(replace(base, playouts=reference), models)
        p.decide(state, request, legal)
        ref_scores.append({repr(a): s for a, s in p.stats.ranked})
    rows = []
    searches = [(f"playout {n}", {"playouts": n}) for n in (16, 32, 64)] + [
        (f"expect depth {d}", {"search": "expect", "depth": d}) for d in (1, 2, 3)]
    for name, opts in searches:
        p = McPolicy(replace(base, seed=seed, **opts), models)
        agree, regret, times = 0, [], []
        for (state, request, legal), ref in zip(found, ref_scores, strict=True):
            t = time.perf_counter()
            d = p.decide(state, request, legal)
            times.append(time.perf_counter() - t)
            best = max(ref.values())
            got = ref.get(repr(d.action), best)
            agree += got == best
            regret.append(best - got)
        rows.append({"search": name, "agreement": round(agree / len(found), 3),
                     "mean_regret": round(float(np.mean(regret)), 1),
                     "median_s": round(statistics.median(times), 4)})
    return rows


def soak(variant: str, hands: int, limit: float, models: Any, playouts: int = 0,
         seed: int = 0) -> dict[str, Any]:
    """``mc`` in each seat in turn (the others rule-based) at a local table whose brain has
    ``limit`` seconds per decision; counts what the brain had to replace."""
    counts: dict[str, int] = {}
    late = 0
    worst = 0.0
    played = 0
    game = 0
    illegal = 0
    started = time.perf_counter()

    class Timed(BrainSeat):
        def decide(self, request: ev.DecisionRequest, legal: list[Any] | None = None) -> Any:
            nonlocal late, worst
            answer = super().decide(request, legal)
            counts[answer.source] = counts.get(answer.source, 0) + 1
            worst = max(worst, answer.elapsed)
            late += answer.elapsed > limit
            return answer

    cfg = replace(from_env(), playouts=playouts, seed=seed)
    tally = FallbackTally()
    while played < hands:
        players = []
        for s in range(4):
            seat: BrainSeat
            if s == game % 4:
                seat = Timed(variant, s, "rulebased", limit=limit)
                seat.brain.policy = McPolicy(cfg, models)
                seat.name = "mc"
            else:
                seat = BrainSeat(variant, s, "rulebased")
            players.append(seat)
        result = play_game(GameConfig(variant), players, seed=seed, game=game)
        played += len(result.hands)
        illegal += len(result.illegal)
        for p in players:
            p.close()
        tally.add(players[game % 4].brain.tally)
        game += 1
    return {"variant": variant, "hands": played, "limit_s": limit, "sources": counts,
            "late": late, "illegal": illegal, "max_elapsed_s": round(worst, 3),
            "seconds": round(time.perf_counter() - started, 1),
            "fallbacks": {"mc": tally.as_dict()}}


def bench_mc(variant: str, seconds: float = 1.0, positions_count: int = 12,
             budgets: tuple[float, ...] = BUDGETS, compare_searches: bool = False,
             soak_hands: int = 0, limit: float = 0.5, models_dir: str = "",
             seed: int = 0, reference: int = 1024, calibrate_games: int = 0
             ) -> dict[str, Any]:
    """Every part the options ask for, as one JSON-ready dict."""
    models, source = opponents(variant, models_dir)
    found = mid_game(positions(variant, seed=seed + 3), positions_count)
    out: dict[str, Any] = {"variant": variant, "opponents": source,
                           "positions": len(found)}
    speed = playouts_per_second(found, models, seconds, seed=seed)
    table = greedy_table(variant, seconds, seed=seed)
    out["playouts"] = speed
    out["greedy_table"] = table
    out["ratio_playouts_vs_greedy_table_hands"] = round(
        speed["playouts_per_s"] / max(table["hands_per_s"], 1e-9), 2)
    out["target_playouts_per_s"] = 2000
    real = not isinstance(models, FlatOpponents)
    if real:
        out["decisions"] = decision_times(found, models, budgets, seed=seed)
        if compare_searches:
            out["compare"] = compare(found, models, reference, seed=seed)
            out["compare_reference_playouts"] = reference
        if soak_hands:
            out["soak"] = soak(variant, soak_hands, limit, models, seed=seed)
        if calibrate_games:
            out["calibration"] = calibrate(variant, calibrate_games, models, from_env(),
                                           seed=seed)
    return out


def text(result: dict[str, Any]) -> str:
    lines = [f"mc, {result['variant']}: {result['positions']} mid-game positions, opponents: "
             f"{result['opponents']}, one core"]
    p, g = result["playouts"], result["greedy_table"]
    lines.append(f"  one-player playouts  {p['playouts_per_s']:>10,.0f} /s   "
                 f"({p['playouts']} in {p['seconds']} s; target >= "
                 f"{result['target_playouts_per_s']:,})")
    lines.append(f"  our wins             {100 * p['our_win_share']:>10.1f} %    of playouts; "
                 f"{p['refused_by_rules']:,} of {p['complete_shapes']:,} complete shapes "
                 f"refused by the rules ({_share(p['refused_by_rules'], p['complete_shapes'])}: "
                 "no yaku, under the fan floor)")
    lines.append(f"  greedy table         {g['hands_per_s']:>10,.1f} hands/s   (reference, "
                 f"{g['hands']} hands)")
    lines.append(f"  ratio                {result['ratio_playouts_vs_greedy_table_hands']:>10} x"
                 "   (simulated rests of a hand per real greedy hand)")
    if "decisions" not in result:
        lines.append("  decisions, compare, soak: need opponent models for this variant")
        return "\n".join(lines)
    lines.append("  decision time (every decision searches; the clock sets the work)")
    for row in result["decisions"]:
        lines.append(f"    budget {row['budget']:>4} s   median {row['median_s']:.3f} s   max "
                     f"{row['max_s']:.3f} s   playouts/candidate "
                     f"{row['median_playouts_per_candidate']}   late {row['late']}")
    for row in result.get("compare", []):
        lines.append(f"  {row['search']:<16} agreement {row['agreement']:.2f}   regret "
                     f"{row['mean_regret']:>7}   {row['median_s'] * 1000:8.1f} ms/decision")
    if "calibration" in result:
        lines.extend(calibration_text(result["calibration"]))
    if "soak" in result:
        s = result["soak"]
        lines.append(f"  soak: {s['hands']} hands at {s['limit_s']} s, illegal {s['illegal']}, "
                     f"late {s['late']}, max {s['max_elapsed_s']} s, sources {s['sources']} "
                     f"({s['seconds']} s)")
        f = s["fallbacks"]["mc"]
        lines.append(f"  soak fallbacks: {f['fallbacks']} of {f['decisions']} mc decisions "
                     f"({100 * f['fallback_share']:.1f}%)"
                     + (f", first: {f['first_fallback']}" if f["first_fallback"] else ""))
    return "\n".join(lines)


def _share(part: int, whole: int) -> str:
    return f"{100 * part / whole:.1f}%" if whole else "none offered"


def register(benches: Any) -> None:
    p = add_bench(benches, "mc", run, "mc: playouts/s vs the greedy table, decision times")
    add_variant_option(p, also=("all",), help="the rules (all: riichi)")
    p.add_argument("--seconds", type=positive_seconds, default=1.0, help="time per measurement")
    p.add_argument("--models", default="", metavar="DIR",
                   help="opponent model weights (default: the shipped ones)")
    p.add_argument("--positions", type=at_least(1), default=12, help="mid-game positions timed")
    p.add_argument("--budgets", default="0.5,1,3", help="decision budgets (s)")
    p.add_argument("--compare", action="store_true",
                   help="playouts vs seed 003's expectation against a long run")
    p.add_argument("--reference", type=at_least(1), default=1024,
                   help="--compare: playouts per candidate of the reference")
    p.add_argument("--soak", type=at_least(0), default=0, metavar="HANDS",
                   help="hands at a tight limit, counting late or illegal answers")
    p.add_argument("--limit", type=positive_seconds, default=0.5,
                   help="--soak: seconds per decision")
    p.add_argument("--calibrate", type=at_least(0), default=0, metavar="GAMES",
                   help="play GAMES rule-based games and set how the playouts end hands "
                   "beside how those hands really ended")
    p.add_argument("--seed", type=int, default=0)
    add_fallback_argument(p)


def run(args: argparse.Namespace) -> int:
    require_mc_options()
    variant = "riichi" if args.variant == "all" else args.variant
    try:
        budgets = tuple(positive_seconds(b) for b in args.budgets.split(",") if b.strip())
    except argparse.ArgumentTypeError:
        raise UserInputError(f"--budgets: seconds above 0 separated by commas, not "
                             f"{args.budgets!r}") from None
    result = bench_mc(variant, seconds=args.seconds, positions_count=args.positions,
                      budgets=budgets, compare_searches=args.compare, soak_hands=args.soak,
                      limit=args.limit, models_dir=args.models, seed=args.seed,
                      reference=args.reference, calibrate_games=args.calibrate)
    report(args, result, text)
    return fallback_verdict(args, result["soak"]["fallbacks"]) if "soak" in result else 0
