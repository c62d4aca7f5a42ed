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

from protocols import events as ev
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
    assert ("note: hand 1 (E1-0) cannot be followed from event 11 (TileDiscarded seat 0 5z) "
            "at line 12: ") in run.stdout
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
    failing event and every later hand's, and names the hand as `mjbot replay` does (exit
    1: part of the input is not in the figures)."""
    run = mjbot_here(capsys, "bench", "commentary", "--policies", "rulebased",
                     str(damaged.parent))
    assert run.returncode == 1, run.stderr[-2000:]
    assert "Traceback" not in run.stderr
    (err,) = run.stderr.strip().splitlines()
    assert err.startswith(f"mjbot bench commentary: {damaged}: hand 1 (E1-0) cannot be "
                          "followed from event 11 (TileDiscarded seat 0 5z) at line 12: ")
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
    # every decision replay reads past the damaged hand: those with a choice rated, the
    # forced ones counted apart (replay/review/game.py)
    _, read = _hands(capsys, damaged)
    assert out["decisions"] + out["forced_decisions"] == read["decisions"] > 60
    assert out["decisions"] > 50 and not out["policy_failures"]
    (line,) = run.stderr.strip().splitlines()
    assert line.startswith(f"mjbot review: {damaged}: hand 1 (E1-0) cannot be followed from "
                           "event 11 (TileDiscarded seat 0 5z)"), line
    whole = mjbot_here(capsys, "review", "--policy", "rulebased", "--json", "-", str(MJAI_GAME))
    assert whole.returncode == 0 and not whole.stderr.strip(), whole.stderr


def test_the_commentary_resumes_at_a_match_logs_next_game_with_its_seat() -> None:
    """A real NTPU client log of two games, ours at seat 0 in the first and seat 3 in the
    second, the first game's last event hand-edited (a draw of seat 9). The commentary
    skipped up to the next hand's start only, so the second game's start was skipped too:
    its table kept the first game's seat and the second game's hand failed on our own draw
    (a second hand skipped): its 15 moves had no commentary. It resumes at the next game's
    start now, as the replay's own walk does, and says the second game as the undamaged
    file does."""
    from replay import replayer
    from replay.review.commentary import commentary_rows
    from replay.review.evaluators import RankingEvaluator

    rep = replayer.load(ROOT / "tests" / "data" / "nycu" / "client1.log")
    starts = [i for i, e in enumerate(rep.events) if isinstance(e, ev.GameStarted)]
    assert [rep.events[i].seat for i in starts] == [0, 3]
    second = starts[1]
    ranker = RankingEvaluator("rulebased")
    whole = [r for r in commentary_rows(rep, ranker) if r["event_index"] > second]
    assert len(whole) == 15
    rep.events = [*rep.events[:second - 1], ev.TileDrawn(seat=9, tile=None),
                  *rep.events[second:]]
    skipped: list[tuple[int, str]] = []
    rows = list(commentary_rows(rep, ranker,
                                damaged=lambda i, why: skipped.append((i, why))))
    assert [i for i, _ in skipped] == [second - 1]  # that hand alone
    assert [r for r in rows if r["event_index"] > second] == whole


@pytest.fixture
def own_damaged(tmp_path: Path) -> Path:
    """Our own log of two hands, the second hand-edited: seat 1 discards a 9p it does not
    hold after its first decision, before its second."""
    from protocols.tiles import parse_mpsz
    from replay.log import Footer, GameLogWriter
    from tests.log_samples import sample_hand, sample_header, write_steps

    second = sample_hand(1)
    second.insert(5, ("event", ev.TileDiscarded(seat=1, tile=parse_mpsz("9p")[0],
                                                tsumogiri=False)))
    path = tmp_path / "edited.mjlog.msgpack"
    writer = GameLogWriter(path, sample_header())
    write_steps(writer, [*sample_hand(0), *second])
    writer.close(Footer({"hands": 2}, (23000, 31000, 23000, 23000)))
    return path


def test_review_reads_past_a_damaged_hand_of_our_own_log_and_its_bar_ends_whole(
        own_damaged: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Our own log's decisions are recorded, not derived from the table, so its reader
    notes no damaged hand: `mjbot review` of a hand-edited one met the bad discard in its
    walk as a StateError traceback, and `replay --policy` ended in one line with no
    agreement. Now the hand is noted where the walk meets it and left from there, as an
    import's is: the review says so (a note, stderr, exit 1), and its progress, which
    counted only the decisions walked (the damaged hand's last one is not), reaches its
    total."""
    from replay import replayer
    from replay.review.evaluators import RankingEvaluator
    from replay.review.game import review

    rep = replayer.load(own_damaged)
    assert len(rep.decisions) == 4 and not rep.damaged
    calls: list[tuple[int, int]] = []
    result = review(rep, RankingEvaluator("rulebased"),
                    progress=lambda done, total: calls.append((done, total)))
    assert result["decisions"] == 3  # the damaged hand's claim, after the bad discard, left
    assert calls[-1] == (4, 4) and [d for d, _ in calls] == sorted(d for d, _ in calls)
    (damaged,) = rep.damaged
    assert damaged["hand"] == 2 and "9p not in hand" in damaged["why"]
    assert any(n.startswith("hand 2 (E2-0) cannot be followed") for n in result["notes"])
    run = mjbot_here(capsys, "review", str(own_damaged), "--policy", "rulebased")
    assert run.returncode == 1 and "Traceback" not in run.stderr, run.stderr
    (line,) = run.stderr.strip().splitlines()
    assert line.startswith(f"mjbot review: {own_damaged}: hand 2 (E2-0) cannot be followed")
    run = mjbot_here(capsys, "replay", str(own_damaged), "--policy", "rulebased", "--json")
    assert run.returncode == 1, run.stderr
    assert json.loads(run.stdout)["agreement"]["decisions"] == 3
    assert f"mjbot replay: {own_damaged}: hand 2 (E2-0) cannot be followed" in run.stderr


