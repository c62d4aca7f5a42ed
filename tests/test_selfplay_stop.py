"""`mjbot selfplay` stopped early (--stop-after, SIGTERM, Ctrl-C): the dataset holds the
first wall sets, each in every seating, exactly as a run planned that long writes them, and
says it was stopped; every shard it lists is whole."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

from adapter.local.arena import ArenaConfig
from adapter.local.selfplay import SelfPlayConfig, run_selfplay
from replay.dataset import schema as S
from replay.dataset.shards import read_manifest, read_shard
from replay.dataset.stats import dataset_stats
from tests.full_disk import mjbot_on_a_full_disk
from tests.in_process import mjbot_here
from tests.serve_helpers import free_port, mjbot
from tests.stop_helpers import kill_a_worker, stop_by_signal, stopped_by_deadline

POLICIES = ("rulebased", "greedy", "rulebased", "greedy")
LONG = ["selfplay", "--variant", "mass", "--policies", ",".join(POLICIES), "--hands",
        "400000", "--seed", "4", "--shard-decisions", "300"]


def every_array(root) -> dict[str, np.ndarray]:
    """Each field of the dataset, its shards read whole (their sizes checked against the
    manifest) and joined in order."""
    manifest = read_manifest(root)
    parts = [read_shard(root / s["file"], S.FIELDS, s["bytes"]) for s in manifest["shards"]]
    return {name: np.concatenate([p[name] for p in parts]) for name in S.FIELDS}


def test_stop_after_keeps_the_first_wall_sets_as_a_shorter_run_writes_them(tmp_path, capsys):
    out = tmp_path / "stopped"
    r = stopped_by_deadline(lambda seconds: mjbot(
        *LONG, "--workers", "2", "--stop-after", f"{seconds:g}", "--out", str(out), "--json"))
    assert r.returncode == 0, r.stderr
    stopped = json.loads(r.stdout)["stopped"]
    units = stopped["units_done"]
    assert stopped["reason"] == "time" and 1 <= units < stopped["units_planned"]
    manifest = read_manifest(out)
    assert manifest["stopped"] == stopped
    # a stopped dataset does not look whole (`dataset stats` only reads: in this process)
    shown = mjbot_here(capsys, "dataset", "stats", str(out))
    assert (f"stopped early (--stop-after passed): the first {units} of "
            f"{stopped['units_planned']} wall sets") in shown.stdout, shown.stderr
    assert manifest["games"] == units * manifest["config"]["seatings"]
    planned = ArenaConfig("mass", POLICIES, 1, 4)
    short = ArenaConfig("mass", POLICIES, units * planned.hands_per_unit(), 4)
    assert short.units() == units
    run_selfplay(SelfPlayConfig(short, str(tmp_path / "short"), 300))
    expected = every_array(tmp_path / "short")
    got = every_array(out)
    assert got.keys() == expected.keys()
    for name in expected:
        assert np.array_equal(got[name], expected[name]), name


@pytest.mark.parametrize(("signum", "workers"), [(signal.SIGTERM, 2), (signal.SIGINT, 1)])
def test_a_signal_stops_selfplay_with_a_whole_dataset(tmp_path, signum, workers):
    out = tmp_path / "d"
    status, stdout = stop_by_signal([*LONG, "--workers", str(workers), "--out", str(out)],
                                    signum, after=1 if workers == 1 else 6)
    assert status == 128 + signum
    name = signal.Signals(signum).name
    assert f"stopped early ({name}): the first" in stdout
    manifest = read_manifest(out)
    assert manifest["stopped"]["reason"] == name and manifest["stopped"]["units_done"] >= 1
    stats = dataset_stats(out)
    assert stats["decisions"] == manifest["decisions"] > 0
    every_array(out)  # every shard listed is there, whole
    assert sorted(p.name for p in out.iterdir()) == sorted(  # and the record to go on from
        ["manifest.json", "progress.json", *(shard["file"] for shard in manifest["shards"])])


def test_stopped_before_the_first_wall_set_leaves_no_dataset(tmp_path, capsys):
    """The folders the run made for --out are removed; an --out that was there (empty)
    before the run stays, as a failed run leaves it (it used to be removed too). Through
    mjbot's entry point in this process: no signal, no worker, nothing about the process."""
    new = tmp_path / "made" / "d"
    there = tmp_path / "there"
    there.mkdir()
    for out in (new, there):
        r = mjbot_here(capsys, *LONG, "--stop-after", "0.000001", "--out", str(out))
        assert r.returncode == 1 and "Traceback" not in r.stderr
        assert ("stopped (--stop-after passed) before the first wall set was finished: no "
                "dataset written") in r.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["there"]  # --out can be used again
    assert not any(there.iterdir())


