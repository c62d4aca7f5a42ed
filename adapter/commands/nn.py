"""`mjbot nn train`: the neural policy's stage-1 training (issue 17) on self-play datasets,
exported to the numpy weights the ``nn`` policy plays with. Needs the ``[train]`` extra (torch);
nothing else of mjbot does."""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path
from typing import Any

from adapter import nn_iterate
from adapter.commands import (
    UserInputError,
    add_stop_after_argument,
    add_variant_option,
    checked_stop_after,
    require_distinct_datasets,
    require_networks,
    require_torch_device,
    require_writable,
)

# replay/learning/nn/stream.py's defaults (that module is numpy only, but this one must not load
# the dataset machinery before a command runs)
DEFAULT_BUFFER = 40_000
DEFAULT_HOLDOUT_MAX = 20_000
MAX_CHANNELS, MAX_BLOCKS = 512, 64  # far beyond the shipped 64 x 4; OOM or no answer in time


def register(sub: Any) -> None:
    n = sub.add_parser("nn", help="train the neural policy",
                       description="The residual network of the nn policy (brain/nn): "
                       "supervised training on the decisions of self-play datasets.")
    nsub = n.add_subparsers(dest="nn_command", metavar="ACTION", required=True)
    t = nsub.add_parser("train", help="supervised training on dataset decisions (needs torch)")
    add_variant_option(t, None)
    t.add_argument("--data", required=True, nargs="+", metavar="DIR",
                   help="dataset directories (mjbot selfplay --out), all of the variant")
    t.add_argument("--out", required=True, metavar="FILE", help="weights file (.npz)")
    t.add_argument("--holdout", nargs="+", metavar="DIR",
                   help="held-out dataset directories (default: 5%% of --data, seeded)")
    t.add_argument("--policies", default="", help="learn only these players' decisions "
                   "(comma-separated names; default: every player)")
    t.add_argument("--epochs", type=int, default=4)
    t.add_argument("--batch-size", type=int, default=256)
    t.add_argument("--lr", type=float, default=2e-3)
    nn_iterate.add_shape_arguments(t)
    t.add_argument("--max-decisions", type=int, default=0, metavar="N",
                   help="training examples, about, in all (seeded sample; 0: every one)")
    t.add_argument("--buffer", type=int, default=DEFAULT_BUFFER, metavar="N",
                   help="the most training examples encoded at once (the shuffle buffer, "
                   "about 18 KB each; default %(default)s, about 0.73 GB)")
    t.add_argument("--holdout-max", type=int, default=DEFAULT_HOLDOUT_MAX, metavar="N",
                   help="the most held-out examples (default %(default)s)")
    t.add_argument("--init", default="", metavar="FILE",
                   help="start from these weights (fine-tuning, e.g. on a better teacher)")
    t.add_argument("--correction-weight", type=float, default=1.0, metavar="W",
                   help="with --init: weigh the examples whose answer the starting weights "
                   "do not give (the expert's corrections) W times (default 1: all alike)")
    t.add_argument("--device", default="cpu", help="torch device: cpu, or cuda on a GPU")
    t.add_argument("--threads", type=int, default=2, help="torch CPU threads")
    t.add_argument("--seed", type=int, default=0)
    t.add_argument("--json", action="store_true", help="print the run as JSON")
    add_stop_after_argument(t, "stop training after SECONDS and write the weights trained "
                            "so far, their figures saying so (as SIGTERM or Ctrl-C does; "
                            "Ctrl-C again: at once, nothing written)")
    t.set_defaults(handler=cmd_train)
    nn_iterate.register(nsub, sub, cmd_train)
    p = nsub.add_parser(
        "probe-expert", help="how often mc overrules its fast move, and whether a second "
        "search repeats it (before making expert data)",
        description="Games at the local table with mc's fast move in every seat; at each "
        "turn with a choice of discards mc searches twice (seeds 1 and 2 over the MJBOT_MC "
        "options, always simulating). An overrule the second search does not repeat is the "
        "search's noise: no network learns it.",
        epilog='example: MJBOT_MC="playouts=256,fast=nn,turn_z=2" mjbot nn probe-expert '
        "--variant riichi --games 2 --seed 301")
    add_variant_option(p)
    p.add_argument("--games", type=int, default=2)
    p.add_argument("--seed", type=int, default=0, help="wall seed of the games")
    p.add_argument("--hands", type=int, default=0, metavar="N",
                   help="search only in the first N hands of each game (default 0: every "
                   "hand); the rest is played by the fast move alone, so more games (more "
                   "walls) cost less search")
    p.add_argument("--json", action="store_true", help="print the figures as JSON")
    p.set_defaults(handler=cmd_probe_expert)


