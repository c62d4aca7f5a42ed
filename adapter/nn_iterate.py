"""`mjbot nn iterate`: resumable rounds of expert iteration on league games (issue 26).

Each phase is a subprocess of `mjbot` itself (selfplay, nn train, arena), so it runs with the
commands' own worker machinery and frees its memory when done; the round's state
(replay/learning/nn/iterate.py) is written after every phase, so a killed run resumes at the
phase it was in; SIGTERM is passed on to the phase under way, which is waited for and left
undone, and a run killed outright (SIGKILL) takes its phase with it (the kernel sends the
phase SIGTERM when its parent dies); a self-play phase left undone goes on from the wall sets
it finished (`mjbot selfplay` at the same --out), each run's part recorded. Everything the
user typed is checked before a game is played or state.json written, and a resumed run
refuses options that differ from the ones on record.

Seeds: self-play of round r plays seed ``--seed + r``; selection plays
``--selection-seed``; none of them is ever a headline seed (replay/learning/seeds.py).
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import importlib.util
import json
import math
import os
import platform
import re
import shlex
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from types import FrameType
from typing import Any

from adapter.argtypes import command_words
from adapter.commands import (
    UserInputError,
    add_variant_option,
    four_policies,
    require_mc_options,
    require_torch_device,
)
from adapter.own_python import own_env, own_python

EXPERT = "mc"
# Options that shape a run's games, data or selection: a resumed run must be given the same.
RECORDED = ("hands", "opponents", "selection_seed", "selection_hands", "seed", "channels",
            "blocks", "playouts", "window", "epochs", "lr", "buffer")
STOP_GRACE_S = 60.0  # a phase told to stop that has not ended by then is killed


def register(nsub: Any, commands: Any, train: Callable[[argparse.Namespace], int]) -> None:
    """``nn iterate`` under ``nsub``; ``commands``: every mjbot command (the top parser's
    subcommands), where a round's phases find theirs (:class:`Phases`); ``train``: the
    handler of ``nn train``, which this module cannot import (it is imported by it)."""
    i = nsub.add_parser("iterate", help="resumable rounds of expert iteration (needs torch)",
                        description="Round r: the expert (mc with the current network as its "
                        "fast move) plays league opponents; the network learns the expert's "
                        "answers (streamed) from this and the previous --window rounds; the new "
                        "generation is kept if it is not behind the current one on the "
                        "selection walls (duplicate arena, 1 vs 3). RUNDIR/state.json is "
                        "written after every phase: run the same command again to resume.")
    add_variant_option(i, None, help="one mc (the expert) has opponent models for: riichi, "
                       "mcr or taiwan16")
    i.add_argument("--dir", required=True, metavar="RUNDIR", help="the run's folder")
    i.add_argument("--rounds", type=int, required=True, help="rounds in all (a resumed run "
                   "goes on to this many)")
    i.add_argument("--hands", type=int, default=400, help="self-play hands per round, about")
    i.add_argument("--opponents", default="style:value,style:closed,style:defensive,rulebased",
                   help="the league the expert plays: 3 seats per round, taken in turn from "
                   "this list (default: %(default)s)")
    i.add_argument("--selection-seed", type=int, required=True, metavar="S",
                   help="the walls new generations are chosen on (never a headline seed)")
    i.add_argument("--selection-hands", type=int, default=400, metavar="N")
    i.add_argument("--seed", type=int, default=100, help="round r's self-play seed is this + r "
                   "(moved by 10,000 where that is a headline or the selection seed)")
    i.add_argument("--workers", type=int, default=1)
    i.add_argument("--init", default="", metavar="FILE", help="the first generation (default: "
                   "a fresh network of --channels x --blocks)")
    add_shape_arguments(i)
    i.add_argument("--playouts", type=int, default=128, help="the expert's playouts per "
                   "candidate (fixed, so its answers are reproducible)")
    i.add_argument("--window", type=int, default=2, help="earlier rounds' data also trained on")
    i.add_argument("--epochs", type=int, default=2)
    i.add_argument("--lr", type=float, default=5e-4)
    i.add_argument("--buffer", type=int, default=40_000, metavar="N")
    i.add_argument("--threads", type=int, default=2, help="torch CPU threads")
    i.add_argument("--device", default="cpu", choices=["cpu", "cuda"])
    i.add_argument("--json", action="store_true", help="print the final state as JSON")
    i.set_defaults(handler=cmd_iterate, phases=Phases(commands, train))


class Phases:
    """The commands a round runs, by the words the parser gives them (argtypes'
    command_words): run as the phases, recorded in state.json and named when one fails,
    where they were written out here by hand and a command renamed where it is registered
    would have been run, recorded and named by its old name."""

    def __init__(self, commands: Any, train: Callable[[argparse.Namespace], int]) -> None:
        self._commands = commands
        self._train = train

    def words(self, phase: str) -> list[str]:
        """The words of round phase ``phase``'s command: selfplay, train or select."""
        from adapter.commands.arena import cmd_arena
        from adapter.commands.selfplay import cmd_selfplay

        handler = {"selfplay": cmd_selfplay, "train": self._train, "select": cmd_arena}[phase]
        return command_words(self._commands, handler)


