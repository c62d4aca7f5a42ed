"""The options of a Botzone turn, standard library only: one set for ``mjbot botzone`` and the
upload bundle's own parser, kept apart from the bot itself so that building mjbot's parser
imports no numpy (every one-shot process of every command builds it)."""

from __future__ import annotations

import os
from typing import Any

FIRST_TURN_LIMIT = 6.0  # seconds, Python, as the PKU local runner mirrors Botzone's settings
LATER_TURN_LIMIT = 4.0  # keep-running turns after the first


def one_blas_thread() -> None:
    """Called before numpy is imported: OpenBLAS (numpy's) starts a thread per core when it
    loads, which doubled the CPU of numpy's import on a 2-core machine (about 60 ms to 120)
    and slowed a one-shot turn beside other work; the bot's arrays are too small to gain from
    threads. A value the environment gives is kept; an empty one is none (OpenBLAS reads it
    so, as limit_blas_threads in adapter/commands/models.py does)."""
    if not os.environ.get("OPENBLAS_NUM_THREADS"):
        os.environ["OPENBLAS_NUM_THREADS"] = "1"


def add_turn_options(parser: Any, keep_running_default: bool = False,
                     policy_default: str = "rulebased") -> None:
    """Add the turn's options to ``parser``; a limit that is no number of seconds above 0 is
    refused in both parsers."""
    import argparse  # not at the top: a turn started with no options builds no parser

    from adapter.argtypes import add_log_options, positive_seconds

    parser.add_argument("--keep-running", action=argparse.BooleanOptionalAction,
                        default=keep_running_default,
                        help="stay alive and answer one request line per later turn")
    parser.add_argument("--json", action="store_true", help="require JSON interaction input")
    parser.add_argument("--policy", default=policy_default)
    parser.add_argument("--time-limit", type=positive_seconds, default=FIRST_TURN_LIMIT,
                        help="seconds for the first turn (one-shot: every turn)")
    parser.add_argument("--later-time-limit", type=positive_seconds, default=LATER_TURN_LIMIT,
                        help="seconds for later keep-running turns")
    add_log_options(parser, "game logs (default $MJBOT_LOG_DIR or logs)", "write no game log")


def turn_defaults(keep_running_default: bool = False,
                  policy_default: str = "rulebased") -> dict[str, Any]:
    """What :func:`add_turn_options`' parser gives for no options, without building it:
    Botzone starts the upload with none, every one-shot turn, and the parser (argparse, which
    imports shutil, bz2 and lzma to size its help) was 20 M of the ~325 M instructions such a
    turn spends beyond Python and numpy."""
    return {"keep_running": keep_running_default, "json": False, "policy": policy_default,
            "time_limit": FIRST_TURN_LIMIT, "later_time_limit": LATER_TURN_LIMIT,
            "log_dir": None, "no_log": False}
