"""`mjbot arena`: duplicate matches between policies at the local table."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from adapter.commands import UserInputError, four_policies, log, require_networks


def register(sub: Any) -> None:
    a = sub.add_parser("arena", help="duplicate matches between policies at the local table",
                       description="Every wall set is played once per distinct seating of the "
                       "four policies; figures are pooled per policy with 95%% intervals that "
                       "use the duplicate pairing.")
    a.add_argument("--variant", default="riichi", choices=["riichi", "mcr", "taiwan16", "mass"])
    a.add_argument("--policies", default="rulebased,greedy,greedy,greedy",
                   help="four policy names, seat 0..3 (default: %(default)s)")
    a.add_argument("--hands", type=int, default=400, help="hands to play, about (riichi: "
                   "whole games are played, ~5.5 hands per east-only game)")
    a.add_argument("--seed", type=int, default=0)
    a.add_argument("--workers", type=int, default=1, help="worker processes")
    a.add_argument("--length", choices=["east", "south"], default="east",
                   help="riichi game length: east-only or east-south")
    a.add_argument("--json", metavar="FILE", help="also write the figures as JSON")
    a.add_argument("--log-dir", help="where game logs go (default $MJBOT_LOG_DIR or logs)")
    a.add_argument("--no-log", action="store_true", help="write no game logs")
    a.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                   help="progress bar on stderr (default: when it is a terminal)")
    a.set_defaults(handler=cmd_arena)


def cmd_arena(args: argparse.Namespace) -> int:
    import time

    from adapter.local.arena import ArenaConfig, ProgressBar, format_summary, run_arena, summarize
    from replay.log import default_log_dir

    names = four_policies(args.policies)
    require_networks(names, args.variant)
    if args.hands < 1 or args.workers < 1:
        raise UserInputError("--hands and --workers must be at least 1")
    log_dir = None if args.no_log else str(args.log_dir or default_log_dir())
    config = ArenaConfig(args.variant, names, args.hands, args.seed, args.workers, log_dir,
                         args.length)  # type: ignore[arg-type]
    start = time.monotonic()
    results = run_arena(config, ProgressBar(args.progress))
    summary = summarize(config, results, time.monotonic() - start)
    for r in results:
        for error in r.errors:
            log().error("referee error", error=error)
    print(format_summary(summary))
    if args.json:
        Path(args.json).write_text(json.dumps(summary, indent=2) + "\n")
    return 1 if summary["referee_errors"] else 0
