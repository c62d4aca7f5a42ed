"""The serve process: the supervisor and the status server on one event loop, driven by
signals. SIGTERM / SIGINT stop every session within the config's ``stop_deadline`` (hands
finished where the platform allows, logs closed with a footer, sockets closed) and exit 0;
SIGHUP reloads the config file and starts or stops only the sessions that changed (a file
that no longer loads is reported and the running sessions are kept), and of ``[status]`` the
keys a request reads (``trust_forwarded_proto``, ``trust_forwarded_for``); the others (the
address, the token, the connection bounds) are fixed when the server starts, and a changed one
is said in a log line to take effect at the next restart."""

from __future__ import annotations

import asyncio
import dataclasses
import os
import signal
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import structlog

from adapter.loop_signals import on_signal
from adapter.serve.config import ConfigError, ServeConfig, StatusConfig, config_warnings, load
from adapter.serve.metrics import Metrics
from adapter.serve.supervisor import Supervisor
from replay.gcpause import off_until_exit

log = structlog.get_logger("mjbot.serve")


class Signals:
    """What the signal handlers asked for, as events the main loop waits on."""

    def __init__(self) -> None:
        self.stop = asyncio.Event()
        self.reload = asyncio.Event()
        self.received: list[str] = []

    def install(self) -> None:
        """On every loop (adapter/loop_signals.py); Windows has no SIGHUP: no reload there
        (``signal.SIGHUP`` itself failed the start)."""
        for name, event in (("SIGTERM", self.stop), ("SIGINT", self.stop),
                            ("SIGHUP", self.reload)):
            on_signal(getattr(signal, name, None), self._on, name, event)

    def _on(self, name: str, event: asyncio.Event) -> None:
        self.received.append(name)
        event.set()

    async def next(self) -> str:
        """"stop" or "reload", whichever comes first."""
        waits = {asyncio.ensure_future(self.stop.wait()): "stop",
                 asyncio.ensure_future(self.reload.wait()): "reload"}
        _done, pending = await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
        for future in pending:
            future.cancel()
        if self.stop.is_set():
            return "stop"
        self.reload.clear()
        return "reload"


async def serve(config: ServeConfig, status: tuple[str, int] | None = None,
                log_dir: str | None = None,
                on_listening: Callable[[str], None] | None = None) -> int:
    """Run until SIGTERM / SIGINT. ``status``: (host, port) overriding the config's address;
    ``on_listening`` is told the status server's URL once it listens. The process's last
    work: once the sessions are stopped, the cycle collector is off for good
    (replay/gcpause.py ``off_until_exit``)."""
    from adapter.serve.status import StatusServer

    host, port = status or (config.status.host, config.status.port)
    metrics = Metrics()
    supervisor = Supervisor(config, metrics, log_dir=log_dir)
    check_log_folder(supervisor.log_dir)
    server = StatusServer(supervisor=supervisor, metrics=metrics,
                          roots=[supervisor.log_dir], token=config.status.token,
                          max_connections=config.status.max_connections,
                          request_timeout=config.status.request_timeout,
                          trust_forwarded_proto=config.status.trust_forwarded_proto,
                          trust_forwarded_for=config.status.trust_forwarded_for)
    url = await server.start(host, port)
    # before the line that says it listens: a signal sent on that line was met by the
    # process's defaults (SIGHUP, SIGTERM: the process ended where it stood)
    signals = Signals()
    signals.install()
    log.info("serve: status server listening", url=url, sessions=len(config.sessions))
    if on_listening is not None:
        on_listening(url)
    supervisor.start()
    runs = config.status  # what the status server runs with (not the last config loaded)
    try:
        while await signals.next() == "reload":
            if await _reload(supervisor, status) is not None:
                runs = reload_status(server, runs, supervisor.config.status,
                                     address_given=status is not None)
                if log_dir is None and not same_folder(supervisor.config.log_dir,
                                                       supervisor.log_dir):
                    # read at the start only (the sessions' folders, the viewer's root): the
                    # games went on into the old folder after 'config reloaded', unsaid.
                    # Compared with the folder in use, as [status] is with what the server
                    # runs: said at each reload while it differs, not once
                    log.warning("serve: [serve] log_dir changed, which takes effect only at "
                                "a restart: the games go on into the folder it started with",
                                log_dir=supervisor.log_dir,
                                config_log_dir=supervisor.config.log_dir)
    finally:
        log.info("serve: stopping", deadline=supervisor.config.stop_deadline,
                 signal=signals.received[-1] if signals.received else None)
        await supervisor.stop()  # every session's log closed with its footer first
        off_until_exit()  # then no collection walks the viewer's games on the way out
        await server.stop()
        log.info("serve: stopped", games={n: h.games_played
                                          for n, h in supervisor.handles.items()})
        sys.stderr.flush()
    return 0


