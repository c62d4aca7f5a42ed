"""`mjbot botzone`, `mjbot botzone-judge`, `mjbot bundle botzone|mjai`: Botzone (MCR),
and the mjai.app upload beside Botzone's."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from adapter.commands import (
    UserInputError,
    at_least,
    folder_error,
    four_policies,
    log_folder,
    require_networks,
    require_policy,
)


def register(sub: Any) -> None:
    bz = sub.add_parser("botzone", help="play one Botzone turn (or keep running) on stdin/stdout",
                        description="Botzone ChineseStandardMahjong bot: reads the simple or "
                        "JSON interaction input (detected by its first character), prints the "
                        "response. Logs go to stderr only.")
    from adapter.platforms.botzone_options import add_turn_options

    add_turn_options(bz)
    bz.set_defaults(handler=cmd_botzone)

    j = sub.add_parser("botzone-judge", help="play Botzone matches between mjbot botzone "
                       "processes under a local judge (soak test of the Botzone adapter)")
    j.add_argument("--games", type=at_least(1), default=10)
    j.add_argument("--modes", default="simple,json,keep,keep-json",
                   help="bot modes, rotated through the seats: simple, json (one-shot), keep, "
                   "keep-json (keep running, simple or JSON interaction)")
    j.add_argument("--seed", type=int, default=0)
    j.add_argument("--log-dir", help="write each match's Botzone-style judge log here, and "
                   "the bots' own game logs under DIR/bots (none without it)")
    played = j.add_mutually_exclusive_group()
    played.add_argument("--policy", default="rulebased", help="what the bots play (default "
                        "rulebased); a match in which one falls back fails the run")
    played.add_argument("--policies", metavar="A,B,C,D", help="a policy per seat, as the "
                        "arena's --policies (LABEL=POLICY too); seat 0 deals")
    j.set_defaults(handler=cmd_botzone_judge)

    bu = sub.add_parser("bundle", help="build an upload bundle for a platform")
    bu.add_argument("platform", choices=["botzone", "mjai"],
                    help="botzone (MCR) or mjai (mjai.app, riichi)")
    bu.add_argument("-o", "--output", default="dist", help="output folder (default: dist)")
    bu.add_argument("--policy", default="rulebased", help="what the bot plays (rulebased, mc, nn)")
    bu.add_argument("--models", metavar="DIR", help="mc: the folder holding "
                    "opponents_mcr.npz (botzone) or opponents_riichi.npz (mjai) (default: the "
                    "shipped brain/data)")
    bu.add_argument("--mc-options", default="", metavar="OPTS",
                    help="mc: the bot's MJBOT_MC options, e.g. seconds=1.5")
    bu.add_argument("--nn-weights", metavar="FILE", help="nn: the network to carry (default: "
                    "the shipped brain/data/nn_mcr.npz, or nn_riichi.npz for mjai)")
    bu.set_defaults(handler=cmd_bundle)


def cmd_botzone(args: argparse.Namespace) -> int:
    from adapter.platforms.botzone_options import one_blas_thread

    one_blas_thread()  # before the bot's imports bring numpy in
    from adapter.platforms import botzone

    require_policy(args.policy)
    # a policy call left running past its deadline must not hold the process's exit
    return botzone.end_process(botzone.run_once(
        sys.stdin, sys.stdout, policy=args.policy, keep_running=args.keep_running,
        limit=args.time_limit, later_limit=args.later_time_limit, log_dir=args.log_dir,
        write_log=not args.no_log, json_mode=args.json, started=botzone.process_started()))


def cmd_botzone_judge(args: argparse.Namespace) -> int:
    from adapter.fakes.botzone_judge import DEFAULT_COMMAND, MODES, run_matches

    modes = [m.strip() for m in args.modes.split(",") if m.strip()]
    if not modes or any(m not in MODES for m in modes):
        raise UserInputError(f"--modes takes {', '.join(MODES)}, got {args.modes!r}")

    def progress(done: int, total: int, verdicts: dict[str, int]) -> None:
        if sys.stderr.isatty():
            print(f"\r{done}/{total} matches, verdicts {verdicts or 'none'}", end="",
                  file=sys.stderr, flush=True)

    names, policies = judge_seats(args.policies, args.policy)
    require_networks(policies, "mcr")
    # made now: a file there is refused before the matches, not a traceback after them
    args.log_dir = log_folder(args.log_dir, default=False)
    # the bots' own game logs beside the judge's, never among the real matches' logs (the
    # default log folder, which the replay viewer lists as Botzone games)
    bot_logs = ("--no-log",) if args.log_dir is None else (
        "--log-dir", str(Path(args.log_dir).resolve() / "bots"))
    summary = run_matches(args.games, modes, args.seed, args.log_dir, progress=progress,
                          commands=[(*DEFAULT_COMMAND, "--policy", p, *bot_logs)
                                    for p in policies], names=names)
    print(json.dumps(summary, indent=2))
    fell_back = {m: f for m, f in summary["fallbacks"].items() if f["fallbacks"]}
    for mode, f in fell_back.items():  # a soak whose bots did not really play must not pass
        print(f"mjbot botzone-judge: the {mode} bots fell back on {f['fallbacks']} of "
              f"{f['answers']} answers; first: {f['first']}", file=sys.stderr)
    for mode, u in summary["unasked"].items():  # dropped, as the seat drops them: a fault
        print(f"mjbot botzone-judge: the {mode} bots printed {u['turns']} turns answering no "
              f"request (dropped); first: {u['first']!r}", file=sys.stderr)
    return 1 if summary["verdicts"] or fell_back or summary["unasked"] else 0


def judge_seats(text: str | None, policy: str) -> tuple[list[str], list[str]]:
    """The four seats' names and policies: ``--policies A,B,C,D`` read as the arena reads it
    (one line for a bad name or label), else ``--policy`` in every seat. Each seat is an
    `mjbot botzone` process, so an outside program or an ``@budget=`` (the bot keeps to
    Botzone's own limits) is refused in one line."""
    from adapter.local.seat import split_label

    if text is None:
        # --policy too: an @budget= was told to mc as an unknown key, "a seat's own time
        # limit per decision is POLICY@budget=SECONDS" (what was typed), an outside program
        # an unknown policy
        _judge_seat(f"--policy {policy!r}", policy)
        require_policy(policy)
        return [policy] * 4, [policy] * 4
    names = [n.strip() for n in text.split(",")]
    for seat, name in enumerate(names if len(names) == 4 else []):  # else four_policies says
        # before four_policies reads them, as an arena's seats, which take @budget=: the
        # judge's mc@budget=0 was told "@budget=SECONDS needs ... seconds above 0", refused
        # here once the seconds were mended (and, budgets=False, mc@budgte=1 no longer "a
        # seat's own time limit per decision is POLICY@budget=SECONDS")
        try:
            spec = split_label(name)[1]
        except ValueError:
            continue  # a bad label: four_policies names it
        _judge_seat(f"--policies: seat {seat} {name!r}", spec)
    seats = four_policies(text, budgets=False)
    policies = [split_label(name)[1] for name in seats]  # four_policies checked the labels
    return [split_label(n)[0] for n in seats], policies


def _judge_seat(named: str, spec: str) -> None:
    """UserInputError for what no `mjbot botzone` process of the judge plays (``named`` says
    which option and seat): an outside program, or an ``@budget=``."""
    from adapter.local.external import is_external
    from adapter.local.seat import BUDGET_SUFFIX

    if is_external(spec):
        raise UserInputError(f"{named} is an outside program; the judge seats `mjbot botzone` "
                             "processes (a Botzone bot of your own plays them at `mjbot arena "
                             "--variant mcr`, as botzone:CMD)")
    if BUDGET_SUFFIX in spec:
        raise UserInputError(f"{named}: the judge's bots keep to Botzone's own time limits; "
                             "no @budget= here")


def cmd_bundle(args: argparse.Namespace) -> int:
    from adapter.platforms.botzone_bundle import build_botzone_bundle
    from adapter.platforms.mjai_bundle import build_mjai_bundle

    require_policy(args.policy)
    check_mc_options(args.policy, args.mc_options)
    build = build_mjai_bundle if args.platform == "mjai" else build_botzone_bundle
    try:
        path = build(args.output, policy=args.policy, models_dir=args.models,
                     mc_options=args.mc_options, nn_weights=args.nn_weights)
    except (FileNotFoundError, ValueError) as exc:
        raise UserInputError(str(exc)) from None
    except OSError as exc:  # the output folder: a file, or not writable
        raise UserInputError(f"--output {args.output}: {folder_error(exc)}") from None
    size = f"{path} ({path.stat().st_size // 1024} KB)"
    if args.platform == "mjai":
        print(f"{size}: upload it to mjai.app as the bot (bot.py at its root, playing "
              f"{args.policy})")
    else:
        print(f"{size}: upload it as the bot's code (Python 3, simple or JSON interaction, "
              "keep running)")
    return 0


def check_mc_options(policy: str, mc_options: str) -> None:
    """``--mc-options`` are ``MJBOT_MC`` for the bundled bot, which only ``mc`` reads: with any
    other policy they rode along unread (the bot on Botzone plays that policy), a typo in them
    surfacing nowhere. A usage error names a bad key or value, or the missing ``--policy mc``;
    and ``models=DIR``, a folder of this machine that the platform has not: the zip's mc found
    no models there and fell back at every decision (``--models DIR`` carries them in the
    zip). ``mjbot bench botzone``, which runs its zip here, takes MJBOT_MC as it is."""
    if not mc_options:
        return
    from brain.policies.mc.config import parse

    try:
        config = parse(mc_options)
    except ValueError as exc:
        raise UserInputError(f"--mc-options: {exc}") from None
    if policy != "mc":
        raise UserInputError(f"--mc-options {mc_options!r}: only the mc policy reads them, and "
                             f"this bundle plays {policy}; add --policy mc")
    if config.models:
        raise UserInputError(f"--mc-options {mc_options!r}: models={config.models} is a folder "
                             "of this machine, not of the platform, where the bot would fall "
                             f"back at every decision; give it as --models {config.models}, "
                             "which carries the models in the zip")
