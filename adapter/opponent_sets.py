"""The datasets the opponent models are trained and judged on, built where the table lives.

Training data comes from ``mjbot selfplay`` with mixed styles (rule-based, greedy and
tsumogiri players) so that the models learn more than one player's habits: the two
:data:`MIXES` plus two mostly rule-based tables with fewer seatings (more distinct walls per
hand played; brain/data/opponent_models.md gives the commands). The held-out set of
``mjbot models eval`` is the two :data:`MIXES` with seeds no training set used
(:data:`EVAL_SEED` and the next), built afresh when no ``--data`` is given so that a fresh
clone reproduces the published figures. The real games are the Tenhou records shipped in
adapter/real_games/tenhou (people's games with every hand shown; package data, so an installed
wheel has them too): riichi only, since the MCR and Taiwan records in the repository are games
of our own bots.
"""

from __future__ import annotations

import re
from pathlib import Path

MIXES: tuple[tuple[str, str, str, str], ...] = (
    ("rulebased", "greedy", "rulebased", "greedy"),
    ("greedy", "rulebased", "tsumogiri", "rulebased"),
)
EVAL_SEED = 1001
# Per-style evaluation (`mjbot models eval --by-style`): the league's styles, the baselines and
# the two policies no opponent model is trained on; one self-play set per style, the style in
# all four seats, every style on the same walls (seed 3001: no training or held-out set uses
# it).
STYLE_SET = ("rulebased", "greedy", "style:open", "style:closed", "style:defensive",
             "style:value", "nn", "mc")
STYLE_EVAL_SEED = 3001

TENHOU = Path(__file__).resolve().parent / "real_games" / "tenhou"
TENHOU_VARIANT = "riichi"  # what the shipped people's games (Tenhou records) are
NO_REAL_GAMES = {
    "mcr": "no games by people with every hand shown in the repository (the Botzone judge "
           "log is a game of our own bots)",
    "taiwan16": "no games by people with every hand shown in the repository (tests/data/nycu "
                "holds hands of our own bots)",
    "mass": "no recorded games of this variant",
}


def real_game_files(variant: str) -> list[Path]:
    """The people's games of ``variant`` shipped with mjbot: Tenhou tenhou.net/6 JSON and
    mjlog records (of mjx's pairs, which hold each game twice, only the mjlog copy)."""
    if variant != TENHOU_VARIANT:
        return []
    return sorted([*TENHOU.glob("convlog_tenhou6_json/*.json"),
                   *TENHOU.glob("mjx_pairs/*.mjlog"), *TENHOU.glob("dnovikoff_mjlog/*.xml")])


def no_real_games(variant: str) -> str:
    """Why ``variant`` has no real games by default, in one line naming where they are read."""
    if variant == TENHOU_VARIANT:
        return (f"no Tenhou records at {TENHOU} (mjbot's package data is incomplete; pass "
                "--real FILE...)")
    return NO_REAL_GAMES.get(variant, "no real game files given")


def build_heldout(variant: str, out: Path, hands: int, seed: int = EVAL_SEED,
                  workers: int = 1) -> list[Path]:
    """Self-play datasets of every mix under ``out`` (one directory each)."""
    from adapter.local.arena import ArenaConfig
    from adapter.local.selfplay import SelfPlayConfig, run_selfplay

    dirs = []
    for i, mix in enumerate(MIXES):
        d = out / f"heldout-{i}"
        run_selfplay(SelfPlayConfig(ArenaConfig(variant, mix, hands, seed + i, workers), str(d)))
        dirs.append(d)
    return dirs


def style_set_dir(root: Path, style: str, hands: int, seed: int) -> Path:
    """Where the per-style set of ``style`` lives under ``root`` (a name without ':' or '/')."""
    safe = re.sub(r"[^A-Za-z0-9_.-]+", "-", style)
    return root / f"style-{safe}-s{seed}-h{hands}"


def build_style_set(variant: str, root: Path, style: str, hands: int, seed: int,
                    workers: int = 1) -> tuple[Path, bool]:
    """The self-play set of ``style`` in all four seats: every (decision, opponent) pair is a
    pair of that style, and with one seating every hand is a wall of its own (the bootstrap
    by wall has as many walls as hands). A set already under ``root`` with the same policies,
    seed and hands is reused (returned with True); another one there is refused."""
    from adapter.local.arena import ArenaConfig
    from adapter.local.selfplay import SelfPlayConfig, run_selfplay
    from replay.dataset.schema import DatasetError
    from replay.dataset.shards import read_manifest

    d = style_set_dir(root, style, hands, seed)
    if d.exists():
        try:
            manifest = read_manifest(d)
        except DatasetError as exc:
            raise DatasetError(f"{d} is not a finished per-style set ({exc}); remove it") \
                from None
        cfg = manifest.get("config", {})
        want = {"policies_seated": [style] * 4, "seed": seed, "hands_requested": hands}
        if manifest.get("variant") != variant or any(cfg.get(k) != v for k, v in want.items()):
            raise DatasetError(f"{d} holds another set than {style} x4, seed {seed}, {hands} "
                               f"hands of {variant}; remove it")
        return d, True
    run_selfplay(SelfPlayConfig(ArenaConfig(variant, (style,) * 4, hands, seed, workers),
                                str(d)))
    return d, False


def build_real(files: list[Path], out: Path) -> Path:
    """The records imported into one dataset directory."""
    from replay.dataset.imports import import_files

    import_files([str(f) for f in files], str(out))
    return out
