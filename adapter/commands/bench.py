"""`mjbot bench ...`: the benchmarks of the hot paths, each a ratio against a reference
measured in the same run."""

from __future__ import annotations

import argparse
import json
from typing import Any

from adapter.commands import UserInputError, require_policy


def register(sub: Any) -> None:
    b = sub.add_parser("bench", help="benchmarks of the hot paths (ratios vs references)")
    b.add_argument("what", choices=["shanten", "log", "arena", "botzone", "mjai", "mc",
                                    "review", "commentary", "ray", "nn"])
    b.add_argument("paths", nargs="*", metavar="PATH",
                   help="bench review: the GAME (default: a seeded local east-south game); "
                   "bench commentary: game files or folders")
    b.add_argument("--variant", default="all",
                   choices=["all", "riichi", "mcr", "taiwan16", "mass"], help="bench arena")
    b.add_argument("--frames", type=int, default=20_000, help="frames written (bench log)")
    b.add_argument("--json", action="store_true", help="machine-readable output")
    b.add_argument("--hands", type=int, default=20_000, help="hands for single calls")
    b.add_argument("--batch", type=int, default=1_000_000, help="hands per batched call")
    b.add_argument("--seconds", type=float, default=1.0, help="time per measurement")
    b.add_argument("--repeats", type=int, default=3,
                   help="bench arena: runs of the same walls, the best counts")
    b.add_argument("--seed", type=int, default=0)
    b.add_argument("--policy", default="rulebased",
                   help="bench botzone: what the bot plays (rulebased, mc, nn)")
    b.add_argument("--late-turns", type=int, default=0, metavar="N",
                   help="bench botzone: also time the zip at each of the last N turns")
    b.add_argument("--games", type=int, default=None,
                   help="games (bench mjai: 8; bench nn: 2 seeded games of positions)")
    b.add_argument("--models", default="", metavar="DIR",
                   help="bench mc: opponent model weights (default: the shipped ones)")
    b.add_argument("--positions", type=int, default=12,
                   help="bench mc: mid-game positions timed")
    b.add_argument("--budgets", default="0.5,1,3", help="bench mc: decision budgets (s)")
    b.add_argument("--compare", action="store_true",
                   help="bench mc: playouts vs seed 003's expectation against a long run")
    b.add_argument("--reference", type=int, default=1024,
                   help="bench mc --compare: playouts per candidate of the reference")
    b.add_argument("--soak", type=int, default=0, metavar="HANDS",
                   help="bench mc: hands at a tight limit, counting late or illegal answers")
    b.add_argument("--limit", type=float, default=0.5,
                   help="bench mc --soak: seconds per decision")
    b.add_argument("--units", type=int, default=2000,
                   help="bench ray: empty units dispatched through the pool and Ray")
    b.add_argument("--workers", type=int, default=2, help="bench ray: workers (CPUs)")
    b.add_argument("--playouts", type=int, default=0,
                   help="bench review / commentary: mc playouts per action (default 512 / 16)")
    b.add_argument("--policies", default="rulebased,mc",
                   help="bench commentary: the rankings measured")
    b.add_argument("--top-k", type=int, default=3, help="bench commentary: discards predicted")
    b.add_argument("--model", default="", metavar="FILE",
                   help="bench nn: network weights (default: the shipped ones)")
    b.add_argument("--seat", type=int, choices=[0, 1, 2, 3], default=None,
                   help="bench review: the seat reviewed")
    b.set_defaults(handler=cmd_bench)


def cmd_bench(args: argparse.Namespace) -> int:
    return {"shanten": _bench_shanten, "log": _bench_log, "arena": _bench_arena,
            "botzone": _bench_botzone, "mjai": _bench_mjai, "mc": _bench_mc,
            "review": _bench_review, "commentary": _bench_commentary,
            "ray": _bench_ray, "nn": _bench_nn}[args.what](args)


def _bench_ray(args: argparse.Namespace) -> int:
    import os
    from importlib.util import find_spec

    from adapter.local.ray_bench import bench_ray, text

    if args.units < 1 or args.workers < 1 or args.repeats < 1:
        raise UserInputError("--units, --workers and --repeats must be at least 1")
    if find_spec("ray") is None:
        raise UserInputError("bench ray needs Ray: pip install 'mjbot[ray]'")
    os.environ.setdefault("MJBOT_MC", "playouts=16")  # a tractable mc unit (mc's own default
    # thinks up to 2 s a decision)
    result = bench_ray(args.units, args.workers, args.repeats, args.seed)
    result["mjbot_mc"] = os.environ["MJBOT_MC"]
    print(json.dumps(result, indent=2) if args.json else text(result))
    return 0


def _bench_nn(args: argparse.Namespace) -> int:
    from adapter.commands import require_networks
    from adapter.nn_bench import bench_nn, text

    variant = "riichi" if args.variant == "all" else args.variant
    if args.model:
        import os

        os.environ["MJBOT_NN_WEIGHTS"] = args.model
    require_networks(["nn"], variant)  # no weights: one line, before the child starts
    result = bench_nn(variant, args.model, games=args.games or 2,
                      repeats=args.repeats, seed=args.seed)
    print(json.dumps(result, indent=2) if args.json else text(result))
    return 0


def _bench_review(args: argparse.Namespace) -> int:
    from adapter.commands.review import load_replay
    from adapter.review_bench import bench_review, text_review

    if len(args.paths) > 1:
        raise UserInputError("bench review takes one GAME")
    game = args.paths[0] if args.paths else None
    if game is not None:
        load_replay(game, args.seat)  # a bad file: one line
    result = bench_review(game, args.seat, args.playouts or 512, args.seed)
    print(json.dumps(result, indent=2) if args.json else text_review(result))
    return 0


def _bench_commentary(args: argparse.Namespace) -> int:
    from adapter.review_bench import bench_commentary
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
    from adapter.mc_bench import bench_mc, text

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
    return 0


def _bench_mjai(args: argparse.Namespace) -> int:
    from adapter.mjai_bench import bench_mjai

    try:
        result = bench_mjai(games=args.games or 8, seed=10000 + args.seed)
    except RuntimeError as exc:
        raise UserInputError(str(exc)) from None
    if args.json:
        print(json.dumps(result, indent=2))
        return 0
    print(f"mjbot (rulebased) vs {result['reference']}: {result['games']} games, "
          f"two seats each, rotated, {result['seconds']} s")
    for side in ("mjbot", "RulebaseBot"):
        print(f"  {side:<12} average rank {result['average_rank'][side]:.3f}   points per "
              f"game {result['points_per_game'][side]:+d}")
    return 0


def _bench_botzone(args: argparse.Namespace) -> int:
    from adapter.botzone_bench import bench_botzone
    from adapter.bundle import check_bundle_policy

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
    from brain.benchmarks import bench_shanten

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
    from replay.benchmarks import bench_log

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
    from adapter.local.benchmarks import bench_arena

    variants = ["riichi", "mcr", "taiwan16", "mass"] if args.variant == "all" else [args.variant]
    result = bench_arena(variants, repeats=args.repeats, seed=args.seed)
    if args.json:
        print(json.dumps(result, indent=2))
        return 0
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
    return 0
