"""structlog configured once, by the CLI: readable lines on a terminal, JSON lines otherwise."""

from __future__ import annotations

import logging
import sys

import structlog


def configure_logging(json_lines: bool | None = None, level: str = "info") -> None:
    """``json_lines=None`` picks JSON when stderr is not a terminal (a service, a pipe, CI)."""
    if json_lines is None:
        json_lines = not sys.stderr.isatty()
    numeric = logging.getLevelName(level.upper())
    if not isinstance(numeric, int):
        raise ValueError(f"unknown log level {level!r}")
    logging.basicConfig(stream=sys.stderr, level=numeric, format="%(message)s", force=True)
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
        logger_factory=structlog.PrintLoggerFactory(file=sys.stderr),
        cache_logger_on_first_use=False,
    )
