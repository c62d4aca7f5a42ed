"""The serve config file (TOML) -> validated session specs.

::

    [serve]                      # where game logs go, how long a stop may take
    log_dir = "logs"
    stop_deadline = 20
    [status]                     # the status server; another address than loopback needs a token
                                 # (SIGHUP reloads the two trust_ keys; the rest at a restart)
    host = "127.0.0.1"
    port = 8750
    token_env = "MJBOT_STATUS_TOKEN"
    max_connections = 256        # open at once (at most half the file descriptor limit)
    request_timeout = 10         # seconds a connection may stay without a complete request
    trust_forwarded_proto = false  # true behind a TLS proxy that sets X-Forwarded-Proto
    trust_forwarded_for = false  # true behind a proxy that sets X-Forwarded-For: each client
                                 # its own share of the viewer's builds
    [logs]                       # the game logs' upkeep (LogUpkeep), reloaded on SIGHUP
    compress_after = 3600        # finished logs gzipped this long after their last write
    max_disk_mb = 0              # 0: no budget; else the oldest practice logs go first
    [defaults]                   # limits every session gets unless its own [limits] say else
    games_per_day = 0
    [sessions.practice]          # one table per session
    kind = "local"               # tenhou | ntpu | mjai | local
    enabled = true
    policy = "rulebased"
    [sessions.practice.limits]
    games_per_day = 200

Every mistake is a :class:`ConfigError` that names the file and the line (an unknown key, a
wrong type, a value out of range, an unknown policy), never a traceback. Secrets (a Tenhou ID,
the status token) are read here, kept out of every message, and out of :meth:`SessionSpec.public`.
"""

from __future__ import annotations

import math
import re
import tomllib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from adapter import secret_env
from adapter.hostport import HINT, parse_host_port
from adapter.serve.tomlines import key_lines, line_of
from brain.rules.variant import VARIANT_NAMES

KINDS = ("local", "tenhou", "ntpu", "mjai")
VARIANTS = VARIANT_NAMES
TOKEN_ENV = "MJBOT_STATUS_TOKEN"
NAME_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,63}")


class ConfigError(ValueError):
    """A config file that cannot be used; the message names the file and, where known, the
    line."""


@dataclass(frozen=True)
class Limits:
    """Supervision of one session. ``games_per_day``: 0 is no quota; the backoff doubles from
    ``backoff_initial`` to ``backoff_max`` (with jitter) after each failure in a row; the breaker
    opens after ``breaker_failures`` failures within ``breaker_window`` seconds and stays open
    for ``breaker_cooldown``; a run that lasts ``healthy_after`` seconds resets the backoff."""

    games_per_day: int = 0
    backoff_initial: float = 1.0
    backoff_max: float = 120.0
    breaker_failures: int = 5
    breaker_window: float = 600.0
    breaker_cooldown: float = 900.0
    healthy_after: float = 60.0


@dataclass(frozen=True)
class SessionSpec:
    """One session as configured. ``options`` holds the kind's own keys (hashable, sorted) so
    that two specs compare equal exactly when a reload needs not touch the session."""

    name: str
    kind: str
    enabled: bool = True
    policy: str = "rulebased"
    pause: float = 2.0  # seconds between two runs that ended normally (games, matches)
    limits: Limits = field(default_factory=Limits)
    options: tuple[tuple[str, Any], ...] = ()
    secret: str = field(default="", repr=False)  # the Tenhou ID, never shown

    def option(self, key: str, default: Any = None) -> Any:
        return dict(self.options).get(key, default)

    def public(self) -> dict[str, Any]:
        """What the status page may show: no secret, no key that names one."""
        return {"kind": self.kind, "enabled": self.enabled, "policy": self.policy,
                **{k: list(v) if isinstance(v, tuple) else v for k, v in self.options
                   if k not in ("id", "id_env")},
                "login": ("ID (hidden)" if self.secret else "anonymous")
                if self.kind == "tenhou" else None}


@dataclass(frozen=True)
class StatusConfig:
    host: str = "127.0.0.1"
    port: int = 8750
    token: str = field(default="", repr=False)
    max_connections: int = 256
    request_timeout: float = 10.0
    # the scheme a TLS proxy in front says the browser used (X-Forwarded-Proto) decides the
    # login cookie's Secure flag; off, the header is ignored (anyone can send it)
    trust_forwarded_proto: bool = False
    # the client address a proxy in front says it saw (X-Forwarded-For, its last value) is
    # whose share of the viewer's builds a request is; off, the peer's address (anyone can
    # send the header)
    trust_forwarded_for: bool = False
    token_env: str = TOKEN_ENV  # the variable the token was read from, named when it is unset


