"""Logging configured once, by the CLI: structlog with readable lines on a terminal and JSON
lines otherwise; plain stdlib lines for the Botzone bot, which pays every import per turn."""

from __future__ import annotations

import contextlib
import json
import logging
import sys
from typing import Any, TextIO, cast


def configure_plain_logging(level: str = "info") -> int:
    """stdlib logging to stderr, one message per line; returns the numeric level."""
    numeric = logging.getLevelName(level.upper())
    if not isinstance(numeric, int):
        raise ValueError(f"unknown log level {level!r}")
    logging.basicConfig(stream=sys.stderr, level=numeric, format="%(message)s", force=True)
    # the websockets library tells its own news at INFO ("server listening on ...", every
    # connection opened and closed), bare lines among ours that a user scraping our port line
    # reads first: shown from WARNING, or all of it at --log-level debug
    logging.getLogger("websockets").setLevel(numeric if numeric <= logging.DEBUG
                                             else max(numeric, logging.WARNING))
    return numeric


_JSON_ASKED = [False]  # --log-json given: configure_logging(True)


def json_asked() -> bool:
    """Whether JSON log lines were asked for (``--log-json``): a line for the user that is no
    log line (a wait, a failure's one line) is then one JSON log line too, so that a log
    collector reads every line; without it such lines stay plain, whatever the renderer."""
    return _JSON_ASKED[0]


def configure_logging(json_lines: bool | None = None, level: str = "info") -> None:
    """``json_lines=None`` picks JSON when stderr is not a terminal (a service, a pipe, CI)."""
    import structlog

    _JSON_ASKED[0] = json_lines is True
    if json_lines is None:
        json_lines = not sys.stderr.isatty()
    numeric = configure_plain_logging(level)
    renderer: structlog.typing.Processor = (
        structlog.processors.JSONRenderer() if json_lines
        else structlog.dev.ConsoleRenderer(colors=sys.stderr.isatty())
    )
    structlog.configure(
        processors=[
            structlog.contextvars.merge_contextvars,
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            structlog.processors.StackInfoRenderer(),
            structlog.processors.format_exc_info,
            renderer,
        ],
        wrapper_class=structlog.make_filtering_bound_logger(numeric),
        logger_factory=structlog.PrintLoggerFactory(
            file=cast(TextIO, _LinesWhileRead(sys.stderr))),
        cache_logger_on_first_use=False,
    )


class _LinesWhileRead:
    """stderr for log lines, a line that cannot be written dropped: with its reader gone (the
    parent killed outright, stderr a pipe to it) the error was raised into the code that
    logged, an outside program's fault noted in a game under way ending that game as a
    referee error in the dataset."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        try:
            return self._stream.write(text)
        except OSError:
            return 0

    def flush(self) -> None:
        with contextlib.suppress(OSError):
            self._stream.flush()


def get_logger(name: str) -> Any:
    """structlog's logger where structlog is installed (the CLI configures it); else one of
    the standard library taking the same calls (``log.error("event", key=value)``) as one
    plain line, for the mjai.app upload, whose image has no structlog."""
    try:
        import structlog
    except ImportError:
        return PlainLogger(name)
    return structlog.get_logger(name)


class PlainLogger:
    """``log.warning("event", key=value)`` as the line ``event key=value`` (values as JSON) on
    the stdlib logger ``name``: structlog's calls, without structlog."""

    def __init__(self, name: str) -> None:
        self._log = logging.getLogger(name)

    def _emit(self, level: int, event: str, fields: dict[str, Any]) -> None:
        if self._log.isEnabledFor(level):
            pairs = "".join(f" {key}={json.dumps(value, ensure_ascii=False, default=str)}"
                            for key, value in fields.items())
            self._log.log(level, "%s%s", event, pairs)

    def debug(self, event: str, **fields: Any) -> None:
        self._emit(logging.DEBUG, event, fields)

    def info(self, event: str, **fields: Any) -> None:
        self._emit(logging.INFO, event, fields)

    def warning(self, event: str, **fields: Any) -> None:
        self._emit(logging.WARNING, event, fields)

    def error(self, event: str, **fields: Any) -> None:
        self._emit(logging.ERROR, event, fields)
