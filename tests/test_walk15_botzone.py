"""A Botzone competitor's walk through the README (walk15): what such a user met, fixed."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from adapter.platforms.botzone_bundle import ROOT, build_botzone_bundle
from adapter.platforms.mjai_bundle import build_mjai_bundle
from tests.in_process import mjbot_here

DATA = ROOT / "brain/data"


def _renamed(folder: Path, source: str, name: str) -> Path:
    folder.mkdir()
    shutil.copyfile(DATA / source, folder / name)
    return folder


def test_an_mc_bundle_refuses_another_variants_models(tmp_path: Path) -> None:
    """`--models DIR` whose opponents_mcr.npz holds riichi models (renamed) built a zip whose
    every mc decision fell back on Botzone (`mc raised MissingModels`); it is refused when
    built, as a network of another variant is."""
    riichi = _renamed(tmp_path / "r", "opponents_riichi.npz", "opponents_mcr.npz")
    with pytest.raises(FileNotFoundError, match="holds 'riichi' models, not 'mcr'"):
        build_botzone_bundle(tmp_path / "a", policy="mc", models_dir=riichi)
    mcr = _renamed(tmp_path / "m", "opponents_mcr.npz", "opponents_riichi.npz")
    with pytest.raises(FileNotFoundError, match="holds 'mcr' models, not 'riichi'"):
        build_mjai_bundle(tmp_path / "b", policy="mc", models_dir=mcr)
    network = _renamed(tmp_path / "n", "nn_mcr.npz", "opponents_mcr.npz")
    with pytest.raises(FileNotFoundError, match="not opponent models"):
        build_botzone_bundle(tmp_path / "c", policy="mc", models_dir=network)


def test_the_bundle_command_says_so_in_one_line(tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    riichi = _renamed(tmp_path / "r", "opponents_riichi.npz", "opponents_mcr.npz")
    done = mjbot_here(capsys, "bundle", "botzone", "--policy", "mc", "--models", str(riichi),
                      "-o", str(tmp_path / "out"))
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert done.stderr.strip().splitlines() == [
        f"mjbot bundle: an mc bundle needs the MCR opponent models: {riichi}/opponents_mcr.npz "
        "holds 'riichi' models, not 'mcr'"]
    assert not (tmp_path / "out" / "mjbot-botzone.zip").exists()
