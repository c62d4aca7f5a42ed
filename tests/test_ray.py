"""Arena and self-play on a real Ray cluster (2 CPUs, started once for the module): the same
figures and the same shard bytes as the process pool for a seed, whether the driver or the
workers write the shards; a worker killed mid-unit loses no unit and counts none twice; the
``mc`` weights are read once per worker process, not once per unit; the command line joins a
cluster by address and says in one line what is wrong."""

from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import sys
import threading
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from adapter.local.arena import ArenaConfig, run_arena, summarize
from adapter.local.ray_selfplay import run_on_workers
from adapter.local.selfplay import SelfPlayConfig, run_selfplay
from tests.env_helpers import ENV_SPY
from tests.in_process import mjbot_here

ray = pytest.importorskip("ray", reason="Ray is not installed (pip install -e '.[ray]')")

from adapter.local.ray_pool import RayRun, connect, mjbot_env  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
POLICIES = ("rulebased", "greedy", "greedy", "greedy")
RUN_FIGURES = ("seconds", "hands_per_second", "workers", "thinking")  # how long, not what
# was played (thinking: the seconds each decision took)


@pytest.fixture(scope="module")
def cluster():
    """One local cluster of 2 CPUs for the module; the code under test finds it initialised."""
    # a small object store: the units' results are small, and a CI container's /dev/shm may be
    # 64 MB (Ray then falls back to /tmp, which is slower but works)
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, configure_logging=False,
             object_store_memory=80 * 1024 * 1024)
    try:
        yield connect("local")
    finally:
        ray.shutdown()


def figures(config: ArenaConfig, results) -> dict[str, Any]:
    summary = summarize(config, results, 1.0)
    return {k: v for k, v in summary.items() if k not in RUN_FIGURES}


@pytest.fixture(scope="module")
def reference() -> tuple[ArenaConfig, dict[str, Any], list[Any]]:
    """The process pool's figures (2 workers) for the arena the Ray tests play, and its units'
    results (a shorter arena of the same seed plays their first units)."""
    config = ArenaConfig("mass", POLICIES, hands=96, seed=11, workers=2)
    results = run_arena(config)
    return config, figures(config, results), results


def test_arena_on_ray_equals_the_process_pool(cluster, reference):
    config, expected, _ = reference
    run = RayRun(cluster, 2)
    seen: list[int] = []
    results = run_arena(config, lambda done, total, hands: seen.append(done), run)
    assert [r.unit for r in results] == list(range(config.units()))
    assert figures(config, results) == expected
    assert seen == list(range(1, config.units() + 1))  # the bar follows completed units
    assert run.figures(len(results))["worker_processes"] <= 2


def _parent(entry: Path) -> int:
    return int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])


def _unit_workers() -> list[int]:
    """Pids of this cluster's Ray workers playing a unit now (Ray titles a busy worker
    ray::TASK): children of a raylet this process started. Any such worker on the machine
    was taken before, another test process's or another user's run among them, whose death
    left this test's run whole (nothing of it killed) and the test passing without a test."""
    own = os.getpid()
    pids = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if (entry / "cmdline").read_bytes().startswith(b"ray::run_unit"):
                    raylet = Path("/proc") / str(_parent(entry))
                    if _parent(raylet) == own:
                        pids.append(int(entry.name))
            except (OSError, ValueError, IndexError):
                continue
    return pids


@pytest.mark.skipif(not Path("/proc/self/cmdline").exists(), reason="needs Linux /proc")
def test_a_killed_worker_loses_no_unit_and_counts_none_twice(cluster, reference):
    config, expected, _ = reference
    run = RayRun(cluster, 2)
    box: dict[str, Any] = {}
    thread = threading.Thread(target=lambda: box.update(results=run_arena(config, None, run)))
    thread.start()
    killed = None
    deadline = time.monotonic() + 60
    while killed is None and thread.is_alive() and time.monotonic() < deadline:
        busy = _unit_workers()
        if busy:
            killed = busy[0]
            os.kill(killed, signal.SIGKILL)
        time.sleep(0.01)
    thread.join(120)
    assert killed is not None, "no worker was caught playing a unit"
    results = box["results"]
    assert [r.unit for r in results] == list(range(config.units()))
    assert figures(config, results) == expected
    assert killed not in {pid for _, pid in run.tally.reads}  # its unit was played again


def _refuses(unit: int) -> None:
    raise ValueError(f"unit {unit}: a policy's own error")


def test_a_units_own_exception_comes_back_as_it_was_raised(cluster):
    """What Ray cannot retry is WorkerDied (one line); a unit's own exception is not Ray's
    loss: it comes back as raised (Ray's RayTaskError, of the unit's class too), unretried,
    for the code that called the run to take as it always has."""
    from adapter.local.ray_pool import map_units
    from adapter.local.stopping import WorkerDied

    with pytest.raises(ValueError, match="unit 0: a policy's own error") as caught:
        list(map_units(_refuses, lambda u: (u,), 3, 1, ordered=True))
    assert isinstance(caught.value, ray.exceptions.RayTaskError)
    assert not isinstance(caught.value, WorkerDied)


