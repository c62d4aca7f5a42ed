"""Leftovers of a stop's reviews: a Ray worker's full disk is said as one without Ray (one
line, exit 1, no half part file); the files a failed run left are a JSON log line under
--log-json."""

from __future__ import annotations

import contextlib
import errno
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.full_disk import mjbot_on_a_full_disk
from tests.serve_helpers import mjbot

ROOT = Path(__file__).resolve().parent.parent

# A driver with a local cluster of 1 CPU whose task writes to /dev/full (a real ENOSPC, met
# in a real worker), taken back through the pool's own get
_FULL_IN_A_WORKER = """
import json
from adapter.local.ray_pool import connect, get, remote

def write_full():
    with open("/dev/full", "wb") as f:
        f.write(b"x" * 65536)

cluster = connect("local", 1)
try:
    try:
        get([remote(write_full).remote()])
    except OSError as exc:
        print(json.dumps([exc.errno, exc.strerror, exc.filename]))
finally:
    cluster.close()
"""


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full (Linux)")
def test_a_workers_oserror_comes_back_with_its_errno():
    """Ray raised a task's OSError as RayTaskError(OSError), whose errno is None: cli.main's
    full-disk line (errno ENOSPC, EDQUOT, EFBIG, EROFS) did not know it, a traceback. It now
    comes back as the worker's own OSError."""
    pytest.importorskip("ray", reason="Ray is not installed (pip install -e '.[ray]')")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [
        str(ROOT), os.environ.get("PYTHONPATH")]))}
    done = subprocess.run([sys.executable, "-c", _FULL_IN_A_WORKER], capture_output=True,
                          text=True, timeout=300, env=env, stdin=subprocess.DEVNULL)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip().splitlines()[-1] == (
        f'[{errno.ENOSPC}, "No space left on device", null]')


@contextlib.contextmanager
def tiny_disk(where: Path) -> Iterator[Path]:
    """A 64 KiB tmpfs at ``where`` (root only: skipped elsewhere), unmounted after."""
    where.mkdir()
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(where)],
                      capture_output=True).returncode != 0:
        pytest.skip("cannot mount a tmpfs here (needs root)")
    try:
        yield where
    finally:
        subprocess.run(["umount", str(where)], check=True)


def test_a_full_disk_on_a_ray_worker_ends_selfplay_in_one_line(tmp_path):
    """`mjbot selfplay --ray local --out-shared` whose --out is full: a worker's part file
    met ENOSPC, and the run ended in a traceback of Ray's error, its half part file left in
    --out/.parts. Now the line a full disk without Ray gives, exit 1, and nothing left."""
    pytest.importorskip("ray", reason="Ray is not installed (pip install -e '.[ray]')")
    with tiny_disk(tmp_path / "tiny") as disk:
        out = disk / "d"
        r = mjbot("selfplay", "--policies", "rulebased,rulebased,rulebased,rulebased",
                  "--hands", "40", "--seed", "3", "--out", str(out), "--ray", "local",
                  "--workers", "1", "--out-shared")
        assert r.returncode == 1 and "Traceback" not in r.stderr, r.stderr[-3000:]
        ours = [line for line in r.stderr.splitlines() if line.startswith("mjbot ")]
        assert ours == [f"mjbot selfplay: cannot write {out}/.parts/unit-000000.npz: No space "
                        "left on device (nothing written there)"]
        assert not any(disk.iterdir())


def test_the_files_a_failed_run_left_are_a_json_line_under_log_json(tmp_path):
    """`mjbot --log-json selfplay` whose disk filled at its third shard: the run's failure was
    a JSON log line, but the line before it (the files left, and that the same command goes
    on) was plain text, which a log collector reading JSON lines cannot parse. Both are JSON
    log lines now."""
    out = tmp_path / "d"
    r = mjbot_on_a_full_disk("--log-json", "selfplay", "--policies",
                             "rulebased,rulebased,rulebased,rulebased", "--hands", "200",
                             "--seed", "3", "--shard-decisions", "300", "--out", str(out),
                             file_bytes=30000)  # shards 0 and 1 fit, 2 does not
    assert r.returncode == 1 and "Traceback" not in r.stderr, r.stderr[-2000:]
    lines = [json.loads(line) for line in r.stderr.splitlines()]  # each one JSON
    assert [(e["event"], e["command"]) for e in lines] == [("files left", "selfplay"),
                                                          ("run failed", "selfplay")]
    assert lines[0]["error"] == (f"the failed run left 3 file(s) in {out} (no manifest: not a "
                                 "dataset; the same command goes on with it)")
    assert lines[1]["error"].startswith(f"cannot write {out}/shard-00002.npz: ")


def test_a_full_disk_at_the_progress_record_names_it_and_leaves_no_half_one(tmp_path):
    """`mjbot selfplay` whose disk filled as it wrote its record of where it stood (after two
    shards): 'cannot write its output' (the record's name not said) and a half
    progress.json.tmp left beside the shards, counted among the files left. The record is
    named now, and no .tmp is left; the record before it is kept, so the same command goes
    on once there is room."""
    with tiny_disk(tmp_path / "tiny") as disk:
        out = disk / "d"
        r = mjbot("selfplay", "--policies", "rulebased,rulebased,rulebased,rulebased",
                  "--hands", "200", "--seed", "3", "--shard-decisions", "300", "--out",
                  str(out))  # shards 0 and 1 and the record fill the 64 KiB
        assert r.returncode == 1 and "Traceback" not in r.stderr, r.stderr[-2000:]
        assert r.stderr.splitlines()[-1] == (f"mjbot selfplay: cannot write {out}/progress.json: "
                                             "No space left on device (nothing written there)")
        assert sorted(p.name for p in out.iterdir()) == ["progress.json", "shard-00000.npz",
                                                         "shard-00001.npz"]
