"""Which mjbot this is, told apart from every other build: the version a game log's header
carries and ``mjbot --version`` prints.

The package version alone says 0.1.0 in every build, so a log's reader could not say which
mjbot wrote it. Run from a checkout, the version is the checkout's pyproject version with its
git commit as the local part, ``0.1.0+g99a2b4f50935``, and ``.dirty`` after it where tracked
files differ from that commit; otherwise it is the installed distribution's (a wheel, the
bundles: no commit known). It is read once per process (:func:`build_version`; a command that
writes game logs reads it at start, so that a long run names the code it started with, not a
checkout moved since).
Nothing here fails: without git, outside a repository, or on any error, the version is the
one known without it.
"""

from __future__ import annotations

import functools
import importlib.metadata
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent  # the folder holding the packages
UNKNOWN = "0+unknown"
DIRTY = "dirty"
GIT_TIMEOUT_S = 5.0
# distinct writer commits asked of git per process: a real log names one to three writers; a
# crafted one with a thousand made-up commits would run git a thousand times (7.5 s) in a read
MAX_ANCESTOR_ASKS = 16
# a build whose code is one commit's, named by it: "<version>+g<12 hex>", nothing after
_EXACT = re.compile(r"[^+\s]+\+g[0-9a-f]{12}")


@functools.cache
def build_version() -> str:
    """This build's version (see the module's docstring); the same answer all process long."""
    base = _checkout_version()
    if base is None:
        return _installed_version()
    commit = _git_commit()
    if commit is None:
        return base
    local = f"g{commit[:12]}" + (f".{DIRTY}" if _git_dirty() else "")
    return f"{base}.{local}" if "+" in base else f"{base}+{local}"


def is_exact(version: str) -> bool:
    """Whether ``version`` names one commit's code and nothing else (a checkout with no
    tracked file changed): two such builds of one version run the same code."""
    return isinstance(version, str) and _EXACT.fullmatch(version) is not None


def knows_all_of(writer: str) -> str | None:
    """Whether this build knows every name the build ``writer`` gives (an event or action
    type, a field, a frame kind), and how it knows, for a note: it is this very build, or
    an older commit of this checkout's history (git says so). Names are added, never removed
    (replay/schema.py), so nothing such a build wrote is a newer one's. None where it cannot
    say: either build not one commit's code, or no repository to ask."""
    ours = build_version()
    if not (is_exact(writer) and is_exact(ours)):
        return None
    if writer == ours:
        return "this very build"
    theirs, mine = writer.rpartition("+g")[2], ours.rpartition("+g")[2]
    if _is_ancestor(theirs, mine):
        return "an older build of this one's history"
    return None


_ancestry: dict[tuple[str, str], bool] = {}


def _is_ancestor(commit: str, of: str) -> bool:
    """Whether ``commit`` is in the history of ``of`` (both short ids of this checkout),
    each pair asked of git once; past MAX_ANCESTOR_ASKS pairs it is not asked and taken
    as not known (read leniently, as a build git cannot place)."""
    key = (commit, of)
    if key not in _ancestry:
        if len(_ancestry) >= MAX_ANCESTOR_ASKS:
            return False
        _ancestry[key] = _git("merge-base", "--is-ancestor", commit, of) is not None
    return _ancestry[key]


def _installed_version() -> str:
    try:
        return importlib.metadata.version("mjbot")
    except (importlib.metadata.PackageNotFoundError, ValueError, OSError):
        return UNKNOWN


def _checkout_version() -> str | None:
    """The version in the pyproject.toml beside the packages (a checkout or an unpacked
    source tree), or None where there is none of mjbot's. The mjai bundle carries this
    module to Python 3.10, which has no tomllib, and no pyproject.toml either."""
    project = _pyproject()
    table = project.get("project") if project is not None else None
    if not isinstance(table, dict) or table.get("name") != "mjbot":
        return None
    version = table.get("version")
    return version if isinstance(version, str) and version.strip() else None


def _pyproject() -> dict[str, Any] | None:
    """The pyproject.toml beside the packages, or None where there is none to read."""
    if sys.version_info < (3, 11):  # noqa: UP036 (mjbot needs 3.11; the bundle runs on 3.10)
        return None
    else:
        import tomllib

        try:
            return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
            return None


def _git(*args: str) -> str | None:
    """git's output in the checkout, or None where it cannot say (no git, no repository,
    a repository that is not this checkout's own, a timeout)."""
    # the caller's GIT_DIR and the like (a hook's environment) would name another repository;
    # git reads no MJBOT_ variable, and those hold mjbot's secrets (the Tenhou ID, the status
    # token: adapter/secret_env.py, which this layer cannot import), kept from git's hooks
    env = {k: v for k, v in os.environ.items()
           if k not in ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_COMMON_DIR")
           and not k.startswith("MJBOT_")}
    try:
        done = subprocess.run(["git", "--no-optional-locks", "-C", str(ROOT), *args],
                              stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                              stderr=subprocess.DEVNULL, env=env, timeout=GIT_TIMEOUT_S,
                              check=False)
    except (OSError, subprocess.SubprocessError, ValueError):
        return None
    if done.returncode != 0:
        return None
    try:
        return done.stdout.decode()
    except UnicodeDecodeError:
        return None


def _git_commit() -> str | None:
    """The commit checked out, where ROOT is the top of a git repository: a checkout. Inside
    another repository (an installed tree in a project's folder) there is none of ours."""
    out = _git("rev-parse", "--show-toplevel", "HEAD")
    lines = out.splitlines() if out is not None else []  # a folder's name may hold spaces
    if len(lines) != 2 or not re.fullmatch(r"[0-9a-f]{40,64}", lines[1]):
        return None
    try:
        if Path(lines[0]).resolve() != ROOT:
            return None
    except OSError:
        return None
    return lines[1]


def _git_dirty() -> bool:
    """Whether a tracked file differs from the commit (untracked files are not the build's
    code until added); where git cannot say, it is taken as changed."""
    out = _git("status", "--porcelain", "--untracked-files=no")
    return out is None or bool(out.strip())
