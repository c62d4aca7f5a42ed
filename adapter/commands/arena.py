"""`mjbot arena`: duplicate matches between policies at the local table."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, Any

from adapter.commands import (
    add_length_argument,
    add_log_options,
    add_stop_after_argument,
    add_table_arguments,
    add_variant_option,
    checked_stop_after,
    fallback_verdict,
    four_policies,
    log,
    log_folder,
    report,
    require_pair_keys,
    require_table,
    require_writable,
    start_ray,
)

if TYPE_CHECKING:
    from adapter.local.arena import ArenaConfig
    from adapter.local.stopping import StopRequest

EXAMPLES = """examples:
  mjbot arena --policies rulebased,greedy,greedy,greedy --hands 200
  mjbot arena --policies 'mjai:python mybot.py,rulebased,rulebased,rulebased' --hands 40
  mjbot arena --variant mcr --policies 'botzone:./mybot,rulebased,greedy,greedy' --hands 24
  mjbot arena --variant mcr --policies 'botzone-keep-json:python bot.py,rulebased,greedy,mc'
  mjbot arena --variant taiwan16 --policies 'ntpu:./seofon,rulebased,rulebased,rulebased'
  mjbot arena --policies mc,rulebased,rulebased,rulebased --budget 2.25 --hands 40
  mjbot arena --policies mc@budget=2.25,mc@budget=0.3,rulebased,rulebased --hands 40
  mjbot arena --policies 'nn,rb=mjai:python bot.py,rb=mjai:python bot.py,rb=mjai:python bot.py'

An outside program is seated as KIND:COMMAND: mjai (riichi; mjai.app's stdin/stdout form,
the seat number appended to the command), mjai-tcp:HOST:PORT (riichi; the seat listens there
as the original mjai server, one connection per game), botzone / botzone-json (MCR; started
anew every turn, simple / JSON interaction), botzone-keep / botzone-keep-json (MCR; keeps
running), ntpu (taiwan16; the NTPU protocol on stdin/stdout). It plays the same walls in
every seating; a late, crashed, illegal or unreadable answer is played safe, counted as its
fallback and reported per program (--seat-limit: its time).

--budget S: our own seats decide as a platform session's brain does with an S-second limit
(the policy gets S less a 0.25 s margin; mc searches 0.8 of that): 2.25 gives mc 2 s of
thinking, 0.3 gives it 0.05 s; at or below 0.25 mc gets a tenth of S (a warning says so).
POLICY@budget=S sets one seat's own limit.

mc@KEY=VALUE;KEY=VALUE seats mc with its own options over MJBOT_MC's (keys as in MJBOT_MC),
so two configurations share the walls, the seatings and the opponents and their difference
is paired: mjbot arena --variant mcr --policies 'strict=mc@plan_strict=true,mc,rulebased,rulebased'

Stopped early (--stop-after, SIGTERM as from `timeout`, or Ctrl-C), the arena reports the
first wall sets that finished, every seating of each, and says how many of how many ("stopped"
in --json); the rest is not counted. With worker processes the stop comes at once, in one
process after the wall set under way, or at once while an outside program is awaited (Ctrl-C
again: at once, no figures). A signal's exit
status is 128 + its number.

LABEL=SEAT names a seat in the table, the JSON and the logs (LABEL: letters, digits, _ - .,
at most 24): seats under one label are one row; --json keeps what it stands for (specs)."""


def register(sub: Any) -> None:
    a = sub.add_parser("arena", help="duplicate matches between policies at the local table",
                       description="Every wall set is played once per distinct seating of the "
                       "four policies; figures are pooled per policy with 95% intervals that "
                       "use the duplicate pairing.",
                       epilog=EXAMPLES, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_variant_option(a, help="the rules at the table (default: %(default)s)")
    a.add_argument("--policies", default="rulebased,greedy,greedy,greedy",
                   help="four policy names or outside programs (KIND:CMD, see below), seat "
                   "0..3, each optionally LABEL= to name it in the figures, e.g. "
                   "'nn,rb=mjai:python -m bot,rb=mjai:python -m bot,rb=mjai:python -m bot' "
                   "(default: %(default)s)")
    a.add_argument("--hands", type=int, default=400, help="hands to play, about: the fewest "
                   "whole wall sets reaching it, each played in every distinct seating of the "
                   "policies (riichi: ~5.5 hands per east-only game, ~22 per wall set for the "
                   "default's 4 seatings) (default: %(default)s)")
    a.add_argument("--seed", type=int, default=0,
                   help="the walls' seed: the same seed, the same walls (default: %(default)s)")
    add_table_arguments(a)
    add_length_argument(a)
    add_stop_after_argument(a, "start no wall set after this many seconds and report the "
                            "ones finished; SIGTERM or Ctrl-C does the same (see below)")
    a.add_argument("--json", metavar="FILE", help="also write the figures as JSON "
                    "('-': onto stdout, and the text onto stderr)")
    add_log_options(a, "where game logs go (default $MJBOT_LOG_DIR or logs)", "write no game logs")
    a.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                   help="progress bar on stderr (default: when it is a terminal)")
    a.set_defaults(handler=cmd_arena)


def cmd_arena(args: argparse.Namespace) -> int:
    from adapter.local.arena import ArenaConfig
    from adapter.local.stopping import StopRequest
    stop_after = checked_stop_after(args)
    require_writable(args.json, "--json")
    names = four_policies(args.policies)
    require_pair_keys(names)
    require_table(names, args)
    ray = start_ray(args)
    workers = ray.workers if ray is not None else args.workers or 1
    log_dir = log_folder(args.log_dir, args.no_log)
    config = ArenaConfig(args.variant, names, args.hands, args.seed, workers, log_dir,
                         args.length, seat_limit=args.seat_limit,
                         budget=args.budget, connect_wait=args.connect_wait)
    stop = StopRequest(stop_after, args.command_path)
    with stop.on_signals():  # to the end: a signal never cuts the report being written
        return _run_and_report(args, config, ray, stop)


def _run_and_report(args: argparse.Namespace, config: ArenaConfig, ray: Any,
                    stop: StopRequest) -> int:
    """Play the arena until it ends or ``stop`` asks, then print and write its figures;
    the exit status."""
    import time

    from adapter.local.arena import (
        environment_changed,
        format_summary,
        run_arena_until,
        summarize,
    )
    from adapter.local.seat import policy_environment
    from adapter.local.stopping import exit_status, stop_reason_text
    from adapter.progress import ProgressBar

    began = policy_environment(config.policies)  # the weights as the games begin
    try:
        start = time.monotonic()
        bar = ProgressBar(args.progress)
        results, early = run_arena_until(config, bar, ray, stop)
        bar.end()
        seconds = time.monotonic() - start
    finally:
        if ray is not None:
            ray.cluster.close()
    for r in results:
        for error in r.errors:
            log().error("referee error", error=error)
    status = exit_status(early.reason if early else None)
    if not results:
        assert early is not None  # a finished run has every unit
        print(f"mjbot arena: stopped ({stop_reason_text(early.reason)}) before the first "
              "wall set was finished: no figures", file=sys.stderr)
        return status or 1
    summary = summarize(config, results, seconds, began)
    changed = environment_changed(config, began)
    if changed is not None:
        summary["environment_changed"] = changed
        print(f"mjbot arena: warning: {changed}", file=sys.stderr)
    if early is not None:
        summary["stopped"] = early.as_dict()
    if ray is not None:
        summary["ray"] = ray.figures(len(results))
    report(args.json, format_summary(summary), summary)
    failed = fallback_verdict(args, summary["policies"])
    return status or (1 if summary["referee_errors"] else failed)
