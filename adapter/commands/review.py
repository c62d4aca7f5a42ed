"""`mjbot review`: every decision of one seat ranked by a policy, the loss of what was
played, the costliest decisions and a rating (text, --json FILE, --html FILE)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from adapter.commands import UserInputError, reading, require_networks, require_writable
from adapter.progress import ProgressBar


def register(sub: Any) -> None:
    r = sub.add_parser("review", help="what should have been played: a policy's review of "
                       "one seat's decisions",
                       description="GAME is any log `mjbot replay` reads (mjbot's own logs, "
                       "tenhou.net/6, mjlog, mjai, Botzone judge logs and preprocessed human "
                       "games, NYCU SGF, NTPU, Tenhou client transcripts).")
    r.add_argument("game", metavar="GAME")
    # `mjbot review logs/*`: the files after the first, refused by name (argparse said only
    # "unrecognized arguments: " and every one of them)
    r.add_argument("more", nargs="*", help=argparse.SUPPRESS)
    r.rest = "more"  # and those after an option (`review a --seat 1 b`)
    r.add_argument("--seat", type=int, choices=[0, 1, 2, 3], default=None,
                   help="whose decisions (imports: default 0; own logs: the bot's seat)")
    r.add_argument("--policy", default="mc", help="mc (expected points), rulebased (ranks), "
                   "nn (ranks; needs its weights for the variant)")
    r.add_argument("--playouts", type=int, default=512,
                   help="mc: playouts per legal action (seeded: the same review everywhere)")
    r.add_argument("--seed", type=int, default=0, help="mc: seed of the playouts")
    r.add_argument("--json", metavar="FILE", help="write the whole review as JSON ('-': "
                   "standard output, nothing else printed)")
    r.add_argument("--html", metavar="FILE", help="write the review as one HTML page ('-': "
                   "standard output, nothing else printed)")
    r.add_argument("--all", action="store_true", help="print one line per decision too")
    r.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                   help="progress bar on stderr (default: when it is a terminal)")
    r.set_defaults(handler=cmd_review)


def load_replay(path: str, seat: int | None) -> Any:
    """The replay of GAME, any format; a user's mistake as UserInputError."""
    from replay import replayer

    with reading(path):
        return replayer.load(path, seat)


def evaluator(name: str, playouts: int, seed: int, predictor: bool = False) -> Any:
    """A review's policy, or (``predictor``) anything that ranks moves for the commentary."""
    from brain.policies.mc.models import MissingModels
    from replay.review.registry import evaluator_for, policies

    if playouts < 1:
        raise UserInputError("--playouts must be at least 1")
    if name.partition("@")[0] == "seed004" and not predictor:  # seed004@x too: not "give it
        # by its name alone", which review then refuses as this
        raise UserInputError(f"seed004 predicts moves but values none: review with one of "
                             f"{', '.join(policies())}")
    try:
        return evaluator_for(name, playouts, seed)
    except (ValueError, MissingModels) as exc:
        raise UserInputError(str(exc)) from None


def cmd_review(args: argparse.Namespace) -> int:
    from brain.policies.mc.models import MissingModels
    from replay import replayer
    from replay.review import html
    from replay.review.game import format_review, review

    if args.more:
        raise UserInputError(f"reviews one GAME at a time, and {len(args.more) + 1} were "
                             f"given ({args.game}, {args.more[0]}{', ...' * (len(args.more) > 1)}"
                             "): review each alone; `mjbot replay` shows many")
    if args.json == "-" and args.html == "-":  # both on stdout: neither could be read back
        raise UserInputError("--json - and --html -: only one of them can go to standard "
                             "output; name a FILE for the other")
    require_writable(args.json, "--json")
    require_writable(args.html, "--html")
    ev = evaluator(args.policy, args.playouts, args.seed)
    rep = load_replay(args.game, args.seat)
    require_networks([args.policy], rep.variant)
    try:
        result = review(rep, ev, ProgressBar(args.progress, "decisions"))
    except MissingModels as exc:
        raise UserInputError(f"{exc} (or review with --policy rulebased)") from None
    if args.json:
        text = json.dumps(result, ensure_ascii=False, indent=1)
        if args.json == "-":
            print(text)
        else:
            Path(args.json).write_text(text + "\n", encoding="utf-8")
    if args.html == "-":  # as --json -: it wrote the page into a file named '-'
        print(html.render(result))
    elif args.html:
        Path(args.html).write_text(html.render(result), encoding="utf-8")
    if "-" not in (args.json, args.html):
        print(format_review(result, every=args.all))
    for d in rep.damaged:  # a rating of part of the game must not pass for the whole's
        print(f"mjbot review: {args.game}: {replayer.damage_note(d)}", file=sys.stderr)
    if result["policy_failures"]:  # its rating is not the policy's: the run must not pass
        print(f"mjbot review: --policy {args.policy} gave no answer on "
              f"{result['policy_failures']} decision(s)", file=sys.stderr)
    return 1 if result["policy_failures"] or rep.damaged else 0
