"""Honest measurement: a policy whose answers the brain had to replace is counted, shown and
fails the run (the real CLI through its entry point, in the test process; the runs with
--workers fork their worker processes from it, as from the command's process), and a bad
MJBOT_MC is one line."""

import json

import numpy as np
import pytest

from brain.opponents.models import model_path
from brain.tally import FallbackTally, over_threshold
from tests.in_process import mjbot_here

MC_RULEBASED = "mc,rulebased,rulebased,rulebased"


@pytest.fixture
def _mjbot(capsys, monkeypatch):
    """``_mjbot(*ARGS, mc=MJBOT_MC)``: ``mjbot ARGS`` with that MJBOT_MC (none by default)."""
    def run(*args, mc=None):
        monkeypatch.delenv("MJBOT_MC", raising=False)
        if mc is not None:
            monkeypatch.setenv("MJBOT_MC", mc)
        return mjbot_here(capsys, *args)
    return run


def _broken_models(tmp_path):
    """MJBOT_MC for an mc that raises at every decision: opponent models that load (a run
    whose models are missing or unreadable is refused before it plays) but whose tenpai
    head is one input short, so every estimate fails."""
    folder = tmp_path / "broken"
    folder.mkdir()
    with np.load(model_path("riichi")) as shipped:
        arrays = {k: shipped[k] for k in shipped.files}
    arrays["tenpai.wx"] = arrays["tenpai.wx"][:-1]
    np.savez(folder / "opponents_riichi.npz", **arrays)
    return f"models={folder},playouts=8"


def test_arena_with_a_policy_that_never_plays_fails_naming_it(tmp_path, _mjbot):
    # the command, fewer hands; two workers carry their counts back
    out = tmp_path / "arena.json"
    r = _mjbot("arena", "--variant", "riichi", "--policies", MC_RULEBASED, "--hands", "30",
               "--workers", "2", "--no-log", "--json", str(out), mc=_broken_models(tmp_path))
    assert r.returncode == 1, r.stderr
    last = r.stderr.strip().splitlines()[-1]
    assert last.startswith("mjbot arena: policy mc fell back in ")
    assert "mc raised ValueError" in last and "Traceback" not in r.stderr
    data = json.loads(out.read_text())
    assert data["units"] == 2
    mc, rb = data["policies"]["mc"], data["policies"]["rulebased"]
    assert mc["decisions"] > 100 and mc["fallback_share"] > 0.9
    assert mc["fallbacks"] == round(mc["fallback_share"] * mc["decisions"])
    assert "mc raised ValueError" in mc["first_fallback"]
    assert rb["decisions"] > 3 * 100 and rb["fallbacks"] == 0 and rb["first_fallback"] is None
    table = next(line for line in r.stdout.splitlines() if line.startswith("mc "))
    assert f"{mc['fallbacks']} ({100 * mc['fallback_share']:.1f}%)" in table
    assert "mc fell back in" in r.stdout


def test_max_fallback_share_is_an_option(tmp_path, _mjbot):
    r = _mjbot("arena", "--policies", MC_RULEBASED, "--hands", "4", "--no-log",
               "--max-fallback-share", "1", mc=_broken_models(tmp_path))
    assert r.returncode == 0, r.stderr
    assert "mc fell back in" in r.stdout
    r = _mjbot("arena", "--policies", MC_RULEBASED, "--max-fallback-share", "2")
    assert r.returncode == 2 and "a share between 0 and 1" in r.stderr


def test_normal_arena_run_has_no_fallbacks_and_passes(tmp_path, _mjbot):
    out = tmp_path / "arena.json"
    r = _mjbot("arena", "--policies", "rulebased,greedy,greedy,greedy", "--hands", "8",
               "--no-log", "--json", str(out))
    assert r.returncode == 0, r.stderr
    for entry in json.loads(out.read_text())["policies"].values():
        assert entry["decisions"] > 0 and entry["fallbacks"] == 0
        assert entry["fallback_share"] == 0.0
    assert "fell back" not in r.stdout


def test_selfplay_counts_fallbacks_across_workers(tmp_path, _mjbot):
    r = _mjbot("selfplay", "--policies", MC_RULEBASED, "--hands", "30", "--workers", "2",
               "--out", str(tmp_path / "ds"), "--json", mc=_broken_models(tmp_path))
    assert r.returncode == 1
    assert r.stderr.strip().splitlines()[-1].startswith("mjbot selfplay: policy mc fell back")
    figures = json.loads(r.stdout)["fallbacks"]
    assert figures["mc"]["fallback_share"] > 0.9 and figures["rulebased"]["fallbacks"] == 0
    manifest = json.loads((tmp_path / "ds" / "manifest.json").read_text())
    assert manifest["fallbacks"] == figures
    r = _mjbot("selfplay", "--policies", "rulebased,greedy,rulebased,greedy", "--hands", "4",
               "--out", str(tmp_path / "ok"))
    assert r.returncode == 0, r.stderr
    assert "greedy 0 of " in r.stdout


def test_bad_mjbot_mc_is_one_line_naming_the_key(tmp_path, _mjbot):
    r = _mjbot("arena", "--policies", MC_RULEBASED, "--hands", "4", "--no-log", mc="bogus=1")
    assert r.returncode == 2 and "Traceback" not in r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1
    assert "unknown key 'bogus'" in lines[0] and "playouts" in lines[0] and "seed" in lines[0]
    r = _mjbot("selfplay", "--policies", MC_RULEBASED, "--hands", "4",
               "--out", str(tmp_path / "ds"), mc="playouts=many")
    assert r.returncode == 2 and "playouts needs an int" in r.stderr
    assert "Traceback" not in r.stderr


def test_threshold_names_the_first_policy_over_it():
    tallies = {"a": FallbackTally(100, 1, "a raised X"), "b": FallbackTally(10, 2, "b late")}
    assert over_threshold(tallies, 0.01) == ("policy b fell back in 2 of 10 decisions "
                                             "(20.0% > 1%); first: b late")
    assert over_threshold(tallies, 0.2) == ""
    assert over_threshold({"c": FallbackTally()}, 0.0) == ""


def test_threshold_verdict_shows_the_share_above_the_limit():
    # an outside bot's 3 fallbacks in 292 decisions: 1.027%, which one decimal rounds to the
    # very limit it is refused for ("1.0% > 1%")
    verdict = over_threshold({"me": FallbackTally(292, 3, "me garbage")}, 0.01)
    assert "(1.03% > 1%)" in verdict
    assert "(33.3% > 30%)" in over_threshold({"x": FallbackTally(3, 1, "")}, 0.3)
    assert "(0.5001% > 0.5%)" in over_threshold({"x": FallbackTally(9998, 50, "")}, 0.005)
