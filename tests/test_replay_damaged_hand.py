"""`mjbot replay` on a damaged or hand-edited import: a move that does not fit the seat's hand
(seat 0 discarding a tile it does not hold). The replayer stopped reading the seat's moves
there, silently: 3 of the game's 71 decisions, exit 0, no note. Now that hand is named (its
number, round, event and why), the hands after it are read, and the exit status is 1."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.in_process import mjbot_here
from tests.shared_data import MJAI_GAME

ROOT = Path(__file__).resolve().parent.parent
# line 12 of the game: seat 0's tsumogiri of its drawn 9p in the first hand
GOOD_LINE = '{"type":"dahai","actor":0,"pai":"9p","tsumogiri":true}'
BAD_LINE = '{"type":"dahai","actor":0,"pai":"P","tsumogiri":false}'  # no haku in that hand


@pytest.fixture(scope="module")
def damaged(tmp_path_factory: pytest.TempPathFactory) -> Path:
    lines = MJAI_GAME.read_text(encoding="utf-8").splitlines()
    assert lines[11] == GOOD_LINE
    lines[11] = BAD_LINE
    path = tmp_path_factory.mktemp("damaged") / "edited.mjai.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _hands(capsys: pytest.CaptureFixture[str], path: Path) -> tuple[int, dict[str, Any]]:
    run = mjbot_here(capsys, "replay", "--json", str(path))
    return run.returncode, json.loads(run.stdout)["summary"]


def test_a_damaged_hand_is_named_and_the_hands_after_it_are_read(
        capsys: pytest.CaptureFixture[str], damaged: Path) -> None:
    code, good = _hands(capsys, MJAI_GAME)
    assert code == 0 and good["decisions"] == 71 and not good["notes"]
    code, bad = _hands(capsys, damaged)
    assert code == 1
    hands_good, hands_bad = good["hands"], bad["hands"]
    assert isinstance(hands_good, list) and isinstance(hands_bad, list)
    # the first hand up to the bad discard (which is itself read: the move as logged) ...
    assert 0 < hands_bad[0]["decisions"] < hands_good[0]["decisions"]
    # ... and every hand after it, whole
    assert [h["decisions"] for h in hands_bad[1:]] == [h["decisions"] for h in hands_good[1:]]
    assert bad["decisions"] == 71 - hands_good[0]["decisions"] + hands_bad[0]["decisions"]
    (note,) = bad["notes"]
    assert "hand 1 (E1-0)" in note and "event 11" in note and "5z not in hand" in note


def test_the_commentary_and_the_policy_read_past_the_damaged_hand(
        capsys: pytest.CaptureFixture[str], damaged: Path) -> None:
    run = mjbot_here(capsys, "replay", "--json", "--commentary", "--policy", "tsumogiri",
                     str(damaged))
    assert run.returncode == 1, run.stderr
    out = json.loads(run.stdout)
    decisions = out["summary"]["decisions"]
    assert decisions > 60
    assert len(out["commentary"]) == decisions == out["agreement"]["decisions"]
    assert "hand 1 (E1-0) cannot be followed from event 11" in run.stderr


def test_the_process_says_so_and_exits_1(damaged: Path) -> None:
    """As a user meets it: the real command, its text, its stderr and exit status."""
    run = subprocess.run([sys.executable, "-m", "adapter.cli", "replay", str(damaged)],
                         cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert run.returncode == 1
    assert "note: hand 1 (E1-0) cannot be followed from event 11 (TileDiscarded seat 0 5z)" \
        in run.stdout
    assert "Traceback" not in run.stderr
    (line,) = run.stderr.strip().splitlines()[-1:]
    assert line.startswith(f"mjbot replay: {damaged}: hand 1 (E1-0)")
    assert "the hands after it are" in line


def test_the_prediction_measure_reads_past_the_damaged_hand(
        capsys: pytest.CaptureFixture[str], damaged: Path) -> None:
    """`mjbot bench commentary` over a folder holding such a log (replay/review/measure.py
    walks each decision's table itself) met the bad discard at the first decision after the
    damaged hand: a StateError traceback, no table, where before it had counted the moves up
    to that hand. Now it counts every decision the replay reads, that hand's up to the
    failing event and every later hand's."""
    run = mjbot_here(capsys, "bench", "commentary", "--policies", "rulebased",
                     str(damaged.parent))
    assert run.returncode == 0, run.stderr[-2000:]
    assert "Traceback" not in run.stderr
    assert "1 games, 4 seat views" in run.stdout, run.stdout
    from replay.review import measure
    from replay.review.evaluators import RankingEvaluator

    reps, left = measure.replays([damaged])
    assert not left and len(reps) == 4 and reps[0].damaged
    counted: list[int] = []
    measure.measure(reps, RankingEvaluator("rulebased"),
                    progress=lambda n, total: counted.append(n))
    assert counted[-1] == sum(len(r.decisions) for r in reps) > 200


def test_the_review_says_so_on_stderr_and_exits_1(
        capsys: pytest.CaptureFixture[str], damaged: Path) -> None:
    """`mjbot review` rated the hands after the damaged one but exited 0 with nothing on
    stderr (with `--json -` the note was only inside the JSON): a rating of part of the game
    passed for the whole's, where `mjbot replay` of the same file exits 1 and says why, as
    review itself does when the policy gave no answer. Now it says so and exits 1 too."""
    run = mjbot_here(capsys, "review", "--policy", "rulebased", "--json", "-", str(damaged))
    assert run.returncode == 1, run.stderr
    out = json.loads(run.stdout)
    assert out["decisions"] > 60 and not out["policy_failures"]
    (line,) = run.stderr.strip().splitlines()
    assert line.startswith(f"mjbot review: {damaged}: hand 1 (E1-0) cannot be followed from "
                           "event 11 (TileDiscarded seat 0 5z)"), line
    whole = mjbot_here(capsys, "review", "--policy", "rulebased", "--json", "-", str(MJAI_GAME))
    assert whole.returncode == 0 and not whole.stderr.strip(), whole.stderr
