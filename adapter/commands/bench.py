"""`mjbot bench ...`: the benchmarks of the hot paths, each a ratio against a reference
measured in the same run."""

from __future__ import annotations

import argparse
import json
from typing import Any

from adapter.commands import (
    UserInputError,
    add_fallback_argument,
    fallback_verdict,
    require_mc_options,
    require_policy,
)
from brain.rules.variant import VARIANT_NAMES

VARIANTS = VARIANT_NAMES


def register(sub: Any) -> None:
    b = sub.add_parser("bench", help="benchmarks of the hot paths (ratios vs references)",
                       description="Each bench takes only its own options: mjbot bench NAME -h.")
    benches = b.add_subparsers(dest="what", metavar="NAME", required=True)

    def bench(name: str, handler: Any, what: str) -> argparse.ArgumentParser:
        p = benches.add_parser(name, help=what)
        p.add_argument("--json", action="store_true", help="machine-readable output")
        p.set_defaults(handler=handler)
        return p

    p = bench("shanten", _bench_shanten, "single and batched shanten vs the mahjong library")
    p.add_argument("--hands", type=int, default=20_000, help="hands for single calls")
    p.add_argument("--batch", type=int, default=1_000_000, help="hands per batched call")
    p.add_argument("--seconds", type=float, default=1.0, help="time per measurement")
    p.add_argument("--seed", type=int, default=0)

    p = bench("log", _bench_log, "cost of one game-log frame vs JSON lines")
    p.add_argument("--frames", type=int, default=20_000, help="frames written")

    p = bench("arena", _bench_arena, "local-table hands/s per variant and policy")
    p.add_argument("--variant", default="all", choices=["all", *VARIANTS])
    p.add_argument("--repeats", type=int, default=3,
                   help="runs of the same walls, the best counts")
    p.add_argument("--seed", type=int, default=0)
    add_fallback_argument(p)

    p = bench("botzone", _bench_botzone, "Botzone one-shot and keep-running turn times")
    p.add_argument("--repeats", type=int, default=3, help="timings per turn, the best counts")
    p.add_argument("--policy", default="rulebased",
                   help="what the bot plays (rulebased, mc, nn)")
    p.add_argument("--late-turns", type=int, default=0, metavar="N",
                   help="also time the zip at each of the last N turns")

    p = bench("mjai", _bench_mjai, "vs the mjai package's RulebaseBot (opt-in install)")
    p.add_argument("--games", type=int, default=8, help="games (two seats each side)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--policy", default="rulebased", help="what mjbot plays (default "
                   "%(default)s; nn, mc, nn@FILE ...)")
    add_fallback_argument(p)

    p = bench("mc", _bench_mc, "mc: playouts/s vs the greedy table, decision times")
    p.add_argument("--variant", default="riichi", choices=["all", *VARIANTS],
                   help="(all: riichi)")
    p.add_argument("--seconds", type=float, default=1.0, help="time per measurement")
    p.add_argument("--models", default="", metavar="DIR",
                   help="opponent model weights (default: the shipped ones)")
    p.add_argument("--positions", type=int, default=12, help="mid-game positions timed")
    p.add_argument("--budgets", default="0.5,1,3", help="decision budgets (s)")
    p.add_argument("--compare", action="store_true",
                   help="playouts vs seed 003's expectation against a long run")
    p.add_argument("--reference", type=int, default=1024,
                   help="--compare: playouts per candidate of the reference")
    p.add_argument("--soak", type=int, default=0, metavar="HANDS",
                   help="hands at a tight limit, counting late or illegal answers")
    p.add_argument("--limit", type=float, default=0.5, help="--soak: seconds per decision")
    p.add_argument("--seed", type=int, default=0)
    add_fallback_argument(p)

    p = bench("review", _bench_review, "review time with mc vs rulebased, same run")
    p.add_argument("game", nargs="?", metavar="GAME",
                   help="the game (default: a seeded local east-south game)")
    p.add_argument("--seat", type=int, choices=[0, 1, 2, 3], default=None,
                   help="the seat reviewed")
    p.add_argument("--playouts", type=int, default=512, help="mc playouts per action")
    p.add_argument("--seed", type=int, default=0)

    p = bench("commentary", _bench_commentary,
              "move predictions on real games vs the seed papers' figures (JSON)")
    p.add_argument("paths", nargs="*", metavar="PATH", help="game files or folders")
    p.add_argument("--policies", default="rulebased,mc", help="the rankings measured")
    p.add_argument("--top-k", type=int, default=3, help="discards predicted")
    p.add_argument("--playouts", type=int, default=16, help="mc playouts per action")
    p.add_argument("--seed", type=int, default=0)

    p = bench("ray", _bench_ray, "Ray's dispatch per unit against the process pool's")
    p.add_argument("--units", type=int, default=2000,
                   help="empty units dispatched through the pool and Ray")
    p.add_argument("--workers", type=int, default=2, help="workers (CPUs)")
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--seed", type=int, default=0)

    p = bench("nn", _bench_nn, "nn decision time (p50/p99) beside rulebased, one core")
    p.add_argument("--variant", default="riichi", choices=["all", *VARIANTS],
                   help="(all: riichi)")
    p.add_argument("--model", default="", metavar="FILE",
                   help="network weights (default: the shipped ones)")
    p.add_argument("--games", type=int, default=2, help="seeded games of positions")
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--seed", type=int, default=0)


