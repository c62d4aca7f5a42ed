"""`mjbot ntpu` and `mjbot ntpu-server`: NTPU / Cycgame Taiwan tournaments."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from adapter.commands import (
    UserInputError,
    add_log_options,
    at_least,
    log,
    log_folder,
    port_number,
    positive_seconds,
    report,
    require_policy,
    require_writable,
    stopped_status,
    tell,
    tell_waiting,
    warn_tight_budget,
)


def register(sub: Any) -> None:
    n = sub.add_parser("ntpu", help="play on an NTPU / Cycgame Taiwan tournament server",
                       description="A client of the Taiwan 16-tile tournament server: TCP "
                       "(--server host:port) or the stdin/stdout wrapper form (--stdio).")
    where = n.add_mutually_exclusive_group(required=True)
    where.add_argument("--server", metavar="HOST:PORT", help="the tournament server")
    where.add_argument("--stdio", action="store_true", help="server lines on stdin, replies "
                       "on stdout")
    n.add_argument("--policy", default="rulebased")
    n.add_argument("--budget", type=positive_seconds, default=2.0,
                   help="seconds per decision, the fallback's margin included (default 2)")
    n.add_argument("--honour-order", default="ESWNCFP",
                   help="honours for ids 41x..47x as mjai letters E S W N P(white) F(green) "
                   "C(red); default ESWNCFP = East South West North Red Green White")
    n.add_argument("--suit-order", default="mps",
                   help="suits for ids 1xx, 2xx, 3xx (m p s in some order; default mps)")
    n.add_argument("--connect-timeout", type=positive_seconds, default=10.0,
                   help="keep trying to connect for this many seconds")
    n.add_argument("--idle-limit", type=positive_seconds, default=None, metavar="SECONDS",
                   help="TCP: give the line up when the server sends nothing for this long "
                   "inside a hand (default: wait; NTPU publishes no limit of its own)")
    n.add_argument("--reply-limit", type=positive_seconds, default=None, metavar="SECONDS",
                   help="--stdio: end the session when the referee takes no reply of ours for "
                   "this long while its pipe is full (default 30)")
    add_log_options(n, "game logs (default $MJBOT_LOG_DIR or logs)", "write no game logs")
    n.set_defaults(handler=cmd_ntpu)

    ns = sub.add_parser("ntpu-server", help="a local NTPU tournament server: a match between "
                        "four clients, with the score table",
                        description="Serves the NTPU protocol from the local Taiwan referee. "
                        "--clients tcp / stdio starts four `mjbot ntpu` processes; external "
                        "waits for four clients to connect to --port.")
    ns.add_argument("--hands", type=at_least(1), default=16, help="hands (each wall is played four "
                    "times, clients rotated; default 16)")
    ns.add_argument("--clients", choices=["tcp", "stdio", "external"], default="tcp")
    ns.add_argument("--policies", default="rulebased,rulebased,greedy,greedy",
                    help="the four clients' policies (tcp / stdio)")
    ns.add_argument("--seed", type=int, default=0)
    ns.add_argument("--host", default="127.0.0.1")
    ns.add_argument("--port", type=port_number, default=0, help="0: any free port")
    ns.add_argument("--time-limit", type=positive_seconds, default=5.0,
                    help="seconds a client may take per reply (its first /ready, "
                    "answered while it starts up: at least 30)")
    ns.add_argument("--ready-every", type=positive_seconds, default=None, metavar="SECONDS",
                    help="while an /ask waits, probe the client with /ready this often and "
                    "report how fast it answers")
    ns.add_argument("--wording", choices=["spec", "lab"], default="spec",
                    help="spec: the published protocol (/mo, lowercase winds); lab: the NYCU "
                    "lab referee's records (/draw, East, ids as dealt)")
    ns.add_argument("--client-budget", type=positive_seconds, default=None,
                    help="--budget passed to the clients it starts")
    ns.add_argument("--json", metavar="FILE", help="also write the figures as JSON "
                     "('-': onto stdout, and the text onto stderr)")
    add_log_options(ns, "match log (default $MJBOT_LOG_DIR or logs)", "write no match log")
    ns.set_defaults(handler=cmd_ntpu_server)


def cmd_ntpu(args: argparse.Namespace) -> int:
    import asyncio

    from adapter.hostport import parse_host_port
    from adapter.platforms.ntpu import REPLY_LIMIT, NtpuBot, NtpuSettings, run_stdio, run_tcp
    from adapter.session import Stopped, until_signalled
    from adapter.thinking.worker_process import start_server_for
    from protocols.tiles import NtpuTiles, TileError

    require_policy(args.policy)
    try:
        tiles = NtpuTiles(args.honour_order, args.suit_order)
        server = parse_host_port(args.server, "--server") if args.server else None
    except (TileError, ValueError) as exc:
        raise UserInputError(str(exc)) from None
    if args.idle_limit is not None and server is None:
        raise UserInputError("--idle-limit goes with --server (the stdin form waits for its "
                             "referee's lines as long as its input is open)")
    if args.reply_limit is not None and server is not None:
        raise UserInputError("--reply-limit goes with --stdio (the limit on a referee that "
                             "stops reading our stdout)")
    settings = NtpuSettings(policy=args.policy, budget=args.budget, tiles=tiles,
                            log_dir=log_folder(args.log_dir, args.no_log),
                            write_log=not args.no_log)
    warn_tight_budget([args.policy], args.budget, settings.margin)
    bot = NtpuBot(settings)
    main = (run_stdio(bot, args.reply_limit or REPLY_LIMIT) if server is None
            else run_tcp(*server, bot, args.connect_timeout, args.idle_limit))
    start_server_for([args.policy])  # before the loop: see its docstring
    try:
        summary = asyncio.run(until_signalled(bot, main))
    except ConnectionError as exc:
        tell(args, str(bot.referee_gone or exc))
        return 1
    except Stopped as stopped:  # the game in play is logged as stopped
        return stopped_status(args, stopped)
    except KeyboardInterrupt:
        bot.close()
        return 130
    log().info("ntpu: session over", games=summary.games, hands=summary.hands,
                decisions=summary.decisions, fallbacks=summary.fallbacks,
                fallback_kinds=summary.kinds,
                errors=summary.error_count, closed_by_server=summary.finished)
    if bot.referee_gone is not None:  # --stdio: a reply met the closed pipe
        tell(args, str(bot.referee_gone))
        return 1
    if server is not None and not summary.finished:  # a dropped line fails, as in tenhou's
        tell(args, f"{bot.how_the_line_ended()} without /close")
        return 1
    return 0


def cmd_ntpu_server(args: argparse.Namespace) -> int:
    import signal

    from adapter.fakes.ntpu_server import MatchNotStarted, run_match
    from adapter.session import Stopped
    from brain.policies import POLICIES

    policies = [p.strip() for p in args.policies.split(",")]
    if len(policies) != 4:
        raise UserInputError(f"--policies takes four of {', '.join(sorted(POLICIES))} "
                             f"(or mc@KEY=VALUE, nn@FILE), got {args.policies!r}")
    for policy in policies:  # each is a client's `mjbot ntpu --policy`, checked as it is
        require_policy(policy)
    require_writable(args.json, "--json")
    # the clients it starts write their own game logs: where the match log goes, or none
    client_args = (["--no-log"] if args.no_log else ["--log-dir", args.log_dir]
                   if args.log_dir else [])
    if args.client_budget is not None:
        client_args += ["--budget", str(args.client_budget)]

    def progress(done: int, total: int) -> None:
        if sys.stderr.isatty():
            print(f"\r{done}/{total} hands", end="", file=sys.stderr, flush=True)

    def listening(port: int) -> None:
        if args.clients == "external":
            tell_waiting(args, port, 4, f"waiting for four clients on {args.host}:{port}")

    def stop(signum: int, _frame: Any) -> None:  # SIGTERM (`timeout`) stops as Ctrl-C does
        raise Stopped(signum)

    before = signal.signal(signal.SIGTERM, stop)
    try:
        result = run_match(args.hands, policies, args.seed, args.clients, args.host,
                           args.port, args.time_limit, client_args,
                           log_folder(args.log_dir, args.no_log), not args.no_log,
                           progress=progress, on_listening=listening,
                           ready_every=args.ready_every, wording=args.wording)
    except MatchNotStarted as exc:
        if exc.listening:  # --host / --port
            raise UserInputError(str(exc)) from None
        tell(args, str(exc))
        return 1
    except Stopped as stopped:  # the match log's footer says so
        return stopped_status(args, stopped)
    finally:
        signal.signal(signal.SIGTERM, before)
    if sys.stderr.isatty():
        print(file=sys.stderr)
    where = f"match log: {result.log_path}" if result.log_path else "no match log (--no-log)"
    report(args.json, f"{result.table()}\n{result.hands} hands in {result.seconds:.1f} s; "
           f"{where}", result.as_json())
    bad = any(s.illegal or s.timeouts or s.dropped for s in result.stats)
    return 1 if bad else 0