def round_seed(base: int, number: int, selection: int) -> int:
    from replay.learning.seeds import free_seed

    return free_seed(base + number, {selection})


def seats(opponents: list[str], number: int) -> str:
    """The expert in seat 0 and three opponents, the list taken in turn round by round."""
    picked = [opponents[(3 * (number - 1) + k) % len(opponents)] for k in range(3)]
    return ",".join([EXPERT, *picked])


def from_run_folder(opponent: str, root: Path) -> str:
    """An opponent as a command run from the run folder ``root`` names it: an ``nn@FILE``
    given relative to the working directory made relative to the run folder (its label and
    ``@budget=`` kept); anything else as given (a program's command line is its own)."""
    def moved(file: str) -> str:
        if os.path.isabs(file):
            return file
        return Path(os.path.relpath(Path(file).absolute(), root.absolute())).as_posix()

    return _nn_file_named(opponent, moved)[0]


def _nn_file_named(opponent: str, name: Callable[[str], str]) -> tuple[str, str | None]:
    """An ``nn@FILE`` opponent with its FILE named by ``name`` (its label and ``@budget=``
    kept), and that FILE; anything else as given, and None."""
    from adapter.local.seat import BUDGET_SUFFIX, split_label
    from brain.policies import NN_FILE_PREFIX

    label, spec = split_label(opponent)
    if not spec.startswith(NN_FILE_PREFIX):
        return opponent, None
    file, sep, budget = spec[len(NN_FILE_PREFIX):].rpartition(BUDGET_SUFFIX)
    file = file if sep else budget
    named = f"{NN_FILE_PREFIX}{name(file)}{sep + budget if sep else ''}"
    return (named if label == opponent else f"{label}={named}"), file


def new_minus_current(arena: dict[str, Any], new: str, current: str
                      ) -> tuple[float | None, list[float | None]]:
    """The arena's paired difference new - current and its 95% interval, whichever way the
    arena names the pair (adapter.local.arena.paired_difference)."""
    from adapter.local.arena import paired_difference

    return paired_difference(arena, new, current)


def _mjbot(phase: str, words: list[str], options: list[str],
           env: dict[str, str] | None = None) -> tuple[dict[str, Any], float]:
    """Run the `mjbot` command ``words`` (Phases.words) with ``options`` as the round's
    ``phase`` (self-play, training, selection); its JSON (stdout, or the file after
    ``--json`` for arena) and seconds. A failed phase is the user's error in one line (its
    last stderr line), naming the command by its words."""
    if _STOP.asked:
        raise Stopped(f"before its {phase}")
    from adapter.local.external.process import die_with_parent

    start = time.monotonic()
    # SIGTERM, not SIGKILL, when the run dies: the phase then stops as on a plain stop. It
    # holds the run folder's lock too: a run killed outright (SIGKILL) leaves its phase to
    # finish the wall set under way, writing in the folder, which a resume must not take
    # for a killed phase's and delete under it
    with subprocess.Popen(own_python("-m", "adapter.cli", *words, *options),
                          stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True,
                          env={**own_env(), **(env or {})},
                          pass_fds=(_STOP.lock_fd,) if _STOP.lock_fd >= 0 else (),
                          preexec_fn=functools.partial(die_with_parent, signal.SIGTERM,
                                                       os.getpid())) as proc:
        try:
            stdout, stderr = _STOP.wait(proc)
        except BaseException:  # a second Ctrl-C: as subprocess.run, the phase ends now
            proc.kill()
            raise
    seconds = round(time.monotonic() - start, 1)
    if _STOP.asked and proc.returncode != 0:  # a phase that ran to its end (exit 0: a
        # self-play whose last wall set was under way) is kept and recorded, not redone
        raise Stopped(f"during its {phase}", seconds,
                      json.loads(stdout) if stdout.strip().startswith("{") else {})
    if proc.returncode != 0:
        last = (stderr.strip().splitlines() or ["(no message)"])[-1]
        raise UserInputError(f"mjbot {' '.join(words)} failed (exit {proc.returncode}): "
                             f"{last}")
    return (json.loads(stdout) if stdout.strip().startswith("{") else {}), seconds


