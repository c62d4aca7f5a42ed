"""The command that starts our own code in a child Python, wherever the user stands.

``python -m adapter...`` puts the working directory first on the child's ``sys.path``: run from
inside another checkout (a folder with an ``adapter`` package of its own), the child would run
that checkout's code, not ours. ``-P`` leaves the working directory out, and the folder holding
our ``adapter`` goes first on the child's PYTHONPATH, ahead of the one it inherits. Commands that
run a bundle in isolation (``-I``) and commands a user gives are not built here."""

import os
import sys
import sysconfig
from pathlib import Path

ROOT = str(Path(__file__).resolve().parent.parent)  # the folder holding our `adapter` package
ENV = "/usr/bin/env"  # sets the child's PYTHONPATH and execs Python (same pid), so the command
# is one self-contained argv: a tuple the fake judges and servers start as given


def own_python(*args: str) -> tuple[str, ...]:
    """``python -P ARGS`` (e.g. ``"-m", "adapter.cli", ...`` or ``"-c", code``) that imports
    this checkout's packages. PYTHONPATH is ours first, then the inherited one as it is now.
    An installed (non-editable) mjbot's root is site-packages, already on every path: not put
    ahead of the standard library."""
    inherited = os.environ.get("PYTHONPATH", "")
    installed = {sysconfig.get_paths()[k] for k in ("purelib", "platlib")}
    if any(os.path.realpath(p) == ROOT for p in installed):
        path = inherited
    else:
        path = os.pathsep.join(p for p in (ROOT, inherited) if p)
    return (ENV, f"PYTHONPATH={path}", sys.executable, "-P", *args)
