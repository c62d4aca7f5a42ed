"""The mjai.app upload (`mjbot bundle mjai`): unpacked as mjai.app unpacks it and started as
its harness starts it (``python -u bot.py SEAT`` in that folder), under a Python whose
site-packages hold numpy alone (no mahjong, structlog, msgpack or MahjongGB) and which reads no
PYTHONPATH (-I), it plays the harness's real sequence (tests/test_mjai_app_harness.py) with
every answer passing the referee's checks."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import venv
import zipfile
from pathlib import Path
from typing import Any

import numpy
import pytest

from adapter.platforms.botzone_bundle import ROOT
from adapter.platforms.mjai_bundle import (
    NN_MODULES,
    NN_WEIGHTS,
    RIICHI_WEIGHTS,
    VENDOR,
    build_mjai_bundle,
)
from brain import shanten_tables
from tests.in_process import mjbot_here
from tests.test_mjai_app_harness import _check, _requests


@pytest.fixture(scope="module")
def numpy_python(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A venv whose site-packages hold numpy only (linked from ours)."""
    root = tmp_path_factory.mktemp("mjai-runtime")
    venv.EnvBuilder(with_pip=False).create(root)
    site = next((root / "lib").glob("python3*/site-packages"))
    numpy_dir = Path(numpy.__file__).parent
    for target in [numpy_dir, *numpy_dir.parent.glob("numpy.libs")]:
        (site / target.name).symlink_to(target)
    python = root / "bin" / "python"
    probe = subprocess.run([python, "-I", "-c", "import numpy\nfor m in ('mahjong', "
                            "'structlog', 'msgpack', 'MahjongGB'):\n try:\n  __import__(m)\n"
                            "  print(m)\n except ImportError: pass"],
                           capture_output=True, text=True)
    assert probe.returncode == 0 and probe.stdout == "", (probe.stdout, probe.stderr)
    return str(python)


def _unpacked(bundle: Path, folder: Path) -> Path:
    with zipfile.ZipFile(bundle) as zf:
        zf.extractall(folder)
    return folder


