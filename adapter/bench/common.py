"""What every ``mjbot bench NAME`` shares: its sub-parser with ``--json FILE``, and its report
(the figure printed, the same result written as JSON), so that the benches differ only in what
they measure and the options they take."""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from adapter.commands import Handler, UserInputError
from brain.rules.variant import VARIANT_NAMES

VARIANTS = VARIANT_NAMES


def add_bench(benches: argparse._SubParsersAction[argparse.ArgumentParser], name: str,
              handler: Handler, what: str) -> argparse.ArgumentParser:
    """The bench's own parser under ``mjbot bench``, with ``--json FILE`` and its handler."""
    # no abbreviations: `bench mc --model F` would otherwise be mc's --models, not a refusal
    p = benches.add_parser(name, help=what, description=what, allow_abbrev=False)
    p.add_argument("--json", metavar="FILE", default=None,
                   help="also write the result as JSON to FILE (-: print the JSON instead "
                        "of the table)")
    p.set_defaults(handler=handler)
    return p


def child_figures(text: str | bytes, child: str) -> dict[str, Any]:
    """The figures a bench's child process printed as one JSON object; anything else is the
    child's fault, said as such rather than met later as a missing key."""
    figures = json.loads(text)
    if not isinstance(figures, dict):
        raise RuntimeError(f"{child} printed no JSON object: {text[-200:]!r}")
    return figures


def report(args: argparse.Namespace, result: dict[str, Any],
           text: Callable[[dict[str, Any]], str]) -> None:
    """Write ``result`` to ``--json FILE``, then print the figure (``text(result)``): the file
    first, so that a reader of the table that has gone (``| head -1``) does not cost the run
    its figures; a file that cannot be written is said after the table is printed."""
    dumped = json.dumps(result, indent=2)
    if args.json == "-":
        print(dumped)
        return
    failed = None
    if args.json:
        try:
            Path(args.json).write_text(dumped + "\n", encoding="utf-8")
        except OSError as exc:
            failed = f"--json {args.json}: {exc.strerror or exc}"
    print(text(result), flush=True)
    if failed:
        raise UserInputError(failed)
