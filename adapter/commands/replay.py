"""`mjbot replay`: summarise, re-check, review or convert game logs."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from adapter.commands import (
    UserInputError,
    reading,
    require_networks,
    require_playable,
    require_policy,
    require_writable,
)

PREDICTOR_DEFAULT = "rulebased"


def register(sub: Any) -> None:
    r = sub.add_parser("replay", help="summarise, re-check, review or convert game logs",
                       description="LOG is one of mjbot's own logs (.mjlog.msgpack), a "
                       "tenhou.net/6 JSON, an mjlog XML, an mjai JSONL, a Botzone judge log, "
                       "Botzone human games as ccr-cheng's preprocessing writes them, an "
                       "NYCU lab SGF (GM[84], full information), an NTPU client's command log or a "
                       "Tenhou client transcript (Send: / Get: lines); "
                       "a file of none of these is reported with why each format refused it.")
    r.add_argument("logs", nargs="+", metavar="LOG")
    r.add_argument("--seat", type=int, choices=[0, 1, 2, 3], default=None,
                   help="whose point of view, 0..3 (imports; default 0, own logs: the bot's seat); "
                   "an NTPU seat N (1..4, as its lines and log file names number them) is N-1")
    r.add_argument("--json", action="store_true", help="machine-readable output")
    r.add_argument("--policy", metavar="NAME", help="re-run a policy on every decision and "
                   "report agreement with the recorded play")
    r.add_argument("--commentary", action="store_true",
                   help="per move: the top-k predicted moves and one sentence naming the "
                   "deciding factor (with --json: a 'commentary' list, the viewer's subtitles)")
    r.add_argument("--top-k", type=int, default=None,
                   help="--commentary: moves predicted (default 3)")
    r.add_argument("--predictor", default=PREDICTOR_DEFAULT,
                   help="--commentary: whose ranking predicts (rulebased, mc, seed004: the "
                   "thesis' player's view)")
    r.add_argument("--reparse", action="store_true",
                   help="re-feed the raw messages through the codec and compare the events")
    r.add_argument("--export", choices=["tenhou6", "mjai"], help="convert a riichi game")
    r.add_argument("-o", "--output",
                   help="export to this file (default, or -: standard output); never the LOG")
    r.set_defaults(handler=cmd_replay)


def cmd_replay(args: argparse.Namespace) -> int:
    from replay import replayer
    from replay.formats import mjai_log, tenhou6

    if args.export and len(args.logs) != 1:
        raise UserInputError("--export converts one LOG at a time")
    if not args.commentary and (args.top_k is not None
                                or args.predictor != PREDICTOR_DEFAULT):
        raise UserInputError("--top-k and --predictor shape the commentary: add --commentary")
    if args.output and not args.export:
        raise UserInputError("-o names the file an --export goes to: add --export")
    # in the words of every other output option, and before a long log is read and converted
    require_writable(args.output, "-o")
    if args.export and args.output and args.output != "-" and _same_file(args.output,
                                                                        args.logs[0]):
        # the export was written over the game it was read from, the log lost
        raise UserInputError(f"-o {args.output}: is the LOG itself; name another file")
    # a mistyped predictor or --top-k is the option's fault, named before any game is read
    # (inside reading() it read as the LOG's: "GAME: unknown policy 'rulebsed'")
    ranker = _ranker(args.predictor) if args.commentary else None
    if args.top_k is not None and args.top_k < 1:
        raise UserInputError("--top-k must be at least 1")
    if args.policy:  # a name no policy has is wrong for every file: said once, before any
        require_policy(args.policy)
    outputs: list[dict[str, object]] = []
    if args.export:
        with reading(args.logs[0]):
            rep = replayer.load(args.logs[0], args.seat)
            if rep.record is None:
                # one seat's view: the others' hands, which both formats write, are unknown
                raise UserInputError(
                    f"--export needs the whole game (an import, or a local-table log); this "
                    f"{rep.source} log holds seat {rep.seat}'s view only")
            replayer.check_exportable(rep.record)
            text = (tenhou6.dumps if args.export == "tenhou6" else mjai_log.dumps)(rep.record)
            notes, unfit = replayer.export_notes(rep)
        _write_export(text, args.output)
        for line in notes:  # the export holds no note: a cut or damaged game must not pass
            # for a whole one (exit 1 for a damaged hand, as replay's)
            print(f"mjbot {args.command_path}: {args.logs[0]}: {line}", file=sys.stderr)
        return 1 if unfit else 0
    failed = unranked = unreadable = unshown = 0  # and the files no reader took, or that
    # --policy, --commentary or --reparse failed on
    damaged: list[str] = []  # the hands a damaged log's moves stop fitting in, per file
    for path in args.logs:
        try:
            with reading(path):
                rep = replayer.load(path, args.seat)
        except UserInputError as exc:
            if len(args.logs) == 1:
                raise
            # `mjbot replay logs/*`: a file no reader takes (a README beside the logs, one
            # cut short) stopped the run there, the logs after it unshown; it is now named
            # in one line where it is met, the others shown, and the run exits 2 at the end
            print(f"mjbot {args.command_path}: {_one_line(path, str(exc))}", file=sys.stderr)
            unreadable += 1
            continue
        try:
            result, file_failed, file_unranked = _examine(rep, path, args, ranker)
        except UserInputError as exc:
            if len(args.logs) == 1:
                raise
            # a file read whose --policy (weights of another variant), --predictor or
            # --reparse (an import) failed stopped the run as an unreadable file did: named
            # likewise, the others shown, exit 2 at the end
            said = str(exc)
            print(f"mjbot {args.command_path}: "
                  f"{said if said.startswith(f'{path}: ') else f'{path}: {said}'}",
                  file=sys.stderr)
            unshown += 1
            continue
        failed += file_failed
        unranked += file_unranked
        outputs.append(result)
        damaged += [f"{path}: {replayer.damage_note(d)}" for d in rep.damaged]
        if not args.json:
            print(replayer.format_summary(result["summary"]))  # type: ignore[arg-type]
            if "agreement" in result:
                print(replayer.format_agreement(result["agreement"]))  # type: ignore[arg-type]
            if "commentary" in result:
                from replay.review.commentary import format_commentary

                print(format_commentary(result["commentary"]))  # type: ignore[arg-type]
            if "reparse" in result:
                _print_reparse(result["reparse"])  # type: ignore[arg-type]
    if args.json:  # a list for many LOGs, also where only one of them could be read
        print(json.dumps(outputs[0] if len(args.logs) == 1 else outputs, ensure_ascii=False,
                         indent=2))
    for line in damaged:  # a part of a file not read must not pass for the whole
        print(f"mjbot replay: {line}", file=sys.stderr)
    if failed:  # its agreement is not the policy's: the run must not pass for it
        print(f"mjbot replay: --policy {args.policy} gave no answer on {failed} decision(s)",
              file=sys.stderr)
    if unranked:  # those moves have their sentence but no prediction: not the predictor's
        print(f"mjbot replay: --predictor {args.predictor} gave no answer on {unranked} "
              "move(s): their commentary has no prediction", file=sys.stderr)
    if unreadable or unshown:  # said where each was met; counted here, after the rest
        rest = "the others shown" if outputs else "none shown"
        counts = (f"{unreadable} of {len(args.logs)} files not read" if not unshown
                  else f"{unshown} of {len(args.logs)} files read but not shown"
                  if not unreadable else f"{unreadable} of {len(args.logs)} files not read, "
                  f"{unshown} read but not shown")
        print(f"mjbot {args.command_path}: {counts} (each named above); {rest}",
              file=sys.stderr)
        return 2
    return 1 if failed or unranked or damaged else 0


def _examine(rep: Any, path: str, args: argparse.Namespace,
             ranker: Any) -> tuple[dict[str, object], int, int]:
    """What replay shows of one file read: its summary, and the agreement, commentary and
    reparse asked for, with the decisions the policy and the moves the predictor gave no
    answer on; a policy, predictor or reparse that fails on it as the user's error."""
    from replay import replayer

    if args.policy:  # the policy's faults named as its own, not as the LOG's
        require_playable(args.policy, rep.variant)
    if ranker is not None:  # likewise the predictor's weights (nn@FILE), for this variant
        try:
            require_networks([args.predictor], rep.variant)
        except UserInputError as exc:
            raise UserInputError(f"--predictor: {exc}") from None
    with reading(path):
        noted = len(rep.damaged)  # the hands the reader noted; those after, met below
        result: dict[str, object] = {"summary": (summary := replayer.summarize(rep))}
        failed = unranked = 0
        if args.policy:
            result["agreement"] = agreement = replayer.agreement(rep, args.policy)
            failed = agreement["failed"]
        if ranker is not None:
            result["commentary"] = rows = _commentary(rep, ranker, args)
            unranked = sum("no_prediction" in r for r in rows)
        if args.reparse:
            result["reparse"] = replayer.reparse(rep)
    # a hand of our own log that --policy's or --commentary's table refused where it met
    # it (its decisions are recorded, so the reader noted none): a note, as an import's
    summary["notes"] += [replayer.damage_note(d) for d in rep.damaged[noted:]]
    return result, failed, unranked


