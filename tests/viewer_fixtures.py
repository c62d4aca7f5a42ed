"""Game files for the viewer tests: a practice game from the local table (full information,
every seat's decisions), a one-seat platform log, and imports copied from tests/data."""

from __future__ import annotations

import shutil
import threading
from pathlib import Path
from typing import Any

from adapter.serve.practice import PracticeSettings, play_one
from replay.log import Footer, GameLogWriter
from tests.log_samples import sample_hand, sample_header, write_steps

DATA = Path(__file__).resolve().parent / "data"
IMPORTS = {
    "tenhou6.json": DATA / "shared/tenhou/convlog_tenhou6_json/ranked_game.json",
    "game.xml": DATA / "shared/tenhou/dnovikoff_mjlog/pao.xml",
    "game.mjai.jsonl": DATA / "shared/mjai/local_match_seed10000_2000.mjai.jsonl",
    "botzone.json": DATA / "botzone_judge_log.json",
    "match.sgf": DATA / "nycu/match.sgf",
}


def practice_game(log_dir: Path, variant: str = "riichi", game: int = 1) -> Path:
    """One local-table game (our policy in seat ``game % 4``); the log's path."""
    reports: list[dict[str, Any]] = []
    settings = PracticeSettings(session="fixture", variant=variant, log_dir=str(log_dir),
                                pause=0)
    assert play_one(settings, game, threading.Event(), reports.append)
    return Path(reports[-1]["log"])


def platform_game(path: Path) -> Path:
    """A short one-seat log, as a platform client writes it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    writer = GameLogWriter(path, sample_header())
    write_steps(writer, sample_hand(0))
    writer.close(Footer({"hands": 1}, (23000, 31000, 23000, 23000)))
    return path


def game_folder(root: Path) -> dict[str, Path]:
    """A log folder as `mjbot serve` leaves it, plus imports; name -> path."""
    files = {"practice": practice_game(root / "practice"),
             "platform": platform_game(root / "ladder" / "tenhou" / "game.mjlog.msgpack")}
    (root / "imports").mkdir()
    for name, source in IMPORTS.items():
        files[name] = root / "imports" / name
        shutil.copy(source, files[name])
    return files
