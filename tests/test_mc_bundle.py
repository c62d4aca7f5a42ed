"""An ``mc`` Botzone bundle: its modules and the MCR weights travel in the zip, the bot reads
the weights from inside it (no file path there) and plays whole matches with only numpy and
MahjongGB installed."""

from __future__ import annotations

import subprocess
import zipfile

import numpy as np
import pytest

from adapter.fakes.botzone_judge import run_matches
from adapter.platforms.botzone_bundle import MCR_WEIGHTS, build_botzone_bundle, carried_as
from brain.opponents.features import KIND_NAMES, PUBLIC_NAMES
from brain.opponents.models import OpponentModels
from brain.opponents.net import Net
from tests.test_botzone_bundle import bare_python  # noqa: F401  (the fixture)


def _net(rng: np.random.Generator, fx: int, fz: int | None, hidden: int = 4) -> Net:
    z = {} if fz is None else {"z_mean": np.zeros(fz, np.float32),
                              "z_scale": np.ones(fz, np.float32),
                              "wz": rng.normal(0, 0.05, (fz, hidden)).astype(np.float32)}
    return Net(np.zeros(fx, np.float32), np.ones(fx, np.float32),
               rng.normal(0, 0.05, (fx, hidden)).astype(np.float32),
               np.zeros(hidden, np.float32), rng.normal(0, 0.1, hidden).astype(np.float32),
               np.array(-2.0, np.float32), **z)


def _weights(folder) -> None:
    """Small random heads in the shipped file format (the bundle test needs a file, not
    good predictions)."""
    rng = np.random.default_rng(0)
    fx, fz = len(PUBLIC_NAMES), len(KIND_NAMES)
    heads = {"tenpai": _net(rng, fx, None), "wait": _net(rng, fx, fz),
             "value": _net(rng, fx, fz)}
    OpponentModels("mcr", heads, 1.0, (2.5, 4.0), {}).save(folder / "opponents_mcr.npz")


def test_an_mc_bundle_without_weights_is_refused(tmp_path):
    with pytest.raises(FileNotFoundError, match="opponents_mcr"):
        build_botzone_bundle(tmp_path / "out", policy="mc", models_dir=tmp_path)


def test_mc_bundle_plays_matches_in_a_bare_runtime(tmp_path, bare_python):  # noqa: F811
    _weights(tmp_path)
    bundle = build_botzone_bundle(tmp_path / "out", policy="mc", models_dir=tmp_path,
                                  mc_options="playouts=2,always_simulate=1")
    names = zipfile.ZipFile(bundle).namelist()
    assert carried_as(MCR_WEIGHTS) in names and "brain/policies/mc/playout.py" in names
    # one-shot: our draw, answered by mc itself (a fallback says so on stderr)
    turn = ("3\n0 0 0\nPASS\n1 0 0 0 0 W1 W2 W3 B4 B5 B6 T7 T8 T9 F1 F1 J1 J3\nPASS\n"
            "2 W5\n\n")
    one = subprocess.run([bare_python, str(bundle), "--no-keep-running"], input=turn,
                         capture_output=True, text=True, timeout=60)
    assert one.returncode == 0 and one.stdout.split()[0] == "PLAY", one.stderr
    assert "fallback" not in one.stderr, one.stderr
    summary = run_matches(1, ["keep"], seed=5, command=(bare_python, str(bundle)))
    assert summary["verdicts"] == {} and summary["unasked"] == {}
    assert sum(summary["outcomes"].values()) == 1
