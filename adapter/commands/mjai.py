"""`mjbot mjai`: an mjai bot (mjai.app stdin form or a TCP client)."""

from __future__ import annotations

import argparse
from typing import Any

from adapter.commands import (
    UserInputError,
    add_log_options,
    log,
    log_folder,
    positive_seconds,
    require_policy,
    stopped_status,
    tell,
    warn_tight_budget,
)


def register(sub: Any) -> None:
    mj = sub.add_parser("mjai", help="an mjai bot: stdin/stdout (mjai.app) or an mjai server",
                        description="Without --server: the mjai.app form, one JSON array of "
                        "events per input line, one answer object per output line.")
    mj.add_argument("--server", metavar="HOST:PORT", help="connect to an mjai TCP server")
    mj.add_argument("--name", default="mjbot", help="the name sent with join (TCP)")
    mj.add_argument("--room", default="default", help="the room sent with join (TCP)")
    mj.add_argument("--policy", default="rulebased")
    mj.add_argument("--budget", type=positive_seconds, default=1.5,
                    help="seconds per decision (default 1.5: mjai.app allows 2)")
    mj.add_argument("--connect-timeout", type=positive_seconds, default=10.0,
                    metavar="SECONDS", help="TCP: keep trying to connect for this many "
                    "seconds (default 10), as mjbot ntpu does")
    mj.add_argument("--idle-limit", type=positive_seconds, default=180.0, metavar="SECONDS",
                    help="TCP: give the line up when the server sends nothing for this long "
                    "in a game (default 180: its own limit is 60 s per player's answer)")
    mj.add_argument("--reply-limit", type=positive_seconds, default=None, metavar="SECONDS",
                    help="stdin form: end the session when the referee takes no answer of ours "
                    "for this long while its pipe is full (default 2: mjai.app's limit)")
    add_log_options(mj, "game logs (default $MJBOT_LOG_DIR or logs)", "write no game logs")
    mj.add_argument("player_id", nargs="?", type=int, help="mjai.app passes the seat; the "
                    "start_game event says it too, and wins where the two differ (a warning "
                    "says so)")
    mj.set_defaults(handler=cmd_mjai)


def cmd_mjai(args: argparse.Namespace) -> int:
    import asyncio
    import signal

    from adapter.hostport import parse_host_port
    from adapter.platforms.mjai import (
        REPLY_LIMIT,
        MjaiBot,
        MjaiSettings,
        RefereeGone,
        run_stdio,
        run_tcp,
    )
    from adapter.session import Stopped, until_signalled
    from adapter.thinking.worker_process import start_server_for

    require_policy(args.policy)
    if args.player_id is not None and not 0 <= args.player_id <= 3:
        raise UserInputError(f"player_id (our seat) must be 0..3, got {args.player_id}")
    if args.reply_limit is not None and args.server is not None:
        raise UserInputError("--reply-limit goes with the stdin form (the limit on a referee "
                             "that stops reading our stdout), not --server")
    warn_tight_budget([args.policy], args.budget)
    bot = MjaiBot(MjaiSettings(policy=args.policy, budget=args.budget, name=args.name,
                               room=args.room, log_dir=log_folder(args.log_dir, args.no_log),
                               write_log=not args.no_log, seat=args.player_id))
    if args.server is None:
        def stop(signum: int, _frame: Any) -> None:  # run_stdio's finally closes the log
            bot.stop_requested = True
            raise Stopped(signum)

        before = {sig: signal.signal(sig, stop) for sig in (signal.SIGINT, signal.SIGTERM)}
        try:
            summary = run_stdio(bot, reply_limit=args.reply_limit or REPLY_LIMIT)
        except RefereeGone as exc:  # its game logged as unfinished (run_stdio's finally)
            tell(args, str(exc))
            return 1
        except Stopped as stopped:
            return stopped_status(args, stopped)
        finally:  # a signal after the session is not raised where nothing catches it
            for sig, handler in before.items():
                signal.signal(sig, handler)
    else:
        try:
            host, port = parse_host_port(args.server, "--server")
        except ValueError as exc:
            raise UserInputError(str(exc)) from None
        start_server_for([args.policy])  # before the loop: see its docstring
        try:
            summary = asyncio.run(until_signalled(bot, run_tcp(
                host, port, bot, args.connect_timeout, idle_limit=args.idle_limit)))
        except ConnectionError as exc:
            tell(args, str(exc))
            return 1
        except Stopped as stopped:  # the game in play is logged as stopped
            return stopped_status(args, stopped)
    log().info("mjai: session over", games=summary.games, answers=summary.answers,
                decisions=summary.decisions, fallbacks=summary.fallbacks,
                fallback_kinds=summary.kinds,
                errors=summary.error_count)
    if args.server is not None and not summary.finished:  # a dropped line fails, as in ntpu's
        said = f" (its last error: {bot.server_error})" if bot.server_error else ""
        tell(args, f"{bot.how_the_line_ended()} before end_game{said}")
        return 1
    return 0
