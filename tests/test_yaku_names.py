"""English names beside the logs' yaku, fans and tai: every name Tenhou, the `mahjong`
library, MahjongGB (the 81 MCR fans) and our Taiwan rules can write has one, and the viewer's
steps carry them for real games of each variant."""

from __future__ import annotations

import re
from pathlib import Path

from mahjong.hand_calculating.yaku_config import YakuConfig

from protocols.tenhou import YAKU
from replay import formats
from replay.timeline import build
from replay.yaku_names import MCR_FANS, english, item_name
from tests.viewer_fixtures import IMPORTS, practice_game

ROOT = Path(__file__).resolve().parents[1]


def test_every_riichi_yaku_has_an_english_name() -> None:
    for name in YAKU:
        assert english(f"{name}(1飜)", "riichi"), name
    config = YakuConfig()
    names = [getattr(config, a).name for a in dir(config)
             if not a.startswith("_") and hasattr(getattr(config, a), "name")]
    assert len(names) > 50
    for name in names:  # romaji: either translated or already English
        assert english(f"{name}(1)", "riichi") or name in ("Riichi", "Dora", "Ura Dora",
                                                           "Double Riichi", "Open Riichi",
                                                           "Double Open Riichi",
                                                           "Nagashi Mangan", "Sashikomi"), name
    assert english("平和(1飜)", "riichi") == "All Sequences (Pinfu)"
    assert english("Yakuhai (chun)(1)", "riichi") == "Red Dragon"


def test_the_81_mcr_fans_and_the_taiwan_tai() -> None:
    assert len(MCR_FANS) == 81 and len(set(MCR_FANS.values())) == 81
    assert english("平和×1=2", "mcr") == "All Chows" and english("平和=2", "mcr") == "All Chows"
    assert english("独听・单钓(1)", "mcr") == "Single Wait"
    source = (ROOT / "brain" / "rules" / "taiwan16.py").read_text()
    tai = set(re.findall(r'sheet\.add\("([^"]+)"', source))
    assert len(tai) > 30
    for name in tai:
        assert english(f"{name}(1)", "taiwan16"), name
    assert item_name("三元牌(1)") == "三元牌" and english("nonsense(2)", "mcr") is None


def test_the_steps_carry_english_names(tmp_path: Path) -> None:
    games = [IMPORTS[name] for name in ("tenhou6.json", "game.xml", "botzone.json",
                                        "match.sgf")]
    games += [practice_game(tmp_path / v, v, game) for v in ("riichi", "mcr", "taiwan16")
              for game in (1, 2)]
    seen: dict[str, int] = {}
    for path in games:
        timeline = build(formats.read(path.read_bytes(), path))
        variant = timeline.meta["variant"]
        for hand in timeline.hands:
            result = hand["result"]
            if result and result["type"] == "win" and result["yaku"]:
                assert len(result["yaku_en"]) == len(result["yaku"])
                for item, name in zip(result["yaku"], result["yaku_en"], strict=True):
                    assert name or item_name(item) in ("Riichi", "Dora", "Ura Dora"), item
                seen[variant] = seen.get(variant, 0) + 1
    assert set(seen) == {"riichi", "mcr", "taiwan16"}, seen
