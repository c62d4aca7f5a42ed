"""An ``nn`` Botzone bundle: the network code and the MCR weights travel in the zip, the bot
reads the weights from inside it and plays whole matches with only numpy and MahjongGB."""

from __future__ import annotations

import subprocess
import zipfile

import pytest

from adapter.fakes.botzone_judge import run_matches
from adapter.platforms.botzone_bundle import (
    NN_MODULES,
    NN_WEIGHTS,
    ROOT,
    build_botzone_bundle,
    carried_as,
)
from tests.in_process import mjbot_here
from tests.test_botzone_bundle import bare_python  # noqa: F401  (the fixture)

TURN = ("3\n0 0 0\nPASS\n1 0 0 0 0 W1 W2 W3 B4 B5 B6 T7 T8 T9 F1 F1 J1 J3\nPASS\n"
        "2 W5\n\n")


def test_nn_bundle_plays_from_the_weights_inside_the_zip(tmp_path, bare_python):  # noqa: F811
    bundle = build_botzone_bundle(tmp_path / "out", policy="nn")
    names = zipfile.ZipFile(bundle).namelist()
    assert carried_as(NN_WEIGHTS) in names and all(m in names for m in NN_MODULES)
    # run from an empty folder: the shipped file path of the checkout is out of reach
    one = subprocess.run([bare_python, str(bundle), "--no-keep-running", "--no-log"],
                         input=TURN, capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert one.returncode == 0 and one.stdout.split()[0] == "PLAY", one.stderr
    assert "fallback" not in one.stderr, one.stderr  # the network answered, not rulebased
    summary = run_matches(1, ["keep"], seed=7, command=(bare_python, str(bundle)))
    assert summary["verdicts"] == {} and summary["unasked"] == {}
    assert sum(summary["outcomes"].values()) == 1


def test_an_mc_bundle_whose_fast_move_is_the_network_carries_it(tmp_path, bare_python):  # noqa: F811
    bundle = build_botzone_bundle(tmp_path / "out", policy="mc", mc_options="fast=nn")
    names = zipfile.ZipFile(bundle).namelist()
    assert carried_as(NN_WEIGHTS) in names and all(m in names for m in NN_MODULES)
    one = subprocess.run([bare_python, str(bundle), "--no-keep-running", "--no-log"],
                         input=TURN, capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert one.returncode == 0 and one.stdout.split()[0] == "PLAY", one.stderr
    assert "fallback" not in one.stderr, one.stderr  # mc and its network answered


def test_an_nn_bundle_plays_a_plan_planes_network(tmp_path, bare_python):  # noqa: F811
    """An MCR network of encoding 2 needs the plan planes' module inside the zip too."""
    from brain.nn.encoding import MCR_PLAN_ENCODING, num_planes
    from brain.nn.network import Shape, random_network

    weights = tmp_path / "v2.npz"
    random_network("mcr", Shape(num_planes(MCR_PLAN_ENCODING), 8, 1, 4), seed=1,
                   encoding=MCR_PLAN_ENCODING).save(weights)
    bundle = build_botzone_bundle(tmp_path / "out", policy="nn", nn_weights=weights)
    one = subprocess.run([bare_python, str(bundle), "--no-keep-running", "--no-log"],
                         input=TURN, capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert one.returncode == 0 and one.stdout.split()[0] == "PLAY", one.stderr
    assert "fallback" not in one.stderr, one.stderr


def test_other_bundles_carry_no_network(tmp_path):
    names = zipfile.ZipFile(build_botzone_bundle(tmp_path)).namelist()
    assert carried_as(NN_WEIGHTS) not in names and not any(n.startswith("brain/nn/") for n in names)


def test_an_nn_bundle_needs_an_mcr_network(tmp_path):
    with pytest.raises(FileNotFoundError, match=r"no .*missing\.npz"):
        build_botzone_bundle(tmp_path / "a", policy="nn", nn_weights=tmp_path / "missing.npz")
    with pytest.raises(FileNotFoundError, match="'riichi', not 'mcr'"):
        build_botzone_bundle(tmp_path / "b", policy="nn",
                             nn_weights=ROOT / "brain/data/nn_riichi.npz")
    junk = tmp_path / "junk.npz"
    junk.write_bytes(b"not a zip")
    with pytest.raises(FileNotFoundError, match=r"junk\.npz"):
        build_botzone_bundle(tmp_path / "c", policy="nn", nn_weights=junk)


def test_the_bundle_command_refuses_a_wrong_network_in_one_line(tmp_path, capsys):
    """Through mjbot's main() in this process (tests/in_process.py): refusals, sent no
    signal, paid a Python start each as children."""
    done = mjbot_here(capsys, "bundle", "botzone", "--policy", "nn", "-o", str(tmp_path),
                      "--nn-weights", str(ROOT / "brain/data/nn_taiwan16.npz"))
    assert done.returncode != 0 and "Traceback" not in done.stderr
    assert "not 'mcr'" in done.stderr
    # a network by file names a path Botzone does not have: --nn-weights carries it instead
    weights = ROOT / "brain/data/nn_mcr.npz"
    done = mjbot_here(capsys, "bundle", "botzone", "--policy", f"nn@{weights}", "-o",
                      str(tmp_path))
    assert done.returncode != 0 and "Traceback" not in done.stderr
    assert "--nn-weights" in done.stderr


@pytest.mark.parametrize("platform", ["botzone", "mjai"])
def test_mc_with_options_by_name_is_told_to_give_them_as_mc_options(tmp_path, capsys,
                                                                   platform):
    """`--policy mc@fast=nn`, as the arena takes it: refused (the bundle's options are its
    MJBOT_MC), but the line said to carry a network with --policy nn --nn-weights FILE,
    another policy. It says how to bundle mc with those options now."""
    done = mjbot_here(capsys, "bundle", platform, "--policy", "mc@fast=nn", "-o",
                      str(tmp_path))
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    assert "--policy mc --mc-options 'fast=nn'" in done.stderr, done.stderr
    assert "--nn-weights" not in done.stderr, done.stderr
    assert not list(tmp_path.iterdir())


def test_bench_botzone_times_the_nn_zip_at_the_late_turns(tmp_path, monkeypatch):
    """The benchmark builds the zip for the policy asked and starts it once per late turn; a
    turn the network did not answer itself (a fallback) would fail it. Its games are
    measurements, not games of the user's: nothing is logged where it runs. One
    keep-running match (--matches 1), not the default four: the late turns are timed on the
    longest, and any match has last turns."""
    from adapter.bench.botzone import bench_botzone

    monkeypatch.chdir(tmp_path)
    result = bench_botzone(repeats=1, policy="nn", late_turns=2, matches=1)
    assert list(tmp_path.iterdir()) == []
    assert result["policy"] == "nn" and result["late_turns"] == 2
    last = result["match_turns"]
    assert result["bundle_late_slowest_turn"] in (last - 1, last)
    assert 0 < result["bundle_late_median_seconds"] <= result["bundle_late_slowest_seconds"]
    # the start every one-shot turn pays (the bot made, no turn read), beside the reference
    for unit in ("", "_cpu"):  # wall and CPU seconds
        ref = result[f"python_numpy_start{unit}_seconds"]
        assert set(result[f"start{unit}_seconds"]) == {"installed", "zip"} and ref > 0
        for kind, seconds in result[f"start{unit}_seconds"].items():
            assert seconds > 0
            assert result[f"start{unit}_ratio_vs_python_start"][kind] == pytest.approx(
                seconds / ref, abs=0.01)
