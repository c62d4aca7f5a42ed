"""`mjbot bench NAME ...`: the benchmarks of the hot paths, each a ratio against a reference
measured in the same run. Each bench is a module of adapter/bench that owns its options
(``register(benches)``) and its report; this module only collects them, and only once a bench
is asked for: the bench modules import numpy and the brain at the top, and every `mjbot` start
(a Botzone one-shot turn among them) builds the top-level parser."""

from __future__ import annotations

import argparse
import importlib
from typing import Any

# NAME -> its module in adapter/bench (review also registers `commentary`).
BENCHES = {"shanten": "shanten", "log": "log", "arena": "arena", "botzone": "botzone",
           "botstart": "botstart",
           "games": "games",
           "mjai": "mjai", "mc": "mc", "review": "review", "commentary": "review",
           "ray": "ray", "nn": "nn", "serve": "serve", "selfplay": "selfplay",
           "logkeep": "logkeep", "view": "view", "viewstop": "viewstop", "think": "think",
           "idleread": "idleread", "outsidestart": "outsidestart"}
DESCRIPTION = "Each bench takes only its own options: mjbot bench NAME -h."


def register(sub: Any) -> None:
    b = sub.add_parser("bench", help="benchmarks of the hot paths (ratios vs references)",
                       description=DESCRIPTION, add_help=False)
    b.add_argument("-h", "--help", action=_BenchHelp, help="the benches and what they measure")
    b.add_argument("words", nargs=argparse.REMAINDER, metavar="NAME ...",
                   help=f"one of {', '.join(BENCHES)}, then its options")
    b.set_defaults(handler=_run)


class _BenchHelp(argparse.Action):
    """``mjbot bench -h``: every bench with its one line (their modules imported only now)."""

    def __init__(self, option_strings: list[str], dest: str = argparse.SUPPRESS,
                 **kwargs: Any) -> None:
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, **kwargs)

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace,
                 values: Any, option_string: str | None = None) -> None:
        bench_parser().print_help()
        parser.exit()


def bench_parser(names: list[str] | None = None,
                 json_errors: bool = False) -> argparse.ArgumentParser:
    """``mjbot bench`` with the benches ``names`` registered (default: all of them); its
    usage errors JSON log lines where ``json_errors`` (`mjbot --log-json bench ...`)."""
    from adapter.argtypes import OneLineParser, UsageErrors
    from adapter.commands import usage_error_as_json

    p = OneLineParser(prog="mjbot bench", description=DESCRIPTION,
                      usage_errors=UsageErrors(usage_error_as_json, json=json_errors))
    benches = p.add_subparsers(dest="what", metavar="NAME", required=True)
    for module in dict.fromkeys(BENCHES[n] for n in (names or BENCHES)):
        importlib.import_module(f"adapter.bench.{module}").register(benches)
    return p


def _run(args: argparse.Namespace) -> int:
    from adapter.commands import Handler, require_writable

    words = args.words
    asked = [words[0]] if words and words[0] in BENCHES else None  # else: all, for the list
    own = bench_parser(asked, json_errors=bool(args.log_json)).parse_args(words)
    own.log_json = args.log_json
    # what the bench's refusals are printed or logged under, here and in mjbot's main:
    # `bench NAME`, as its own lines (its fallback verdict) and its usage errors are
    args.command_path = own.command_path
    require_writable(own.json, "--json")
    handler: Handler = own.handler
    return handler(own)