def digests(root: Path) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(root.iterdir())}


def test_selfplay_shards_are_the_local_runs_whoever_writes_them(cluster, tmp_path):
    policies = ("rulebased", "greedy", "rulebased", "greedy")
    arena = ArenaConfig("mass", policies, 48, 4, 1)
    local = run_selfplay(SelfPlayConfig(arena, str(tmp_path / "local"), 300))
    assert len(local["shards"]) >= 3
    expected = digests(tmp_path / "local")
    for shared in (False, True):
        out = tmp_path / f"ray-{shared}"
        config, run = SelfPlayConfig(arena, str(out), 300), RayRun(cluster, 2)
        result = run_on_workers(config, run) if shared else run_selfplay(config, None, run)
        assert digests(out) == expected, f"shards written by {result['ray']}"
        assert result["ray"]["shards_written_by"] == ("workers" if shared else "driver")
    # the command, joining the cluster by address, with a relative --out the workers share
    r = mjbot("selfplay", "--variant", "mass", "--policies", ",".join(policies), "--hands", "48",
              "--seed", "4", "--shard-decisions", "300", "--out", "cli", "--out-shared",
              "--ray", ray.get_runtime_context().gcs_address, "--json", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["ray"]["shards_written_by"] == "workers"
    assert digests(tmp_path / "cli") == expected


def test_mc_weights_are_read_once_per_worker_not_once_per_unit(cluster, monkeypatch):
    monkeypatch.setenv("MJBOT_MC", "playouts=2")  # travels to the workers with the tasks
    # 3 units of 4 hands over 2 workers: more units than workers, so a read per unit would
    # count 3 reads against at most 2 worker processes
    config = ArenaConfig("mcr", ("mc", "rulebased", "rulebased", "rulebased"), hands=12, seed=2)
    run = RayRun(cluster, 2)
    results = run_arena(config, None, run)
    tally = run.figures(len(results))
    assert sum(r.illegal for r in results) == 0 and not any(r.errors for r in results)
    assert tally["units"] == 3 and 1 <= tally["worker_processes"] <= 2
    assert tally["weight_reads"] == tally["worker_processes"]


def test_a_runs_settings_reach_its_units_on_the_workers_already_there(cluster, monkeypatch):
    """The driver's ``MJBOT_*`` settings (``MJBOT_MC``, ...) went to the units as Ray's
    runtime_env, and Ray starts workers of their own for each such environment (through its
    runtime-env agent: seconds before the first unit of every run, and of every test here,
    since the suite sets MJBOT_LOG_DIR). They now travel with each unit: the workers already
    up play it, under that run's settings, and keep none of them for the next run."""
    runs = []
    for probe in ("one", "two", None):
        if probe is None:
            monkeypatch.delenv("MJBOT_PROBE")
        else:
            monkeypatch.setenv("MJBOT_PROBE", probe)
        run = RayRun(cluster, 2)
        seen = [env.get("MJBOT_PROBE") for _, env in run.map(mjbot_env, lambda u: (), 8)]
        assert seen == [probe] * 8
        runs.append({pid for _, pid in run.tally.reads})
    assert runs[1] & runs[0] and runs[2] & (runs[0] | runs[1]), runs


def test_no_secret_goes_with_the_units(monkeypatch):
    """The settings travel as task arguments, which Ray keeps (and its dashboard shows): a
    Tenhou ID or a status token in the driver's environment stays there."""
    from adapter.local.ray_pool import shipped_env

    monkeypatch.setenv("MJBOT_MC", "playouts=16")
    monkeypatch.setenv("MJBOT_NN_WEIGHTS", "w.npz")
    for name in ("MJBOT_TENHOU_ID", "MJBOT_STATUS_TOKEN", "MJBOT_TENHOU_ID_2",
                 "MJBOT_NTPU_PASSWORD"):
        monkeypatch.setenv(name, "secret-value")
    env = shipped_env()
    assert env["MJBOT_MC"] == "playouts=16" and env["MJBOT_NN_WEIGHTS"] == "w.npz"
    assert "secret-value" not in env.values(), env


def mjbot(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [
        str(ROOT), os.environ.get("PYTHONPATH")]))}
    return subprocess.run([sys.executable, "-m", "adapter.cli", *args], capture_output=True,
                          text=True, timeout=300, env=env, cwd=cwd)


def test_the_command_joins_a_cluster_by_address(cluster, reference, tmp_path):
    """32 hands: the first 2 of the reference's 6 units (a unit's walls are its seed's and
    its number's, whatever the arena's length), so the expected figures are theirs."""
    config, _, results = reference
    short = replace(config, hands=32)
    assert short.units() == 2
    expected = figures(short, results[:2])
    address = ray.get_runtime_context().gcs_address
    r = mjbot("arena", "--variant", "mass", "--policies", ",".join(POLICIES), "--hands", "32",
              "--seed", "11", "--no-log", "--ray", address, "--json", str(tmp_path / "a.json"))
    assert r.returncode == 0, r.stderr
    summary = json.loads((tmp_path / "a.json").read_text())
    assert {k: v for k, v in summary.items() if k not in (*RUN_FIGURES, "ray")} == expected
    assert summary["ray"]["address"] == address and summary["ray"]["cluster_cpus"] == 2


