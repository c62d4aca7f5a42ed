"""`mjbot models train|eval`: the opponent models of issue 16 section 1 (P(tenpai), P(wait |
tenpai) per kind, the value of a win) trained on self-play datasets and judged on a held-out
self-play set and on people's games (brain/data/opponent_models.md)."""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from adapter.commands import (
    UserInputError,
    add_variant_option,
    log,
    require_distinct_datasets,
    require_held_out_from,
    require_walls_held_out,
    require_writable,
    training_record,
    warn_not_held_out_checked,
)
from brain.rules.variant import variant_of


def register(sub: Any) -> None:
    m = sub.add_parser("models", help="train or evaluate the opponent models",
                       description="Opponent models (seed 002): P(tenpai), P(kind completes "
                       "the hand | tenpai) and the expected value of a win, per opponent.")
    msub = m.add_subparsers(dest="models_command", metavar="ACTION", required=True)
    t = msub.add_parser("train", help="fit the three heads on self-play datasets")
    add_variant_option(t, None)
    t.add_argument("--data", required=True, nargs="+", metavar="DIR",
                   help="dataset directories (mjbot selfplay --out), all of the variant")
    t.add_argument("--out", metavar="FILE", help="weights file (default: the shipped "
                   "brain/data/opponents_VARIANT.npz)")
    t.add_argument("--seed", type=int, default=0)
    t.add_argument("--max-decisions", type=int, default=400000, metavar="N",
                   help="decisions read, about, in all (a seeded sample; default "
                   "%(default)s, so a larger dataset is not read whole; 0: every one)")
    t.add_argument("--epochs", type=int, default=None, help="epochs of every head "
                   "(default: the trainer's)")
    t.add_argument("--exclude-styles", metavar="A,B,...", help="policies whose seats are "
                   "never the observed opponent in training (a leave-one-style-out model; "
                   "their decisions stay, with fewer pairs)")
    t.add_argument("--threads", type=int, default=None, metavar="N",
                   help="numpy's BLAS threads (default: OPENBLAS_NUM_THREADS where it is set, "
                   "else 1: on a busy 2-core machine training ran 2-15 times slower on "
                   "OpenBLAS's default of a thread per core; see the README)")
    t.add_argument("--json", action="store_true", help="print the run as JSON")
    t.set_defaults(handler=cmd_train)

    e = msub.add_parser("eval", help="the section-1 figures and their baselines",
                        description="AUCs of P(tenpai) and P(wait), the value's mean absolute "
                        "error, on a held-out self-play set (built with a fixed seed when "
                        "--data is absent) and on the people's games of the repository.")
    add_variant_option(e, None)
    e.add_argument("--data", nargs="+", metavar="DIR", help="held-out dataset directories "
                   "(default: self-play built now with the evaluation seed)")
    e.add_argument("--model", metavar="FILE", help="weights (default: the shipped ones)")
    e.add_argument("--real", nargs="+", metavar="FILE", help="people's game records "
                   "(default: the Tenhou records shipped in adapter/real_games; riichi)")
    e.add_argument("--hands", type=int, default=None, metavar="N",
                   help="hands per mix of the built held-out set (default: per variant)")
    e.add_argument("--workers", type=int, default=1)
    e.add_argument("--bootstrap", type=int, default=200, metavar="N",
                   help="bootstrap rounds over hands for the 95%% intervals (0: none)")
    e.add_argument("--by-style", action="store_true",
                   help="the figures per opponent style instead: over the pairs whose "
                   "observed seat played each style, on a self-play set per style (the style "
                   "in all four seats, seed --seed) or on --data grouped by policy")
    e.add_argument("--styles", metavar="A,B,...", help="--by-style: the policies (default: "
                   "rulebased, greedy, the four league styles, nn and mc; with --data: every "
                   "policy it holds)")
    e.add_argument("--seed", type=int, default=None, help="--by-style: the self-play seed "
                   "of the per-style sets (default 3001: no training set's)")
    e.add_argument("--versus", metavar="FILE", help="--by-style: another weights file of the "
                   "variant, read on the same pairs: its figures and the differences with "
                   "paired intervals")
    e.add_argument("--keep-sets", metavar="DIR", help="--by-style: build the per-style sets "
                   "under DIR and keep them (a set already there is reused)")
    e.add_argument("--no-cache", action="store_true", help="build the held-out set and "
                   "import the real games afresh, and store nothing (default: reuse what an "
                   "earlier run built from the same records, seed and code, kept in "
                   "$MJBOT_EVAL_CACHE, else $XDG_CACHE_HOME/mjbot/models-eval or "
                   "~/.cache/mjbot/models-eval; MJBOT_EVAL_CACHE=off disables it too)")
    e.add_argument("--json", action="store_true")
    e.set_defaults(handler=cmd_eval)


