"""`mjbot nn iterate`: resumable rounds of expert iteration on league games (issue 26).

Each phase is a subprocess of `mjbot` itself (selfplay, nn train, arena), so it runs with the
commands' own worker machinery and frees its memory when done; the round's state
(replay/learning/nn/iterate.py) is written after every phase, so a killed run resumes at the
phase it was in. Seeds: self-play of round r plays seed ``--seed + r``; selection plays
``--selection-seed``; none of them is ever a headline seed (replay/learning/seeds.py).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import platform
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from adapter.commands import UserInputError, four_policies

EXPERT = "mc"


def register(nsub: Any) -> None:
    i = nsub.add_parser("iterate", help="resumable rounds of expert iteration (needs torch)",
                        description="Round r: the expert (mc with the current network as its "
                        "fast move) plays league opponents; the network learns the expert's "
                        "answers (streamed) from this and the previous --window rounds; the new "
                        "generation is kept if it is not behind the current one on the "
                        "selection walls (duplicate arena, 1 vs 3). RUNDIR/state.json is "
                        "written after every phase: run the same command again to resume.")
    i.add_argument("--variant", required=True, help="riichi, mcr or taiwan16")
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
    i.add_argument("--channels", type=int, default=64)
    i.add_argument("--blocks", type=int, default=4)
    i.add_argument("--playouts", type=int, default=128, help="the expert's playouts per "
                   "candidate (fixed, so its answers are reproducible)")
    i.add_argument("--window", type=int, default=2, help="earlier rounds' data also trained on")
    i.add_argument("--epochs", type=int, default=2)
    i.add_argument("--lr", type=float, default=5e-4)
    i.add_argument("--buffer", type=int, default=40_000, metavar="N")
    i.add_argument("--threads", type=int, default=2, help="torch CPU threads")
    i.add_argument("--device", default="cpu", choices=["cpu", "cuda"])
    i.add_argument("--json", action="store_true", help="print the final state as JSON")
    i.set_defaults(handler=cmd_iterate)


def round_seed(base: int, number: int, selection: int) -> int:
    from replay.learning.seeds import free_seed

    return free_seed(base + number, {selection})


def seats(opponents: list[str], number: int) -> str:
    """The expert in seat 0 and three opponents, the list taken in turn round by round."""
    picked = [opponents[(3 * (number - 1) + k) % len(opponents)] for k in range(3)]
    return ",".join([EXPERT, *picked])


def new_minus_current(arena: dict[str, Any], new: str, current: str
                      ) -> tuple[float | None, list[float | None]]:
    """The arena's paired difference new - current and its 95% interval, whichever way the
    arena names the pair (adapter.local.arena.paired_difference)."""
    from adapter.local.arena import paired_difference

    return paired_difference(arena, new, current)


def _mjbot(args: list[str], env: dict[str, str] | None = None) -> tuple[dict[str, Any], float]:
    """Run one `mjbot` command; its JSON (stdout, or the file after ``--json`` for arena) and
    seconds. A failed phase is the user's error in one line (its last stderr line)."""
    start = time.monotonic()
    r = subprocess.run([sys.executable, "-m", "adapter.cli", *args], capture_output=True,
                       text=True, env={**os.environ, **(env or {})})
    seconds = round(time.monotonic() - start, 1)
    if r.returncode != 0:
        last = (r.stderr.strip().splitlines() or ["(no message)"])[-1]
        raise UserInputError(f"mjbot {args[0]} failed (exit {r.returncode}): {last}")
    return (json.loads(r.stdout) if r.stdout.strip().startswith("{") else {}), seconds


def _fresh_network(args: argparse.Namespace, out: Path) -> None:
    import torch

    from brain.nn.encoding import NUM_PLANES
    from brain.nn.network import Shape
    from brain.rules.variant import variant_of
    from replay.learning.nn.train import TorchNet

    torch.manual_seed(args.seed)
    net = TorchNet(Shape(NUM_PLANES, args.channels, args.blocks, 64)).export(
        args.variant, value_scale=variant_of(args.variant).value_scale)
    net.save(out)


def check(args: argparse.Namespace) -> list[str]:
    from replay.learning.seeds import ReservedSeedError, refuse_headline_seed

    for name, value in (("--rounds", args.rounds), ("--hands", args.hands),
                        ("--selection-hands", args.selection_hands),
                        ("--workers", args.workers), ("--epochs", args.epochs),
                        ("--playouts", args.playouts), ("--channels", args.channels),
                        ("--blocks", args.blocks)):
        if value < 1:
            raise UserInputError(f"{name} must be at least 1")
    if args.window < 0:
        raise UserInputError("--window must be 0 or more")
    try:
        refuse_headline_seed(args.selection_seed, "--selection-seed")
    except ReservedSeedError as exc:
        raise UserInputError(str(exc)) from None
    if args.init and not Path(args.init).is_file():
        raise UserInputError(f"--init: no weights file at {args.init}")
    opponents = [o.strip() for o in args.opponents.split(",") if o.strip()]
    if not opponents:
        raise UserInputError("--opponents: name at least one policy")
    four_policies(",".join([EXPERT, *(opponents * 3)[:3]]))  # known names, in one line
    for o in opponents:
        four_policies(f"{EXPERT},{o},{o},{o}")
    if importlib.util.find_spec("torch") is None:  # found, not loaded: the phases load it
        raise UserInputError("mjbot nn iterate needs torch: pip install -e '.[train]'")
    return opponents