def _one_line(path: str, error: str) -> str:
    """A file none of several LOGs' readers took, in one line: the first of the error's
    (every format's reason is a line each, ten for a file of no format we know), with where
    to read the rest."""
    first, *rest = error.splitlines()
    if not rest:
        return first
    import shlex  # the command as a shell reads it: a name may hold a space

    return (f"{first.removesuffix('; tried:')} (`mjbot replay {shlex.quote(path)}` says why "
            "each format refused it)")


def _print_reparse(rp: dict[str, Any]) -> None:
    if "clients" in rp:  # an ntpu-server match log: each client's lines read, not compared
        print(f"reparse: the {rp['lines']} lines sent to the {len(rp['clients'])} clients "
              f"read by the NTPU codec as {rp['reparsed_events']} events, "
              f"{rp['unreadable']} unreadable (a match log holds the referee's table, not "
              "a client's events: read, not compared)")
    else:
        unread = len(rp["unreadable_in_the_game"])
        print(f"reparse: {rp['reparsed_events']}/{rp['recorded_events']} events, "
              f"identical: {rp['identical']}"
              + (f"; {unread} unreadable message(s), as in the game" if unread else ""))
    for error in rp["errors"]:
        print(f"  reparse error: {error}")
    _print_mismatches(rp["mismatches"])


