"""A researcher's walk through self-play, Ray, the league and training, as README.md gives them
(walk13): what such a user met that was wrong, each pinned by a test."""

from __future__ import annotations

import re
import sys
import tomllib
from pathlib import Path

import pytest

from tests.in_process import mjbot_here

ROOT = Path(__file__).resolve().parent.parent
PIP_SPEC = re.compile(r"pip install (?:-e )?'([^']*)\[ray\]'")


def _installs_mjbot_with_ray(line: str) -> bool:
    """The `pip install ...[ray]` a message names installs this project, from a path: mjbot is
    not on PyPI, so a bare `mjbot[ray]` finds no package (pip: "No matching distribution")."""
    found = PIP_SPEC.search(line)
    assert found, f"no pip install of the ray extra named in {line!r}"
    project = ROOT / found.group(1)  # a relative path is read from the checkout's root
    if not (project / "pyproject.toml").is_file():
        return False
    meta = tomllib.loads((project / "pyproject.toml").read_text())["project"]
    return bool(meta["name"] == "mjbot" and "ray" in meta["optional-dependencies"])


@pytest.mark.parametrize("args", [
    ("arena", "--variant", "mass", "--hands", "16", "--no-log", "--ray", "local"),
    ("bench", "ray", "--units", "4"),
])
def test_without_ray_the_install_line_installs_the_extra(args, capsys, monkeypatch):
    """Ray hidden as in a Python without it (a None in sys.modules: `import ray` fails and
    find_spec finds nothing). The line said `pip install 'mjbot[ray]'`, which pip cannot
    install (no such package on PyPI)."""
    monkeypatch.setitem(sys.modules, "ray", None)
    r = mjbot_here(capsys, *args)
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert _installs_mjbot_with_ray(r.stderr), r.stderr


def test_ray_help_names_an_install_that_works(capsys):
    r = mjbot_here(capsys, "selfplay", "-h")
    assert r.returncode == 0
    assert _installs_mjbot_with_ray(" ".join(r.stdout.split())), r.stdout