@pytest.mark.parametrize("command", [
    [*LONG, "--workers", "2"],
    ["arena", "--variant", "mass", "--hands", "400000", "--workers", "2", "--no-log"]])
def test_a_worker_killed_ends_the_run_with_its_reason(tmp_path, command):
    if command[0] == "selfplay":
        command = [*command, "--out", str(tmp_path / "d")]
    status, stderr = kill_a_worker(command)
    assert status == 1, stderr[-2000:]
    assert "a worker process ended abruptly (killed, out of memory" in stderr
    assert "Traceback" not in stderr


def test_a_run_that_fails_at_its_start_leaves_the_disk_as_it_found_it(tmp_path):
    """An mjai-tcp seat that no client connects to ends the run (after --connect-wait) with
    one line: an --out folder the run made, its parents too, was left behind empty (the same
    --out then worked, but the user saw a folder for a dataset that was never written). Now
    the folders it made are gone, and an --out that was there (empty) is left as it was."""
    new = tmp_path / "made" / "out"
    there = tmp_path / "there"
    there.mkdir()
    runs = []
    for out in (new, there):
        port = free_port()
        runs.append((port, subprocess.Popen(
            [sys.executable, "-m", "adapter.cli", "selfplay", "--policies",
             f"mjai-tcp:127.0.0.1:{port},greedy,greedy,greedy", "--hands", "4",
             "--connect-wait", "1.5", "--out", str(out)],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)))
    for port, proc in runs:  # both wait out the seat's time side by side
        _, err = proc.communicate(timeout=240)
        assert proc.returncode == 1, err[-2000:]
        said = [line for line in err.splitlines() if line.startswith("mjbot selfplay:")]
        assert said == [f"mjbot selfplay: no mjai client connected to 127.0.0.1:{port} "
                        f"within 1.5 s (start one, e.g. mjbot mjai --server 127.0.0.1:{port})"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["there"]
    assert not any(there.iterdir())


def test_a_full_disk_ends_selfplay_in_one_line_with_no_half_shard(tmp_path):
    """A shard the disk had no room for ended the run with three chained tracebacks and left
    its half-written shard-00000.npz.tmp in --out. Now one line names the shard and the
    error, exit 1, and the folder the run made is gone again (it holds nothing)."""
    out = tmp_path / "made" / "d"
    r = mjbot_on_a_full_disk("selfplay", "--policies", "rulebased,rulebased,rulebased,"
                             "rulebased", "--hands", "4", "--seed", "3", "--out", str(out),
                             file_bytes=4000)
    assert r.returncode == 1 and "Traceback" not in r.stderr, r.stderr[-2000:]
    assert r.stderr.splitlines() == [f"mjbot selfplay: cannot write {out}/shard-00000.npz: "
                                     "File too large (nothing written there)"]
    assert not any(tmp_path.iterdir())


def test_a_stop_whose_stderr_reader_is_gone_plays_its_games_to_their_end(tmp_path):
    """A run whose stderr nobody reads any more (its parent killed outright: `nn iterate`'s
    self-play phase is then sent SIGTERM by the kernel, with its stderr a pipe to the dead
    run) is stopped. The stop's note to stderr raised BrokenPipeError inside the signal
    handler, so in the game under way: a referee error in the dataset, and the `nn iterate`
    that resumed it failed on it. The note is dropped where it cannot be written."""
    out = tmp_path / "d"
    proc = subprocess.Popen([sys.executable, "-m", "adapter.cli", *LONG, "--workers", "1",
                             "--out", str(out)], stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 120
        while not any(out.glob("*.npz")):  # a wall set played: games under way from here
            assert time.monotonic() < deadline and proc.poll() is None
            time.sleep(0.05)
        assert proc.stderr is not None
        proc.stderr.close()  # the reader gone: a write to stderr now fails (EPIPE)
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=120)
    finally:
        proc.kill()
    manifest = read_manifest(out)
    assert manifest["stopped"]["reason"] == "SIGTERM", manifest["stopped"]
    assert manifest["referee_errors"] == [], manifest["referee_errors"][0][:600]