SHOWN_MISMATCHES = 5


def _print_mismatches(mismatches: list[dict[str, Any]]) -> None:
    """The events the codec now makes otherwise than the log holds, the first few: without
    them 'identical: False' said nothing of where or how (an older mjbot's log, read by a
    codec changed since, differs where the change is)."""
    for m in mismatches[:SHOWN_MISMATCHES]:
        head = f"  event {m['index']}: "
        print(f"{head}recorded {m['recorded']}")
        print(f"{' ' * len(head)}reparsed {m['reparsed']}")
    if len(mismatches) > SHOWN_MISMATCHES:
        print(f"  and {len(mismatches) - SHOWN_MISMATCHES} more differences (--json lists "
              "them, up to 50)")


def _same_file(output: str, log: str) -> bool:
    """Whether ``output`` names the file ``log`` is (a link or another spelling too)."""
    try:
        return Path(output).exists() and Path(output).samefile(log)
    except OSError:
        return False


def _write_export(text: str, output: str | None) -> None:
    """The converted game onto stdout or into ``output``; outside :func:`reading`, so that
    an output path that cannot be written is named as such, not as the LOG."""
    if not output or output == "-":  # as every other output option reads '-'
        print(text)
        return
    try:
        Path(output).write_text(text + "\n", encoding="utf-8")
    except OSError as exc:
        raise UserInputError(f"-o {output}: {exc.strerror or exc}") from None


def _ranker(predictor: str) -> Any:
    """The commentary's predictor by name; a name no policy has is refused as the
    predictor's."""
    from adapter.commands.review import evaluator

    try:
        return evaluator(predictor, 32, 0, predictor=True)
    except UserInputError as exc:
        raise UserInputError(f"--predictor: {exc}") from None


def _commentary(rep: Any, ranker: Any, args: argparse.Namespace) -> list[dict[str, object]]:
    """The commentary's rows; a hand whose moves its table refuses (a damaged log) is left
    from there, and noted in ``rep.damaged`` where reading the log had not found it."""
    from brain.policies.mc.models import MissingModels
    from replay.replayer import damaged_hand
    from replay.review.commentary import commentary_rows

    top_k = 3 if args.top_k is None else args.top_k
    try:
        return list(commentary_rows(rep, ranker, top_k,
                                    damaged=lambda i, why: damaged_hand(rep, i, why)))
    except MissingModels as exc:
        raise UserInputError(str(exc)) from None