@pytest.mark.parametrize(("args", "message"), [
    (["--ray", "127.0.0.1:1"], "no Ray cluster at '127.0.0.1:1'"),
    (["--ray", "nowhere"], "got 'nowhere': no port (or auto, or local)"),
    (["--workers", "0"], "--workers must be at least 1"),
])
def test_arena_ray_errors_are_one_line(args, message, capsys):
    """A bad address in a fresh process (this one may hold the module's cluster, which the
    command would use as it is); the refused worker count in this process (no Python start:
    it is refused before Ray is asked)."""
    args = ["arena", "--variant", "mass", "--hands", "16", "--no-log", *args]
    r = mjbot(*args) if args[-2] == "--ray" else mjbot_here(capsys, *args)
    assert r.returncode == 2 and message in r.stderr and "Traceback" not in r.stderr


def test_out_shared_needs_ray(tmp_path, capsys):
    """Refused before Ray is asked: in this process (no Python start)."""
    r = mjbot_here(capsys, "selfplay", "--variant", "mass", "--out", str(tmp_path / "d"),
                   "--out-shared")
    assert r.returncode == 2 and "--out-shared goes with --ray" in r.stderr


def test_without_ray_installed_the_error_says_what_to_install(capsys, monkeypatch):
    """In this process, Ray hidden as a Python without it has it (a None in sys.modules makes
    `import ray` fail), as the fresh process this test started did."""
    monkeypatch.setitem(sys.modules, "ray", None)
    r = mjbot_here(capsys, "arena", "--variant", "mass", "--hands", "16", "--no-log", "--ray",
                   "local")
    assert r.returncode == 2
    assert "pip install -e '.[ray]'" in r.stderr and "Traceback" not in r.stderr


def test_bench_ray_sets_dispatch_against_a_unit(cluster, monkeypatch):
    from adapter.bench.ray import bench_ray, text

    # one playout per candidate: the bench times whatever unit mc plays (the warm-up and the
    # timed riichi unit of mc are most of this test), the figures need only be positive
    monkeypatch.setenv("MJBOT_MC", "playouts=1")
    result = bench_ray(units=40, workers=2, policy_units=1)
    assert result["pool_ms_per_unit"] > 0 and result["ray_ms_per_unit"] > 0
    for policy in ("rulebased", "mc"):
        assert result["unit_seconds"][policy] > 0
        assert result["overhead"][policy]["ray_over_pool"] > 0
    assert "Ray/pool time per unit" in text(result)


# A driver that starts a local cluster as `mjbot arena --ray local` does: what a worker that
# runs a unit, and the raylet that started it, have in their environments
_LOCAL_CLUSTER = ENV_SPY + """
import json, os, threading, ray
from adapter import secret_env
from adapter.local.ray_pool import connect


def environ_of(pid):
    raw = open(f"/proc/{pid}/environ", "rb").read().decode()
    return sorted(e.split("=", 1)[0] for e in raw.split(chr(0)) if "=" in e)

@ray.remote
def seen():
    return {"worker": environ_of(os.getpid()), "raylet": environ_of(os.getppid())}

cluster = connect("local", 1)
try:
    print(json.dumps({**ray.get(seen.remote()), "driver": sorted(secret_env.environ()),
                      "changes": changes}))
finally:
    cluster.close()
"""


@pytest.mark.skipif(not Path("/proc/self/environ").exists(), reason="reads /proc (Linux)")
def test_a_local_clusters_processes_get_no_secret():
    """``--ray local`` starts Ray's processes here (its GCS, raylet, the workers that run our
    units): they had the driver's whole environment, the Tenhou ID and the status token."""
    secrets = {"MJBOT_TENHOU_ID": "ID0123abcd-98765432", "MJBOT_STATUS_TOKEN": "tok"}
    env = {**os.environ, **secrets, "PYTHONPATH": os.pathsep.join(filter(None, [
        str(ROOT), os.environ.get("PYTHONPATH")]))}
    done = subprocess.run([sys.executable, "-c", _LOCAL_CLUSTER], capture_output=True,
                          text=True, timeout=300, env=env, stdin=subprocess.DEVNULL)
    assert done.returncode == 0, done.stderr[-2000:]
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    assert not set(secrets) & set(seen["worker"]), seen["worker"]
    assert not set(secrets) & set(seen["raylet"]), seen["raylet"]
    assert set(secrets) <= set(seen["driver"])  # the driver's own, where it reads them
    # never put back into os.environ under Ray's threads (glibc's setenv races a getenv)
    assert [c for c in seen["changes"] if c[2] > 1] == []