def cmd_probe_expert(args: argparse.Namespace) -> int:
    from adapter.expert_probe import probe_expert
    from adapter.local.stopping import StopRequest, exit_status
    from brain.policies.mc.config import ENV, from_env

    if args.games < 1:
        raise UserInputError("--games must be at least 1")
    if args.hands < 0:
        raise UserInputError(f"--hands must be at least 0 (0: every hand), got {args.hands}")
    try:
        config = from_env()
    except ValueError as exc:
        raise UserInputError(f"{ENV}: {exc}") from None
    from brain.nn.network import MissingNetwork
    from brain.policies.mc.models import MissingModels, load_models

    try:  # what mc reads, before a game is dealt: missing, it failed there with a traceback
        load_models(args.variant, config.models)
        if config.fast == "nn":
            require_networks(["nn"], args.variant)
        stop = StopRequest(command=args.command_path)
        with stop.on_signals():  # SIGTERM / Ctrl-C: the figures of what was searched
            print(f"mjbot nn probe-expert: {args.games} games from seed {args.seed}; SIGTERM "
                  "or Ctrl-C stops the searches and prints the figures so far",
                  file=sys.stderr, flush=True)
            figures = probe_expert(args.variant, config, args.games, args.seed,
                                   args.hands, stop).figures()
    except (MissingModels, MissingNetwork) as exc:
        raise UserInputError(str(exc)) from None
    status = exit_status(figures["stopped"])
    if args.json:
        print(json.dumps(figures, indent=2))
        return status

    def share(x: float | None) -> str:
        return "-" if x is None else f"{x:.3f}"

    print(f"probe-expert {args.variant}: {figures['turns']} turns; the first search overrules "
          f"the fast move on {share(figures['overrule_share'])} ({figures['overrules']}); the "
          f"second repeats {share(figures['overrules_repeated'])} of those and overrules too on "
          f"{share(figures['overrules_overruled_again'])}; the two agree on "
          f"{share(figures['searches_agree'])} of all turns; a gate held {figures['gate_held']}")
    if figures["stopped"]:
        print(f"stopped ({figures['stopped']}) after {figures['games']} of {args.games} games: "
              "the figures are the turns searched till then, the last game's in part")
    return status