@dataclass(frozen=True)
class LogUpkeep:
    """The game logs' upkeep ([logs]; adapter/serve/logkeep.py), read again on SIGHUP. Nothing
    is removed by default: ``max_disk_mb`` and ``keep_days`` at 0 are no budget and no age
    limit; finished logs are compressed ``compress_after`` seconds after their last write."""

    compress: bool = True
    compress_after: float = 3600.0
    max_disk_mb: float = 0.0  # the logs' disk use above which the oldest practice logs go
    keep_days: float = 0.0  # practice logs older than this go
    remove_platform_logs: bool = False  # the two above may remove platform logs too
    low_disk_mb: float = 1024.0  # free space under the log folder below this: a warning
    check_every: float = 60.0  # seconds between two passes


@dataclass(frozen=True)
class ServeConfig:
    path: str
    log_dir: str = "logs"
    stop_deadline: float = 20.0
    status: StatusConfig = field(default_factory=StatusConfig)
    sessions: tuple[SessionSpec, ...] = ()
    logs: LogUpkeep = field(default_factory=LogUpkeep)


# ---------------------------------------------------------------------- value checks

Check = Callable[[Any], Any]  # returns the value to keep, raises ValueError with a reason


def _number(low: float = 0.0, strict: bool = True) -> Check:
    def check(v: Any) -> float:
        if isinstance(v, bool) or not isinstance(v, int | float) or not math.isfinite(v):
            raise ValueError("must be a number")
        if v < low or (strict and v == low):
            raise ValueError(f"must be {'more than' if strict else 'at least'} {low:g}")
        return float(v)
    return check


def _integer(low: int = 0, high: int | None = None) -> Check:
    def check(v: Any) -> int:
        if isinstance(v, bool) or not isinstance(v, int):
            raise ValueError("must be a whole number")
        if v < low or (high is not None and v > high):
            raise ValueError(f"must be {low}..{high}" if high is not None
                             else f"must be at least {low}")
        return v
    return check


def _boolean(v: Any) -> bool:
    if not isinstance(v, bool):
        raise ValueError("must be true or false")
    return v


def _text(pattern: str | None = None, what: str = "") -> Check:
    def check(v: Any) -> str:
        if not isinstance(v, str) or not v:
            raise ValueError("must be a non-empty string")
        if pattern is not None and not re.fullmatch(pattern, v):
            raise ValueError(f"must be {what}")
        return v
    return check


def _choice(*values: str) -> Check:
    def check(v: Any) -> str:
        if v not in values:
            raise ValueError(f"must be one of {', '.join(values)}")
        return str(v)
    return check


def _policy(v: Any) -> str:
    """A policy as the platform commands take it: a name, ``nn@FILE`` or ``mc@OPTIONS``
    (a session plays what `mjbot tenhou --policy` would); their refusal names what is
    wrong (a UserInputError is a ValueError)."""
    from adapter.commands import require_policy
    from brain.policies import POLICIES

    if not isinstance(v, str):
        raise ValueError(f"must be a policy name ({', '.join(sorted(POLICIES))})")
    try:
        require_policy(v)
    except ValueError as exc:
        raise ValueError(f"must be a policy name: {exc}") from None
    return v


def _policies(count: int) -> Check:
    def check(v: Any) -> tuple[str, ...]:
        if not isinstance(v, list) or len(v) != count:
            raise ValueError(f"must be a list of {count} policy names")
        return tuple(_policy(x) for x in v)
    return check


def _host_port(v: Any) -> str:
    if not isinstance(v, str):
        raise ValueError(f"needs {HINT}, a string")
    parse_host_port(v, "")  # the reader names the key (and its line) before the message
    return v


def _tenhou_server(v: Any) -> str:
    if isinstance(v, str) and v.startswith(("ws://", "wss://")):
        return v
    return _host_port(v)


LIMIT_KEYS: dict[str, Check] = {
    "games_per_day": _integer(0),
    "backoff_initial": _number(0.0),
    "backoff_max": _number(0.0),
    "breaker_failures": _integer(1),
    "breaker_window": _number(0.0),
    "breaker_cooldown": _number(0.0),
    "healthy_after": _number(0.0),
}
COMMON_KEYS: dict[str, Check] = {"kind": _choice(*KINDS), "enabled": _boolean,
                                 "policy": _policy, "pause": _number(0.0, strict=False)}
