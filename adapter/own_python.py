"""The command that starts our own code in a child Python, wherever the user stands.

``python -m adapter...`` puts the working directory first on the child's ``sys.path``: run from
inside another checkout (a folder with an ``adapter`` package of its own), the child would run
that checkout's code, not ours. ``-P`` leaves the working directory out, and the folder holding
our ``adapter`` goes first on the child's PYTHONPATH, ahead of the one it inherits. Commands that
run a bundle in isolation (``-I``) and commands a user gives are not built here.

Our root on PYTHONPATH is for our code only: the PYTHONPATH the user gave is kept beside it
(:data:`USER_PATH`), and a program the user names (an outside seat) is started with that one
(:func:`outside_env`), so that its own ``brain`` or ``protocols`` package is not ours.

Neither gets mjbot's secrets (:mod:`adapter.secret_env`): our own children read none
(:func:`own_env`), and an outside program gets only those the user passes it by name."""

import os
import site
import sys
import sysconfig
from collections.abc import Mapping
from pathlib import Path

from adapter.secret_env import passed, without_secrets

ROOT = str(Path(__file__).resolve().parent.parent)  # the folder holding our `adapter` package
ENV = "/usr/bin/env"  # sets the child's PYTHONPATH and execs Python (same pid), so the command
# is one self-contained argv: a tuple the fake judges and servers start as given
USER_PATH = "MJBOT_USER_PYTHONPATH"  # in an own-code child: the PYTHONPATH before ours


def user_pythonpath() -> str:
    """The PYTHONPATH the user gave: as it is, or, in one of our own children, as it was
    before :func:`own_python` put our root ahead of it."""
    return os.environ.get(USER_PATH, os.environ.get("PYTHONPATH", ""))


def own_env() -> dict[str, str]:
    """This process's environment for one of our own children: without the secrets, which
    none of them reads (a Tenhou session logs in from the process that read the ID)."""
    return without_secrets()


def outside_env(env: Mapping[str, str] | None = None) -> dict[str, str]:
    """``env`` (the process's own by default) for a program a user named: without mjbot's
    secrets but those the user passes by name (``$MJBOT_PASS_SECRETS``), with the PYTHONPATH
    the user gave, not ours ahead of it (which would shadow the program's own packages of our
    packages' names, e.g. a ``brain`` on the user's path or in its site-packages)."""
    out = without_secrets(env, keep=passed(env))
    if USER_PATH in out:
        given = out.pop(USER_PATH)
        if given:
            out["PYTHONPATH"] = given
        else:
            out.pop("PYTHONPATH", None)
    return out


def _site_dirs() -> set[str]:
    """The site folders every child of this interpreter has on its path by itself, after
    the standard library: site-packages, and the user's (``pip install --user``) where this
    process has it (a child inherits what decides it: the interpreter, PYTHONNOUSERSITE)."""
    dirs = {sysconfig.get_paths()[k] for k in ("purelib", "platlib")}
    dirs.update(site.getsitepackages())
    if site.ENABLE_USER_SITE:
        dirs.add(site.getusersitepackages())
    return {os.path.realpath(d) for d in dirs}


def own_python(*args: str) -> tuple[str, ...]:
    """``python -P ARGS`` (e.g. ``"-m", "adapter.cli", ...`` or ``"-c", code``) that imports
    this checkout's packages. PYTHONPATH is ours first, then the inherited one as it is now.
    An installed (non-editable) mjbot's root is a site folder, already on every path: not put
    ahead of the standard library (PYTHONPATH goes before it), so that nothing else there
    (an old backport of a standard module) shadows it. A Python whose path holds ``=`` is
    started through ``sh``: env reads any word with ``=`` as one more variable to set."""
    inherited = user_pythonpath()  # not ours again in a child of a child
    ours = () if ROOT in _site_dirs() else (ROOT,)
    path = os.pathsep.join(p for p in (*ours, inherited) if p)
    python: tuple[str, ...] = (sys.executable,)
    if "=" in sys.executable:
        python = ("/bin/sh", "-c", 'exec "$0" "$@"', sys.executable)
    return (ENV, f"PYTHONPATH={path}", f"{USER_PATH}={inherited}", *python, "-P", *args)