def _bench_ray(args: argparse.Namespace) -> int:
    import os
    from importlib.util import find_spec

    from adapter.bench.ray import bench_ray, text

    if args.units < 1 or args.workers < 1 or args.repeats < 1:
        raise UserInputError("--units, --workers and --repeats must be at least 1")
    if find_spec("ray") is None:
        raise UserInputError("bench ray needs Ray: pip install 'mjbot[ray]'")
    require_mc_options()
    os.environ.setdefault("MJBOT_MC", "playouts=16")  # a tractable mc unit (mc's own default
    # thinks up to 2 s a decision)
    result = bench_ray(args.units, args.workers, args.repeats, args.seed)
    result["mjbot_mc"] = os.environ["MJBOT_MC"]
    print(json.dumps(result, indent=2) if args.json else text(result))
    return 0


def _bench_nn(args: argparse.Namespace) -> int:
    from adapter.bench.nn import bench_nn, text
    from adapter.commands import require_networks

    variant = "riichi" if args.variant == "all" else args.variant
    if args.model:
        import os

        os.environ["MJBOT_NN_WEIGHTS"] = args.model
    require_networks(["nn"], variant)  # no weights: one line, before the child starts
    result = bench_nn(variant, args.model, games=args.games,
                      repeats=args.repeats, seed=args.seed)
    print(json.dumps(result, indent=2) if args.json else text(result))
    return 0


def _bench_review(args: argparse.Namespace) -> int:
    from adapter.bench.review import bench_review, text_review
    from adapter.commands.review import load_replay

    game = args.game
    if game is not None:
        load_replay(game, args.seat)  # a bad file: one line
    result = bench_review(game, args.seat, args.playouts or 512, args.seed)
    print(json.dumps(result, indent=2) if args.json else text_review(result))
    return 0


def _bench_commentary(args: argparse.Namespace) -> int:
    from adapter.bench.review import bench_commentary
    from replay.review.evaluators import predictors

    if not args.paths:
        raise UserInputError("bench commentary needs game files or folders (e.g. the Botzone, "
                             "mjlog and tenhou.net/6 games of tests/data)")
    names = [n.strip() for n in args.policies.split(",") if n.strip()]
    for n in names:
        if n not in predictors():
            raise UserInputError(f"--policies: {n!r} cannot rank moves (known: "
                                 f"{', '.join(predictors())})")
    if args.top_k < 1:
        raise UserInputError("--top-k must be at least 1")
    result = bench_commentary(args.paths, names, args.playouts or 16, args.seed, args.top_k)
    print(json.dumps(result, indent=2))
    return 0


def _bench_mc(args: argparse.Namespace) -> int:
    from adapter.bench.mc import bench_mc, text

    require_mc_options()
    variant = "riichi" if args.variant == "all" else args.variant
    try:
        budgets = tuple(float(b) for b in args.budgets.split(",") if b.strip())
    except ValueError:
        raise UserInputError(f"--budgets: numbers separated by commas, not {args.budgets!r}")\
            from None
    result = bench_mc(variant, seconds=args.seconds, positions_count=args.positions,
                      budgets=budgets, compare_searches=args.compare, soak_hands=args.soak,
                      limit=args.limit, models_dir=args.models, seed=args.seed,
                      reference=args.reference)
    print(json.dumps(result, indent=2) if args.json else text(result))
    return fallback_verdict(args, result["soak"]["fallbacks"]) if "soak" in result else 0


def _bench_mjai(args: argparse.Namespace) -> int:
    from adapter.bench.mjai import bench_mjai
    from adapter.commands import require_networks

    if args.games < 1:
        raise UserInputError("--games must be at least 1")
    require_policy(args.policy)
    require_networks([args.policy], "riichi")
    try:
        result = bench_mjai(games=args.games, seed=10000 + args.seed, policy=args.policy)
    except RuntimeError as exc:
        raise UserInputError(str(exc)) from None
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        print(f"mjbot ({result['policy']}) vs {result['reference']}: {result['games']} games, "
              f"two seats each, rotated, {result['seconds']} s")
        for side in ("mjbot", "RulebaseBot"):
            lo, hi = result["average_rank_ci95"][side]
            ci = "[n/a]" if lo is None else f"[{lo:.3f},{hi:.3f}]"
            print(f"  {side:<12} average rank {result['average_rank'][side]:.3f} {ci}   "
                  f"points per game {result['points_per_game'][side]:+d}")
        f = result["fallbacks"][result["policy"]]
        print(f"  fallbacks    {f['fallbacks']} of {f['decisions']} mjbot decisions "
              f"({100 * f['fallback_share']:.1f}%)"
              + (f", first: {f['first_fallback']}" if f["first_fallback"] else ""))
    return fallback_verdict(args, result["fallbacks"])


