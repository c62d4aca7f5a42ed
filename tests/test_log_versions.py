"""Which mjbot wrote a game log. Every build said 0.1.0 in its logs' headers, so the note for a
log holding what this version does not know could not name its writer, and a name damaged into
another well-formed one (TileDrawn -> TileDrawm) read as a newer mjbot's addition, skipped,
even in a log this very build wrote. Now a checkout's build is its version and commit
(``0.1.0+g<12 hex>``, ``.dirty`` where tracked files changed), the note names the writer and
the reader, and a log whose frames this very build wrote reads such a name as damage.

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
CONTINUE = """
import sys
from protocols import events as ev
from replay.log import GameLogWriter, Header
with GameLogWriter(sys.argv[1], Header("test", "riichi", seat=0), append=True) as w:
    w.event(ev.TileDrawn(0, 9))
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
    """git in ``repo`` and nowhere else: where the environment names a repository (a git
    hook's: GIT_INDEX_FILE always, GIT_DIR in a worktree), git used that one, and a build
    made here was added and committed over the tests' caller's own index and branch."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    return subprocess.run([GIT or "git", "-C", str(repo), "-c", "user.name=t",
                           "-c", "user.email=t@t", *args], check=True, capture_output=True,
                          text=True, env=env).stdout.strip()


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
    _git(at, "-c", "commit.gpgsign=false", "commit", "-q", "-m", "build")
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
    if GIT is None:
        pytest.skip("needs git")
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
    _git(outer, "-c", "commit.gpgsign=false", "commit", "-q", "-m", "project")
    assert _version_of(outer / "vendor" / "mjbot") == "0.1.0"
    # a checkout in a folder whose name holds a space
    spaced = tmp_path / "my builds" / "mjbot"
    shutil.copytree(build, spaced)
    assert _version_of(spaced) == f"0.1.0+g{commit[:12]}"
    # a tracked file changed: the same commit is another build
    dirty = tmp_path / "dirty"
    shutil.copytree(build, dirty)
    with (dirty / "replay" / "schema.py").open("a") as f:
        f.write("# changed\n")
    assert _version_of(dirty) == f"0.1.0+g{_git(dirty, 'rev-parse', 'HEAD')[:12]}.dirty"


def test_a_build_is_made_in_its_own_repository_whatever_the_environment_names(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Run from a git hook in a worktree (git exports GIT_DIR and GIT_INDEX_FILE to it), the
    builds these tests make were committed into the hook's repository, the packages copied
    here replacing its index; and the build's version, read by replay/version.py, is its own
    commit's still."""
    if GIT is None:
        pytest.skip("needs git")
    caller = tmp_path / "caller"
    caller.mkdir()
    _git(caller, "init", "-q")
    _git(caller, "-c", "commit.gpgsign=false", "commit", "-q", "--allow-empty", "-m", "mine")
    head = _git(caller, "rev-parse", "HEAD")
    monkeypatch.setenv("GIT_DIR", str(caller / ".git"))
    monkeypatch.setenv("GIT_INDEX_FILE", str(caller / ".git" / "index"))
    build = _checkout(tmp_path / "mjbot")
    assert _version_of(build) == f"0.1.0+g{_git(build, 'rev-parse', 'HEAD')[:12]}"
    monkeypatch.delenv("GIT_DIR")
    monkeypatch.delenv("GIT_INDEX_FILE")
    assert _git(caller, "rev-parse", "HEAD") == head
    assert _git(caller, "ls-files") == ""


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


