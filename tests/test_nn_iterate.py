"""`mjbot nn iterate` (issue 26): rounds of expert iteration that write their state after every
phase and resume where they stopped, never on a headline seed. A tiny config (a few hands, an
8-channel network, 2 playouts); the runs skip without torch as tests/test_nn_train.py does
(and fail instead under MJBOT_REQUIRE_TORCH=1)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from adapter.nn_iterate import new_minus_current, round_seed, seats
from brain.nn.network import Network
from replay.learning.seeds import HEADLINE_SEEDS, free_seed


def need_torch() -> None:
    if os.environ.get("MJBOT_REQUIRE_TORCH") == "1":
        import torch  # noqa: F401  (asked for: a missing torch fails here)
    else:
        pytest.importorskip("torch", reason="torch is not installed (the [train] extra; "
                            "`make test-torch` installs a CPU build)")


# Three rulebased and a style: round 1 seats mc and three rulebased (4 seatings, not the 24 of four
# different policies: the selfplay phase is most of the test's time), round 2 takes the list on
# from its fourth name, so a round that reused round 1's seats is still caught.
OPPONENTS = "rulebased,rulebased,rulebased,style:value"


def _iterate(run: Path, rounds: int, *extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "adapter.cli", "nn", "iterate", "--variant", "riichi", "--dir",
         str(run), "--rounds", str(rounds), "--hands", "1", "--opponents",
         OPPONENTS, "--selection-seed", "41",
         "--selection-hands", "1", "--workers", "1", "--channels", "8", "--blocks", "1",
         "--playouts", "2", "--epochs", "1", "--threads", "1", "--seed", "7", *extra],
        capture_output=True, text=True, timeout=600)


def _state(run: Path) -> dict[str, Any]:
    return dict(json.loads((run / "state.json").read_text()))


def _stamps(run: Path, number: int) -> dict[str, int]:
    folder = run / f"round-{number:03d}"
    return {p.name: p.stat().st_mtime_ns for p in (
        folder / f"selfplay-{number:03d}" / "manifest.json", folder / f"gen-{number:03d}.npz",
        folder / "selection.json")}


def test_rounds_resume_where_the_last_run_stopped(tmp_path: Path) -> None:
    need_torch()
    run = tmp_path / "run"
    r = _iterate(run, 1)
    assert r.returncode == 0, r.stderr
    one = _state(run)
    assert [x["done"] for x in one["rounds"]] == [True]
    first = one["rounds"][0]
    assert set(first["phases"]) == {"selfplay", "train", "select"}
    assert first["phases"]["selfplay"]["seed"] == 8
    assert "--policies mc,rulebased,rulebased,rulebased" in \
        first["phases"]["selfplay"]["command"]
    train = first["phases"]["train"]["figures"]
    assert train["train_examples"] > 0 and train["examples_seen"] == train["train_examples"]
    assert one["current"] == first["weights_after"]
    Network.from_file(one["current"], "riichi")
    stamps = _stamps(run, 1)

    r = _iterate(run, 2)  # goes on at round 2: round 1 is neither played nor trained again
    assert r.returncode == 0, r.stderr
    two = _state(run)
    assert [x["done"] for x in two["rounds"]] == [True, True]
    assert two["rounds"][0] == first and _stamps(run, 1) == stamps
    second = two["rounds"][1]
    assert second["weights_before"] == first["weights_after"]
    assert second["phases"]["selfplay"]["seed"] == 9
    # the opponents come in turn: round 2 seats the fourth and then the first again
    assert "--policies mc,style:value,rulebased,rulebased" in \
        second["phases"]["selfplay"]["command"]
    assert str(run / "round-001" / "selfplay-001") in second["phases"]["train"]["command"]
    # the weights name their data and start by name: the window's folders are told apart
    meta = Network.from_file(second["phases"]["train"]["weights"], "riichi").meta["training"]
    assert meta["data"] == ["selfplay-002", "selfplay-001"]
    assert meta["config"]["init"] == Path(second["weights_before"]).name

    # as if killed during round 2's selection: only that phase runs again
    state = _state(run)
    del state["rounds"][1]["phases"]["select"]
    state["rounds"][1]["done"] = False
    state["current"] = second["weights_before"]
    (run / "state.json").write_text(json.dumps(state))
    before = _stamps(run, 2)
    r = _iterate(run, 2)
    assert r.returncode == 0, r.stderr
    again = _state(run)
    assert again["rounds"][0] == first
    assert again["rounds"][1]["done"] and again["rounds"][1]["phases"]["train"] == \
        second["phases"]["train"] and again["rounds"][1]["phases"]["selfplay"] == \
        second["phases"]["selfplay"]
    after = _stamps(run, 2)
    assert after["manifest.json"] == before["manifest.json"]
    assert after["gen-002.npz"] == before["gen-002.npz"]
    assert after["selection.json"] != before["selection.json"]


@pytest.mark.parametrize("seed", sorted(HEADLINE_SEEDS))
def test_a_headline_seed_is_refused_for_selection(tmp_path: Path, seed: int) -> None:
    r = _iterate(tmp_path / "run", 1, "--selection-seed", str(seed))
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert f"--selection-seed {seed} is a headline seed" in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "run").exists()


def test_derived_seeds_never_land_on_a_headline_or_the_selection_seed() -> None:
    assert free_seed(24) == 10_024 and free_seed(5) == 5
    assert round_seed(23, 1, 41) == 10_024  # 24 is the riichi headline
    assert round_seed(40, 1, 41) == 10_041  # the selection walls stay unseen in training
    seeds = {round_seed(0, r, 41) for r in range(1, 200)}
    assert len(seeds) == 199 and not seeds & {*HEADLINE_SEEDS, 41}
    assert seats(["a", "b"], 1) == "mc,a,b,a" and seats(["a", "b"], 2) == "mc,b,a,b"


def test_the_kept_difference_is_new_minus_current_whichever_way_the_arena_names_it(
        tmp_path: Path) -> None:
    """The arena names a pair in sorted order: with the new weights sorting after the current
    ones, its figure is current - new and must change sign (a run kept a generation that was
    121 points/hand behind before this)."""
    b = tmp_path / "z.npz"
    b.write_bytes((Path(__file__).parent / "data" / "nn" / "golden_riichi.npz").read_bytes())
    out = tmp_path / "sel.json"
    r = subprocess.run([sys.executable, "-m", "adapter.cli", "arena", "--variant", "riichi",
                        "--policies", f"nn@{b},rulebased,rulebased,rulebased", "--hands", "4",
                        "--seed", "43", "--no-log", "--no-progress", "--json", str(out)],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    arena = json.loads(out.read_text())
    (pair, figures), = arena["differences"].items()
    assert pair == f"nn@{b}-rulebased"  # sorted: "nn@..." before "rulebased"
    points = arena["policies"][f"nn@{b}"]["points_per_hand"] - \
        arena["policies"]["rulebased"]["points_per_hand"]
    assert points != 0
    got, ci = new_minus_current(arena, "rulebased", f"nn@{b}")  # new sorts after current
    assert got == pytest.approx(-figures["points_per_hand"])
    assert (got > 0) == (points < 0)  # new - current has the sign of new's points - current's
    assert ci == [None if figures["ci95"][1] is None else -figures["ci95"][1],
                  None if figures["ci95"][0] is None else -figures["ci95"][0]]
    same, _ = new_minus_current(arena, f"nn@{b}", "rulebased")
    assert same == figures["points_per_hand"]
