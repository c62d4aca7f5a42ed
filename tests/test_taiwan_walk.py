"""The Taiwan path walked end to end as a user does it, on a hand where the last drawer (asked
only Win or Pass since 4ce34cc) matters: the record written as the NYCU lab's SGF, then read
back by ``mjbot replay`` and ``mjbot dataset import`` in their own processes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np

from adapter.local.referee import HandSetup
from adapter.local.seat import BrainSeat
from protocols import events as ev
from replay.dataset import schema as S
from replay.formats import nycu_sgf
from replay.replayer import derive_decisions
from tests.nycu_fixtures import _play
from tests.table_helpers import ScriptedSeat
from tests.test_referee_last_draw import DEALER_READY, _pass_the_last_tile, _wall

ROOT = Path(__file__).resolve().parent.parent


def _mjbot(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-m", "adapter.cli", "--log-level", "warning", *args],
                          capture_output=True, text=True, cwd=ROOT, env=env, timeout=120)


def _passed_last_draw_sgf(path: Path) -> Path:
    """North (seat 3) is ready on the 9s whose last copy is the last draw, and passes it."""
    wall = _wall("111z222z33z44z55z66z7z1p", DEALER_READY)
    players = [ScriptedSeat("taiwan16", s, _pass_the_last_tile if s == 3 else None)
               for s in range(4)]
    record = _play(players, HandSetup(seed=0, wall=wall))
    assert isinstance(record.events[-2], ev.TileDrawn) and record.events[-2].seat == 3
    assert record.events[-1] == ev.RoundDrawn("exhaustive")
    path.write_text(nycu_sgf.dumps(record), encoding="ascii")
    return path


def test_a_last_drawer_passing_its_win_is_a_decision_in_replay_and_dataset(tmp_path) -> None:
    """The record ends on North's last draw, which it could win by: North passed. Read back,
    that pass was no decision at all (the turn waited for a discard that never comes), so
    ``replay --policy`` did not count it and ``dataset import`` left it out."""
    sgf = _passed_last_draw_sgf(tmp_path / "passed.sgf")
    run = _mjbot("replay", "--seat", "3", "--policy", "rulebased", "--json", str(sgf))
    assert run.returncode == 0, run.stderr
    agreement = json.loads(run.stdout)["agreement"]
    assert {"kind": "turn", "recorded": "pass", "policy": "win"}.items() <= \
        agreement["disagreements"][-1].items()

    run = _mjbot("dataset", "import", "--out", str(tmp_path / "ds"), str(sgf))
    assert run.returncode == 0, run.stderr
    (shard,) = (tmp_path / "ds").glob("shard-*.npz")
    with np.load(shard) as rows:
        wall_column = S.TABLE_COLUMNS.index("wall_remaining")
        last = [i for i in range(len(rows["seat"])) if rows["v_table"][i][wall_column] == 0]
        assert len(last) == 1
        (i,) = last
        legal = [S.ACTION_CODES[code[0]] for code in rows["legal"][i][:rows["legal_count"][i]]]
        assert (int(rows["seat"][i]), legal) == (3, ["win", "pass"])
        assert S.ACTION_CODES[rows["action"][i][0]] == "pass"


def test_the_commentary_says_what_passing_the_last_draw_means(tmp_path) -> None:
    """``replay --commentary`` on that pass said ``seat 3 pass.``: the turn's sentences knew
    discards, kongs and the abortive draw, not a turn that may only win or pass."""
    sgf = _passed_last_draw_sgf(tmp_path / "passed.sgf")
    run = _mjbot("replay", "--seat", "3", "--commentary", "--json", str(sgf))
    assert run.returncode == 0, run.stderr
    last = json.loads(run.stdout)["commentary"][-1]
    assert (last["kind"], last["played"], last["factor"]) == ("turn", "pass", "value")
    assert last["sentence"] == ("seat 3 does not win on the drawn 9s, though the win was "
                                "legal; it was the last draw, so the hand is drawn.")


def _rulebased_hands_sgf(path: Path, seeds: range) -> Path:
    """Hands four ``rulebased`` seats played at our table, written as one SGF."""
    text = ""
    for seed in seeds:
        players = [BrainSeat("taiwan16", s, "rulebased") for s in range(4)]
        text += nycu_sgf.dumps(_play(players, HandSetup(seed=seed, dealer=seed % 4,
                                                        round_number=seed % 4)))
    path.write_text(text, encoding="ascii")
    return path


def test_rulebased_agrees_with_its_own_hands_read_from_an_sgf(tmp_path) -> None:
    """A seat that could chow a discard another seat then punged was read as passing it,
    though the record cannot show its answer (the pung outranks the chow; the lab referee
    does not even ask it): ``replay --policy rulebased`` on rulebased's own hands disagreed
    ('recorded pass, policy chi'), and ``dataset import`` kept those passes."""
    sgf = _rulebased_hands_sgf(tmp_path / "rb.sgf", range(12))
    for seat in range(4):
        run = _mjbot("replay", "--seat", str(seat), "--policy", "rulebased", "--json", str(sgf))
        assert run.returncode == 0, run.stderr
        agreement = json.loads(run.stdout)["agreement"]
        assert agreement["decisions"] > 100
        assert agreement["disagreements"] == [], (seat, agreement["disagreements"])


def test_a_pung_passed_before_the_next_seats_chow_is_still_read(tmp_path) -> None:
    """The pass is shown where the seat would have outranked the taker: a pung it declined
    before the next seat chowed the tile stays a decision (a pass) in ``dataset import``."""
    sgf = _rulebased_hands_sgf(tmp_path / "rb.sgf", range(12))
    record = nycu_sgf.loads(sgf.read_text())
    shown = 0
    for seat in range(4):
        for d in derive_decisions(record, seat):
            after = record.events[d.index]
            if (d.request.kind == "claim" and d.action == ev.Pass()
                    and any(isinstance(a, ev.Pon) for a in d.legal)
                    and isinstance(after, ev.MeldCalled) and after.kind == "chi"):
                shown += 1
    assert shown > 0