BLAS_THREADS = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")


def limit_blas_threads(threads: int | None) -> None:
    """Numpy's BLAS reads its thread count once, when numpy loads, from the environment:
    set it before then (this command loads numpy only after its options are checked). Its
    default, a thread per core, made training several times slower on a busy machine (README,
    "Opponent models"). A process that loaded numpy already keeps its count."""
    if threads is None:
        if os.environ.get("OPENBLAS_NUM_THREADS"):
            return
        threads = 1
    if "numpy" not in sys.modules:
        for name in BLAS_THREADS:
            os.environ[name] = str(threads)


def cmd_train(args: argparse.Namespace) -> int:
    if args.threads is not None and args.threads < 1:
        raise UserInputError(f"--threads must be at least 1, got {args.threads}")
    limit_blas_threads(args.threads)
    variant = args.variant
    from dataclasses import replace

    from brain.opponents.models import model_path
    from replay.dataset.schema import DatasetError
    from replay.learning.opponents import data as D
    from replay.learning.opponents.train import config_for, train

    for name, value in (("--seed", args.seed), ("--max-decisions", args.max_decisions)):
        if value < 0:
            raise UserInputError(f"{name} must be at least 0, got {value}")
    require_writable(args.out, "--out")
    require_distinct_datasets(args.data, [])
    started = time.perf_counter()
    exclude = [n.strip() for n in (args.exclude_styles or "").split(",") if n.strip()]
    try:
        data = D.load(args.data, variant, max_decisions=args.max_decisions, seed=args.seed,
                      exclude=exclude)
    except DatasetError as exc:
        raise UserInputError(str(exc)) from None
    cfg = config_for(variant, args.seed)
    if args.epochs is not None:
        if args.epochs < 1:
            raise UserInputError("--epochs must be at least 1")
        cfg = replace(cfg, **{h: replace(getattr(cfg, h), epochs=args.epochs)
                              for h in ("tenpai", "wait", "value")})
    loaded = time.perf_counter()
    epochs: dict[str, list[dict[str, Any]]] = {}
    models = train(data, cfg, epochs)
    out = Path(args.out) if args.out else model_path(variant)
    models.meta["load_seconds"] = round(loaded - started, 1)
    models.meta["excluded_policies"] = exclude
    # what a later `models eval --data` tells its held-out set from (digests, no paths)
    models.meta["trained_on"] = training_record(args.data)
    models.save(out)
    summary = {"variant": variant, "out": str(out), "decisions": data.decisions,
               "pairs": len(data.tenpai), "ready_pairs": int(data.tenpai.sum()),
               "value_rows": int(data.win.sum()), "opponent_pairs": data.pair_counts(),
               "excluded_policies": exclude, "load_seconds": round(loaded - started, 1),
               "train_seconds": models.meta["train_seconds"], "epochs": epochs}
    if args.json:
        print(json.dumps(summary, indent=2))
    else:
        print(f"models train {variant}: {summary['decisions']} decisions, {summary['pairs']} "
              f"opponent views ({summary['ready_pairs']} ready), {summary['value_rows']} "
              f"winning kinds; {summary['load_seconds']} s reading, "
              f"{summary['train_seconds']} s training -> {out}")
        for head, rows in epochs.items():
            if any(r["valid_loss"] is None for r in rows):
                print(f"  {head}: no held-out example (the held-out hands hold none: too few "
                      f"hands); the last of {len(rows)} epochs kept")
                continue
            best = min(rows, key=lambda r: r["valid_loss"])
            print(f"  {head}: best held-out loss {best['valid_loss']:.4f} at epoch "
                  f"{best['epoch'] + 1}/{len(rows)}")
    return 0


