"""The suite's own cost: its pytest processes keep the test modules' rewritten bytecode where
the environment says not to write bytecode (tests/conftest.py), so a second run does not parse,
rewrite and compile every test module again in each worker."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_a_run_under_pythondontwritebytecode_keeps_the_rewritten_test_modules(tmp_path):
    """A pytest run on a fresh folder of one test module, with this suite's conftest and
    PYTHONDONTWRITEBYTECODE=1 (as this sandbox and many CI images set it), leaves that
    module's assertion-rewritten bytecode for the next run."""
    (tmp_path / "test_one.py").write_text("def test_one():\n    assert 1 + 1 == 2\n")
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1", "PYTHONPATH": os.pathsep.join(
        [str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])])}
    env.pop("PYTEST_XDIST_WORKER", None)
    r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                        "-p", "no:xdist", "-p", "tests.conftest", "--rootdir", str(tmp_path),
                        str(tmp_path / "test_one.py")],
                       capture_output=True, text=True, env=env, cwd=tmp_path, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    kept = sorted(p.name for p in (tmp_path / "__pycache__").glob("test_one.*.pyc")) \
        if (tmp_path / "__pycache__").is_dir() else []
    assert kept and all("-pytest-" in name for name in kept), kept
