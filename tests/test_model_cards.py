"""The shipped weight files are the ones their model cards describe, and no shipped file holds a
machine path (issue 24).

Each model card in brain/data (nn_models.md, opponent_models.md) carries one ``sha256sum`` line
per weight file it describes. A retrained file under an unchanged card, a weight file with no
card line, or a card line for a file no longer shipped fails here. shanten_tables.npz is not a
model but a table built from code (``python -m brain.shanten_tables``); tests/test_shanten.py
compares it with a fresh build, which pins it more tightly than a hash in a card would, so it
is the one file exempt from a card line (it is still checked for paths).
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil
from pathlib import Path
from typing import Any

import numpy as np

from brain.shipped import DATA
from replay.learning.provenance import portable_name

DERIVED = {"shanten_tables.npz"}  # built from code and compared with a rebuild (test_shanten)
CARD_LINE = re.compile(r"^([0-9a-f]{64})  ([\w.-]+\.npz)$", re.MULTILINE)
ABSOLUTE = re.compile(r"(?<![\w.~-])/(?:work|home|tmp|root|Users|mnt|var|opt|usr|srv|private)/"
                      r"|(?<![\w])[A-Za-z]:\\|(?<![\w.])~/")


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def card_problems(folder: Path) -> list[str]:
    """One line per weight file in ``folder`` whose card line is missing, doubled or wrong,
    and per card line naming no file there."""
    lines: dict[str, list[tuple[str, str]]] = {}
    for card in sorted(folder.glob("*.md")):
        for digest, name in CARD_LINE.findall(card.read_text(encoding="utf-8")):
            lines.setdefault(name, []).append((digest, card.name))
    problems = []
    for path in sorted(folder.glob("*.npz")):
        found = lines.pop(path.name, [])
        if path.name in DERIVED:
            continue
        if len(found) != 1:
            problems.append(f"{path.name}: {len(found)} SHA-256 lines in the cards, not one")
        elif found[0][0] != sha256(path):
            problems.append(f"{path.name}: SHA-256 {sha256(path)}, but {found[0][1]} says "
                            f"{found[0][0]} (retrained? update the card's line)")
    problems += [f"{card}: a line for {name}, which is not shipped"
                 for name, found in lines.items() for _, card in found]
    return problems


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for k, v in value.items() for s in (*_strings(k), *_strings(v))]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return []


def _is_absolute(text: str) -> bool:
    return bool(ABSOLUTE.search(text) or text.startswith("/")
                or re.match(r"[A-Za-z]:[\\/]", text))


def absolute_paths_in(path: Path) -> list[str]:
    """The strings of ``path`` that look like a machine path: every text entry of an npz (its
    JSON ``meta`` and any string array) or every line of a text file."""
    if path.suffix == ".npz":
        texts: list[str] = []
        with np.load(path, allow_pickle=False) as arrays:
            for key in arrays.files:
                a = arrays[key]
                if key == "meta":
                    texts += _strings(json.loads(a.tobytes().decode()))
                elif a.dtype.kind in "US":
                    texts += [str(s) for s in a.ravel()]
        return [t for t in texts if _is_absolute(t)]
    return [line for line in path.read_text(encoding="utf-8").splitlines()
            if ABSOLUTE.search(line)]


def test_every_weight_file_matches_its_card_line() -> None:
    assert card_problems(DATA) == []
    assert {p.name for p in DATA.glob("*.npz")} - DERIVED, "no weight files found"


def test_the_card_check_finds_a_changed_an_uncarded_and_a_stale_file(tmp_path: Path) -> None:
    for name in ("nn_models.md", "opponent_models.md", "nn_mcr.npz", "opponents_mcr.npz",
                 "shanten_tables.npz"):
        shutil.copy(DATA / name, tmp_path / name)
    with open(tmp_path / "nn_mcr.npz", "ab") as fh:  # one byte more: another file
        fh.write(b"\0")
    np.savez(tmp_path / "nn_extra.npz", w=np.zeros(3, np.float32))
    problems = card_problems(tmp_path)
    assert any(p.startswith("nn_mcr.npz: SHA-256") for p in problems), problems
    assert "nn_extra.npz: 0 SHA-256 lines in the cards, not one" in problems
    assert "nn_models.md: a line for nn_riichi.npz, which is not shipped" in problems
    assert not any(p.startswith(("opponents_mcr.npz", "shanten")) for p in problems), problems


def test_no_shipped_file_holds_a_machine_path() -> None:
    files = sorted(p for p in DATA.iterdir() if p.suffix in (".npz", ".md"))
    assert len(files) >= 8
    found = {p.name: absolute_paths_in(p) for p in files}
    assert {name: paths for name, paths in found.items() if paths} == {}


def test_the_path_check_finds_paths_in_meta_and_in_cards(tmp_path: Path) -> None:
    meta = {"training": {"data": ["/tmp/nn-data/mcr1", "ex1"], "config": {"init": "C:\\w\\g.npz"}}}
    np.savez(tmp_path / "w.npz", meta=np.frombuffer(json.dumps(meta).encode(), np.uint8),
             names=np.array(["ok", "/home/someone/x"]))
    assert sorted(absolute_paths_in(tmp_path / "w.npz")) == [
        "/home/someone/x", "/tmp/nn-data/mcr1", "C:\\w\\g.npz"]
    card = tmp_path / "c.md"
    card.write_text("mjbot selfplay --out ../shared/data/x\nsee /work/exp2/gen2.npz\n"
                    "brain/data/nn_riichi.npz, https://example.org/tmp/x\n", encoding="utf-8")
    assert absolute_paths_in(card) == ["see /work/exp2/gen2.npz"]


def test_portable_names_keep_the_name_and_drop_the_machine() -> None:
    assert portable_name("/tmp/nn-data/mcr1") == "mcr1"
    assert portable_name("/work/exp2/gen2.npz") == "gen2.npz"
    assert portable_name("/tmp/mjdata/riichi-a-s1/") == "riichi-a-s1"
    assert portable_name("C:\\runs\\ex1") == "ex1"
    assert portable_name("ex2") == "ex2"
    assert portable_name("") == ""
    assert portable_name(".") == Path.cwd().name
