"""`mjbot dataset import` of a damaged or hand-edited file (one line of the shared mjai game
edited so that seat 0 discards a tile it does not hold, in the first hand). The import
stopped at that event: the game's other four hands were lost, exit 0, nothing said but one
"recorded move our rules do not list". A user importing thousands of logs lost the rest of
a file for one bad line. Now that hand alone is left out, named on stderr and in the
manifest, the others are imported as the whole file's are, and the exit status is 1."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import numpy as np
import pytest

from replay.dataset import schema as S
from tests.in_process import mjbot_here
from tests.shared_data import MJAI_GAME, TENHOU_CAPTURES

GOOD_LINE = '{"type":"dahai","actor":0,"pai":"9p","tsumogiri":true}'
BAD_LINE = '{"type":"dahai","actor":0,"pai":"P","tsumogiri":false}'  # no haku in that hand


@pytest.fixture
def damaged(tmp_path: Path) -> Path:
    lines = MJAI_GAME.read_text(encoding="utf-8").splitlines()
    assert lines[11] == GOOD_LINE
    lines[11] = BAD_LINE
    path = tmp_path / "edited.mjai.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def shard_arrays(out: Path) -> dict[str, np.ndarray]:
    """The columns of the one shard a small import wrote to ``out``."""
    (shard,) = out.glob("shard-*.npz")
    with np.load(shard) as z:
        return {k: z[k] for k in z.files}


def assert_the_rest_is_the_whole_files(good: dict[str, np.ndarray],
                                       bad: dict[str, np.ndarray], first: int) -> None:
    """Every column of an import that left the first hand (``first`` rows) out equals the
    whole file's after it: its rows, its hands' fields, its hand indexes one lower."""
    for f in S.FIELDS.values():
        if f.name == "hand_index":
            assert (bad[f.name] == good[f.name][first:] - 1).all()
        elif f.name.startswith("h_"):
            assert (bad[f.name] == good[f.name][1:]).all(), f.name
        else:
            assert (bad[f.name] == good[f.name][first:]).all(), f.name


def test_the_damaged_hand_alone_is_left_out_and_said(
        damaged: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    whole = mjbot_here(capsys, "dataset", "import", str(MJAI_GAME), "--out",
                       str(tmp_path / "whole"))
    assert whole.returncode == 0 and not whole.stderr.strip(), whole.stderr
    run = mjbot_here(capsys, "dataset", "import", str(damaged), "--out", str(tmp_path / "ds"))
    assert run.returncode == 1, run.stderr
    assert "Traceback" not in run.stderr
    (line,) = run.stderr.strip().splitlines()
    assert line == (f"mjbot dataset import: {damaged}: hand 1 (E1-0) left out: event 11 "
                    "(TileDiscarded seat 0 5z) at line 12 does not fit the table: StateError: "
                    "tile 5z not in hand 1167889m9p23s1227z")
    assert "1 games, 4 hands" in run.stdout and "damaged hands left out: 1" in run.stdout
    manifest = json.loads((tmp_path / "ds" / "manifest.json").read_text())
    (entry,) = manifest["import"]["files"]
    assert entry["hands"] == 4 and entry["damaged_hands"] == [line.split(": ", 2)[2]]
    assert manifest["import"]["damaged_hands"] == 1
    # the four other hands are as the whole file's: every row, every hand field (h_number
    # keeps the hand's place in the game: 1..4)
    good, bad = shard_arrays(tmp_path / "whole"), shard_arrays(tmp_path / "ds")
    assert list(good["h_number"]) == [0, 1, 2, 3, 4] and list(bad["h_number"]) == [1, 2, 3, 4]
    first = int((good["hand_index"] == 0).sum())
    assert first > 0 and bad["seat"].shape[0] == good["seat"].shape[0] - first
    assert_the_rest_is_the_whole_files(good, bad, first)


def test_json_says_it_too_and_exits_1(damaged: Path, tmp_path: Path,
                                      capsys: pytest.CaptureFixture[str]) -> None:
    run = mjbot_here(capsys, "dataset", "import", str(damaged), "--out", str(tmp_path / "ds"),
                     "--json")
    assert run.returncode == 1
    manifest = json.loads(run.stdout)
    assert manifest["hands"] == 4 and manifest["import"]["damaged_hands"] == 1
    assert "hand 1 (E1-0) left out" in run.stderr


def test_files_are_named_as_given_so_two_of_one_name_are_told_apart(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """Two damaged files of one name in two folders: stderr named both by their basename,
    and the user could not tell which file held which bad hand. Each is named as it was
    given on the command line (here relative to the working directory)."""
    lines = MJAI_GAME.read_text(encoding="utf-8").splitlines()
    for folder, edit in (("a", BAD_LINE), ("b", None)):
        (tmp_path / folder).mkdir()
        mine = list(lines)
        if edit is not None:
            mine[11] = edit
        else:  # the second hand's first discard: a tile that hand does not hold either
            first = next(i for i, x in enumerate(mine) if i > 65 and '"dahai"' in x)
            mine[first] = mine[first].rsplit('"pai":', 1)[0] + '"pai":"P","tsumogiri":false}'
        (tmp_path / folder / "game.mjai.jsonl").write_text("\n".join(mine) + "\n",
                                                            encoding="utf-8")
    (tmp_path / "c").mkdir()
    (tmp_path / "c" / "game.mjai.jsonl").write_bytes(MJAI_GAME.read_bytes())
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "game.mjai.jsonl").write_bytes(MJAI_GAME.read_bytes())
    monkeypatch.chdir(tmp_path)
    given = ["a/game.mjai.jsonl", "b/game.mjai.jsonl", "c/game.mjai.jsonl",
             "d/game.mjai.jsonl"]
    run = mjbot_here(capsys, "dataset", "import", *given, "--out", "ds")
    assert run.returncode == 1, run.stderr
    line_a, line_b = run.stderr.strip().splitlines()
    assert line_a.startswith("mjbot dataset import: a/game.mjai.jsonl: hand 1 (E1-0) left out")
    assert line_b.startswith("mjbot dataset import: b/game.mjai.jsonl: hand 2 (E2-0) left out")
    assert "left out d/game.mjai.jsonl: the same game as c/game.mjai.jsonl" in run.stdout
    manifest = json.loads((tmp_path / "ds" / "manifest.json").read_text())
    assert [f["path"] for f in manifest["import"]["files"]] == given
    assert {f["file"] for f in manifest["import"]["files"]} == {"game.mjai.jsonl"}


def test_a_file_no_reader_takes_beside_others_is_left_out_alone(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """An mjai log with a line that is not JSON (a line of garbage) among other files:
    the import stopped at it, exit 2, nothing written, every other file's games lost. Now
    that file alone is left out, said on stderr with the line and what was wrong, the others
    imported as they are alone, exit 1. A file that is not there is still the error (a
    mistyped name, the user's to fix before anything is written), and so is a bad file
    alone."""
    lines = MJAI_GAME.read_text(encoding="utf-8").splitlines()
    lines[5] = "<garbage>"  # (a tile that is no tile leaves its hand out: test_import_bad_tile)
    bad = tmp_path / "bad.mjai.jsonl"
    bad.write_text("\n".join(lines) + "\n", encoding="utf-8")
    run = mjbot_here(capsys, "dataset", "import", str(bad), str(MJAI_GAME), "--out",
                     str(tmp_path / "ds"))
    assert run.returncode == 1, run.stderr
    (line,) = run.stderr.strip().splitlines()
    assert line == (f"mjbot dataset import: {bad}: not a game log we know (mjai JSONL, by its "
                    f"opening: line 6 is not JSON (Expecting value: line 1 column 1 (char 0))"
                    f") (`mjbot replay {bad}` says why each "
                    "format refused it); left out, the other files imported")
    assert run.stdout.startswith("dataset import riichi: 1 games, 5 hands")
    manifest = json.loads((tmp_path / "ds" / "manifest.json").read_text())
    first, second = manifest["import"]["files"]
    assert first["path"] == str(bad) and first["unread"]
    assert "line 6 is not JSON" in first["left_out"]
    assert second["path"] == str(MJAI_GAME) and second["hands"] == 5
    whole = mjbot_here(capsys, "dataset", "import", str(MJAI_GAME), "--out",
                       str(tmp_path / "whole"))
    assert whole.returncode == 0
    for name, rows in shard_arrays(tmp_path / "whole").items():
        assert (shard_arrays(tmp_path / "ds")[name] == rows).all(), name
    for given in ([str(bad)], [str(tmp_path / "no-such.mjai.jsonl"), str(MJAI_GAME)]):
        out = tmp_path / f"refused{len(given)}"
        run = mjbot_here(capsys, "dataset", "import", *given, "--out", str(out))
        assert run.returncode == 2 and not out.exists(), run.stderr
        assert len(run.stderr.strip().splitlines()) == 1 and given[0] in run.stderr


def test_a_folder_or_a_missing_file_is_said_in_words_that_say_what_to_do(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A folder given as a FILE (the log folder a user reaches for first) was refused as
    "bad: Is a directory", the OS's words, and a mistyped name as "No such file or
    directory": neither said what to give instead, where `mjbot replay` says both. Now the
    folder is named with the glob that imports its files, a missing file as missing; still
    exit 2, nothing written."""
    folder = tmp_path / "logs"
    folder.mkdir()
    for given, why in ((folder, f"is a folder; name the game files in it ({folder}/*)"),
                       (tmp_path / "no-such.mjai.jsonl", "no such file")):
        out = tmp_path / f"out-{given.name}"
        run = mjbot_here(capsys, "dataset", "import", str(given), str(MJAI_GAME),
                         "--out", str(out))
        assert run.returncode == 2 and not out.exists(), run.stderr
        assert run.stderr.strip() == f"mjbot dataset import: {given}: {why}"


def test_a_file_replay_refuses_in_one_line_gets_no_pointer_to_replay(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A file left out for a reason that is one line (a three-player Tenhou transcript, a
    binary file) was said with "(`mjbot replay FILE` says why each format refused it)",
    which sent the user to a replay that prints that same line and no format's reason. The
    pointer is now kept for the files replay says more about (each format's reason)."""
    binary = tmp_path / "game.json"
    binary.write_bytes(b"\x01" + bytes(range(128, 256)))  # no msgpack map, no UTF-8
    for bad in (TENHOU_CAPTURES / "sanma.log", binary):
        run = mjbot_here(capsys, "dataset", "import", str(bad), str(MJAI_GAME), "--out",
                         str(tmp_path / f"ds-{bad.name}"))
        assert run.returncode == 1, run.stderr
        (line,) = run.stderr.splitlines()
        assert line.startswith(f"mjbot dataset import: {bad}: ") and line.endswith(
            "; left out, the other files imported"), line
        assert "mjbot replay" not in line, line


def test_the_command_named_for_a_file_no_reader_takes_runs_as_given(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """In a folder whose name holds a space the hint said `mjbot replay /tmp/my logs/x`,
    two files that are not there when pasted into a shell; the path is quoted as a shell
    reads it (as `mjbot replay`'s own hint quotes it)."""
    lines = MJAI_GAME.read_text(encoding="utf-8").splitlines()
    lines[5] = "<garbage>"
    folder = tmp_path / "my logs"
    folder.mkdir()
    bad = folder / "bad.mjai.jsonl"
    bad.write_text("\n".join(lines) + "\n", encoding="utf-8")
    run = mjbot_here(capsys, "dataset", "import", str(bad), str(MJAI_GAME), "--out",
                     str(tmp_path / "ds"))
    assert run.returncode == 1, run.stderr
    hint = run.stderr.split("(`", 1)[1].split("`", 1)[0]
    assert shlex.split(hint) == ["mjbot", "replay", str(bad)], run.stderr