def check_log_folder(folder: str) -> None:
    """Make the log folder and write in it once, before anything starts: OSError naming it
    when that fails (each practice game's worker died of it, a traceback a game, while the
    process ran on with its sessions failing)."""
    path = Path(folder)
    try:
        path.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=path):
            pass
    except OSError as exc:
        raise OSError(f"the log folder {folder} cannot be written: "
                      f"{exc.strerror or exc}") from None


def same_folder(first: str, second: str) -> bool:
    """Whether two [serve] log_dir values name one folder (``logs``, ``./logs``, ``logs/``,
    a symlink to it): compared as text, a reload that wrote the folder another way was
    warned of as changed, waiting for a restart, though the games went on into it. The
    same file where both exist (a bind mount too), else the same path once resolved."""
    try:
        return os.path.samefile(first, second)
    except (OSError, ValueError):  # one is not there (yet): a folder to be made at the next
        pass  # start (ValueError: a NUL in it, which no stat takes)
    try:
        return Path(first).resolve() == Path(second).resolve()
    except (OSError, ValueError, RuntimeError):  # a symlink loop (RuntimeError before 3.13),
        # a NUL: no folder at all, compared as written, where it ended serve with a traceback
        return os.path.abspath(first) == os.path.abspath(second)


# the [status] keys each request reads: a reload sets them on the running status server
LIVE_STATUS_KEYS = ("trust_forwarded_proto", "trust_forwarded_for")


def reload_status(server: Any, runs: StatusConfig, new: StatusConfig,
                  address_given: bool = False) -> StatusConfig:
    """A reloaded config's ``[status]``: the keys a request reads are set on ``server`` (the
    StatusServer) now; any other that differs from what the server ``runs`` with (host,
    port, token, max_connections, request_timeout: the listening socket, the token check at
    start, the connection guard's bounds) is named in a warning as taking effect at the next
    restart. Before, every [status] key was ignored by SIGHUP without a word, so turning on
    trust_forwarded_for behind a new proxy did nothing until a restart nobody was told of.
    ``address_given``: ``--status`` set the address, so the config's host and port are not
    used anyway. Returns what the server runs with now (``runs``, the live keys set): the
    next reload compares with it, not with the config loaded last, which warned again of a
    port changed and then put back (the server had never left it)."""
    # token_env is no key the server runs with: the token it names is compared (renamed,
    # the same token, it was warned of at every reload as waiting for a restart)
    changed = [f.name for f in dataclasses.fields(StatusConfig) if f.name != "token_env"
               and getattr(runs, f.name) != getattr(new, f.name)]
    applied = [key for key in changed if key in LIVE_STATUS_KEYS]
    for key in applied:
        setattr(server, key, getattr(new, key))
    if applied:
        log.info("serve: [status] reloaded", keys=applied)
    later = [key for key in changed if key not in LIVE_STATUS_KEYS
             and not (address_given and key in ("host", "port"))]
    if later:  # names only: the token's value is never logged
        log.warning("serve: [status] keys changed that take effect only at a restart: the "
                    "status server runs on with their old values", keys=later)
    return dataclasses.replace(runs, **{key: getattr(new, key) for key in applied})


async def _reload(supervisor: Supervisor,
                  address: tuple[str, int] | None = None) -> dict[str, Any] | None:
    """``address``: --status's, which the next start listens on rather than the config's.
    A file that the next start would refuse (a host other than loopback without a token,
    one that is no address) is refused as one that does not load: it was taken, and the
    process, once restarted (the unit's next start, a reboot), exited 2 on it."""
    from adapter.serve.status import TokenRequired, check_token

    try:
        config = await asyncio.to_thread(load, supervisor.config.path)
        host = address[0] if address else config.status.host
        try:
            check_token(host, config.status.token, config.status.token_env)
        except (TokenRequired, ValueError) as exc:
            said = str(exc)
            if isinstance(exc, TokenRequired) and not config.status.token:
                # the variable is this process's, read at its start: set since in the unit's
                # EnvironmentFile, the next start has it, and 'set a token' alone misled
                said += (f"; serve reads ${config.status.token_env} from the environment it "
                         "was started with: set since (the unit's EnvironmentFile)? a restart "
                         "takes it, a reload cannot")
            raise ConfigError(f"{config.path}: {said}") from None
    except ConfigError as exc:
        log.error("serve: reload refused, the running sessions are kept", error=str(exc))
        supervisor.reload_refused(str(exc))
        return None
    for note in config_warnings(config):
        log.warning(f"serve: {note}")
    return await supervisor.reload(config)