def cmd_iterate(args: argparse.Namespace) -> int:
    from replay.dataset.shards import sha256  # numpy: not at the CLI's start
    from replay.learning.nn.iterate import IterateState, StateError

    opponents = check(args)
    root = Path(args.dir)
    start = root / "gen-000.npz"
    if not (root / "state.json").exists():
        root.mkdir(parents=True, exist_ok=True)
        if args.init:
            shutil.copyfile(args.init, start)
        else:
            _fresh_network(args, start)
    try:
        state = IterateState.open(root, args.variant, str(start))
    except StateError as exc:
        raise UserInputError(str(exc)) from None
    state.data.setdefault("start_sha256", sha256(start))
    state.data["machine"] = {"platform": platform.platform(), "cpus": os.cpu_count(),
                             "python": platform.python_version(), "device": args.device}
    state.save()
    for number in range(state.completed() + 1, args.rounds + 1):
        run_round(args, state, number, opponents)
    if args.json:
        print(json.dumps(state.data, indent=2))
    else:
        for r in state.data["rounds"]:
            sel = r["phases"].get("select", {})
            print(f"round {r['round']}: {sel.get('difference', '-')} points/hand "
                  f"{sel.get('ci95', '')} -> {'kept' if sel.get('kept') else 'old kept'}")
        print(f"current weights: {state.current} (sha256 {sha256(state.current)})")
    return 0


def run_round(args: argparse.Namespace, state: Any, number: int, opponents: list[str]) -> None:
    """The three phases of round ``number``, each skipped when state.json says it is done."""
    from replay.dataset.shards import sha256  # numpy: not at the CLI's start

    folder = state.root / f"round-{number:03d}"
    folder.mkdir(exist_ok=True)
    current = state.current
    state.set_round(number, weights_before=current,
                    weights_before_sha256=sha256(current))
    data = folder / f"selfplay-{number:03d}"  # distinct names: the weights record names only
    if state.phase(number, "selfplay") is None:
        seed = round_seed(args.seed, number, args.selection_seed)
        shutil.rmtree(data, ignore_errors=True)  # a killed phase's partial folder
        cmd = ["selfplay", "--variant", args.variant, "--policies",
               seats(opponents, number), "--hands", str(args.hands), "--seed", str(seed),
               "--workers", str(args.workers), "--out", str(data), "--no-progress", "--json"]
        env = {"MJBOT_NN_WEIGHTS": current, "MJBOT_MC": f"playouts={args.playouts},fast=nn"}
        figures, seconds = _mjbot(cmd, env)
        state.finish_phase(number, "selfplay", {
            "seed": seed, "seconds": seconds, "command": _shown(cmd, env), "data": str(data),
            "figures": {k: figures.get(k) for k in ("hands", "decisions", "games")}})
    new = folder / f"gen-{number:03d}.npz"
    if state.phase(number, "train") is None:
        window = [(state.phase(k, "selfplay") or {})["data"]
                  for k in range(max(1, number - args.window), number)]
        cmd = ["nn", "train", "--variant", args.variant, "--data", str(data),
               *map(str, window), "--policies", EXPERT, "--init", current, "--out", str(new),
               "--epochs", str(args.epochs), "--lr", str(args.lr), "--buffer",
               str(args.buffer), "--threads", str(args.threads), "--device", args.device,
               "--seed", str(number), "--json"]
        result, seconds = _mjbot(cmd)
        state.finish_phase(number, "train", {
            "seconds": seconds, "command": _shown(cmd, {}), "weights": str(new),
            "sha256": sha256(new), "bytes": new.stat().st_size,
            "figures": {k: result.get(k) for k in (
                "train_examples", "holdout_examples", "examples_seen", "peak_examples_held",
                "holdout", "train")}})
    if state.phase(number, "select") is None:
        out = folder / "selection.json"
        cmd = ["arena", "--variant", args.variant, "--policies",
               f"nn@{new},nn@{current},nn@{current},nn@{current}", "--hands",
               str(args.selection_hands), "--seed", str(args.selection_seed), "--workers",
               str(args.workers), "--no-log", "--no-progress", "--json", str(out)]
        _, seconds = _mjbot(cmd)
        arena = json.loads(out.read_text())
        points, ci95 = new_minus_current(arena, f"nn@{new}", f"nn@{current}")
        kept = points is not None and points >= 0
        state.finish_phase(number, "select", {
            "seed": args.selection_seed, "seconds": seconds, "command": _shown(cmd, {}),
            "hands": arena["hands"], "difference": None if points is None else round(points, 1),
            "ci95": ci95, "kept": kept,
            "new": {k: arena["policies"][f"nn@{new}"].get(k) for k in (
                "points_per_hand", "avg_rank", "win_rate", "deal_in_rate")}})
    chosen = str(new) if (state.phase(number, "select") or {}).get("kept") else current
    state.finish_round(number, chosen)


def _shown(cmd: list[str], env: dict[str, str]) -> str:
    return " ".join([*(f"{k}={v}" for k, v in env.items()), "mjbot", *cmd])
