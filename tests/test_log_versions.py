"""Which mjbot wrote a game log. Every build said 0.1.0 in its logs' headers, so the note for a
log holding what this version does not know could not name its writer. Now a checkout's build
is its version and commit (``0.1.0+g<12 hex>``, ``.dirty`` where tracked files changed), and
the note names the writer and the reader.

The builds here are real: the packages a log needs copied into a git repository made for the
test, run in their own processes (the test's own checkout may be clean or not)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.log_samples import log_frames, write_frames

ROOT = Path(__file__).resolve().parent.parent
GIT = shutil.which("git")
pytestmark = pytest.mark.skipif(GIT is None, reason="needs git")
OTHER = "0.2.0+g0123456789ab"  # another build's version

WRITE = """
import sys
from protocols import events as ev
from replay.log import GameLogWriter, Header
with GameLogWriter(sys.argv[1], Header("test", "riichi", seat=0)) as w:
    for n in range(3):
        w.event(ev.TileDrawn(0, 5 + n))
        w.event(ev.TileDiscarded(0, 5 + n))
"""
READ = """
import json, sys
from replay.log import read_log
from replay.version import build_version
log = read_log(sys.argv[1])
cut = log.truncated
print(json.dumps({"version": build_version(), "writers": list(log.writers),
                  "skipped": log.skipped, "note": log.newer_note(), "frames": len(log.frames),
                  "cut": None if cut is None else cut.reason}))
"""


def _git(repo: Path, *args: str) -> str:
    return subprocess.run([GIT or "git", "-C", str(repo), "-c", "user.name=t",
                           "-c", "user.email=t@t", *args], check=True, capture_output=True,
                          text=True).stdout.strip()


def _checkout(at: Path) -> Path:
    """The packages a game log needs (and the pyproject naming the version), committed to
    a new git repository at ``at``."""
    at.mkdir(parents=True)
    for package in ("protocols", "replay"):
        shutil.copytree(ROOT / package, at / package,
                        ignore=shutil.ignore_patterns("__pycache__", "*.npz", "*.pyc"))
    shutil.copy(ROOT / "pyproject.toml", at)
    _git(at, "init", "-q")
    _git(at, "add", "-A")
    _git(at, "commit", "-q", "-m", "build")
    return at


def _run(build: Path, code: str, *args: str, path: str | None = None) -> str:
    env = {**os.environ, "PYTHONPATH": str(build)}
    if path is not None:
        env["PATH"] = path
    done = subprocess.run([sys.executable, "-c", code, *args], cwd=build, env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    return done.stdout.strip()


def _read(build: Path, log: Path) -> dict[str, Any]:
    result: dict[str, Any] = json.loads(_run(build, READ, str(log)))
    return result


@pytest.fixture(scope="module")
def build(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _checkout(tmp_path_factory.mktemp("builds") / "mjbot")


def _version_of(build: Path, path: str | None = None) -> str:
    return _run(build, "from replay.version import build_version; print(build_version())",
                path=path)


def test_a_checkouts_version_is_its_commit_and_never_fails_without_git(
        build: Path, tmp_path: Path) -> None:
    commit = _git(build, "rev-parse", "HEAD")
    assert _version_of(build) == f"0.1.0+g{commit[:12]}"
    # no git on the PATH: the version without it, no error
    assert _version_of(build, path=str(tmp_path)) == "0.1.0"
    # a tree inside another project's repository (an installed copy) has no commit of ours
    outer = tmp_path / "project"
    shutil.copytree(build, outer / "vendor" / "mjbot",
                    ignore=shutil.ignore_patterns(".git", "__pycache__"))
    _git(outer, "init", "-q")
    _git(outer, "add", "-A")
    _git(outer, "commit", "-q", "-m", "project")
    assert _version_of(outer / "vendor" / "mjbot") == "0.1.0"
    # a tracked file changed: the same commit is another build
    dirty = tmp_path / "dirty"
    shutil.copytree(build, dirty)
    with (dirty / "replay" / "schema.py").open("a") as f:
        f.write("# changed\n")
    assert _version_of(dirty) == f"0.1.0+g{_git(dirty, 'rev-parse', 'HEAD')[:12]}.dirty"


def test_the_header_carries_the_build_and_the_note_names_both(build: Path,
                                                              tmp_path: Path) -> None:
    log = tmp_path / "g.mjlog.msgpack"
    _run(build, WRITE, str(log))
    frames = log_frames(log)
    version = _version_of(build)
    assert frames[0]["mjbot_version"] == version
    # the same frames as another build wrote them, with an event this one does not know
    frames[0]["mjbot_version"] = OTHER
    newer = {"k": "event", "t": 1.0, "event": {"type": "WaitShown", "seat": 0}}
    write_frames(log, [*frames[:3], newer, *frames[3:]])
    read = _read(build, log)
    assert read["cut"] is None and read["skipped"] == {"WaitShown": 1}
    assert read["note"] == (f"written by mjbot {OTHER}, this is {version}: skipped what this "
                            "version does not know: WaitShown (1); the rest of the log is read")
