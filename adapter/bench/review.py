"""``mjbot bench review`` and ``mjbot bench commentary``.

review: the wall time of a whole-game review with ``mc`` (one process, one core), against a
``rulebased`` review of the same game measured in the same run (the ratio says what the
simulations cost beside ranking by rules). Without a GAME, one seeded east-south game is
played at the local table by four ``rulebased`` players and reviewed from seat 0.

commentary: seed 004's prediction measure (replay/review/measure.py) for each policy's
ranking, on the real games given, as one JSON table.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

from adapter.bench.common import add_bench, report
from adapter.commands import UserInputError, at_least
from adapter.local.arena import ArenaConfig, play_unit
from replay import replayer
from replay.review import measure
from replay.review.evaluators import PolicyFailed
from replay.review.game import review
from replay.review.registry import evaluator_for


def local_game(directory: str, seed: int, length: str = "south") -> str:
    """The log of one riichi game (east-south by default) of four ``rulebased`` players
    (seeded)."""
    config = ArenaConfig("riichi", ("rulebased",) * 4, hands=1, seed=seed, log_dir=directory,
                         riichi_length=length)
    result = play_unit(config, 0)
    if not result.logs:
        raise RuntimeError("the local table did not finish its game: " + "; ".join(
            result.errors))
    return result.logs[0]


def bench_review(game: str | None, seat: int | None, playouts: int, seed: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        path = game or local_game(tmp, seed)
        rep = replayer.load(path, seat)
        timings: dict[str, float] = {}
        results: dict[str, dict[str, Any]] = {}
        for name in ("rulebased", "mc"):
            evaluator = evaluator_for(name, playouts, seed)
            started = time.perf_counter()
            results[name] = review(rep, evaluator)
            timings[name] = time.perf_counter() - started
            if results[name]["policy_failures"]:  # its time is not of a review by it
                raise UserInputError(f"{name} gave no answer on "
                                     f"{results[name]['policy_failures']} decision(s): "
                                     "no figure")
    hands = sum(1 for e in rep.events if type(e).__name__ == "RoundStarted")
    rated = results["mc"]["decisions"]  # a forced decision (one legal action) is not rated
    return {
        "game": game or f"local table, east-south, rulebased x4, seed {seed}",
        "variant": rep.variant, "seat": rep.seat, "hands": hands,
        "decisions": rated, "forced_decisions": results["mc"]["forced_decisions"],
        "playouts": playouts,
        "mc_seconds": round(timings["mc"], 3),
        "rulebased_seconds": round(timings["rulebased"], 3),
        "ratio_mc_to_rulebased": round(timings["mc"] / max(timings["rulebased"], 1e-9), 1),
        "mc_seconds_per_decision": round(timings["mc"] / max(rated, 1), 4),
        "target_seconds": 300, "mc_rating": results["mc"]["rating"],
        "rulebased_rating": results["rulebased"]["rating"],
    }


def text_review(r: dict[str, Any]) -> str:
    return (f"review of {r['game']} (seat {r['seat']}, {r['hands']} hands, "
            f"{r['decisions']} decisions with a choice, {r['forced_decisions']} forced)\n"
            f"  mc ({r['playouts']} playouts per action): {r['mc_seconds']} s "
            f"({r['mc_seconds_per_decision']} s per decision; target <= {r['target_seconds']} s)"
            f"\n  rulebased (reference): {r['rulebased_seconds']} s   ratio mc/rulebased "
            f"{r['ratio_mc_to_rulebased']}x")


def bench_commentary(paths: list[str], policies: list[str], playouts: int, seed: int,
                     k: int) -> dict[str, Any]:
    files = measure.game_files(paths)
    reps, left = measure.replays(files)
    table: dict[str, Any] = {}
    by_variant: dict[str, int] = {}
    for r in reps:
        by_variant[r.variant] = by_variant.get(r.variant, 0) + 1
    for name in policies:
        started = time.perf_counter()
        ranker = evaluator_for(name, playouts, seed)
        total = measure.Tally()
        per_variant: dict[str, Any] = {}
        for variant in sorted(by_variant):
            tally = measure.measure([r for r in reps if r.variant == variant], ranker, k)
            per_variant[variant] = tally.table()
            total.add(tally)
        table[name] = {**total.table(), "by_variant": per_variant,
                       "seconds": round(time.perf_counter() - started, 2)}
        if name == "mc":
            table[name]["playouts"] = playouts
    best = max(table, key=lambda n: table[n]["discard_topk"] or 0.0) if table else None
    return {"k": k, "files": len(files), "games": len({r.path for r in reps}),
            "seat_views": len(reps), "seat_views_by_variant": by_variant,
            "decisions": sum(len(r.decisions) for r in reps), "policies": table,
            "best_discard_topk": best, "anchors": measure.ANCHORS,
            "left_out": [{"file": Path(x["file"]).name, "why": x["why"]} for x in left],
            "damaged_hands": measure.damaged_hands(reps)}


def register(benches: Any) -> None:
    p = add_bench(benches, "review", run_review, "review time with mc vs rulebased, same run")
    p.add_argument("game", nargs="?", metavar="GAME",
                   help="the game (default: a seeded local east-south game)")
    p.add_argument("--seat", type=int, choices=[0, 1, 2, 3], default=None,
                   help="the seat reviewed")
    p.add_argument("--playouts", type=at_least(1), default=512,
                   help="mc playouts per action")
    p.add_argument("--seed", type=int, default=0)

    p = add_bench(benches, "commentary", run_commentary,
                  "move predictions on real games vs the seed papers' figures")
    p.add_argument("paths", nargs="*", metavar="PATH", help="game files or folders")
    p.add_argument("--policies", default="rulebased,mc", help="the rankings measured")
    p.add_argument("--top-k", type=at_least(1), default=3, help="discards predicted")
    p.add_argument("--playouts", type=at_least(1), default=16,
                   help="mc playouts per action")
    p.add_argument("--seed", type=int, default=0)


def run_review(args: argparse.Namespace) -> int:
    from adapter.commands.review import load_replay

    if args.game is not None:
        load_replay(args.game, args.seat)  # a bad file: one line
    result = bench_review(args.game, args.seat, args.playouts, args.seed)
    report(args, result, text_review)
    return 0


def run_commentary(args: argparse.Namespace) -> int:
    from replay.review.registry import predictors

    if not args.paths:
        raise UserInputError("bench commentary needs game files or folders (e.g. the Botzone, "
                             "mjlog and tenhou.net/6 games of tests/data)")
    names = list(dict.fromkeys(n.strip() for n in args.policies.split(",") if n.strip()))
    if not names:  # else a table of the anchors alone, as if something had been measured
        raise UserInputError(f"--policies {args.policies!r}: no ranking named (known: "
                             f"{', '.join(predictors())})")
    for n in names:
        if n not in predictors():
            raise UserInputError(f"--policies: {n!r} cannot rank moves (known: "
                                 f"{', '.join(predictors())})")
    missing = [p for p in args.paths if not Path(p).exists()]
    if missing:
        raise UserInputError(f"no such file or folder: {', '.join(missing)}")
    try:
        result = bench_commentary(args.paths, names, args.playouts, args.seed, args.top_k)
    except PolicyFailed as exc:  # its hit rates would be the legal set's order, not its own
        raise UserInputError(f"{exc}: no figure") from None
    if not result["games"]:
        # why each file was left out (an mjbot log, a three-player game), not only that it
        # was: an own log read fine but was said to be no game the replayer reads
        reasons = Counter(x["why"] for x in result["left_out"])
        why = "".join(f"; {n} left out: {w}" for w, n in reasons.items())
        raise UserInputError(f"no game the replayer reads in {', '.join(args.paths)} "
                             f"({result['files']} file(s) looked at{why})")
    report(args, result, text_commentary)
    # a hand left out as damaged, as `mjbot replay` names it: the figures leave its moves out
    for x in result["damaged_hands"]:
        print(f"mjbot bench commentary: {x['file']}: {x['note']}", file=sys.stderr)
    return 1 if result["damaged_hands"] else 0


def _share(value: float | None) -> str:
    return "  n/a" if value is None else f"{value:.3f}"


def text_commentary(r: dict[str, Any]) -> str:
    anchors = r["anchors"]
    lines = [f"move predictions: {r['games']} games, {r['seat_views']} seat views, "
             f"{r['decisions']} decisions, top-{r['k']} discards "
             f"(reference: {anchors['source']})",
             f"  {'policy':<10}{'discard top-k':>14}{'chi prec':>10}{'chi rec':>9}"
             f"{'pon prec':>10}{'pon rec':>9}{'seconds':>9}",
             f"  {'seed 004':<10}{_share(anchors['discard_topk']):>14}"
             f"{_share(anchors['chi_precision']):>10}{_share(anchors['chi_recall']):>9}"
             f"{_share(anchors['pon_precision']):>10}{_share(anchors['pon_recall']):>9}"
             f"{'':>9}"]
    for name, row in r["policies"].items():
        lines.append(f"  {name:<10}{_share(row['discard_topk']):>14}"
                     f"{_share(row['chi']['precision']):>10}{_share(row['chi']['recall']):>9}"
                     f"{_share(row['pon']['precision']):>10}{_share(row['pon']['recall']):>9}"
                     f"{row['seconds']:>9}")
    for x in r["left_out"]:
        lines.append(f"  left out {x['file']}: {x['why']}")
    if r.get("damaged_hands"):  # each named on stderr, as `mjbot replay` names it
        lines.append(f"  damaged hands left out: {len(r['damaged_hands'])}")
    return "\n".join(lines)
