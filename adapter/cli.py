"""`mjbot ...`: the command line. Logging is configured here, once."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from adapter.logging_setup import configure_logging, configure_plain_logging

# Botzone starts `mjbot botzone` afresh for every turn: everything imported here is paid on
# each of them, so structlog and importlib.metadata are imported only by the commands that use
# them (the Botzone bot writes its own plain stderr lines, as it does in the upload bundle).


def _log() -> Any:
    import structlog

    return structlog.get_logger("mjbot.cli")


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("mjbot")
    except PackageNotFoundError:
        return "0+unknown"


class _VersionAction(argparse.Action):
    """``--version``, looked up only when asked for."""

    def __init__(self, option_strings: list[str], dest: str = argparse.SUPPRESS,
                 **kwargs: Any) -> None:
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, **kwargs)

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace,
                 values: Any, option_string: str | None = None) -> None:
        print(f"mjbot {_version()}")
        parser.exit()


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="mjbot", description="Competition Mahjong bot.")
    p.add_argument("--version", action=_VersionAction, help="print the version and exit")
    p.add_argument("--log-json", action="store_true", default=None,
                   help="log JSON lines (default when stderr is not a terminal)")
    p.add_argument("--log-level", default="info", help="debug, info, warning, error")
    sub = p.add_subparsers(dest="command", metavar="COMMAND")

    s = sub.add_parser("shanten", help="shanten number and useful tiles of an mpsz hand")
    s.add_argument("hand", help="e.g. 123m406p789s1177z (3k+1 or 3k+2 tiles, k <= 5)")

    sc = sub.add_parser("score", help="value a winning hand in a variant")
    sc.add_argument("hand", help="concealed tiles including the winning tile, mpsz")
    sc.add_argument("--variant", default="riichi", choices=["riichi", "mcr", "taiwan16", "mass"])
    sc.add_argument("--win", required=True, help="the winning tile, mpsz (e.g. 5p)")
    sc.add_argument("--ron-from", type=int, default=None,
                    help="seat that discarded the winning tile (default: self-draw)")
    sc.add_argument("--seat", type=int, default=0)
    sc.add_argument("--dealer", type=int, default=0)
    sc.add_argument("--riichi", action="store_true")
    sc.add_argument("--dora", default="", help="dora indicators, mpsz")

    b = sub.add_parser("bench", help="benchmarks of the hot paths (ratios vs references)")
    b.add_argument("what", choices=["shanten", "log", "arena", "botzone", "mjai"])
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
    b.add_argument("--games", type=int, default=8, help="games (bench mjai)")

    sub.add_parser("demo", help="shanten and scoring of sample hands in every variant")

    bz = sub.add_parser("botzone", help="play one Botzone turn (or keep running) on stdin/stdout",
                        description="Botzone ChineseStandardMahjong bot: reads the simple or "
                        "JSON interaction input (detected by its first character), prints the "
                        "response. Logs go to stderr only.")
    bz.add_argument("--keep-running", action="store_true",
                    help="stay alive and answer one request line per later turn")
    bz.add_argument("--json", action="store_true", help="require JSON interaction input")
    bz.add_argument("--policy", default="rulebased")
    bz.add_argument("--time-limit", type=float, default=6.0,
                    help="seconds for the first turn (one-shot: every turn)")
    bz.add_argument("--later-time-limit", type=float, default=4.0,
                    help="seconds for later keep-running turns")
    bz.add_argument("--log-dir", help="game logs (default $MJBOT_LOG_DIR or logs)")
    bz.add_argument("--no-log", action="store_true", help="write no game log")

    j = sub.add_parser("botzone-judge", help="play Botzone matches between mjbot botzone "
                       "processes under a local judge (soak test of the Botzone adapter)")
    j.add_argument("--games", type=int, default=10)
    j.add_argument("--modes", default="simple,json,keep,keep",
                   help="bot modes, rotated through the seats: simple, json, keep")
    j.add_argument("--seed", type=int, default=0)
    j.add_argument("--log-dir", help="write each match's Botzone-style judge log here")

    n = sub.add_parser("ntpu", help="play on an NTPU / Cycgame Taiwan tournament server",
                       description="A client of the Taiwan 16-tile tournament server: TCP "
                       "(--server host:port) or the stdin/stdout wrapper form (--stdio).")
    where = n.add_mutually_exclusive_group(required=True)
    where.add_argument("--server", metavar="HOST:PORT", help="the tournament server")
    where.add_argument("--stdio", action="store_true", help="server lines on stdin, replies "
                       "on stdout")
    n.add_argument("--policy", default="rulebased")
    n.add_argument("--budget", type=float, default=2.0,
                   help="seconds per decision, the fallback's margin included (default 2)")
    n.add_argument("--honour-order", default="ESWNCFP",
                   help="honours for ids 41x..47x as mjai letters E S W N P(white) F(green) "
                   "C(red); default ESWNCFP = East South West North Red Green White")
    n.add_argument("--suit-order", default="mps",
                   help="suits for ids 1xx, 2xx, 3xx (m p s in some order; default mps)")
    n.add_argument("--connect-timeout", type=float, default=10.0,
                   help="keep trying to connect for this many seconds")
    n.add_argument("--log-dir", help="game logs (default $MJBOT_LOG_DIR or logs)")
    n.add_argument("--no-log", action="store_true", help="write no game logs")

    ns = sub.add_parser("ntpu-server", help="a local NTPU tournament server: a match between "
                        "four clients, with the score table",
                        description="Serves the NTPU protocol from the local Taiwan referee. "
                        "--clients tcp / stdio starts four `mjbot ntpu` processes; external "
                        "waits for four clients to connect to --port.")
    ns.add_argument("--hands", type=int, default=16, help="hands (each wall is played four "
                    "times, clients rotated; default 16)")
    ns.add_argument("--clients", choices=["tcp", "stdio", "external"], default="tcp")
    ns.add_argument("--policies", default="rulebased,rulebased,greedy,greedy",
                    help="the four clients' policies (tcp / stdio)")
    ns.add_argument("--seed", type=int, default=0)
    ns.add_argument("--host", default="127.0.0.1")
    ns.add_argument("--port", type=int, default=0, help="0: any free port")
    ns.add_argument("--time-limit", type=float, default=5.0,
                    help="seconds a client may take per reply")
    ns.add_argument("--client-budget", type=float, default=None,
                    help="--budget passed to the clients it starts")
    ns.add_argument("--json", metavar="FILE", help="also write the figures as JSON")
    ns.add_argument("--log-dir", help="match log (default $MJBOT_LOG_DIR or logs)")
    ns.add_argument("--no-log", action="store_true", help="write no match log")

    ts = sub.add_parser("tenhou-server", help="a local fake Tenhou server for external "
                        "clients: test games dealt by the local riichi referee",
                        description="Serves Tenhou's protocol (TCP or WebSocket) as Tenhou "
                        "does. Each table waits for --humans clients (several clients at one "
                        "table compare programs on the same deals); mjbot's --policy plays "
                        "the other seats. Exits after --games games with the figures.")
    ts.add_argument("--games", type=int, default=1)
    ts.add_argument("--humans", type=int, default=1, choices=[1, 2, 3, 4],
                    help="seats per table that wait for clients (default 1)")
    ts.add_argument("--policy", default="rulebased", help="mjbot's policy in the other seats")
    ts.add_argument("--transport", choices=["tcp", "ws"], default="tcp")
    ts.add_argument("--host", default="127.0.0.1")
    ts.add_argument("--port", type=int, default=10080, help="0: any free port")
    ts.add_argument("--seed", type=int, default=0)
    ts.add_argument("--length", choices=["east", "south"], default="east")
    ts.add_argument("--time-limit", type=float, default=10.0,
                    help="seconds a client may take per answer")
    ts.add_argument("--absent", type=float, default=1.5,
                    help="seconds a dropped client's seat waits before it is played for it")
    ts.add_argument("--json", metavar="FILE", help="also write the figures as JSON")
    ts.add_argument("--log-dir", help="game logs (default $MJBOT_LOG_DIR or logs)")
    ts.add_argument("--no-log", action="store_true", help="write no game logs")

    t = sub.add_parser("tenhou", help="play on Tenhou (riichi), test games against computer "
                       "players by default",
                       description="A Tenhou client over TCP or WebSocket. Anonymous unless "
                       "$MJBOT_TENHOU_ID or the config file's [tenhou] id gives an ID. Games "
                       "against humans need the operator's permission (--permission-granted); "
                       "the Phoenix lobby is always refused.")
    t.add_argument("--server", default=None,
                   help="host:port (tcp, default 133.242.10.78:10080) or a ws:// URL (ws, "
                   "default wss://b-ww.mjv.jp)")
    t.add_argument("--transport", choices=["tcp", "ws"], default="tcp")
    t.add_argument("--lobby", type=int, default=None, help="lobby number (default 0)")
    t.add_argument("--game-type", type=int, default=None,
                   help="Tenhou game type (default 64: a test game against computer players)")
    t.add_argument("--games", type=int, default=1)
    t.add_argument("--permission-granted", action="store_true",
                   help="state that Tenhou's operator allowed this bot in games with humans")
    t.add_argument("--config", help="TOML file with a [tenhou] table: id, "
                   "permission_granted, lobby, game_type")
    t.add_argument("--policy", default="rulebased")
    t.add_argument("--budget", type=float, default=2.0, help="seconds per decision")
    t.add_argument("--log-dir", help="game logs (default $MJBOT_LOG_DIR or logs)")
    t.add_argument("--no-log", action="store_true", help="write no game logs")

    mj = sub.add_parser("mjai", help="an mjai bot: stdin/stdout (mjai.app) or an mjai server",
                        description="Without --server: the mjai.app form, one JSON array of "
                        "events per input line, one answer object per output line.")
    mj.add_argument("--server", metavar="HOST:PORT", help="connect to an mjai TCP server")
    mj.add_argument("--name", default="mjbot", help="the name sent with join (TCP)")
    mj.add_argument("--room", default="default", help="the room sent with join (TCP)")
    mj.add_argument("--policy", default="rulebased")
    mj.add_argument("--budget", type=float, default=1.5, help="seconds per decision")
    mj.add_argument("--log-dir", help="game logs (default $MJBOT_LOG_DIR or logs)")
    mj.add_argument("--no-log", action="store_true", help="write no game logs")
    mj.add_argument("player_id", nargs="?", type=int, help="mjai.app passes the seat; the "
                    "start_game event says it too")

    bu = sub.add_parser("bundle", help="build an upload bundle for a platform")
    bu.add_argument("platform", choices=["botzone"])
    bu.add_argument("-o", "--output", default="dist", help="output folder (default: dist)")

    a = sub.add_parser("arena", help="duplicate matches between policies at the local table",
                       description="Every wall set is played once per distinct seating of the "
                       "four policies; figures are pooled per policy with 95%% intervals that "
                       "use the duplicate pairing.")
    a.add_argument("--variant", default="riichi", choices=["riichi", "mcr", "taiwan16", "mass"])
    a.add_argument("--policies", default="rulebased,greedy,greedy,greedy",
                   help="four policy names, seat 0..3 (default: %(default)s)")
    a.add_argument("--hands", type=int, default=400, help="hands to play, about (riichi: "
                   "whole games are played, ~5.5 hands per east-only game)")
    a.add_argument("--seed", type=int, default=0)
    a.add_argument("--workers", type=int, default=1, help="worker processes")
    a.add_argument("--length", choices=["east", "south"], default="east",
                   help="riichi game length: east-only or east-south")
    a.add_argument("--json", metavar="FILE", help="also write the figures as JSON")
    a.add_argument("--log-dir", help="where game logs go (default $MJBOT_LOG_DIR or logs)")
    a.add_argument("--no-log", action="store_true", help="write no game logs")
    a.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                   help="progress bar on stderr (default: when it is a terminal)")

    r = sub.add_parser("replay", help="summarise, re-check, review or convert game logs",
                       description="LOG is one of mjbot's own logs (.mjlog.msgpack), a "
                       "tenhou.net/6 JSON, an mjlog XML, an mjai JSONL or a Botzone judge log.")
    r.add_argument("logs", nargs="+", metavar="LOG")
    r.add_argument("--seat", type=int, choices=[0, 1, 2, 3], default=None,
                   help="whose point of view (imports; default 0, own logs: the bot's seat)")
    r.add_argument("--json", action="store_true", help="machine-readable output")
    r.add_argument("--policy", metavar="NAME", help="re-run a policy on every decision and "
                   "report agreement with the recorded play")
    r.add_argument("--reparse", action="store_true",
                   help="re-feed the raw messages through the codec and compare the events")
    r.add_argument("--export", choices=["tenhou6", "mjai"], help="convert a riichi game")
    r.add_argument("-o", "--output", help="export to this file (default: standard output)")
    return p


def main(argv: list[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    try:
        if args.command == "botzone":
            configure_plain_logging(args.log_level)
        else:
            configure_logging(args.log_json, args.log_level)
    except ValueError as exc:
        parser.error(str(exc))
    if args.command is None:
        parser.print_help()
        return 2
    handler = {"shanten": _cmd_shanten, "score": _cmd_score, "bench": _cmd_bench,
               "demo": _cmd_demo, "replay": _cmd_replay, "arena": _cmd_arena,
               "botzone": _cmd_botzone, "botzone-judge": _cmd_botzone_judge,
               "ntpu": _cmd_ntpu, "ntpu-server": _cmd_ntpu_server, "tenhou": _cmd_tenhou,
               "tenhou-server": _cmd_tenhou_server,
               "mjai": _cmd_mjai,
               "bundle": _cmd_bundle}[args.command]
    try:
        return handler(args)
    except UserInputError as exc:
        _log().error("bad input", command=args.command, error=str(exc))
        print(f"mjbot {args.command}: {exc}", file=sys.stderr)
        return 2


class UserInputError(ValueError):
    """Something the user typed is wrong; reported in one line, no traceback."""


def _cmd_shanten(args: argparse.Namespace) -> int:
    from brain.shanten import HandError, shanten, useful_tiles
    from protocols.tiles import TileError, counts34, parse_mpsz, to_mpsz

    try:
        tiles = parse_mpsz(args.hand)
        counts = counts34(tiles)
        if max(counts) > 4:
            raise UserInputError(f"{args.hand!r} holds more than four of one tile")
        value = shanten(counts)
        useful = useful_tiles(counts)
    except (TileError, HandError) as exc:
        raise UserInputError(str(exc)) from None
    print(value)
    print(to_mpsz(sorted(useful)))
    return 0


def _cmd_score(args: argparse.Namespace) -> int:
    from brain.rules import rules_for
    from brain.rules.base import WinContext
    from protocols.tiles import TileError, parse_mpsz

    try:
        concealed = tuple(parse_mpsz(args.hand))
        win = parse_mpsz(args.win)
        dora = tuple(parse_mpsz(args.dora))
    except TileError as exc:
        raise UserInputError(str(exc)) from None
    if len(win) != 1 or win[0] not in concealed:
        raise UserInputError("--win must be one tile that is part of HAND")
    ctx = WinContext(concealed=concealed, melds=(), win_tile=win[0], seat=args.seat,
                     from_seat=args.ron_from, dealer=args.dealer, riichi=args.riichi,
                     dora_indicators=dora)
    result = rules_for(args.variant).score(ctx)
    if result is None:
        print(f"not a winning hand under {args.variant} rules")
        return 1
    _print_score(result)
    return 0


def _print_score(result: object) -> None:
    items = ", ".join(f"{name} {value}" for name, value in result.items)  # type: ignore[attr-defined]
    print(f"value {result.value}: {items}")  # type: ignore[attr-defined]
    print(f"deltas {list(result.deltas)}")  # type: ignore[attr-defined]


def _cmd_bench(args: argparse.Namespace) -> int:
    from brain.benchmarks import bench_shanten

    if args.what == "log":
        return _bench_log(args)
    if args.what == "arena":
        return _bench_arena(args)
    if args.what == "mjai":
        from adapter.mjai_bench import bench_mjai

        try:
            result = bench_mjai(games=args.games, seed=10000 + args.seed)
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
    if args.what == "botzone":
        from adapter.botzone_bench import bench_botzone

        result = bench_botzone(repeats=args.repeats)
        if args.json:
            print(json.dumps(result, indent=2))
            return 0
        print(f"Botzone turns, a {result['match_turns']}-turn match (seat 0's requests)")
        for n, seconds in result["one_shot_seconds"].items():
            print(f"  one-shot turn {n:>4}  {seconds:>8.3f} s   (process start to answer)")
        print(f"  python + numpy start {result['python_numpy_start_seconds']:>5.3f} s   "
              f"(reference; last turn ratio {result['one_shot_last_ratio_vs_python_start']}x)")
        print(f"  keep running   median {result['keep_running_median_ms']} ms, p99 "
              f"{result['keep_running_p99_ms']} ms over {result['keep_running_turns']} turns")
        print("  targets: one-shot last turn < 1 s, keep-running p99 < 50 ms")
        return 0

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


def _cmd_botzone(args: argparse.Namespace) -> int:
    from adapter import botzone
    from brain.policies import POLICIES

    if args.policy not in POLICIES:
        raise UserInputError(f"unknown policy {args.policy!r} (known: "
                             f"{', '.join(sorted(POLICIES))})")
    stdin = sys.stdin
    if args.json and not args.keep_running:
        text = sys.stdin.read()
        if not text.lstrip().startswith("{"):
            print("mjbot botzone: --json given but the input is not a JSON object",
                  file=sys.stderr)
        import io
        stdin = io.StringIO(text)
    return botzone.run_once(stdin, sys.stdout, policy=args.policy,
                            keep_running=args.keep_running, limit=args.time_limit,
                            later_limit=args.later_time_limit, log_dir=args.log_dir,
                            write_log=not args.no_log)


def _cmd_bundle(args: argparse.Namespace) -> int:
    from adapter.bundle import build_botzone_bundle

    path = build_botzone_bundle(args.output)
    print(f"{path} ({path.stat().st_size // 1024} KB): upload it as the bot's code "
          "(Python 3, simple interaction, keep running)")
    return 0


def _cmd_ntpu(args: argparse.Namespace) -> int:
    import asyncio

    from adapter.ntpu import NtpuBot, NtpuSettings, run_stdio, run_tcp
    from adapter.session import parse_server
    from brain.policies import POLICIES
    from protocols.tiles import NtpuTiles, TileError

    if args.policy not in POLICIES:
        raise UserInputError(f"unknown policy {args.policy!r} (known: "
                             f"{', '.join(sorted(POLICIES))})")
    if args.budget <= 0:
        raise UserInputError(f"--budget must be positive, got {args.budget}")
    try:
        tiles = NtpuTiles(args.honour_order, args.suit_order)
        server = parse_server(args.server) if args.server else None
    except (TileError, ValueError) as exc:
        raise UserInputError(str(exc)) from None
    settings = NtpuSettings(policy=args.policy, budget=args.budget, tiles=tiles,
                            log_dir=args.log_dir, write_log=not args.no_log)
    bot = NtpuBot(settings)
    try:
        if server is None:
            summary = asyncio.run(run_stdio(bot))
        else:
            summary = asyncio.run(run_tcp(*server, bot, args.connect_timeout))
    except ConnectionError as exc:
        _log().error("ntpu: no connection", error=str(exc))
        print(f"mjbot ntpu: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        bot.close()
        return 130
    _log().info("ntpu: session over", games=summary.games, hands=summary.hands,
                decisions=summary.decisions, fallbacks=summary.fallbacks,
                errors=len(summary.errors), closed_by_server=summary.finished)
    return 0


def _cmd_tenhou(args: argparse.Namespace) -> int:
    import asyncio
    import dataclasses

    from adapter.tenhou import (
        DEFAULT_TCP_SERVER,
        PermissionRefused,
        TenhouSettings,
        check_permission,
        load_config,
        run_until_signalled,
    )
    from brain.policies import POLICIES

    if args.policy not in POLICIES:
        raise UserInputError(f"unknown policy {args.policy!r} (known: "
                             f"{', '.join(sorted(POLICIES))})")
    settings = TenhouSettings(server=args.server or DEFAULT_TCP_SERVER,
                              transport=args.transport, games=args.games, policy=args.policy,
                              budget=args.budget, permission_granted=args.permission_granted,
                              log_dir=args.log_dir, write_log=not args.no_log)
    try:
        settings = load_config(args.config, settings)
        if args.lobby is not None:
            settings = dataclasses.replace(settings, lobby=args.lobby)
        if args.game_type is not None:
            settings = dataclasses.replace(settings, game_type=args.game_type)
        check_permission(settings.game_type, settings.permission_granted)
    except (ValueError, PermissionRefused) as exc:
        raise UserInputError(str(exc)) from None
    try:
        summary = asyncio.run(run_until_signalled(settings))
    except ConnectionError as exc:
        _log().error("tenhou: no connection", error=str(exc))
        print(f"mjbot tenhou: {exc}", file=sys.stderr)
        return 1
    except PermissionRefused as exc:
        print(f"mjbot tenhou: {exc}", file=sys.stderr)
        return 2
    except (KeyboardInterrupt, asyncio.CancelledError):
        print("mjbot tenhou: stopped (left the table with BYE)", file=sys.stderr)
        return 130
    _log().info("tenhou: session over", games=summary.games, hands=summary.hands,
                decisions=summary.decisions, fallbacks=summary.fallbacks,
                reconnects=summary.reconnects, errors=len(summary.errors))
    return 0 if summary.finished else 1


def _cmd_mjai(args: argparse.Namespace) -> int:
    import asyncio

    from adapter.mjai import MjaiBot, MjaiSettings, run_stdio, run_tcp
    from adapter.session import parse_server
    from brain.policies import POLICIES

    if args.policy not in POLICIES:
        raise UserInputError(f"unknown policy {args.policy!r} (known: "
                             f"{', '.join(sorted(POLICIES))})")
    bot = MjaiBot(MjaiSettings(policy=args.policy, budget=args.budget, name=args.name,
                               room=args.room, log_dir=args.log_dir,
                               write_log=not args.no_log))
    if args.server is None:
        summary = run_stdio(bot)
    else:
        try:
            host, port = parse_server(args.server)
        except ValueError as exc:
            raise UserInputError(str(exc)) from None
        try:
            summary = asyncio.run(run_tcp(host, port, bot))
        except ConnectionError as exc:
            print(f"mjbot mjai: {exc}", file=sys.stderr)
            return 1
    _log().info("mjai: session over", games=summary.games, answers=summary.answers,
                decisions=summary.decisions, fallbacks=summary.fallbacks,
                errors=len(summary.errors))
    return 0


def _cmd_ntpu_server(args: argparse.Namespace) -> int:
    from adapter.local.ntpu_server import run_match
    from brain.policies import POLICIES

    policies = [p.strip() for p in args.policies.split(",")]
    if len(policies) != 4 or any(p not in POLICIES for p in policies):
        raise UserInputError(f"--policies takes four of {', '.join(sorted(POLICIES))}, got "
                             f"{args.policies!r}")
    if args.hands < 1:
        raise UserInputError(f"--hands must be at least 1, got {args.hands}")
    client_args = ["--log-dir", args.log_dir] if args.log_dir else []
    if args.client_budget is not None:
        client_args += ["--budget", str(args.client_budget)]

    def progress(done: int, total: int) -> None:
        if sys.stderr.isatty():
            print(f"\r{done}/{total} hands", end="", file=sys.stderr, flush=True)

    def listening(port: int) -> None:
        if args.clients == "external":
            print(f"mjbot ntpu-server: waiting for four clients on {args.host}:{port}",
                  file=sys.stderr, flush=True)

    result = run_match(args.hands, policies, args.seed, args.clients, args.host, args.port,
                       args.time_limit, client_args, args.log_dir, not args.no_log,
                       progress=progress, on_listening=listening)
    if sys.stderr.isatty():
        print(file=sys.stderr)
    print(result.table())
    print(f"{result.hands} hands in {result.seconds:.1f} s; match log: {result.log_path}")
    if args.json:
        Path(args.json).write_text(json.dumps(result.as_json(), indent=2) + "\n")
    bad = any(s.illegal or s.timeouts or s.dropped for s in result.stats)
    return 1 if bad else 0


def _cmd_tenhou_server(args: argparse.Namespace) -> int:
    from adapter.local.tenhou_serve import serve
    from brain.policies import POLICIES
    from replay.log import default_log_dir

    if args.policy not in POLICIES:
        raise UserInputError(f"unknown policy {args.policy!r} (known: "
                             f"{', '.join(sorted(POLICIES))})")
    if args.games < 1:
        raise UserInputError(f"--games must be at least 1, got {args.games}")

    def listening(port: int) -> None:
        print(f"mjbot tenhou-server: waiting for {args.humans} client(s) per table on "
              f"{args.host}:{port}", file=sys.stderr, flush=True)

    log_dir = None if args.no_log else (args.log_dir or str(default_log_dir()))
    try:
        result = serve(args.games, args.humans, args.policy, args.seed, args.host, args.port,
                       args.transport, args.length, args.time_limit, args.absent, log_dir,
                       on_listening=listening)
    except OSError as exc:
        print(f"mjbot tenhou-server: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("mjbot tenhou-server: stopped", file=sys.stderr)
        return 130
    print(result.table())
    if args.json:
        Path(args.json).write_text(json.dumps(result.as_json(), indent=2) + "\n")
    return 1 if result.stats.illegal or result.stats.timeouts else 0


def _cmd_botzone_judge(args: argparse.Namespace) -> int:
    from adapter.local.botzone_judge import MODES, run_matches

    modes = [m.strip() for m in args.modes.split(",") if m.strip()]
    if not modes or any(m not in MODES for m in modes):
        raise UserInputError(f"--modes takes {', '.join(MODES)}, got {args.modes!r}")

    def progress(done: int, total: int, verdicts: dict[str, int]) -> None:
        if sys.stderr.isatty():
            print(f"\r{done}/{total} matches, verdicts {verdicts or 'none'}", end="",
                  file=sys.stderr, flush=True)

    summary = run_matches(args.games, modes, args.seed, args.log_dir, progress=progress)
    print(json.dumps(summary, indent=2))
    return 1 if summary["verdicts"] else 0


def _cmd_arena(args: argparse.Namespace) -> int:
    import time

    from adapter.local.arena import ArenaConfig, ProgressBar, format_summary, run_arena, summarize
    from brain.policies import POLICIES
    from replay.log import default_log_dir

    names = tuple(n.strip() for n in args.policies.split(","))
    if len(names) != 4:
        raise UserInputError(f"--policies needs four names (one per seat), got {len(names)}: "
                             f"{args.policies!r}")
    unknown = [n for n in names if n not in POLICIES]
    if unknown:
        raise UserInputError(f"unknown policy {unknown[0]!r} (known: "
                             f"{', '.join(sorted(POLICIES))})")
    if args.hands < 1 or args.workers < 1:
        raise UserInputError("--hands and --workers must be at least 1")
    log_dir = None if args.no_log else str(args.log_dir or default_log_dir())
    config = ArenaConfig(args.variant, names, args.hands, args.seed, args.workers, log_dir,
                         args.length)  # type: ignore[arg-type]
    start = time.monotonic()
    results = run_arena(config, ProgressBar(args.progress))
    summary = summarize(config, results, time.monotonic() - start)
    for r in results:
        for error in r.errors:
            _log().error("referee error", error=error)
    print(format_summary(summary))
    if args.json:
        Path(args.json).write_text(json.dumps(summary, indent=2) + "\n")
    return 1 if summary["referee_errors"] else 0


def _cmd_replay(args: argparse.Namespace) -> int:
    from replay import mjai_log, replayer, tenhou6
    from replay.log import LogError
    from replay.record import RecordError

    if args.export and len(args.logs) != 1:
        raise UserInputError("--export converts one LOG at a time")
    outputs: list[dict[str, object]] = []
    for path in args.logs:
        try:
            rep = replayer.load(path, args.seat)
            if args.export:
                if rep.record is None:
                    raise UserInputError("--export works on imported logs (tenhou6, mjlog, mjai)")
                text = (tenhou6.dumps if args.export == "tenhou6" else mjai_log.dumps)(rep.record)
                if args.output:
                    Path(args.output).write_text(text + "\n", encoding="utf-8")
                else:
                    print(text)
                return 0
            result: dict[str, object] = {"summary": replayer.summarize(rep)}
            if args.policy:
                result["agreement"] = replayer.agreement(rep, args.policy)
            if args.reparse:
                result["reparse"] = replayer.reparse(rep)
        except FileNotFoundError:
            raise UserInputError(f"{path}: no such file") from None
        except IsADirectoryError:
            raise UserInputError(f"{path}: is a directory") from None
        except (LogError, RecordError, ValueError) as exc:
            raise UserInputError(f"{path}: {exc}") from None
        outputs.append(result)
        if not args.json:
            print(replayer.format_summary(result["summary"]))  # type: ignore[arg-type]
            if "agreement" in result:
                print(replayer.format_agreement(result["agreement"]))  # type: ignore[arg-type]
            if "reparse" in result:
                rp = result["reparse"]
                print(f"reparse: {rp['reparsed_events']}/{rp['recorded_events']} events, "  # type: ignore[index]
                      f"identical: {rp['identical']}")  # type: ignore[index]
    if args.json:
        print(json.dumps(outputs[0] if len(outputs) == 1 else outputs, ensure_ascii=False,
                         indent=2))
    return 0


DEMO_HANDS = [
    ("riichi", "234m340p456789s55z", "4m", {"from_seat": 2, "riichi": True,
                                             "dora_indicators": (3,)}),
    ("mcr", "123456789m234p55s", "5s", {"from_seat": 3}),
    ("taiwan16", "123m456m789p123s456s99p", "6s", {"from_seat": 2, "seat": 1}),
    ("mass", "111333555777m99m", "9m", {}),
]


def _cmd_demo(args: argparse.Namespace) -> int:
    """Until the local table exists, `make run` shows the foundation at work."""
    from brain.rules import rules_for
    from brain.rules.base import WinContext
    from brain.shanten import shanten, useful_tiles
    from protocols.tiles import counts34, parse_mpsz, to_mpsz

    print(f"mjbot {_version()} - foundation demo (the local table comes next)\n")
    for hand in ("123m406p789s1177z", "1112345678999m", "19m19p19s1234567z",
                 "123m456m789m123p4578p"):
        counts = counts34(parse_mpsz(hand))
        useful = to_mpsz(sorted(useful_tiles(counts)))
        print(f"shanten {hand:<22} {shanten(counts):>2}   useful {useful}")
    print()
    for variant, hand, win, extra in DEMO_HANDS:
        tiles = tuple(parse_mpsz(hand))
        ctx = WinContext(concealed=tiles, melds=(), win_tile=parse_mpsz(win)[0],
                         seat=extra.pop("seat", 0), from_seat=extra.pop("from_seat", None),
                         **extra)
        result = rules_for(variant).score(ctx)
        print(f"{variant:<9} {hand} wins on {win}:")
        if result is None:
            print("  not a win")
            continue
        _print_score(result)
    _log().info("demo finished")
    return 0


if __name__ == "__main__":
    sys.exit(main())