def _damaged(frames: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The frames with the second draw's type damaged into another well-formed name."""
    out = [dict(f) for f in frames]
    draws = [f for f in out if f["k"] == "event" and f["event"]["type"] == "TileDrawn"]
    draws[1]["event"] = {**draws[1]["event"], "type": "TileDrawm"}
    return out


def test_a_damaged_name_in_a_log_of_this_very_build_is_damage(build: Path,
                                                              tmp_path: Path) -> None:
    """TileDrawm where TileDrawn was is a class name as a newer mjbot would give one, so it
    was skipped with the newer-mjbot note; this build wrote the log, and its writer gives no
    such name: the log is cut there, as a damaged frame cuts it."""
    log = tmp_path / "g.mjlog.msgpack"
    _run(build, WRITE, str(log))
    frames = _damaged(log_frames(log))
    read = _read(build, write_frames(log, frames))
    assert read["skipped"] == {} and read["note"] is None and read["frames"] == 2
    assert read["cut"] == (f"bad frame: unknown object type 'TileDrawm' (written by mjbot "
                           f"{read['version']}, this very build, whose writer gives no such "
                           "name: damage, not a newer mjbot's)")
    # a damaged field name too
    frames = log_frames(log)
    frames[1]["event"] = {"type": "TileDrawn", "seat": 0, "tilf": 5}
    read = _read(build, write_frames(log, frames))
    assert read["frames"] == 0 and read["skipped"] == {}
    assert read["cut"].startswith("bad frame: no field TileDrawn.tilf (written by mjbot ")
    # and in the header: no log, as a header damaged otherwise is none
    frames = log_frames(log)
    frames[0]["polich"] = frames[0].pop("policy")
    said = _run(build, "import sys\nfrom replay.log import LogError, read_log\ntry:\n"
                "    read_log(sys.argv[1])\nexcept LogError as exc:\n    print(exc)",
                str(write_frames(log, frames)))
    assert said == (f"{log}: not an mjbot game log (header has no field Header.polich "
                    f"(written by mjbot {read['version']}, this very build, whose writer "
                    "gives no such name: damage, not a newer mjbot's))")


@pytest.mark.parametrize("writer", [OTHER, "0.1.0", "", 5])
def test_a_log_another_build_wrote_is_read_as_a_newer_ones(build: Path, tmp_path: Path,
                                                           writer: str | int) -> None:
    """Another commit, a version with no commit (every build before this one, an installed
    wheel) or none at all (none, or a damaged one that is no text: it was a TypeError
    traceback): the writer may be newer, and the name is skipped as before."""
    log = tmp_path / "g.mjlog.msgpack"
    _run(build, WRITE, str(log))
    frames = _damaged(log_frames(log))
    frames[0]["mjbot_version"] = writer
    read = _read(build, write_frames(log, frames))
    assert read["cut"] is None and read["skipped"] == {"TileDrawm": 1} and read["frames"] == 5


def test_a_build_with_changed_files_is_not_taken_for_its_commit(build: Path,
                                                                tmp_path: Path) -> None:
    """A dirty checkout's code is not its commit's: a log it wrote is read leniently even by
    itself (the event it knew may be gone again)."""
    dirty = tmp_path / "dirty"
    shutil.copytree(build, dirty)
    with (dirty / "protocols" / "events.py").open("a") as f:
        f.write("# changed\n")
    log = tmp_path / "g.mjlog.msgpack"
    _run(dirty, WRITE, str(log))
    read = _read(dirty, write_frames(log, _damaged(log_frames(log))))
    assert read["version"].endswith(".dirty") and read["writers"] == [read["version"]]
    assert read["cut"] is None and read["skipped"] == {"TileDrawm": 1}


def test_a_log_continued_by_another_build_says_so_and_each_part_is_judged_by_its_writer(
        build: Path, tmp_path: Path) -> None:
    """A log continued with ``append`` (a Botzone match, one process a turn) by another
    build than its header names gets that build's header: an upgrade mid-match must not
    make the newer build's frames read as the first one's damage."""
    log = tmp_path / "g.mjlog.msgpack"
    _run(build, WRITE, str(log))
    frames = log_frames(log)
    frames[0]["mjbot_version"] = OTHER  # begun by another build
    write_frames(log, frames)
    _run(build, CONTINUE, str(log))
    after = log_frames(log)
    version = _version_of(build)
    assert [f["mjbot_version"] for f in after if f["k"] == "header"] == [OTHER, version]
    assert after[:len(frames)] == frames
    # continued by the same build again: no third header
    _run(build, CONTINUE, str(log))
    assert sum(f["k"] == "header" for f in log_frames(log)) == 2
    read = _read(build, log)
    assert read["writers"] == [OTHER, version] and read["cut"] is None
    assert read["frames"] == len(frames) - 1 + 2
    # a name this build does not know: before its header, the other build's (skipped);
    # after it, its own (damage)
    whole = log_frames(log)
    second = [i for i, f in enumerate(whole) if f["k"] == "header"][1]
    unknown = {"k": "event", "t": 1.0, "event": {"type": "WaitShown", "seat": 0}}
    read = _read(build, write_frames(log, [*whole[:second], unknown, *whole[second:]]))
    assert read["cut"] is None and read["skipped"] == {"WaitShown": 1}
    assert read["note"].startswith(f"written by mjbot {OTHER}, continued by mjbot {version}, "
                                   f"this is {version}: ")
    read = _read(build, write_frames(log, [*whole, unknown]))
    assert read["skipped"] == {} and "this very build" in read["cut"]


def test_a_log_an_older_commit_wrote_is_read_as_this_builds_and_a_newer_ones_is_not(
        build: Path, tmp_path: Path) -> None:
    """Names are added, never removed: a commit in this checkout's history wrote none that
    this one does not know, so there too a damaged name is damage. The other way round
    (a log of a commit after this one) it may be a newer mjbot's, and is skipped."""
    repo = tmp_path / "mjbot"
    shutil.copytree(build, repo)
    older = tmp_path / "older.mjlog.msgpack"
    _run(repo, WRITE, str(older))
    with (repo / "replay" / "schema.py").open("a") as f:
        f.write("# the next commit\n")
    _git(repo, "-c", "commit.gpgsign=false", "commit", "-q", "-am", "next")
    newer = tmp_path / "newer.mjlog.msgpack"
    _run(repo, WRITE, str(newer))
    for log in (older, newer):
        write_frames(log, _damaged(log_frames(log)))
    read = _read(repo, older)
    assert read["skipped"] == {} and read["frames"] == 2
    assert "an older build of this one's history, whose writer gives no such name" in read["cut"]
    assert "this very build" in _read(repo, newer)["cut"]
    _git(repo, "checkout", "-q", "HEAD~1")
    read = _read(repo, newer)
    assert read["cut"] is None and read["skipped"] == {"TileDrawm": 1}
    assert "this very build" in _read(repo, older)["cut"]


def test_no_name_a_log_holds_is_ever_removed() -> None:
    """What the two tests above rest on: a build knows every name an older one wrote.
    tests/data/log_names.json lists every type, its fields, the header's fields and the
    decision frame's: one gone from the schema makes every older log that holds it read as
    damage (a decision frame's, read as if never written). A name added goes into the list
    with it."""
    from replay import schema
    from replay.log import DecisionFrame, Header

    listed = json.loads((ROOT / "tests" / "data" / "log_names.json").read_text())
    types = {n: list(schema._FIELDS[c]) for n, c in schema._TYPES.items()}
    header = list(Header.__dataclass_fields__)
    decision = list(DecisionFrame.__dataclass_fields__)
    gone = sorted({*listed["types"]} - {*types}) + sorted(
        f"{n}.{f}" for n, fields in listed["types"].items() for f in fields
        if n in types and f not in types[n]) + sorted(
        f"Header.{f}" for f in listed["header_fields"] if f not in header) + sorted(
        f"decision.{f}" for f in listed["decision_fields"] if f not in decision)
    assert not gone, f"names older logs hold are gone from the schema: {gone}"
    added = sorted({*types} - {*listed["types"]}) + sorted(
        f"{n}.{f}" for n, fields in types.items() for f in fields
        if f not in listed["types"].get(n, [])) + sorted(
        f"Header.{f}" for f in header if f not in listed["header_fields"]) + sorted(
        f"decision.{f}" for f in decision if f not in listed["decision_fields"])
    assert not added, f"add these to tests/data/log_names.json: {added}"


def test_a_log_naming_many_made_up_builds_asks_git_a_bounded_number_of_times(
        build: Path, tmp_path: Path) -> None:
    """A crafted log with a thousand header frames, each naming another made-up commit before
    a name this build does not know, ran git once per commit: 7.5 s to read 372 KB. Git is
    asked of at most MAX_ANCESTOR_ASKS commits a process; the rest are read as a build git
    cannot place (leniently, as before)."""
    calls = tmp_path / "calls"
    wrapper = tmp_path / "bin" / "git"
    wrapper.parent.mkdir()
    wrapper.write_text(f'#!/bin/sh\necho "$*" >> {calls}\nexec {GIT} "$@"\n')
    wrapper.chmod(0o755)
    said = _run(build, "from replay import version as v\nv.build_version()\n"
                "made_up = [f'0.1.0+g{n:012x}' for n in range(40)]\n"
                "print(sum(v.knows_all_of(w) is None for w in made_up), v.MAX_ANCESTOR_ASKS)",
                path=f"{wrapper.parent}:{os.environ['PATH']}")
    unknown, cap = map(int, said.split())
    assert unknown == 40
    asked = [line for line in calls.read_text().splitlines() if "merge-base" in line]
    assert len(asked) == cap < 40
