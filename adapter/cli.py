"""`mjbot ...`: the entry point. It builds the parser from the command modules in
adapter/commands, configures logging once and turns a user's mistake into one clear line."""

from __future__ import annotations

import argparse
import errno
import os
import signal
import sys
from typing import Any

from adapter import early_stop  # noqa: F401  first: its SIGTERM handler, in the imports below
from adapter.argtypes import LogJsonAction, OneLineParser, UsageErrors
from adapter.commands import (
    Handler,
    UserInputError,
    arena,
    bench,
    botzone,
    league,
    mjai,
    mjbot_version,
    models,
    nn,
    ntpu,
    replay,
    review,
    selfplay,
    serve,
    tell,
    tenhou,
    tools,
    usage_error_as_json,
)
from adapter.logging_setup import configure_logging, configure_plain_logging, json_asked

# what a write meets when the disk (or the quota, the file size limit) is full or the mount is
# read-only: said in one line, where a traceback told the user nothing more
DISK_FULL = {errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EROFS}

COMMAND_GROUPS = (tools, bench, botzone, ntpu, tenhou, mjai, arena, league, replay, review,
                  selfplay, serve, models, nn)


class _VersionAction(argparse.Action):
    """``--version``, looked up only when asked for."""

    def __init__(self, option_strings: list[str], dest: str = argparse.SUPPRESS,
                 **kwargs: Any) -> None:
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, **kwargs)

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace,
                 values: Any, option_string: str | None = None) -> None:
        try:
            version = mjbot_version()
        except KeyboardInterrupt:  # git asked, from a checkout: one line, not a traceback
            parser.exit(128 + 2, "mjbot --version: interrupted\n")
        print(f"mjbot {version}")
        parser.exit()


def build_parser() -> argparse.ArgumentParser:
    p = OneLineParser(prog="mjbot", description="Competition Mahjong bot.",
                      usage_errors=UsageErrors(as_json=usage_error_as_json))
    p.add_argument("--version", action=_VersionAction, help="print the version and exit")
    p.add_argument("--log-json", action=LogJsonAction, default=None,
                   help="log JSON lines (default when stderr is not a terminal)")
    p.add_argument("--log-level", default="info", help="debug, info, warning, error")
    sub = p.add_subparsers(dest="command", metavar="COMMAND")
    for group in COMMAND_GROUPS:
        group.register(sub)
    return p


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        if args.command == "botzone":
            configure_plain_logging(args.log_level)
        else:
            configure_logging(args.log_json, args.log_level)
    except ValueError as exc:  # the one option they read: a bad value, in one line
        parser.error(f"argument --log-level: {exc} (debug, info, warning, error)")
    if args.command is None:
        parser.print_help()
        return 2
    try:
        if hasattr(args, "log_dir") and not getattr(args, "no_log", False):  # writes game
            # logs: their build is the code it started with (git asked once, now; a Ctrl-C
            # meanwhile is the command's, below, where it was a traceback)
            mjbot_version()
        handler: Handler = args.handler
        return handler(args)
    except UserInputError as exc:
        report_user_error(args, exc)
        return 2
    except BrokenPipeError:  # `mjbot replay LOG | head -1`: the reader has what it wanted
        return closed_stdout()
    except KeyboardInterrupt:  # a second Ctrl-C: the run ends now, without its report
        tell(args, "interrupted", "stopped")
        return 128 + 2
    except RuntimeError as exc:
        from adapter.local.stopping import WorkerDied

        if not isinstance(exc, WorkerDied):
            raise
        tell(args, str(exc))
        return 1
    except OSError as exc:
        if exc.errno not in DISK_FULL:
            raise
        # a full disk (or quota, file size limit, read-only mount) met while writing: the
        # writers leave no half file (brain.shipped.save_weights, the shards' write_npz)
        tell(args, f"cannot write {exc.filename or 'its output'}: {exc.strerror} (nothing "
             "written there)")
        return 1
    except BaseException as exc:  # imported only here: a Botzone turn starts no faster for it
        from adapter.local.external.process import NoClient

        if not isinstance(exc, NoClient):
            raise
        tell(args, str(exc))  # a listening seat's bot
        return 1  # never came: the run cannot go on


def closed_stdout() -> int:
    """The exit of a command whose reader closed the pipe early: quiet, as a program that
    SIGPIPE ends (128 + 13), with stdout pointed at /dev/null so that the interpreter's
    last flush of what is still buffered does not print a second traceback."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)
    return 128 + signal.SIGPIPE


def report_user_error(args: argparse.Namespace, exc: UserInputError) -> None:
    """Print the mistake once: a JSON log line when JSON logs were asked for (a service reads
    them), else one plain line for the person at the terminal or reading the pipe. JSON only
    where JSON logging was set up (`mjbot botzone` keeps plain lines, and structlog unconfigured
    writes to stdout, its answer channel)."""
    if json_asked():
        from adapter.commands import log

        log().error("bad input", command=args.command_path, error=str(exc))
    else:
        print(f"mjbot {args.command_path}: {exc}", file=sys.stderr)


if __name__ == "__main__":
    sys.exit(main())
