"""The Botzone upload bundle runs under a Python that has only numpy and MahjongGB, and plays
full matches there (keep running, as uploaded)."""

import subprocess
import venv
from pathlib import Path

import MahjongGB
import numpy
import pytest

from adapter.bundle import build_botzone_bundle
from adapter.fakes.botzone_judge import run_matches


@pytest.fixture(scope="module")
def bare_python(tmp_path_factory):
    """A venv whose site-packages hold numpy and MahjongGB only (linked from ours)."""
    root = tmp_path_factory.mktemp("botzone-runtime")
    venv.EnvBuilder(with_pip=False).create(root)
    site = next((root / "lib").glob("python3*/site-packages"))
    numpy_dir = Path(numpy.__file__).parent
    links = [numpy_dir, Path(MahjongGB.__file__)]
    links += list(numpy_dir.parent.glob("numpy.libs"))
    for target in links:
        (site / target.name).symlink_to(target)
    python = root / "bin" / "python"
    probe = subprocess.run([python, "-c", "import numpy, MahjongGB\ntry:\n import structlog\n"
                            "except ImportError: print('bare')"], capture_output=True, text=True)
    assert probe.stdout.strip() == "bare", probe.stderr
    return str(python)


def test_bundle_holds_main_and_plays_full_matches_in_a_bare_runtime(tmp_path, bare_python):
    bundle = build_botzone_bundle(tmp_path)
    import zipfile
    names = zipfile.ZipFile(bundle).namelist()
    assert "__main__.py" in names and "brain/data/shanten_tables.npz" in names
    assert not any(n.startswith("replay/") for n in names)
    one = subprocess.run([bare_python, str(bundle), "--no-keep-running"], input="1\n0 2 0\n\n",
                         capture_output=True, text=True, timeout=60)
    assert one.returncode == 0 and one.stdout.split("\n")[0] == "PASS", one.stderr
    summary = run_matches(2, ["keep"], seed=11, command=(bare_python, str(bundle)))
    assert summary["verdicts"] == {} and sum(summary["outcomes"].values()) == 2