def _bench_botzone(args: argparse.Namespace) -> int:
    from adapter.bench.botzone import bench_botzone
    from adapter.platforms.botzone_bundle import check_bundle_policy

    require_policy(args.policy)
    try:
        check_bundle_policy(args.policy)
    except ValueError as exc:
        raise UserInputError(str(exc)) from None
    result = bench_botzone(repeats=args.repeats, policy=args.policy, late_turns=args.late_turns)
    if args.json:
        print(json.dumps(result, indent=2))
        return 0
    print(f"Botzone turns, {result['policy']}, a {result['match_turns']}-turn match (seat 0's "
          "requests)")
    for n, seconds in result["one_shot_seconds"].items():
        print(f"  one-shot turn {n:>4}  {seconds:>8.3f} s   (process start to answer)")
    print(f"  python + numpy start {result['python_numpy_start_seconds']:>5.3f} s   "
          f"(reference; last turn ratio {result['one_shot_last_ratio_vs_python_start']}x)")
    zips = result["bundle_one_shot_last_seconds"]
    print(f"  upload zip     {zips['compiled']:>8.3f} s   last turn, with compiled modules "
          f"({result['bundle_compiled_ratio_vs_installed']}x the installed command)")
    print(f"  zip, no .pyc   {zips['source_only']:>8.3f} s   last turn, sources only "
          f"({result['bundle_source_only_ratio_vs_installed']}x)")
    print(f"  keep running   median {result['keep_running_median_ms']} ms, p99 "
          f"{result['keep_running_p99_ms']} ms over {result['keep_running_turns']} turns")
    if result["late_turns"]:
        print(f"  upload zip, last {result['late_turns']} turns: slowest "
              f"{result['bundle_late_slowest_seconds']:.3f} s (turn "
              f"{result['bundle_late_slowest_turn']}), median "
              f"{result['bundle_late_median_seconds']:.3f} s")
    print("  targets: one-shot last turn < 1 s, keep-running p99 < 50 ms")
    return 0


def _bench_shanten(args: argparse.Namespace) -> int:
    from adapter.bench.shanten import bench_shanten

    result = bench_shanten(hands=args.hands, batch=args.batch, seconds=args.seconds,
                           seed=args.seed)
    if args.json:
        print(json.dumps(result, indent=2))
        return 0
    print(f"shanten, random 13/14-tile hands (Python {result['python']})")
    print(f"  single calls   {result['single_calls_per_s']:>12,} /s")
    print(f"  mahjong lib    {result['mahjong_calls_per_s']:>12,} /s")
    print(f"  ratio          {result['single_ratio_vs_mahjong']:>12} x   (target >= 10)")
    print(f"  useful_tiles   {result['useful_tiles_13_calls_per_s']:>12,} /s   (13-tile hands)")
    print(f"  batched        {result['batched_hands_per_s']:>12,} hands/s   (target >= 5M)")
    print(f"  batched ratio  {result['batched_ratio_vs_mahjong']:>12} x")
    return 0


def _bench_log(args: argparse.Namespace) -> int:
    from adapter.bench.log import bench_log

    result = bench_log(frames=args.frames)
    if args.json:
        print(json.dumps(result, indent=2))
        return 0
    print(f"game log, {result['frames']:,} frames (rx, event, decision, tx), flushed each")
    print(f"  msgpack log     {result['us_per_frame']:>9} us/frame   (target well under 1000)")
    print(f"  JSON lines ref  {result['json_lines_us_per_frame']:>9} us/frame")
    print(f"  ratio           {result['ratio_vs_json_lines']:>9} x")
    print(f"  size            {result['bytes_per_frame']:>9} bytes/frame")
    print(f"  hand-end fsync  {result['hand_end_fsync_ms']:>9} ms")
    return 0


def _bench_arena(args: argparse.Namespace) -> int:
    from adapter.bench.arena import bench_arena

    variants = list(VARIANTS) if args.variant == "all" else [args.variant]
    result = bench_arena(variants, repeats=args.repeats, seed=args.seed)
    if args.json:
        print(json.dumps(result, indent=2))
        return fallback_verdict(args, result["fallbacks"])
    print("local table, one worker process, four copies of a policy, the same walls for "
          "each; hands/s without and with game logs")
    print(f"  {'variant':<10}{'policy':<11}{'hands':>6}{'hands/s':>9}{'logged':>9}"
          f"{'vs tsumogiri':>14}")
    for row in result["rows"]:
        print(f"  {row['variant']:<10}{row['policy']:<11}{row['hands']:>6}"
              f"{row['hands_per_s']:>9.1f}{row['logged_hands_per_s']:>9.1f}"
              f"{row['ratio_vs_tsumogiri']:>13.2f}x")
    print(f"  target: >= 200 riichi hands/s per core with greedy; reached "
          f"{result['riichi_greedy_hands_per_s']:.1f}")
    print("  fallbacks: " + ", ".join(f"{name} {f['fallbacks']} of {f['decisions']}"
                                      for name, f in result["fallbacks"].items()))
    return fallback_verdict(args, result["fallbacks"])