def cmd_train(args: argparse.Namespace) -> int:
    for name, value in (("--epochs", args.epochs), ("--batch-size", args.batch_size),
                        ("--channels", args.channels), ("--blocks", args.blocks),
                        ("--holdout-max", args.holdout_max)):
        if value is not None and value < 1:
            raise UserInputError(f"{name} must be at least 1")
    args.channels, args.blocks = nn_iterate.network_shape(args.init, args.variant,
                                                          args.channels, args.blocks)
    if args.channels > MAX_CHANNELS or args.blocks > MAX_BLOCKS:
        raise UserInputError(f"--channels at most {MAX_CHANNELS} and --blocks at most "
                             f"{MAX_BLOCKS}: a larger network cannot answer within a "
                             "platform's time limit (nor fit the 8 MB a model may weigh)")
    if not (math.isfinite(args.lr) and args.lr > 0):
        raise UserInputError(f"--lr must be a number above 0, got {args.lr}")
    for name, value, least in (("--seed", args.seed, 0), ("--max-decisions",
                               args.max_decisions, 0), ("--threads", args.threads, 1)):
        if value < least:
            raise UserInputError(f"{name} must be at least {least}, got {value}")
    require_writable(args.out, "--out")
    stop_after = checked_stop_after(args)
    if args.buffer < args.batch_size:
        raise UserInputError(f"--buffer {args.buffer} must hold a batch (--batch-size "
                             f"{args.batch_size})")
    require_distinct_datasets(args.data, args.holdout or [])
    for d in [*args.data, *(args.holdout or [])]:
        if not (Path(d) / "manifest.json").is_file():
            raise UserInputError(f"{d}: no dataset here (no manifest.json; see mjbot selfplay)")
    if not args.correction_weight > 0:
        raise UserInputError(f"--correction-weight must be above 0, got {args.correction_weight}")
    if args.correction_weight != 1.0 and not args.init:
        raise UserInputError("--correction-weight needs --init: the corrections are the "
                             "examples whose answer the starting weights do not give")
    try:
        import torch  # noqa: F401
    except ImportError:
        raise UserInputError("needs torch: pip install -e '.[train]'") from None
    require_torch_device(args.device)
    from brain.nn.network import MissingNetwork
    from replay.dataset.schema import DatasetError
    from replay.learning.nn.train import DivergedTraining, TrainConfig, train

    policies = [p.strip() for p in args.policies.split(",") if p.strip()] or None
    config = TrainConfig(channels=args.channels, blocks=args.blocks, epochs=args.epochs,
                         batch_size=args.batch_size, lr=args.lr,
                         max_decisions=args.max_decisions, seed=args.seed,
                         threads=args.threads, policies=policies, init=args.init,
                         device=args.device, buffer=args.buffer,
                         holdout_max=args.holdout_max,
                         correction_weight=args.correction_weight)

    def progress(figures: dict[str, Any]) -> None:
        if not args.json:
            print(epoch_line(figures), flush=True)

    from adapter.local.stopping import StopRequest, exit_status, stop_reason_text
    from replay.learning.nn.train import StoppedBeforeTraining

    stop = StopRequest(stop_after, args.command_path)
    try:
        with stop.on_signals():  # a signal never cuts the weights being written
            result = train(args.variant, args.data, args.out, config, args.holdout, progress,
                           stop)
    except (DatasetError, MissingNetwork) as exc:
        raise UserInputError(str(exc)) from None
    except DivergedTraining as exc:
        print(f"mjbot {args.command_path}: {exc}", file=sys.stderr)
        return 1
    except StoppedBeforeTraining as exc:
        print(f"mjbot {args.command_path}: stopped ({stop_reason_text(exc.reason)}) before "
              f"the first training step: nothing written to {args.out}", file=sys.stderr)
        return exit_status(exc.reason) or 1
    stopped = result.get("stopped")
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        h = result["holdout"]
        print(f"nn train {args.variant}: {result['train_examples']} examples, "
              f"{result['holdout_examples']} held out (at most {result['peak_examples_held']} "
              f"held at once); held-out accuracy {h['accuracy']:.4f}{_against_start(h)}; "
              f"{result['seconds']} s -> {args.out}")
        if stopped is not None:
            print(f"stopped early ({stop_reason_text(stopped['reason'])}) after "
                  f"{stopped['steps_done']} of {stopped['steps_planned']} steps "
                  f"({stopped['epochs_done']} of {stopped['epochs_planned']} epochs whole): "
                  "the weights so far, short of the planned schedule")
    return exit_status(stopped["reason"] if stopped else None)


def epoch_line(figures: dict[str, Any]) -> str:
    """One epoch's progress line. An epoch a stop cut short says so (its figures carry the
    ``examples`` it got through): "epoch 3" alone read as a third whole epoch."""
    h = figures["holdout"]
    cut = (f", cut short after {figures['examples']} examples" if "examples" in figures
           else "")
    return (f"  epoch {figures['epoch']}{cut}: loss {figures['train_loss']:.4f}, held-out "
            f"accuracy {h['accuracy']:.4f} (discards {h['discard_accuracy']:.4f}), "
            f"value mse {h['value_mse']:.4f}{_against_start(h)}")


def _against_start(held: dict[str, Any]) -> str:
    """Fine-tuning's held-out figures against the starting weights (``--init``), if any."""
    if "start_accuracy" not in held:
        return ""
    return (f"; the start's {held['start_accuracy']:.4f}: {held['start_hits_kept']:.4f} of its "
            f"hits kept, {held['corrections_learned']:.4f} of its {held['corrections']} misses "
            f"learned")