def cmd_eval(args: argparse.Namespace) -> int:
    variant = args.variant
    from adapter import opponent_sets as sets
    from brain.opponents.models import OpponentModels, model_path
    from replay.dataset import cache as C
    from replay.dataset.schema import DatasetError
    from replay.dataset.shards import sha256
    from replay.learning.opponents import data as D
    from replay.learning.opponents.evaluate import evaluate

    path = Path(args.model) if args.model else model_path(variant)
    if not path.is_file():
        raise UserInputError(f"no weights at {path} (mjbot models train --variant {variant})")
    try:
        models = OpponentModels.from_file(path)
    except (OSError, ValueError, KeyError) as exc:
        said = str(exc)  # some refusals name the file already
        raise UserInputError(said if said.startswith(str(path)) else f"{path}: {said}") \
            from None
    if models.variant != variant:
        raise UserInputError(f"{path} holds {models.variant} models, not {variant}")
    started = time.perf_counter()
    hands = args.hands if args.hands is not None else variant_of(variant).eval_hands
    if hands < 1:
        raise UserInputError("--hands must be at least 1")
    for name, value, least in (("--workers", args.workers, 1), ("--bootstrap",
                               args.bootstrap, 0)):
        if value < least:
            raise UserInputError(f"{name} must be at least {least}, got {value}")
    # a held-out set of what the models were trained on: in-sample figures (refused before
    # any work; weights that record nothing are said to be so beside the figures, not before
    # a refusal of this command's own)
    checked = not args.data or require_held_out_from(
        args.data, models.meta.get("trained_on"), str(path), "--data")
    if args.by_style:
        from adapter.opponent_styles import eval_by_style

        status = eval_by_style(args, variant, path, models, hands)
        if not checked:
            warn_not_held_out_checked(str(path), "--data")
        return status
    if args.styles or args.seed is not None or args.keep_sets or args.versus:
        raise UserInputError("--styles, --seed, --keep-sets and --versus go with --by-style")
    real_files = ([Path(f) for f in args.real] if args.real
                  else sets.real_game_files(variant))
    cache = EvalCache(None if args.no_cache else C.cache_dir())
    real_digests = []  # the records' bytes are part of their entry's key
    if cache.folder is not None:
        for f in real_files:
            try:
                real_digests.append([f.name, sha256(f)])
            except OSError as exc:
                raise UserInputError(f"{f}: {exc.strerror or exc}") from None
    with tempfile.TemporaryDirectory(prefix="mjbot-models-") as tmp:
        try:
            if args.data:
                held_dirs = [Path(d) for d in args.data]
                held_source: dict[str, Any] = {"dirs": [str(d) for d in held_dirs]}
            else:
                require_walls_held_out(
                    models.meta.get("trained_on"), variant,
                    [sets.EVAL_SEED + i for i in range(len(sets.MIXES))], str(path),
                    f"the held-out self-play set (seed {sets.EVAL_SEED})",
                    "give --data a held-out set played on another --seed")
                held_root = Path(tmp) / "held"
                names = [f"heldout-{i}" for i in range(len(sets.MIXES))]

                def build_held(out: Path) -> None:
                    log().info("building the held-out self-play set", variant=variant,
                               hands_per_mix=hands, seed=sets.EVAL_SEED)
                    sets.build_heldout(variant, out, hands, sets.EVAL_SEED, args.workers)

                cache.build(f"heldout-{variant}-h{hands}", {
                    "what": "heldout", "variant": variant, "hands_per_mix": hands,
                    "seed": sets.EVAL_SEED, "mixes": sets.MIXES}, held_root, build_held, names)
                held_dirs = [held_root / n for n in names]
                held_source = {"selfplay_seed": sets.EVAL_SEED, "hands_per_mix": hands,
                               "mixes": [",".join(m) for m in sets.MIXES]}
            held = D.load(held_dirs, variant, kinds="all")
            real = None
            if real_files:
                real_dir = Path(tmp) / "real"

                def build_real(out: Path) -> None:
                    sets.build_real(real_files, out)

                cache.build(f"real-{variant}", {"what": "real", "variant": variant,
                                                "files": real_digests}, real_dir, build_real,
                            ["."])
                # records the models were trained on (imported into `models train --data`)
                # give in-sample figures as a --data of them would; weights that record
                # nothing are warned about for --data only (not on every plain eval): its
                # False not heeded
                require_held_out_from(
                    [str(real_dir)], models.meta.get("trained_on"), str(path),
                    "--real" if args.real else "the people's games",
                    f"({len(real_files)} records)" if args.real
                    else f"({len(real_files)} records shipped; --real FILE for others)")
                real = D.load([real_dir], variant, kinds="all")
        except DatasetError as exc:
            raise UserInputError(str(exc)) from None
    if not checked:
        warn_not_held_out_checked(str(path), "--data")
    report = _report(variant, path, models, evaluate(models, held, args.bootstrap),
                     None if real is None else evaluate(models, real, args.bootstrap),
                     held_source, real_files, time.perf_counter() - started)
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        print(_text(report))
    return 0


class EvalCache:
    """The dataset cache of one `models eval` run (replay/dataset/cache.py): every key holds
    the code digest of the package folders, computed once, and the libraries' versions."""

    def __init__(self, folder: Path | None) -> None:
        self.folder = folder
        self._code: dict[str, Any] | None = None

    def build(self, name: str, parts: dict[str, Any], dest: Path,
              build: Callable[[Path], None], dataset_dirs: list[str]) -> str:
        from replay.dataset import cache as C

        if self.folder is not None and self._code is None:
            root = Path(C.__file__).resolve().parents[2]
            self._code = {"code": C.source_digest(
                [root / p for p in ("protocols", "brain", "replay", "adapter")]),
                "libraries": C.libraries()}
        key = C.entry_key({**parts, **(self._code or {})})
        status = C.cached_build(self.folder, name, key, dest, build, dataset_dirs,
                                say=lambda line: log().warning("models eval cache: " + line))
        if status == "hit":
            log().info("models eval: read from the cache", entry=name, folder=str(self.folder))
        return status