@pytest.fixture(scope="module")
def bundle(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The default upload, as `mjbot bundle mjai` writes it."""
    return build_mjai_bundle(tmp_path_factory.mktemp("bundle"))


@pytest.fixture(scope="module")
def upload(bundle: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The default upload, unpacked (as mjai.app's server unzips it into /workspace)."""
    return _unpacked(bundle, tmp_path_factory.mktemp("workspace"))


def _harness(python: str, folder: Path, seat: int, requests: list[list[dict[str, Any]]],
             *options: str) -> subprocess.CompletedProcess[str]:
    text = "".join(json.dumps(r, separators=(",", ":")) + "\n" for r in requests)
    return subprocess.run([python, *options, "-u", "bot.py", str(seat)], cwd=folder,
                          input=text, capture_output=True, text=True, timeout=300)


@pytest.mark.parametrize("seat", [0, 1, 2, 3])
def test_the_upload_plays_the_harness_game_with_numpy_alone(numpy_python: str, upload: Path,
                                                            seat: int) -> None:
    requests = _requests(seat)
    done = _harness(numpy_python, upload, seat, requests, "-I")
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr[-3000:]
    kinds = _check(seat, requests, done.stdout.splitlines())
    assert kinds.get("dahai", 0) > 20, kinds
    assert "fallback" not in done.stderr, done.stderr[-2000:]


def test_the_upload_answers_as_mjbot_mjai_does(numpy_python: str, upload: Path) -> None:
    """Its scoring is the carried mahjong 2's (the runtime has no other): the same answers,
    line for line, as the installed `mjbot mjai` on the same lines."""
    seat = 1
    requests = _requests(seat, first_hand=2)  # a game resumed after an error, too
    bundled = _harness(numpy_python, upload, seat, requests, "-I")
    text = "".join(json.dumps(r, separators=(",", ":")) + "\n" for r in requests)
    installed = subprocess.run([sys.executable, "-m", "adapter.cli", "mjai", str(seat),
                                "--no-log"], input=text, capture_output=True, text=True,
                               timeout=300)
    assert installed.returncode == 0, installed.stderr[-2000:]
    assert [json.loads(x) for x in bundled.stdout.splitlines()] == \
        [json.loads(x) for x in installed.stdout.splitlines()]


def test_the_zip_holds_bot_py_at_its_root_and_mahjong_2_with_its_licence(bundle: Path
                                                                         ) -> None:
    """Sources only (Python 3.10 there compiles them; the building 3.11's bytecode would be
    skipped), and neither the mc policy's riichi models nor nn weights in a rulebased zip."""
    with zipfile.ZipFile(bundle) as zf:
        names = set(zf.namelist())
        licence = zf.read(f"{VENDOR}/mahjong/LICENSE.txt").decode()
    assert "bot.py" in names and RIICHI_WEIGHTS not in names and NN_WEIGHTS not in names
    assert "Permission is hereby granted" in licence  # MIT's words
    assert f"{VENDOR}/mahjong/hand_calculating/hand.py" in names
    assert not any(n.endswith(".pyc") for n in names) and "__main__.py" not in names


def test_a_seat_that_is_not_0_to_3_is_one_line_and_exit_2(numpy_python: str, upload: Path
                                                          ) -> None:
    for argv in (["7"], [], ["0", "1"]):
        done = subprocess.run([numpy_python, "-I", "bot.py", *argv], cwd=upload, input="",
                              capture_output=True, text=True, timeout=60)
        assert done.returncode == 2 and done.stdout == "", done
        assert done.stderr.strip().splitlines() == [
            f"mjbot: bot.py takes our seat (0..3) as its only argument, got {argv!r}"]


def test_a_python_without_numpy_is_told_what_the_bot_needs(upload: Path) -> None:
    done = subprocess.run([sys.executable, "-I", "-S", "bot.py", "0"], cwd=upload, input="",
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
    assert "needs numpy (pip install numpy)" in done.stderr


@pytest.mark.parametrize(("policy", "options"), [("nn", ""), ("mc", "seconds=0.3")])
def test_nn_and_mc_uploads_play_from_what_they_carry(numpy_python: str, tmp_path: Path,
                                                     policy: str, options: str) -> None:
    """The first hand's decisions, answered by the policy itself (no fallback on stderr)."""
    bundle = build_mjai_bundle(tmp_path / "out", policy=policy, mc_options=options)
    names = zipfile.ZipFile(bundle).namelist()
    if policy == "nn":
        assert NN_WEIGHTS in names and all(m in names for m in NN_MODULES)
    folder = _unpacked(bundle, tmp_path / "workspace")
    seat = 0
    requests = _requests(seat)[:12]
    done = _harness(numpy_python, folder, seat, requests, "-I")
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr[-3000:]
    kinds = _check(seat, requests, done.stdout.splitlines())
    assert kinds.get("dahai", 0) >= 3, kinds
    assert "fallback" not in done.stderr, done.stderr[-2000:]


def test_bundles_without_the_weights_they_play_are_refused(tmp_path: Path,
                                                           capsys: pytest.CaptureFixture[str]
                                                           ) -> None:
    """An MCR network in a riichi bundle, or a --models folder without the riichi models,
    would refuse every decision on mjai.app: one line, exit 2, no zip."""
    for args, said in ((["--policy", "nn", "--nn-weights", "brain/data/nn_mcr.npz"],
                        "an nn bundle needs a riichi network: "),
                       (["--policy", "mc", "--models", str(tmp_path)],
                        "an mc bundle needs the riichi opponent models: no ")):
        out = tmp_path / "out"
        done = mjbot_here(capsys, "bundle", "mjai", "-o", str(out), *args)
        assert done.returncode == 2 and said in done.stderr, done.stderr
        assert len(done.stderr.strip().splitlines()) == 1 and not out.exists()
    done = mjbot_here(capsys, "bundle", "mjai", "-o", str(tmp_path / "ok"))
    assert done.returncode == 0 and "mjbot-mjai.zip (" in done.stdout, done.stderr
    assert (tmp_path / "ok" / "mjbot-mjai.zip").is_file()


def carried(npz: str, platform: str) -> str:
    """A weights file's name in the zip: the Botzone zip carries its arrays packed, NAME.arrays
    (brain/shipped.py: an .npz read there imported zipfile every one-shot turn)."""
    return npz.removesuffix(".npz") + ".arrays" if platform == "botzone" else npz


@pytest.mark.parametrize("platform", ["mjai", "botzone"])
def test_a_network_for_a_bundle_that_plays_none_is_refused(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], platform: str) -> None:
    """`--nn-weights FILE` with a policy that reads no network (rulebased; mc without
    fast=nn) was left out of the zip without a word: the user believed the network shipped.
    One line naming the flag and the policy, exit 2, no zip; with mc fast=nn it is carried."""
    network = "brain/data/nn_riichi.npz" if platform == "mjai" else "brain/data/nn_mcr.npz"
    zip_name = f"mjbot-{platform}.zip"
    for policy in (["--policy", "rulebased"], ["--policy", "mc"], []):
        out = tmp_path / ("out-" + (policy[-1] if policy else "default"))
        done = mjbot_here(capsys, "bundle", platform, "-o", str(out), *policy,
                          "--nn-weights", network)
        assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
        assert f"--nn-weights {network}: only a bundle that plays the network" in done.stderr
        assert f"this one plays {policy[-1] if policy else 'rulebased'}" in done.stderr
        assert len(done.stderr.strip().splitlines()) == 1 and not out.exists(), done.stderr
    out = tmp_path / "fast_nn"
    done = mjbot_here(capsys, "bundle", platform, "-o", str(out), "--policy", "mc",
                      "--mc-options", "fast=nn", "--nn-weights", network)
    assert done.returncode == 0, done.stderr
    with zipfile.ZipFile(out / zip_name) as zf:
        assert carried(network, platform) in zf.namelist()  # its name in brain/data


@pytest.mark.parametrize("platform", ["mjai", "botzone"])
def test_models_for_a_bundle_that_reads_none_are_refused(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], platform: str) -> None:
    """`--models DIR` with a policy that reads no opponent models (rulebased, nn) was carried
    into the zip, read by nothing, and the user believed the bot played them. One line
    naming the flag and the policy, exit 2, no zip, as `--nn-weights` without a network;
    with mc the file from DIR is carried."""
    models = tmp_path / "models"
    models.mkdir()
    name = "opponents_riichi.npz" if platform == "mjai" else "opponents_mcr.npz"
    shutil.copy(ROOT / "brain" / "data" / name, models / name)
    for policy in (["--policy", "rulebased"], ["--policy", "nn"], []):
        out = tmp_path / ("out-" + (policy[-1] if policy else "default"))
        done = mjbot_here(capsys, "bundle", platform, "-o", str(out), *policy,
                          "--models", str(models))
        assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
        assert (f"--models {models}: only a bundle that plays mc reads the opponent models "
                f"(--policy mc), and this one plays {policy[-1] if policy else 'rulebased'}"
                in done.stderr), done.stderr
        assert len(done.stderr.strip().splitlines()) == 1 and not out.exists(), done.stderr
    out = tmp_path / "mc"
    done = mjbot_here(capsys, "bundle", platform, "-o", str(out), "--policy", "mc",
                      "--models", str(models))
    assert done.returncode == 0, done.stderr
    with zipfile.ZipFile(out / f"mjbot-{platform}.zip") as zf:
        assert carried(f"brain/data/{name}", platform) in zf.namelist()