KIND_KEYS: dict[str, dict[str, Check]] = {
    "local": {"variant": _choice(*VARIANTS), "opponents": _policies(3),
              "length": _choice("east", "south"), "hands": _integer(1, 64),
              "seed": _integer(0), "budget": _number(0.0), "live_every": _number(0.0)},
    "tenhou": {"server": _tenhou_server, "transport": _choice("tcp", "ws"),
               "lobby": _integer(0, 9999), "game_type": _integer(0, 4095),
               "games": _integer(1), "permission_granted": _boolean,
               "id": _text(), "id_env": _text(r"[A-Za-z_][A-Za-z0-9_]*", "a variable name"),
               "budget": _number(0.0), "reconnect_tries": _integer(0, 100),
               "connect_timeout": _number(0.0), "idle_limit": _number(0.0)},
    "ntpu": {"server": _host_port, "budget": _number(0.0),
             "honour_order": _text(r"[ESWNPFC]{7}", "seven of E S W N P F C"),
             "suit_order": _choice("mps", "msp", "pms", "psm", "smp", "spm"),
             "connect_timeout": _number(0.0), "idle_limit": _number(0.0)},
    "mjai": {"server": _host_port, "name": _text(r"[^\s]{1,32}", "a name without spaces"),
             "room": _text(r"[^\s]{1,32}", "a room without spaces"), "budget": _number(0.0),
             "connect_timeout": _number(0.0), "idle_limit": _number(0.0)},
}
LOG_KEYS: dict[str, Check] = {
    "compress": _boolean, "compress_after": _number(0.0, strict=False),
    "max_disk_mb": _number(0.0, strict=False), "keep_days": _number(0.0, strict=False),
    "remove_platform_logs": _boolean, "low_disk_mb": _number(0.0, strict=False),
    "check_every": _number(0.0),
}
REQUIRED: dict[str, tuple[str, ...]] = {"local": (), "tenhou": (), "ntpu": ("server",),
                                        "mjai": ("server",)}


# ---------------------------------------------------------------------- loading


class _Reader:
    """Checks values and raises ConfigError naming the file and line of a key path."""

    def __init__(self, path: str, text: str) -> None:
        self.path = path
        self.lines = key_lines(text)

    def error(self, message: str, *where: str) -> ConfigError:
        line = line_of(self.lines, *where)
        at = f"{self.path}, line {line}" if line else self.path
        return ConfigError(f"{at}: {message}")

    def table(self, value: Any, *where: str) -> dict[str, Any]:
        if not isinstance(value, dict):
            raise self.error(f"[{'.'.join(where)}] must be a table", *where)
        return value

    def check(self, table: dict[str, Any], keys: dict[str, Check], *where: str) \
            -> dict[str, Any]:
        out: dict[str, Any] = {}
        for key, value in table.items():
            if key not in keys:
                raise self.error(f"unknown key {key!r} in [{'.'.join(where)}] (known: "
                                 f"{', '.join(sorted(keys))})", *where, key)
            try:
                out[key] = keys[key](value)
            except ValueError as exc:
                raise self.error(f"{'.'.join((*where, key))} {exc}", *where, key) from None
        return out


def load(path: str | Path, environ: dict[str, str] | None = None) -> ServeConfig:
    """Read and check a serve config file; ConfigError naming the line on any mistake."""
    name = str(path)
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"{name}: cannot read: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise ConfigError(f"{name}: not UTF-8 text") from None
    return loads(text, name, environ)


def loads(text: str, path: str = "<config>", environ: Any = None) -> ServeConfig:
    # a thinking worker's start takes the secrets out of os.environ for a moment: seen here
    environ = secret_env.environ() if environ is None else environ
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(_decode_error(path, str(exc), text)) from None
    r = _Reader(path, text)
    known = ("serve", "status", "logs", "defaults", "sessions")
    for key in data:
        if key not in known:
            raise r.error(f"unknown table or key {key!r} (known: {', '.join(known)})", key)
    serve = r.check(r.table(data.get("serve", {}), "serve"),
                    {"log_dir": _text(), "stop_deadline": _number(0.0)}, "serve")
    status = _status(r, r.table(data.get("status", {}), "status"), environ)
    logs = LogUpkeep(**r.check(r.table(data.get("logs", {}), "logs"), LOG_KEYS, "logs"))
    defaults = r.check(r.table(data.get("defaults", {}), "defaults"), LIMIT_KEYS, "defaults")
    sessions = r.table(data.get("sessions", {}), "sessions")
    specs = tuple(_session(r, name, r.table(body, "sessions", name), defaults, environ)
                  for name, body in sessions.items())
    return ServeConfig(path, serve.get("log_dir", "logs"), serve.get("stop_deadline", 20.0),
                       status, specs, logs)