def _report(variant: str, path: Path, models: Any, held: dict[str, Any],
            real: dict[str, Any] | None, held_source: dict[str, Any], real_files: list[Path],
            seconds: float) -> dict[str, Any]:
    """One flat JSON object: the section-1 fields first, then the baselines and details."""
    from adapter.opponent_sets import no_real_games

    def r(key: str) -> Any:
        return None if real is None else real.get(key)

    base = held["baseline"]
    rbase = real["baseline"] if real is not None else {}
    riichi = variant_of(variant).has_riichi
    out: dict[str, Any] = {
        "variant": variant,
        "tenpai_auc": held["tenpai_auc"], "tenpai_auc_real": r("tenpai_auc"),
        "wait_auc": held["wait_auc"], "wait_auc_real": r("wait_auc"),
        "value_mae": held["value_mae"], "value_mae_real": r("value_mae"),
        "tenpai_auc_no_riichi": held["tenpai_auc_no_riichi"] if riichi else None,
        "tenpai_auc_real_no_riichi": r("tenpai_auc_no_riichi") if riichi else None,
        "deal_in_auc": held["deal_in_auc"], "deal_in_auc_real": r("deal_in_auc"),
        "baselines": {
            "tenpai_auc_riichi": base["tenpai_auc_riichi"] if riichi else None,
            "tenpai_auc_calls": base["tenpai_auc_calls"],
            "tenpai_auc_turn": base["tenpai_auc_turn"],
            "tenpai_auc_no_riichi_calls": base["tenpai_auc_no_riichi_calls"] if riichi else None,
            "wait_auc_genbutsu_suji": base["wait_auc_genbutsu_suji"],
            "value_mae_mean": base["value_mae_mean"],
            "tenpai_auc_real_riichi": rbase.get("tenpai_auc_riichi"),
            "tenpai_auc_real_calls": rbase.get("tenpai_auc_calls"),
            "tenpai_auc_real_turn": rbase.get("tenpai_auc_turn"),
            "tenpai_auc_real_no_riichi_calls": rbase.get("tenpai_auc_no_riichi_calls"),
            "wait_auc_real_genbutsu_suji": rbase.get("wait_auc_genbutsu_suji"),
            "value_mae_real_mean": rbase.get("value_mae_mean"),
        },
        "ci95": {k: v for k, v in {
            "tenpai_auc": held.get("tenpai_auc_ci95"), "wait_auc": held.get("wait_auc_ci95"),
            "tenpai_auc_real": r("tenpai_auc_ci95"),
            "tenpai_auc_real_no_riichi": r("tenpai_auc_no_riichi_ci95") if riichi else None,
            "wait_auc_real": r("wait_auc_ci95")}.items() if v is not None},
        "real_reason": None if real is not None else no_real_games(variant),
        "value_unit": "points the viewer pays on dealing in (dataset t_points)",
        "heldout": {**held_source, "pairs": held["pairs"], "ready_pairs": held["ready_pairs"],
                    "value_rows": held["value_rows"]},
        "real": None if real is None else {
            "files": len(real_files), "pairs": real["pairs"], "ready_pairs": real["ready_pairs"],
            "value_rows": real["value_rows"]},
        "model": {"file": str(path), "trained_on_decisions": models.meta.get("decisions"),
                  "seed": models.meta.get("seed")},
        "seconds": round(seconds, 1),
    }
    return out


def _text(report: dict[str, Any]) -> str:
    def f(v: Any) -> str:
        return "-" if v is None else f"{v:.3f}" if isinstance(v, float) else str(v)

    b = report["baselines"]
    lines = [
        f"models eval {report['variant']} ({report['seconds']} s)",
        f"  tenpai AUC  held-out {f(report['tenpai_auc'])}  real {f(report['tenpai_auc_real'])}"
        f"   baselines: riichi {f(b['tenpai_auc_riichi'])}, calls {f(b['tenpai_auc_calls'])},"
        f" turn {f(b['tenpai_auc_turn'])}",
        f"  wait AUC    held-out {f(report['wait_auc'])}  real {f(report['wait_auc_real'])}"
        f"   baseline genbutsu/suji {f(b['wait_auc_genbutsu_suji'])}",
        f"  value MAE   held-out {f(report['value_mae'])}  real {f(report['value_mae_real'])}"
        f"   baseline mean {f(b['value_mae_mean'])}",
    ]
    if report["real_reason"]:
        lines.append(f"  real games: {report['real_reason']}")
    return "\n".join(lines)
