"""`mjbot models eval --by-style`: the opponent models' figures per opponent style (issue 26
section 2), so a model trained on some styles can be read on the ones it never saw.

Each style gets its own self-play set with the style in all four seats (every pair observes
that style, every hand is a wall of its own), on the same walls for every style (one seed),
built and judged one style at a time so memory stays that of one set. With ``--data`` the
given datasets are grouped by the policy of the observed seat instead.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path
from typing import Any

from adapter.commands import UserInputError, log, require_policy, require_walls_held_out


def eval_by_style(args: argparse.Namespace, variant: str, path: Path, models: Any,
                  hands: int) -> int:
    """Print the per-style report (JSON with ``--json``); bad style names are one line."""
    from adapter import opponent_sets as sets
    from replay.dataset.schema import DatasetError
    from replay.learning.opponents import data as D
    from replay.learning.opponents.evaluate import by_style

    started = time.perf_counter()
    versus = _versus(args.versus, variant) if args.versus else None
    styles = _styles(args.styles)
    seed = sets.STYLE_EVAL_SEED if args.seed is None else args.seed
    rows: dict[str, dict[str, Any]] = {}
    source: dict[str, Any]
    try:
        if args.data:
            if args.seed is not None or args.keep_sets:
                raise UserInputError("--seed and --keep-sets build the per-style sets; "
                                     "with --data there is nothing to build")
            data = D.load(args.data, variant, kinds="all")
            held = data.pair_counts()
            styles = styles or sorted(held)
            missing = [s for s in styles if s not in held]
            if missing:
                raise UserInputError(f"no pairs of {', '.join(missing)} in --data (its "
                                     f"observed policies: {', '.join(sorted(held))})")
            rows = by_style(models, data, styles, args.bootstrap, versus=versus)
            source = {"dirs": [str(d) for d in args.data], "layout": "as the data was played"}
        else:
            styles = styles or list(sets.STYLE_SET)
            for style in styles:
                require_policy(style)
            require_walls_held_out(models.meta.get("trained_on"), variant, [seed], str(path),
                                   f"the per-style sets (seed {seed})", "pick another --seed")
            with tempfile.TemporaryDirectory(prefix="mjbot-styles-") as tmp:
                root = Path(args.keep_sets) if args.keep_sets else Path(tmp)
                for style in styles:
                    d, reused = sets.build_style_set(variant, root, style, hands, seed,
                                                     args.workers)
                    log().info("per-style set", style=style, dir=str(d), reused=reused)
                    rows.update(by_style(models, D.load([d], variant, kinds="all"), [style],
                                         args.bootstrap, versus=versus))
            source = {"selfplay_seed": seed, "hands_per_style": hands,
                      "layout": "the style in all four seats, the same walls for every style"}
    except DatasetError as exc:
        raise UserInputError(str(exc)) from None
    report = {"variant": variant, "by_style": rows, "sets": source,
              "model": {"file": str(path), "trained_on_decisions": models.meta.get("decisions"),
                        "sources": models.meta.get("sources"),
                        "excluded": models.meta.get("excluded_policies", [])},
              "versus": None if versus is None else {"file": args.versus,
                                                     "sources": versus.meta.get("sources")},
              "bootstrap": args.bootstrap, "seconds": round(time.perf_counter() - started, 1)}
    print(json.dumps(report, indent=2) if args.json else _text(report))
    return 0


def _versus(path: str, variant: str) -> Any:
    """The ``--versus`` weights, refused in one line when missing or of another variant."""
    from brain.opponents.models import OpponentModels

    try:
        other = OpponentModels.from_file(Path(path))
    except (OSError, ValueError, KeyError) as exc:
        raise UserInputError(f"--versus {path}: {exc}") from None
    if other.variant != variant:
        raise UserInputError(f"--versus {path} holds {other.variant} models, not {variant}")
    return other


def _styles(text: str | None) -> list[str]:
    """``--styles a,b,c`` as a list (empty: the default set); blanks are an error."""
    if text is None:
        return []
    names = [n.strip() for n in text.split(",")]
    if not all(names):
        raise UserInputError(f"--styles has an empty name: {text!r}")
    return list(dict.fromkeys(names))


def _text(report: dict[str, Any]) -> str:
    def f(v: Any, ci: Any = None) -> str:
        if v is None:
            return "-"
        out = f"{v:.3f}" if isinstance(v, float) and abs(v) < 10 else f"{v:.0f}"
        if ci:
            lo, hi = ci
            out += f" [{lo:.3f}, {hi:.3f}]" if abs(v) < 10 else f" [{lo:.0f}, {hi:.0f}]"
        return out

    lines = [f"models eval {report['variant']} by style ({report['seconds']} s): "
             f"{report['model']['file']}",
             "  style: pairs, tenpai AUC, wait AUC, deal-in AUC, value MAE"]
    keys = ("tenpai_auc", "wait_auc", "deal_in_auc", "value_mae")
    for style, r in report["by_style"].items():
        ci = r.get("ci95", {})
        lines.append(f"  {style}: {r['pairs']}, "
                     + ", ".join(f(r[k], ci.get(k)) for k in keys))
        versus = r.get("versus")
        if versus:  # the --versus file on the same pairs, and ours minus its (paired CIs)
            lines.append("    versus: " + ", ".join(f(versus.get(k)) for k in keys))
            diff, dci = versus.get("diff", {}), versus.get("diff_ci95", {})
            lines.append("    ours - versus: " + ", ".join(
                _signed(diff.get(k), dci.get(k)) for k in keys))
    if report.get("versus"):
        lines.insert(1, f"  versus {report['versus']['file']} on the same pairs")
    return "\n".join(lines)


def _signed(value: float | None, ci: Any = None) -> str:
    """A paired difference: sign kept, three decimals, its interval where there is one."""
    if value is None:
        return "-"
    return f"{value:+z.3f}" + (f" [{ci[0]:+z.3f}, {ci[1]:+z.3f}]" if ci else "")
