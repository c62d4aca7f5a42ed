"""`mjbot serve` (the tournament process: supervised sessions and the status server) and
`mjbot view` (the web replay viewer on local files, without the tournament process)."""

from __future__ import annotations

import argparse
import errno
import re
import sys
from typing import Any

from adapter.commands import UserInputError, log, port_number, tell


def register(sub: Any) -> None:
    s = sub.add_parser("serve", help="the tournament process: the sessions a config file "
                       "lists, supervised, with a status server",
                       description="Runs every enabled session of CONFIG (TOML; see "
                       "deploy/mjbot.example.toml) under one supervisor: restarts with "
                       "backoff, a circuit breaker, daily quotas. SIGTERM / SIGINT stop it "
                       "cleanly, SIGHUP reloads CONFIG. The status server (/, /health, "
                       "/metrics, /games) listens on the config's address.")
    s.add_argument("config", metavar="CONFIG")
    s.add_argument("--status", metavar="HOST:PORT",
                   help="the status server's address (overrides the config; port 0 picks a "
                   "free one, logged at start)")
    s.add_argument("--log-dir", help="game logs (overrides the config's [serve] log_dir)")
    s.add_argument("--check", action="store_true", help="check CONFIG and exit")
    s.set_defaults(handler=cmd_serve)

    v = sub.add_parser("view", help="the web replay viewer on game logs and imported files",
                       description="Serves the replay viewer on the files given (folders are "
                       "searched for mjbot logs and tenhou6 / mjlog / mjai / Botzone / SGF / "
                       "NTPU files, Tenhou client transcripts, named .json, .jsonl, .xml, "
                       ".mjlog, .sgf, .log or .txt; a file named here opens whatever its "
                       "name) and prints its URL.")
    v.add_argument("paths", nargs="+", metavar="LOG_OR_DIR")
    v.add_argument("--host", default="127.0.0.1",
                   help="a loopback address (default: %(default)s); `mjbot serve` serves "
                   "others, behind a token")
    v.add_argument("--port", type=port_number, default=0, help="0 (default): a free port")
    v.add_argument("--open", action="store_true", help="open the page in a browser")
    v.set_defaults(handler=cmd_view)


def cmd_serve(args: argparse.Namespace) -> int:
    import asyncio

    from adapter.hostport import parse_host_port
    from adapter.serve.app import serve
    from adapter.serve.config import ConfigError, config_warnings, load
    from adapter.serve.status import TokenRequired, check_token
    from adapter.thinking.worker_process import start_server_for

    try:
        config = load(args.config)
        address = parse_host_port(args.status, "--status", any_port=True) if args.status \
            else None
        host = address[0] if address else config.status.host
        check_token(host, config.status.token, config.status.token_env)
    except (ConfigError, TokenRequired, ValueError) as exc:
        raise UserInputError(str(exc)) from None
    enabled = [s.name for s in config.sessions if s.enabled]
    for note in config_warnings(config):
        log().warning(f"serve: {note}", config=args.config)
    if not enabled:  # at --check too: a config checked "0 sessions", exit 0, and no more
        log().warning("serve: no session is enabled; only the status server runs",
                      config=args.config)
    if args.check:
        count = len(config.sessions)
        print(f"{args.config}: {count} session{'' if count == 1 else 's'}, enabled: "
              f"{', '.join(enabled) or 'none'}")
        return 0
    # the sessions that think in this process (a local one is a process of its own); started
    # even where none thinks yet: a reload may bring one, under the loop's threads
    start_server_for((s.policy for s in config.sessions if s.enabled and s.kind != "local"),
                     always=True)
    try:
        return asyncio.run(serve(config, address, args.log_dir))
    except OSError as exc:  # the status port is taken, the log folder cannot be made
        option = "--status HOST:PORT (or the config's [status] port)"
        tell(args, _listen_error(exc, option))
        return 1


def _listen_error(exc: OSError, option: str) -> str:
    """An OSError of a command that listens, in one line; a port that another process holds
    says what to give instead (it read as asyncio's '[Errno 98] error while attempting to
    bind on address (...): address already in use', and nothing more)."""
    if exc.errno == errno.EADDRINUSE:
        from adapter.hostport import format_host_port

        # IPv4 ('127.0.0.1', P); IPv6 ('::1', P, 0, 0), said as --status takes it: [::1]:P
        where = re.search(r"address \('([^']*)', (\d+)(?:, \d+, \d+)?\)", str(exc))
        at = format_host_port(where.group(1), int(where.group(2))) if where else "that address"
        return (f"port in use: another process listens on {at}; give another port with "
                f"{option}, or port 0 for a free one")
    return str(exc)


def cmd_view(args: argparse.Namespace) -> int:
    import asyncio
    from pathlib import Path

    from adapter.serve.status import TokenRequired, check_token

    folders = [p for p in args.paths if Path(p).is_dir()]
    files = [p for p in args.paths if Path(p).is_file()]
    missing = [p for p in args.paths if p not in folders and p not in files]
    if missing:
        raise UserInputError(f"{missing[0]}: no such file or folder")
    try:
        check_token(args.host, "")
    except TokenRequired:
        raise UserInputError("mjbot view listens on loopback only (use --host 127.0.0.1); "
                             "mjbot serve's status server takes a token for other "
                             "addresses") from None
    except ValueError as exc:  # not a host at all
        raise UserInputError(f"--host: {exc}") from None
    try:
        return asyncio.run(_view(folders, files, args.host, args.port, args.open))
    except OSError as exc:
        tell(args, _listen_error(exc, '--port'))
        return 1


async def _view(folders: list[str], files: list[str], host: str, port: int,
                open_browser: bool) -> int:
    import asyncio
    import signal

    from adapter.browser import BrowserOpener
    from adapter.loop_signals import on_signal
    from adapter.serve.status import StatusServer
    from replay.gcpause import off_until_exit

    server = StatusServer(roots=folders, imports=files)
    url = await server.start(host, port)
    done = asyncio.Event()
    received: list[str] = []

    def stop(sig: signal.Signals) -> None:
        received.append(sig.name)
        done.set()

    for sig in (signal.SIGINT, signal.SIGTERM):  # on every loop (Windows' too), before the
        on_signal(sig, stop, sig)  # line that says Ctrl-C stops it
    print(f"mjbot view: {url}games  (Ctrl-C to stop)", file=sys.stderr, flush=True)
    opener = BrowserOpener(url + "games") if open_browser else None
    if opener:
        opener.start()
    try:
        await done.wait()
    finally:
        off_until_exit()  # the viewer writes nothing: no collection walks its games from here
        if opener:  # a console browser it still waits for would outlive the view
            ended = await asyncio.to_thread(opener.stop)
            if ended:
                log().info("view: ended the browser it started", pids=ended)
        await server.stop()
    # its last line, as serve's (it ended with none, exit 0: stopped, or gone?)
    log().info("view: stopped", signal=received[0] if received else None)
    return 0