def _decode_error(path: str, message: str, text: str) -> str:
    found = re.search(r"\(at line (\d+), column (\d+)\)", message)
    if not found:
        end = re.search(r"\s*\(at end of document\)", message)
        if end:  # an unclosed string or bracket: the last line is where it shows
            last = len(text.rstrip("\n").splitlines()) or 1
            return f"{path}, line {last}: not valid TOML: {message[:end.start()]} " \
                   "(at the end of the file)"
        return f"{path}: not valid TOML: {message}"
    reason = message[:found.start()].strip()
    return f"{path}, line {found.group(1)}: not valid TOML: {reason} (column {found.group(2)})"


def _status(r: _Reader, table: dict[str, Any], environ: Any) -> StatusConfig:
    values = r.check(table, {"host": _text(), "port": _integer(0, 65535),
                             "token_env": _text(r"[A-Za-z_][A-Za-z0-9_]*", "a variable name"),
                             "max_connections": _integer(1, 100_000),
                             "request_timeout": _number(0.0),
                             "trust_forwarded_proto": _boolean,
                             "trust_forwarded_for": _boolean},
                     "status")
    variable = values.get("token_env", TOKEN_ENV)
    secret_env.declare([variable])  # kept from the programs we start, as the default
    token = environ.get(variable, "")
    if token != token.strip():
        raise r.error(f"${variable} (the status token) is blank or begins or ends with "
                      "whitespace, which a header cannot carry (value not shown)",
                      *(("status", "token_env") if "token_env" in values else ("status",)))
    return StatusConfig(values.get("host", "127.0.0.1"), values.get("port", 8750), token,
                        values.get("max_connections", 256),
                        values.get("request_timeout", 10.0),
                        values.get("trust_forwarded_proto", False),
                        values.get("trust_forwarded_for", False), variable)


def _session(r: _Reader, name: str, table: dict[str, Any], defaults: dict[str, Any],
             environ: Any) -> SessionSpec:
    where = ("sessions", name)
    if not NAME_RE.fullmatch(name):
        raise r.error(f"session name {name!r} must be letters, digits, '-' or '_' "
                      "(it names log folders and metric labels)", *where)
    if "kind" not in table:
        raise r.error(f"session {name!r} needs kind = one of {', '.join(KINDS)}", *where)
    kind = COMMON_KEYS["kind"](table["kind"]) if table["kind"] in KINDS else None
    if kind is None:
        raise r.error(f"sessions.{name}.kind must be one of {', '.join(KINDS)}", *where, "kind")
    limits_table = r.table(table.get("limits", {}), *where, "limits")
    body = {k: v for k, v in table.items() if k != "limits"}
    values = r.check(body, {**COMMON_KEYS, **KIND_KEYS[kind]}, *where)
    for key in REQUIRED[kind]:
        if key not in values:
            raise r.error(f"session {name!r} ({kind}) needs {key} = ...", *where)
    limits = Limits(**{**defaults, **r.check(limits_table, LIMIT_KEYS, *where, "limits")})
    if limits.backoff_max < limits.backoff_initial:
        raise r.error("backoff_max must be at least backoff_initial", *where, "limits")
    options = {k: v for k, v in values.items() if k not in COMMON_KEYS}
    secret = ""
    if kind == "tenhou":
        if str(options.get("server", "")).startswith(("ws://", "wss://")) \
                and options.get("transport", "tcp") != "ws":
            raise r.error(f"sessions.{name}.server is a WebSocket URL, which needs "
                          'transport = "ws"', *where, "server")
        secret = _tenhou_login(r, name, options, environ, values.get("enabled", True))
        options.pop("id", None)  # kept in ``secret`` only, out of every repr
    return SessionSpec(name, kind, values.get("enabled", True), values.get("policy", "rulebased"),
                       values.get("pause", 2.0), limits, tuple(sorted(options.items())), secret)


def _tenhou_login(r: _Reader, name: str, options: dict[str, Any], environ: Any,
                  enabled: bool) -> str:
    """The Tenhou ID (from ``id``, or the variable ``id_env`` names), checked without ever
    echoing it; and Tenhou's policy on bots, checked where the file says what to join."""
    from adapter.platforms.tenhou import (
        ID_PLACEHOLDER,
        PermissionRefused,
        check_permission,
        id_refusal,
    )

    where = ("sessions", name)
    secret = str(options.get("id", ""))  # not empty: the key's check refuses that
    if "id_env" in options:
        secret_env.declare([options["id_env"]])  # kept from the programs we start
    if "id_env" in options and enabled:
        variable = options["id_env"]
        if variable in environ:  # the environment wins, as for `mjbot tenhou`
            secret = environ[variable]
            if not secret:  # set to nothing (an unset variable expanded): anonymous play
                # is the ID left out; this took the file's id, or said "not set"
                raise r.error(f"sessions.{name}.id_env names {variable}, which is empty: "
                              "give the Tenhou ID, or leave id_env out", *where, "id_env")
        elif not secret:
            raise r.error(f"sessions.{name}.id_env names {variable}, which is not set",
                          *where, "id_env")
    why = id_refusal(secret) if secret else None
    if why is not None:
        raise r.error(f"the Tenhou ID {why} (value not shown)" if secret != ID_PLACEHOLDER
                      else f"the Tenhou ID {why}", *where, "id" if "id" in options else "id_env")
    try:
        check_permission(options.get("game_type", 64), options.get("permission_granted", False))
    except PermissionRefused as exc:
        raise r.error(str(exc), *where, "game_type") from None
    return secret


