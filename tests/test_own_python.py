"""Our own children run our code even when started from inside another checkout.

The user's working directory here holds a decoy ``adapter`` package that fails loudly on
import: a child that put the working directory on its path (plain ``python -m``) would run it."""

import subprocess
import sys

import pytest

from adapter.bench.botzone import COMMAND as BENCH_BOTZONE_COMMAND
from adapter.fakes.botzone_judge import DEFAULT_COMMAND
from adapter.fakes.ntpu_server import CLIENT_COMMAND
from adapter.own_python import ROOT, own_python

DECOY = "raise SystemExit('DECOY: the working directory adapter package ran')\n"


@pytest.fixture
def other_checkout(tmp_path):
    """A folder with an ``adapter`` package of its own, as another checkout of mjbot has."""
    (tmp_path / "adapter").mkdir()
    (tmp_path / "adapter" / "__init__.py").write_text(DECOY)
    (tmp_path / "adapter" / "cli.py").write_text(DECOY)
    return tmp_path


def run_in(cwd, command):
    return subprocess.run(command, cwd=cwd, capture_output=True, text=True, timeout=120,
                          stdin=subprocess.DEVNULL)


def test_the_decoy_is_what_a_plain_python_m_child_runs(other_checkout):
    """The premise: ``python -m adapter.cli`` from that folder runs the decoy."""
    done = run_in(other_checkout, [sys.executable, "-m", "adapter.cli", "--help"])
    assert "DECOY" in done.stderr


def test_own_python_runs_our_adapter_from_another_checkout(other_checkout):
    code = "import adapter, sys; print(adapter.__file__)"
    done = run_in(other_checkout, own_python("-c", code))
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().startswith(ROOT + "/adapter/")


@pytest.mark.parametrize("command", [DEFAULT_COMMAND, CLIENT_COMMAND, BENCH_BOTZONE_COMMAND],
                         ids=["botzone-judge", "ntpu-server", "bench-botzone"])
def test_the_fakes_and_benches_start_our_cli_from_another_checkout(other_checkout, command):
    done = run_in(other_checkout, [*command, "--help"])
    assert "DECOY" not in done.stderr
    assert done.returncode == 0, done.stderr
    assert "usage:" in done.stdout


def test_the_inherited_pythonpath_follows_ours(other_checkout, monkeypatch):
    """What the user put on PYTHONPATH still reaches the child, after our root."""
    extra = other_checkout / "extra"
    extra.mkdir()
    (extra / "user_module.py").write_text("WHERE = 'user'\n")
    monkeypatch.setenv("PYTHONPATH", str(extra))
    code = f"import sys, user_module; print(user_module.WHERE, sys.path.index({ROOT!r}))"
    done = run_in(other_checkout, own_python("-c", code))
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["user", "0"]


def test_an_outside_program_our_child_starts_imports_its_own_packages(other_checkout,
                                                                      monkeypatch):
    """An outside seat started by one of our own children (nn iterate's arena phase) gets the
    user's PYTHONPATH, not ours ahead of it: a program with a ``brain`` package of its own
    on that path imports its own, not ours (it got ours, so a user's bot broke)."""
    users = other_checkout / "users"
    (users / "brain").mkdir(parents=True)
    (users / "brain" / "__init__.py").write_text("WHERE = 'the user'\n")
    monkeypatch.setenv("PYTHONPATH", str(users))
    outside = [sys.executable, "-c", "import brain, os; print(brain.WHERE, '|', "
               "os.environ.get('PYTHONPATH'))"]
    code = ("import sys; from adapter.local.external.process import LineProcess; "
            f"p = LineProcess({outside!r}); print(p.read_line(60)); p.close()")
    done = run_in(other_checkout, own_python("-c", code))
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == f"the user | {users}"


def test_a_child_of_our_child_has_our_root_once(monkeypatch, tmp_path):
    """own_python in one of our own children puts our root ahead of the user's path, not
    ahead of ours again: the user's path is still what an outside program gets."""
    monkeypatch.setenv("PYTHONPATH", str(tmp_path))
    code = ("import subprocess; from adapter.own_python import own_python; "
            "subprocess.run(own_python('-c', 'import os; print(os.environ[\"PYTHONPATH\"])'))")
    done = run_in(tmp_path, own_python("-c", code))
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == f"{ROOT}:{tmp_path}"