@pytest.mark.parametrize("asked", [["--policy", "rulebased"], ["--commentary"]])
def test_replay_of_our_own_damaged_log_notes_the_hand_it_met(
        own_damaged: Path, asked: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    """`mjbot replay --policy` / `--commentary` of our own hand-edited log named the hand
    its table refused on stderr only: the summary (printed, and `summary.notes` of --json)
    was made before the walk met it, so it had no note, where an import's damaged hand has
    one. A script reading the JSON could not tell that part of the game was not read. Now
    the hand is a note of the summary as an import's is."""
    note = "hand 2 (E2-0) cannot be followed from event 7 (TileDiscarded seat 1 9p)"
    run = mjbot_here(capsys, "replay", str(own_damaged), *asked, "--json")
    assert run.returncode == 1, run.stderr
    notes = json.loads(run.stdout)["summary"]["notes"]
    (said,) = [n for n in notes if n.startswith("hand ")]  # once, though both walks met it
    assert said.startswith(note) and "9p not in hand" in said, notes
    run = mjbot_here(capsys, "replay", str(own_damaged), *asked)
    assert run.returncode == 1 and f"  note: {note}" in run.stdout, run.stdout


def test_every_review_of_one_replay_notes_the_hand_its_walk_met(own_damaged: Path) -> None:
    """`mjbot bench review` reviews one loaded replay twice (rulebased, then mc): the first
    walk noted the damaged hand of our own log in ``replay.damaged`` and said so, the second
    found it noted already and its result had no such note, as though the game were whole.
    Each review now says it."""
    from replay import replayer
    from replay.review.evaluators import RankingEvaluator
    from replay.review.game import review

    rep = replayer.load(own_damaged)
    first = review(rep, RankingEvaluator("rulebased"))
    second = review(rep, RankingEvaluator("greedy"))
    said = [n for n in first["notes"] if n.startswith("hand 2 (E2-0) cannot be followed")]
    assert len(said) == 1 and first["notes"] == second["notes"], (first["notes"], second)
    assert second["decisions"] == first["decisions"] == 3
