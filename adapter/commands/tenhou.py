"""`mjbot tenhou` (the Tenhou client) and `mjbot tenhou-server` (the fake Tenhou server for
external clients)."""

from __future__ import annotations

import argparse
from typing import Any

from adapter.commands import (
    UserInputError,
    add_log_options,
    at_least,
    float_within,
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
    t.add_argument("--lobby", type=at_least(0), default=None, help="lobby number (default 0)")
    t.add_argument("--game-type", type=at_least(0), default=None,
                   help="Tenhou game type (default 64: a test game against computer players)")
    t.add_argument("--games", type=at_least(1), default=1)
    t.add_argument("--permission-granted", action="store_true",
                   help="state that Tenhou's operator allowed this bot in games with humans")
    t.add_argument("--config", help="TOML file with a [tenhou] table: id, "
                   "permission_granted, lobby, game_type")
    t.add_argument("--policy", default="rulebased")
    t.add_argument("--budget", type=positive_seconds, default=2.0, help="seconds per decision")
    t.add_argument("--idle-limit", type=positive_seconds, default=120.0, metavar="SECONDS",
                   help="in a game, a server that sends nothing for this long is a lost line: "
                   "mjbot reconnects and the game goes on (default 120; Tenhou tells every "
                   "turn, so a game is never quiet for long). Not in the lobby, where the "
                   "wait for a table has no bound")
    add_log_options(t, "game logs (default $MJBOT_LOG_DIR or logs)", "write no game logs")
    t.set_defaults(handler=cmd_tenhou)

    ts = sub.add_parser("tenhou-server", help="a local fake Tenhou server for external "
                        "clients: test games dealt by the local riichi referee",
                        description="Serves Tenhou's protocol (TCP or WebSocket) as Tenhou "
                        "does. Each table waits for --humans clients (several clients at one "
                        "table compare programs on the same deals); mjbot's --policy plays "
                        "the other seats. Exits after --games games with the figures. A client "
                        "that reads nothing while a write to it waits 30 s is cut as a dead "
                        "line (its seat is played for it).")
    ts.add_argument("--games", type=at_least(1), default=1)
    ts.add_argument("--humans", type=int, default=1, choices=[1, 2, 3, 4],
                    help="seats per table that wait for clients (default 1)")
    ts.add_argument("--policy", default="rulebased", help="mjbot's policy in the other seats")
    ts.add_argument("--transport", choices=["tcp", "ws"], default="tcp")
    ts.add_argument("--host", default="127.0.0.1")
    ts.add_argument("--port", type=port_number, default=10080, help="0: any free port")
    ts.add_argument("--seed", type=int, default=0)
    ts.add_argument("--length", choices=["east", "south"], default="east")
    ts.add_argument("--time-limit", type=positive_seconds, default=10.0,
                    help="seconds a client may take per answer")
    ts.add_argument("--absent", type=_absent_seconds, default=1.5,
                    help="seconds a dropped client's seat waits before it is played for it")
    ts.add_argument("--keepalive-every", type=positive_seconds, default=None, metavar="SECONDS",
                    help="probe each client with <Z/> (and WebSocket pings) this often and "
                    "report how fast it answers (Tenhou itself sends none)")
    ts.add_argument("--close-grace", type=positive_seconds, default=None, metavar="SECONDS",
                    help="after the last game, seconds the clients still connected get to "
                    "say BYE before the server hangs up (default 5)")
    ts.add_argument("--json", metavar="FILE", help="also write the figures as JSON "
                     "('-': onto stdout, and the text onto stderr)")
    add_log_options(ts, "game logs (default $MJBOT_LOG_DIR or logs)", "write no game logs")
    ts.set_defaults(handler=cmd_tenhou_server)


# --absent: 0 (a dropped client's seat is played at once) to an hour; nan read as 0 and inf
# ended the table's thread (a timeout too large) at the first drop
_absent_seconds = float_within(0.0, 3600.0, "seconds from 0 to 3600")


def cmd_tenhou(args: argparse.Namespace) -> int:
    import asyncio
    import dataclasses

    from adapter.platforms.tenhou import (
        DEFAULT_TCP_SERVER,
        PermissionRefused,
        TenhouSettings,
        check_permission,
        load_config,
        run_until_signalled,
        transport_for,
    )
    from adapter.session import Stopped
    from adapter.thinking.worker_process import start_server_for

    require_policy(args.policy)
    warn_tight_budget([args.policy], args.budget)
    settings = TenhouSettings(server=args.server or DEFAULT_TCP_SERVER,
                              transport=args.transport, games=args.games, policy=args.policy,
                              budget=args.budget, permission_granted=args.permission_granted,
                              idle_limit=args.idle_limit,
                              log_dir=log_folder(args.log_dir, args.no_log),
                              write_log=not args.no_log)
    try:
        settings = load_config(args.config, settings)
        if args.lobby is not None:
            settings = dataclasses.replace(settings, lobby=args.lobby)
        if args.game_type is not None:
            settings = dataclasses.replace(settings, game_type=args.game_type)
        check_permission(settings.game_type, settings.permission_granted)
        transport_for(settings)  # a malformed --server, refused before anything connects
    except (ValueError, PermissionRefused) as exc:
        raise UserInputError(str(exc)) from None
    start_server_for([settings.policy])  # before the loop: see its docstring
    try:
        summary = asyncio.run(run_until_signalled(settings))
    except ConnectionError as exc:
        tell(args, str(exc))
        return 1
    except PermissionRefused as exc:
        tell(args, str(exc))
        return 2
    except Stopped as stopped:  # the note says where it was left ("left the table" was
        # said of a queue, and of a line never connected, where the log said "no BYE")
        return stopped_status(args, stopped, f"; {stopped.note}" if stopped.note else "")
    except (KeyboardInterrupt, asyncio.CancelledError):  # before the session could be told
        tell(args, "stopped", "stopped")
        return 130
    log().info("tenhou: session over", games=summary.games, hands=summary.hands,
                decisions=summary.decisions, fallbacks=summary.fallbacks,
                fallback_kinds=summary.kinds,
                reconnects=summary.reconnects, errors=summary.error_count)
    return 0 if summary.finished else 1


def cmd_tenhou_server(args: argparse.Namespace) -> int:
    from adapter.fakes.tenhou_serve import CLOSE_GRACE, serve

    require_policy(args.policy)
    require_writable(args.json, "--json")

    def listening(port: int) -> None:
        tell_waiting(args, port, args.humans, f"waiting for {args.humans} client(s) per "
                     f"table on {args.host}:{port}")

    log_dir = log_folder(args.log_dir, args.no_log)
    try:
        result = serve(args.games, args.humans, args.policy, args.seed, args.host, args.port,
                       args.transport, args.length, args.time_limit, args.absent, log_dir,
                       on_listening=listening, keepalive_every=args.keepalive_every,
                       close_grace=CLOSE_GRACE if args.close_grace is None
                       else args.close_grace)
    except OSError as exc:
        tell(args, str(exc))
        return 1
    except KeyboardInterrupt:
        tell(args, "stopped", "stopped")
        return 130
    report(args.json, result.table(), result.as_json())
    return 1 if result.stats.illegal or result.stats.timeouts else 0
