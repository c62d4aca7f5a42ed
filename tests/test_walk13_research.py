"""A researcher's walk through self-play, Ray, the league and training, as README.md gives them
(walk13): what such a user met that was wrong, each pinned by a test."""

from __future__ import annotations

import argparse
import os
import re
import signal
import subprocess
import sys
import time
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


def _procs() -> dict[int, tuple[int, bytes]]:
    """Every process now: pid -> (parent pid, command line)."""
    found = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
                cmdline = (entry / "cmdline").read_bytes()
            except OSError:
                continue
            found[int(entry.name)] = (int(stat.rsplit(")", 1)[1].split()[1]), cmdline)
    return found


def _raylet_playing(driver: int) -> int | None:
    """The raylet that ``driver``'s ``--ray local`` started, once a worker of it (and only of
    it: other runs' Ray processes are not this test's) is playing a unit."""
    procs = _procs()
    raylets = {pid for pid, (ppid, cmd) in procs.items()
               if ppid == driver and b"raylet" in cmd.split(b"\0")[0]}
    for ppid, cmd in procs.values():
        if ppid in raylets and cmd.startswith(b"ray::run_unit"):
            return ppid
    return None


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc (Linux)")
def test_a_lost_raylet_is_one_line_not_a_traceback(tmp_path):
    """The local node's raylet killed mid-run (Ray's node lost: every unit under way and to
    come is gone) ended `mjbot selfplay --ray local` in a LocalRayletDiedError traceback; it
    is now one line naming what Ray lost, exit 1, as a process pool's dead worker is. The
    dataset's files written before stay (the failed-run line says how many)."""
    pytest.importorskip("ray", reason="Ray is not installed (pip install -e '.[ray]')")
    driver = _start_selfplay(tmp_path, env=NODE_DEATH_SEEN_SOON)
    try:
        os.kill(_when_playing(driver), signal.SIGKILL)
        _, err = driver.communicate(timeout=180)
    finally:
        if driver.poll() is None:  # the run and what it started, by its own session's id
            os.killpg(driver.pid, signal.SIGKILL)
            driver.wait()
    assert driver.returncode == 1, err
    assert "Traceback" not in err, err
    ours = [line for line in err.splitlines() if line.startswith("mjbot selfplay: Ray lost")]
    assert len(ours) == 1 and "the run cannot finish" in ours[0], err


# Ray's GCS declares a node dead after 5 failed health checks 3 s apart: the run met the
# raylet's death some 18 s after the kill, most of this file's time. Checked every 0.5 s
# (3 failures; a check that takes up to 3 s is still an answer), the same error comes in
# about 2 s. Ray reads RAY_<setting> in every process the run's ray.init starts.
NODE_DEATH_SEEN_SOON = {"RAY_health_check_period_ms": "500", "RAY_health_check_timeout_ms": "3000",
                        "RAY_health_check_failure_threshold": "3"}


def _start_selfplay(tmp_path: Path, *extra: str,
                    env: dict[str, str] | None = None) -> subprocess.Popen[str]:
    """A long `mjbot selfplay --ray local` (1 CPU) in a session of its own."""
    return subprocess.Popen(
        [sys.executable, "-m", "adapter.cli", "selfplay", "--variant", "riichi", "--policies",
         "rulebased,greedy,rulebased,greedy", "--hands", "100000", "--seed", "3", "--workers",
         "1", "--ray", "local", "--out", str(tmp_path / "d"), *extra],
        cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        start_new_session=True, env={**os.environ, **(env or {})})


def _when_playing(driver: subprocess.Popen[str]) -> int:
    """The run's raylet, once a unit is under way (fails the test if none within 120 s)."""
    raylet = None
    deadline = time.monotonic() + 120  # Ray's start on a loaded 2-core machine
    while raylet is None and driver.poll() is None and time.monotonic() < deadline:
        raylet = _raylet_playing(driver.pid)
        time.sleep(0.05)
    assert raylet is not None, "no raylet of the run was caught with a unit under way"
    return raylet


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc (Linux)")
def test_sigterm_ends_an_out_shared_run_in_one_line(tmp_path):
    """`selfplay --ray local --out-shared` cannot stop between wall sets (the workers write the
    parts). SIGTERM (a scheduler's stop) met Ray's own handler: a stack dump ("*** SIGTERM
    received ... PC: @ 0x7f...") and exit 1. Now it ends as a second Ctrl-C does: the files
    left are said, with what to do (the same command refuses a folder that is not empty),
    then "ended by SIGTERM", exit 143."""
    pytest.importorskip("ray", reason="Ray is not installed (pip install -e '.[ray]')")
    driver = _start_selfplay(tmp_path, "--out-shared")
    parts = tmp_path / "d" / ".parts"
    try:
        _when_playing(driver)
        deadline = time.monotonic() + 120  # a unit's games written: files to be left
        while not (parts.is_dir() and any(parts.glob("unit-*.npz"))):
            assert driver.poll() is None and time.monotonic() < deadline, "no unit written"
            time.sleep(0.05)
        os.kill(driver.pid, signal.SIGTERM)
        _, err = driver.communicate(timeout=180)
    finally:
        if driver.poll() is None:
            os.killpg(driver.pid, signal.SIGKILL)
            driver.wait()
    assert driver.returncode == 128 + signal.SIGTERM, err
    assert "SIGTERM received" not in err and "PC: @" not in err and "Traceback" not in err, err
    assert "mjbot selfplay: ended by SIGTERM" in err.splitlines(), err
    left = [line for line in err.splitlines() if "the failed run left" in line]
    assert len(left) == 1 and "remove them, or give another --out" in left[0], err


def test_the_files_a_shared_run_left_are_counted_where_ls_shows_them(tmp_path, capsys):
    """`--out-shared`'s parts are in --out/.parts: the failed run's line said it left
    "1 file(s)" in --out for a folder of parts, which a plain ls of --out does not list (an
    empty listing, and "remove them"). It counts the files and names the hidden folder."""
    from adapter.commands.selfplay import _left_behind

    parts = tmp_path / "d" / ".parts"
    parts.mkdir(parents=True)
    for unit in range(3):
        (parts / f"unit-{unit:06d}.npz").write_bytes(b"part")
    _left_behind(tmp_path / "d", None, argparse.Namespace(command_path="selfplay"),
                 resumable=True)
    line = capsys.readouterr().err.strip()
    assert line.startswith(f"mjbot selfplay: the failed run left 3 file(s) in {tmp_path / 'd'} ")
    assert "in .parts, which ls shows with -a" in line and "remove them" in line, line
    assert sorted(p.name for p in parts.iterdir()) == [f"unit-{u:06d}.npz" for u in range(3)]