class Stopped(Exception):
    """SIGTERM or Ctrl-C asked the run to stop: the phase under way ended and is not recorded done;
    ``seconds`` it ran and the ``figures`` it printed (a self-play's: what it kept)."""

    def __init__(self, message: str, seconds: float | None = None,
                 figures: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.seconds, self.figures = seconds, figures or {}


class _Stop:
    """SIGTERM for the time of the run: noted (nothing being written is cut) and passed on to
    the phase's process, which stops with what it finished and is waited for, so no phase
    plays on after the run has gone (the run's group may not have been signalled)."""

    def __init__(self) -> None:
        self.asked = False
        self.signum = 0  # the first stop's signal: SIGTERM, or SIGINT (Ctrl-C)
        self.child: subprocess.Popen[str] | None = None
        self.since: float | None = None  # when the stop was first seen while waiting
        self.lock_fd = -1  # the run folder's lock (holding_run), handed to each phase

    def signalled(self, signum: int, frame: FrameType | None) -> None:
        if signum == signal.SIGINT and self.signum == signal.SIGINT:
            raise KeyboardInterrupt  # Ctrl-C again: at once (the phase is killed)
        self.asked = True
        self.signum = self.signum or signum
        if self.child is not None and self.child.poll() is None:
            self.child.send_signal(signal.SIGTERM)

    def wait(self, proc: subprocess.Popen[str]) -> tuple[str, str]:
        """The phase's output once it ends; killed when a stop is not answered in time."""
        self.child = proc
        try:
            if self.asked:  # asked between the start and the line above
                proc.send_signal(signal.SIGTERM)
            while True:
                try:
                    return proc.communicate(timeout=1.0)
                except subprocess.TimeoutExpired:
                    if self.asked and self.since is None:
                        self.since = time.monotonic()
                    if self.since is not None and time.monotonic() - self.since > STOP_GRACE_S:
                        proc.kill()
        finally:
            self.child = None


_STOP = _Stop()


def _fresh_network(args: argparse.Namespace, out: Path) -> None:
    import torch

    from brain.nn.encoding import encoding_for, num_planes
    from brain.nn.network import Shape
    from brain.rules.variant import variant_of
    from replay.learning.nn.train import TorchNet

    torch.manual_seed(args.seed)
    # the variant's encoding, as `nn train` gives a fresh network (MCR: the plan planes);
    # every generation keeps its start's
    encoding = encoding_for(args.variant)
    net = TorchNet(Shape(num_planes(encoding), args.channels, args.blocks, 64)).export(
        args.variant, encoding=encoding, value_scale=variant_of(args.variant).value_scale)
    net.save(out)


def check(args: argparse.Namespace) -> list[str]:
    """Everything the user typed, before a game is played or the run folder touched."""
    from replay.learning.seeds import ReservedSeedError, refuse_headline_seed

    for name, value in (("--rounds", args.rounds), ("--hands", args.hands),
                        ("--selection-hands", args.selection_hands),
                        ("--workers", args.workers), ("--epochs", args.epochs),
                        ("--playouts", args.playouts), ("--channels", args.channels),
                        ("--blocks", args.blocks)):
        if value is not None and value < 1:
            raise UserInputError(f"{name} must be at least 1")
    if args.window < 0:
        raise UserInputError("--window must be 0 or more")
    try:
        refuse_headline_seed(args.selection_seed, "--selection-seed")
    except ReservedSeedError as exc:
        raise UserInputError(str(exc)) from None
    if not (math.isfinite(args.lr) and args.lr > 0):
        raise UserInputError(f"--lr must be a number above 0, not {args.lr}")
    if args.buffer < 1:
        raise UserInputError("--buffer must be at least 1")
    if args.threads < 1:
        raise UserInputError("--threads must be at least 1")
    root = Path(args.dir)
    above = next((p for p in (root, *root.parents) if p.exists()), None)
    if above is not None and not above.is_dir():
        raise UserInputError(f"--dir {args.dir}: {above} is a file, not a folder")
    _check_expert(args.variant)
    args.channels, args.blocks = network_shape(args.init, args.variant, args.channels,
                                               args.blocks)
    opponents = [o.strip() for o in args.opponents.split(",") if o.strip()]
    if not opponents:
        raise UserInputError("--opponents: name at least one policy")
    four_policies(",".join([EXPERT, *(opponents * 3)[:3]]))  # known names, in one line
    for o in opponents:
        four_policies(f"{EXPERT},{o},{o},{o}")
    if importlib.util.find_spec("torch") is None:  # found, not loaded: the phases load it
        raise UserInputError("needs torch: pip install -e '.[train]'")
    if args.device == "cuda":  # torch loaded only here: on the CPU the phases load it
        require_torch_device(args.device)
    return opponents


def _check_expert(variant: str) -> None:
    """A variant the table plays and mc, the expert of every round, has opponent models for
    (the Variant registry and the models on disk say so; no list of names here)."""
    from brain.policies.mc.config import from_env
    from brain.policies.mc.models import MissingModels, load_models

    require_mc_options()
    try:
        load_models(variant, from_env().models)
    except MissingModels as exc:
        raise UserInputError(f"{exc} (mc is the expert of every round)") from None


DEFAULT_CHANNELS, DEFAULT_BLOCKS = 64, 4


def add_shape_arguments(parser: argparse.ArgumentParser) -> None:
    """--channels and --blocks, left None when not given so that --init's shape can win."""
    parser.add_argument("--channels", type=int, default=None,
                        help=f"a fresh network's width (default {DEFAULT_CHANNELS}; with --init, "
                        "its own)")
    parser.add_argument("--blocks", type=int, default=None,
                        help=f"a fresh network's residual blocks (default {DEFAULT_BLOCKS}; with "
                        "--init, its own)")


def network_shape(init: str, variant: str, channels: int | None, blocks: int | None
                  ) -> tuple[int, int]:
    """The network's channels and blocks: --init's own (fine-tuning keeps its shape, and
    --channels or --blocks may only repeat it: before, another value was ignored without a
    word), else the options or the defaults. --init must be a network of this variant (the
    numpy reader's checks: format, encoding, variant), not found out after a round of
    self-play or the reading of a dataset."""
    from brain.nn.network import MissingNetwork, Network

    if not init:
        return (DEFAULT_CHANNELS if channels is None else channels,
                DEFAULT_BLOCKS if blocks is None else blocks)
    if not Path(init).is_file():
        raise UserInputError(f"--init: no weights file at {init}")
    try:
        shape = Network.from_file(init, variant).shape
    except (MissingNetwork, OSError, KeyError, ValueError) as exc:
        raise UserInputError(f"--init {init}: {str(exc).removeprefix('nn: ')}") from None
    for option, given, has in (("--channels", channels, shape.channels),
                               ("--blocks", blocks, shape.blocks)):
        if given is not None and given != has:
            raise UserInputError(f"{option} {given}: --init {init} is {shape.channels} "
                                 f"channels x {shape.blocks} blocks, and fine-tuning keeps its "
                                 f"shape (leave {option} out)")
    return shape.channels, shape.blocks


def _options(args: argparse.Namespace) -> dict[str, Any]:
    """The options a resumed run must repeat; --init by its content (its path is the
    working directory's), and so each nn@FILE opponent (``opponents_played``; the files
    resolved in ``opponent_files``, to say which)."""
    from replay.dataset.shards import sha256

    played, files = _opponents_played(args.opponents, sha256)
    return {**{name: getattr(args, name) for name in RECORDED},
            "init_sha256": sha256(Path(args.init)) if args.init else "",
            "opponents_played": played, "opponent_files": files}


def _opponents_played(opponents: str, sha256: Callable[[Path], str]
                      ) -> tuple[list[str], list[str]]:
    """--opponents as they play: each nn@FILE by its weights' SHA-256 (its label and
    ``@budget=`` kept), as the same file is named otherwise from another folder; and those
    files resolved."""
    def by_content(file: str) -> str:
        return f"sha256:{sha256(Path(file)) if Path(file).is_file() else ''}"

    played, files = [], []
    for opponent in (o.strip() for o in opponents.split(",") if o.strip()):
        as_played, file = _nn_file_named(opponent, by_content)
        if file is not None:
            files.append(str(Path(file).resolve()))
        played.append(as_played)
    return played, files


def _same_options(args: argparse.Namespace, recorded: dict[str, Any], path: Path) -> None:
    """Refuse, naming the first option that differs from the one on record: --init first,
    as a missing one also moves --channels and --blocks to a fresh network's defaults.
    Opponents are compared as they play where the record says so (an older one: as typed)."""
    for name, value in sorted(_options(args).items(), key=lambda kv: kv[0] != "init_sha256"):
        if name not in recorded or recorded[name] == value or name == "opponent_files" or (
                name == "opponents" and "opponents_played" in recorded):
            continue
        if name == "opponents_played":
            def shown(played: list[str]) -> str:  # hashes cut to 12 digits, as elsewhere
                return re.sub(r"(sha256:[0-9a-f]{12})[0-9a-f]+", r"\1", ",".join(played))

            raise UserInputError(
                f"--opponents {args.opponents} differs from {recorded['opponents']}, the run's "
                f"in {path} (as played, nn@FILE by its weights' SHA-256: {shown(value)} where "
                f"the run's were {shown(recorded[name])}; the run's files: "
                f"{', '.join(recorded.get('opponent_files') or []) or 'none'}); give the "
                "same, or another --dir")
        if name == "init_sha256":
            given = f"--init {args.init}" if args.init else "no --init"
            was = "--init weights of sha256 " + recorded[name][:12] if recorded[name] \
                else "a fresh network (no --init)"
            raise UserInputError(f"{given}: the run in {path.parent} started from {was}; "
                                 "give the same, or another --dir")
        flag = "--" + name.replace("_", "-")
        raise UserInputError(f"{flag} {value} differs from {recorded[name]}, the run's in "
                             f"{path}; give the same, or another --dir")


def cmd_iterate(args: argparse.Namespace) -> int:
    from replay.learning.nn.iterate import LOCK, StateError, holding_run

    opponents = check(args)
    root = Path(args.dir)
    with contextlib.ExitStack() as held:
        try:
            lock = held.enter_context(holding_run(root))
        except StateError as exc:  # another run works there
            raise UserInputError(str(exc)) from None
        except OSError as exc:  # a folder that cannot be made or written
            raise UserInputError(f"--dir {args.dir}: {exc.strerror or exc}") from None
        if lock.unheld is not None:
            print(f"mjbot {args.command_path}: {root / LOCK}: no lock taken ({lock.unheld}): "
                  "a second run on this --dir would not be refused", file=sys.stderr)
        _STOP.lock_fd = lock.fd
        try:
            return _iterate(args, root, opponents)
        finally:
            _STOP.lock_fd = -1


def _iterate(args: argparse.Namespace, root: Path, opponents: list[str]) -> int:
    """:func:`cmd_iterate` in the run folder ``root``, which this process holds."""
    from replay.dataset.shards import sha256  # numpy: not at the CLI's start
    from replay.learning.nn.iterate import IterateState, StateError

    start = root / "gen-000.npz"
    resumed = (root / "state.json").exists()
    try:
        if resumed:
            state = IterateState.open(root, args.variant, start.name)
            _same_options(args, state.data.get("options", {}), root / "state.json")
        else:
            root.mkdir(parents=True, exist_ok=True)
            if args.init:
                shutil.copyfile(args.init, start)
            else:
                _fresh_network(args, start)
            state = IterateState.open(root, args.variant, start.name)
    except StateError as exc:
        raise UserInputError(str(exc)) from None
    except OSError as exc:  # a folder that cannot be made or written
        raise UserInputError(f"--dir {args.dir}: {exc.strerror or exc}") from None
    if resumed:
        _same_current(state, sha256)
    state.data.setdefault("start_sha256", sha256(start))
    state.data.setdefault("options", _options(args))  # a run from before: recorded from now
    state.data["machine"] = _machine(args)  # the latest run's; each phase records its own
    state.save()
    # Ctrl-C stops as SIGTERM does (a second one: at once); a SIGINT the process was started
    # ignoring (a background job) stays ignored
    kinds = [signal.SIGTERM] + ([signal.SIGINT] if signal.getsignal(signal.SIGINT)
                                is not signal.SIG_IGN else [])
    previous = {sig: signal.signal(sig, _STOP.signalled) for sig in kinds}
    number = state.completed() + 1
    try:
        for number in range(state.completed() + 1, args.rounds + 1):
            run_round(args, state, number, opponents)
    except Stopped as exc:
        name = signal.Signals(_STOP.signum or signal.SIGTERM).name
        print(f"mjbot {args.command_path}: stopped by {name} in round {number}, {exc} (not "
              "recorded done); the same command resumes it", file=sys.stderr)
        return 128 + (_STOP.signum or signal.SIGTERM)
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    if args.json:
        print(json.dumps(state.data, indent=2))
    else:
        for r in state.data["rounds"]:
            sel = r["phases"].get("select", {})
            verdict = "kept" if sel.get("kept") else "old kept"
            print(f"round {r['round']}: {shown_points(sel.get('difference'))} points/hand "
                  f"{shown_interval(sel.get('ci95'))} -> {verdict}")
        print(f"current weights: {state.current} (sha256 {sha256(state.current)})")
    return 0


def _same_current(state: Any, sha256: Callable[[Path], str]) -> None:
    """A resumed run goes on from the weights on record, or not at all: a current weights file
    replaced or damaged since (a copy over it, a bad disk) was played by a whole self-play phase
    (mc falling back on every decision where it did not load) before the run failed, or was
    silently trained from."""
    _on_record(state.current, state.recorded_sha256(state.data["current"]),
               "the run's current weights", sha256)


def _same_trained(state: Any, number: int, new: Path, sha256: Callable[[Path], str]) -> None:
    """Selection plays the weights round ``number``'s training wrote, or not at all: a run
    resumed after its training phase found whatever lay at ``new`` then (a copy over it, a
    damaged file), and a replaced file won the selection, became the current weights, and
    every later resume was refused as not on record."""
    _on_record(new, (state.phase(number, "train") or {}).get("sha256"),
               f"the weights round {number}'s training wrote", sha256)


def _on_record(path: Path, recorded: str | None, what: str,
               sha256: Callable[[Path], str]) -> None:
    """``path`` is there and, where state.json records its SHA-256, still that file; a
    UserInputError naming ``what`` it should be otherwise."""
    if not path.is_file():
        raise UserInputError(f"{path}: missing, {what} (state.json); restore it, or give "
                             "another --dir")
    if recorded is not None and (found := sha256(path)) != recorded:
        raise UserInputError(f"{path}: not {what} (SHA-256 {found[:12]}, state.json records "
                             f"{recorded[:12]}): replaced or damaged since; restore it, or "
                             "give another --dir")


def shown_points(x: float | None) -> str:
    """A difference as the arena prints it: signed, never -0.0."""
    return "n/a" if x is None else f"{x:+z.1f}"


def shown_interval(ci: list[float | None] | None) -> str:
    """A 95% interval as the arena prints it; [n/a] where a bound is missing (few hands)."""
    if not ci or ci[0] is None or ci[1] is None:
        return "[n/a]"
    return f"[{ci[0]:+z.1f},{ci[1]:+z.1f}]"


def run_round(args: argparse.Namespace, state: Any, number: int, opponents: list[str]) -> None:
    """The three phases of round ``number``, each skipped when state.json says it is done.
    Each phase runs from here (an opponent's ``nn@FILE`` or program is the user's working
    directory's) and is recorded with its paths relative to the run folder, the folder its
    command is to be run from (state.json's ``commands``; an opponent's ``nn@FILE`` too:
    :func:`from_run_folder`), so the record reruns anywhere."""
    from replay.dataset.shards import sha256  # numpy: not at the CLI's start

    here: Callable[[Path], str] = str
    folder = state.root / f"round-{number:03d}"
    folder.mkdir(exist_ok=True)
    current = state.current
    state.set_round(number, weights_before=state.stored(current),
                    weights_before_sha256=sha256(current))
    data = folder / f"selfplay-{number:03d}"  # distinct names: the weights record names only
    if state.phase(number, "selfplay") is None:
        # a stopped or killed phase's folder is gone on with: the same command plays only
        # the wall sets it had not finished (adapter/local/selfplay.py's resume_point)
        seed = round_seed(args.seed, number, args.selection_seed)
        if data.is_dir() and not _selfplay_goes_on(data):
            shutil.rmtree(data, ignore_errors=True)  # an older mjbot's stopped or killed phase

        def selfplay(p: Callable[[Path], str], named: list[str]
                     ) -> tuple[list[str], dict[str, str]]:
            return (["--variant", args.variant, "--policies",
                     seats(named, number), "--hands", str(args.hands), "--seed", str(seed),
                     "--workers", str(args.workers), "--out", p(data), "--no-progress",
                     "--json"],
                    {"MJBOT_NN_WEIGHTS": p(current),
                     "MJBOT_MC": f"playouts={args.playouts},fast=nn"})
        new = not data.is_dir() or not any(data.iterdir())  # else it goes on from a point
        if new:  # begun from here: its record names the weights from here, whoever goes on
            state.set_round(number, selfplay_started_from=started_from(state.root))
        try:
            figures, seconds = _mjbot("self-play", args.phases.words("selfplay"),
                                      *selfplay(here, opponents))
        except Stopped as exc:  # its wall sets done are kept: the part is recorded
            if exc.seconds is not None:
                state.add_part(number, "selfplay", _selfplay_part(
                    args, state.root, exc.seconds, exc.figures, cut=True, new=new))
            raise
        recorded = selfplay(state.stored, [from_run_folder(o, state.root) for o in opponents])
        parts = [*state.parts(number, "selfplay"),
                 _selfplay_part(args, state.root, seconds, figures, new=new)]
        # the folder the dataset was begun from (its manifest's paths are from there), not
        # the one this last part ran from; a state from before it was kept: the first part's
        begun_from = state.data["rounds"][number - 1].pop("selfplay_started_from", None) \
            or parts[0].get("started_from") or started_from(state.root)
        state.finish_phase(number, "selfplay", {
            "seed": seed, "seconds": round(sum(p["seconds"] for p in parts), 1),
            "command": _shown(args.phases.words("selfplay"), *recorded),
            "machine": _machine(args), "data": state.stored(data),
            "started_from": begun_from,
            "figures": {k: figures.get(k) for k in ("hands", "decisions", "games")},
            # one part from its first wall set is the phase; else each is said (a part after
            # a run killed outright shows where that run had got to)
            **({"parts": parts} if len(parts) > 1 or parts[0].get("from_wall_set") != 1
               or "already_complete" in parts[0] else {})})
    new = folder / f"gen-{number:03d}.npz"
    if state.phase(number, "train") is None:
        window = [state.path((state.phase(k, "selfplay") or {})["data"])
                  for k in range(max(1, number - args.window), number)]

        def train(p: Callable[[Path], str]) -> list[str]:
            return ["--variant", args.variant, "--data", p(data),
                    *map(p, window), "--policies", EXPERT, "--init", p(current), "--out",
                    p(new), "--epochs", str(args.epochs), "--lr", str(args.lr), "--buffer",
                    str(args.buffer), "--threads", str(args.threads), "--device",
                    args.device, "--seed", str(number), "--json"]
        words = args.phases.words("train")
        result, seconds = _mjbot("training", words, train(here))
        state.finish_phase(number, "train", {
            "seconds": seconds, "command": _shown(words, train(state.stored)),
            "machine": _machine(args), "weights": state.stored(new),
            "sha256": sha256(new), "bytes": new.stat().st_size,
            "figures": {k: result.get(k) for k in (
                "train_examples", "holdout_examples", "examples_seen", "peak_examples_held",
                "holdout", "train")}})
    if state.phase(number, "select") is None:
        _same_trained(state, number, new, sha256)
        out = folder / "selection.json"

        def select(p: Callable[[Path], str]) -> list[str]:
            return ["--variant", args.variant, "--policies",
                    f"nn@{p(new)},nn@{p(current)},nn@{p(current)},nn@{p(current)}", "--hands",
                    str(args.selection_hands), "--seed", str(args.selection_seed),
                    "--workers", str(args.workers), "--no-log", "--no-progress", "--json",
                    p(out)]
        words = args.phases.words("select")
        _, seconds = _mjbot("selection", words, select(here))
        arena = json.loads(out.read_text())
        points, ci95 = new_minus_current(arena, f"nn@{new}", f"nn@{current}")
        kept = points is not None and points >= 0
        state.finish_phase(number, "select", {
            "seed": args.selection_seed, "seconds": seconds,
            "command": _shown(words, select(state.stored)), "machine": _machine(args),
            "hands": arena["hands"], "difference": None if points is None else round(points, 1),
            "ci95": ci95, "kept": kept,
            "new": {k: arena["policies"][f"nn@{new}"].get(k) for k in (
                "points_per_hand", "avg_rank", "win_rate", "deal_in_rate")}})
    chosen = new if (state.phase(number, "select") or {}).get("kept") else current
    state.finish_round(number, chosen)


def _selfplay_goes_on(data: Path) -> bool:
    """Whether `mjbot selfplay` goes on with the phase's folder ``data`` (its progress.json is
    there) or finds it complete. What an older mjbot left of a stopped or killed phase (a
    stopped manifest or shards, and no record) it refuses, and the phase's folder cannot be
    another: that phase is played again from its start, as it was before. So is one whose
    record cannot be read (cut by a power cut): selfplay refuses it too."""
    from replay.dataset.progress import PROGRESS, read_progress
    from replay.dataset.schema import DatasetError
    from replay.dataset.shards import MANIFEST

    if (data / PROGRESS).is_file():
        try:
            read_progress(data)
        except DatasetError:
            return False
        return True
    try:
        manifest = json.loads((data / MANIFEST).read_text())
    except (OSError, ValueError):
        return False
    return isinstance(manifest, dict) and "stopped" not in manifest


def started_from(root: Path) -> str:
    """The folder this run was started from, relative to the run folder ``root``: a phase
    runs from there, so its dataset's manifest and shards name ``MJBOT_NN_WEIGHTS`` and any
    ``nn@FILE`` seat relative to it, not to the run folder as state.json does."""
    try:
        return Path(os.path.relpath(Path.cwd(), root.absolute())).as_posix()
    except ValueError:  # another drive (Windows): no relative path
        return Path.cwd().as_posix()


def _selfplay_part(args: argparse.Namespace, root: Path, seconds: float,
                   figures: dict[str, Any], cut: bool = False, new: bool = True
                   ) -> dict[str, Any]:
    """One run's part of a self-play phase: its seconds and machine, and the wall sets it
    played (from the first it found not done, where known: the self-play reported it, or
    its folder was ``new``; to where it stopped, or the end), ``cut`` when it stopped short.
    A part whose run was killed outright is not recorded: the next part's start shows where
    it got to."""
    stopped = figures.get("stopped")
    part: dict[str, Any] = {"seconds": seconds, "machine": _machine(args),
                            "started_from": started_from(root)}
    if figures or new:  # a part cut without its report, in a folder it went on with: unknown
        part["from_wall_set"] = (figures.get("resumed") or {}).get("units_done_before", 0) + 1
    part["finished_at"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    if cut:
        part["stopped"] = True
    if stopped:  # a part killed after the grace, or stopped before its first wall set,
        # reports nothing: the next part's from_wall_set says what it kept
        part["stopped_after_wall_set"] = stopped["units_done"]
    if figures.get("already_complete"):
        part["already_complete"] = True
    return part


def _shown(words: list[str], options: list[str], env: dict[str, str] | None = None) -> str:
    """The command ``words`` with ``options`` as a shell line to paste (each word quoted
    where it needs it)."""
    return shlex.join([*(f"{k}={v}" for k, v in (env or {}).items()), "mjbot", *words,
                       *options])


def _machine(args: argparse.Namespace) -> dict[str, Any]:
    """What ran a phase: recorded with each phase, as a resumed run may be on another
    machine and a model card gives each phase's machine and hours."""
    return {"platform": platform.platform(), "cpus": os.cpu_count(),
            "python": platform.python_version(), "device": args.device}