@pytest.mark.parametrize("platform", ["mjai", "botzone"])
def test_each_bundle_carries_the_data_files_its_policy_reads_and_no_others(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], platform: str) -> None:
    """A rulebased or nn zip carried the shipped opponent models, which only mc reads (100 KB
    of a 629 KB rulebased mjai zip, unread). Now each zip's brain/data holds what its policy
    reads: the shanten tables always, the opponent models for mc, the network for nn and for
    mc with fast=nn. (The default and nn zips are played in a bare runtime by the tests
    above and by tests/test_botzone_bundle.py, tests/test_nn_bundle.py.)"""
    variant = "riichi" if platform == "mjai" else "mcr"
    # the shanten tables as one .npy per array and their CRC-32
    # (brain.shanten_tables.packaged_members)
    tables = {f"brain/data/shanten_tables/{k}.npy" for k in shanten_tables.STORED}
    tables.add("brain/data/shanten_tables/crc32.txt")
    models, network = (carried(f"brain/data/{stem}_{variant}.npz", platform)
                       for stem in ("opponents", "nn"))
    for args, wanted in (([], tables), (["--policy", "rulebased"], tables),
                         (["--policy", "nn"], {*tables, network}),
                         (["--policy", "mc"], {*tables, models}),
                         (["--policy", "mc", "--mc-options", "fast=nn"],
                          {*tables, models, network})):
        out = tmp_path / "-".join(["out", *args])
        done = mjbot_here(capsys, "bundle", platform, "-o", str(out), *args)
        assert done.returncode == 0, done.stderr
        with zipfile.ZipFile(out / f"mjbot-{platform}.zip") as zf:
            data = {n for n in zf.namelist() if n.startswith("brain/data/")}
        assert data == wanted, (args, data)


def test_a_build_that_fails_leaves_the_last_zip_as_it_was(tmp_path: Path) -> None:
    """The zip was written in place: a build that failed part way (here a full disk) left
    a cut mjbot-mjai.zip under its name, over the last good one, ready to be uploaded by
    mistake. Now it is written beside it and renamed at the end: the last zip stays whole,
    and no part file is left."""
    from tests.full_disk import mjbot_on_a_full_disk

    good = build_mjai_bundle(tmp_path)
    before = good.read_bytes()
    done = mjbot_on_a_full_disk("bundle", "mjai", "-o", str(tmp_path), file_bytes=64 * 1024)
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    assert len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert good.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == [good.name]


def test_the_upload_logs_on_stderr_under_a_python_with_structlog(upload: Path) -> None:
    """The upload run by a Python that has structlog (the project's own, as the README's
    `mjai:python -u mjai-bot/bot.py` arena seat runs it): bot.py keeps structlog out, since
    structlog unconfigured prints each log line on stdout, where the harness takes the next
    line for the answer (a line that is not JSON answered by `... [error] mjai: bad input`,
    the answers after it one line late). No test ran the upload with structlog installed:
    with bot.py's `sys.modules["structlog"] = None` removed, this fails."""
    lines = ['[{"type":"start_game","names":["0","1","2","3"],"id":0}]', "not json",
             '[{"type":"start_game","names":["0","1","2","3"],"id":2}]']
    done = subprocess.run([sys.executable, "-u", "bot.py", "0"], cwd=upload,
                          input="".join(f"{line}\n" for line in lines), capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr[-2000:]
    assert done.stdout.splitlines() == ['{"type": "none"}'] * 3, done.stdout
    assert "bad input" in done.stderr and "start_game says our seat is 2" in done.stderr
