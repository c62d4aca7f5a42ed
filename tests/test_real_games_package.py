"""`mjbot models eval` finds its real games in the installed package, not in tests/data: the
records are package data (pyproject's patterns take every one), the very files of
tests/data/shared, each folder with its licence."""

import fnmatch
import tomllib
from pathlib import Path

from adapter import opponent_sets as sets
from tests.shared_data import DATA

ROOT = Path(__file__).resolve().parent.parent
ADAPTER = ROOT / "adapter"
SHARED = DATA / "tenhou"


def test_the_real_games_are_in_the_package_and_match_the_test_copies():
    files = sets.real_game_files("riichi")
    assert len(files) == 21
    for f in files:
        assert f.is_relative_to(ADAPTER / "real_games"), f
        assert f.read_bytes() == (SHARED / f.parent.name / f.name).read_bytes(), f
    for folder in {f.parent for f in files}:
        assert list(folder.glob("LICENSE*")), folder
    assert sets.real_game_files("mcr") == []


def test_pyproject_ships_every_real_game_and_licence():
    patterns = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"][
        "package-data"]["adapter"]
    shipped = [p for p in (ADAPTER / "real_games").rglob("*") if p.is_file()]
    assert len(shipped) >= 21 + 3
    for path in shipped:
        rel = path.relative_to(ADAPTER).as_posix()
        assert any(fnmatch.fnmatch(rel, pat) and rel.count("/") == pat.count("/")
                   for pat in patterns), rel


def test_no_real_games_says_where_they_are_read():
    assert str(sets.TENHOU) in sets.no_real_games("riichi")
    assert "our own bots" in sets.no_real_games("taiwan16")