def config_warnings(config: ServeConfig) -> list[str]:
    """The lines `serve --check`, serve's start and a reload warn with: tight budgets,
    options the session's variant does not use, a proxy in front without a token."""
    return [*tight_budgets(config), *unused_options(config), *proxy_without_token(config)]


def proxy_without_token(config: ServeConfig) -> list[str]:
    """A proxy said to be in front ([status] trust_forwarded_*) of a server with no token:
    nginx sends 'Host: 127.0.0.1:PORT' (proxy_pass's) unless told otherwise, a loopback name,
    which a server without a token answers, so every request through the proxy was served:
    the dashboard and every game log to whoever reaches it, nothing said. A warning, not a
    refusal: a proxy that only a private network reaches may be meant."""
    status = config.status
    keys = [k for k in ("trust_forwarded_proto", "trust_forwarded_for") if getattr(status, k)]
    if not keys or status.token:
        return []
    return [f"[status] {' and '.join(keys)} {'say' if len(keys) > 1 else 'says'} a proxy "
            "is in front, and there is no token "
            f"(${status.token_env} is not set): a proxy reaching serve on loopback passes "
            "for loopback (nginx sends Host 127.0.0.1:PORT unless told otherwise), so "
            "whoever reaches the proxy reads the dashboard and every game log; set a token"]


def unused_options(config: ServeConfig) -> list[str]:
    """One line for each option of an enabled practice session that its variant does not
    use: ``length`` (a riichi game's) for another variant, ``hands`` (taiwan16's and mass's
    hands a game) for riichi or mcr. `mjbot arena --variant mcr --length south` is refused;
    here a riichi session's block copied with another variant kept its ``length`` in
    silence, and a session is not stopped for it."""
    from adapter.local.game import set_length

    notes = []
    for spec in config.sessions:
        if not spec.enabled or spec.kind != "local":
            continue
        variant = spec.option("variant", "riichi")
        hands = spec.option("hands")
        game = set_length(variant, hands or 4)
        if spec.option("length") is not None and game is not None:
            notes.append(f"session {spec.name!r}: length = {spec.option('length')!r} is a "
                         f"riichi game's length, not used: a game of {variant} is {game}")
        if hands is not None and (game is None or game.startswith("one hand")):
            what = game or "as long as its length (east, south) and the scores say"
            notes.append(f"session {spec.name!r}: hands = {hands} is a taiwan16 or mass "
                         f"game's, not used: a game of {variant} is {what}")
    return notes


def tight_budgets(config: ServeConfig) -> list[str]:
    """One line for each enabled session whose ``budget`` leaves a policy that thinks (mc)
    only a tenth of itself (brain.brain.tight_limit_note). `mjbot tenhou / ntpu / mjai
    --budget` warn of it at start; a serve session so configured fell back decision after
    decision ("mc missed its 0.025s budget"), with nothing at start to say why."""
    from brain.brain import DEFAULT_MARGIN, tight_limit_note
    from brain.policies import MC_OPTIONS_PREFIX

    notes = []
    for spec in config.sessions:
        budget = spec.option("budget")
        if not spec.enabled or budget is None:
            continue
        policies = [spec.policy, *(spec.option("opponents") or ())]
        if not any(p == "mc" or p.startswith(MC_OPTIONS_PREFIX) for p in policies):
            continue
        # the margin the session's brain keeps back: NTPU's client keeps 0.3 s (as `mjbot
        # ntpu --budget` warns with), the others the brain's default
        margin = DEFAULT_MARGIN
        if spec.kind == "ntpu":
            from adapter.platforms import ntpu

            margin = ntpu.DEFAULT_MARGIN
        note = tight_limit_note(budget, margin)
        if note is not None:
            notes.append(f"session {spec.name!r}: budget = {budget:g} {note}")
    return notes
