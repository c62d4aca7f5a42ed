"""Two `mjbot dataset import` runs at one --out at once are refused as two selfplay runs are:
the second says so in one line, exit 2, and leaves the first's folder alone; the first writes
its whole dataset. Before, both passed the empty-folder check before either wrote a shard,
each wrote its shards and manifest over the other's, and both said they had written their
dataset. The first run is held inside its import, deterministically, by a named pipe given as
its first file: it opens the pipe for reading only once it holds --out."""

from __future__ import annotations

import contextlib
import errno
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.in_process import mjbot_here
from tests.shared_data import DATA

ROOT = Path(__file__).resolve().parent.parent
GAME = DATA / "tenhou" / "dnovikoff_mjlog" / "example.xml"
OTHER = DATA / "tenhou" / "convlog_tenhou6_json" / "ranked_game.json"

pytestmark = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs a named pipe (POSIX)")


def _writer_when_read(fifo: Path, reader: subprocess.Popen[str]) -> int:
    """The pipe's write end, once the import has opened it for reading (so holds --out)."""
    deadline = time.monotonic() + 120
    while True:
        try:
            return os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
        except OSError as exc:
            if exc.errno != errno.ENXIO:  # ENXIO: no reader yet
                raise
        assert reader.poll() is None, reader.communicate()
        assert time.monotonic() < deadline, "the first import never read its file"
        time.sleep(0.02)


def test_a_second_import_at_the_same_out_is_refused_while_the_first_writes(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "data" / "real"
    fifo = tmp_path / "game.xml"
    os.mkfifo(fifo)
    first = subprocess.Popen(
        [sys.executable, "-m", "adapter.cli", "dataset", "import", str(fifo), "--out", str(out)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)})
    try:
        fd = _writer_when_read(fifo, first)
        second = mjbot_here(capsys, "dataset", "import", str(OTHER), "--out", str(out))
        assert not any(out.iterdir())  # the refused run wrote nothing there
        os.set_blocking(fd, True)
        os.write(fd, GAME.read_bytes())
        os.close(fd)
        first_out, first_err = first.communicate(timeout=300)
    finally:
        with contextlib.suppress(ProcessLookupError):
            first.kill()
    assert second.returncode == 2, second.stdout + second.stderr
    (line,) = second.stderr.strip().splitlines()
    assert f"{out}: another run is writing a dataset there" in line, line
    assert first.returncode == 0, first_err
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["import"]["files"][0]["file"] == "game.xml"
    assert [s["file"] for s in manifest["shards"]] == sorted(
        p.name for p in out.iterdir() if p.name != "manifest.json")
    assert f"in {out}" in first_out


def test_a_failed_import_leaves_no_folder_and_no_lock(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The folders made for --out go again when a file is refused, and the lock goes with
    the run: the same --out then takes the import."""
    out = tmp_path / "new" / "real"
    bad = tmp_path / "notes.txt"
    bad.write_text("not a game\n")
    failed = mjbot_here(capsys, "dataset", "import", str(bad), "--out", str(out))
    assert failed.returncode == 2 and str(bad) in failed.stderr
    assert not (tmp_path / "new").exists()
    done = mjbot_here(capsys, "dataset", "import", str(GAME), "--out", str(out))
    assert done.returncode == 0, done.stderr
    assert (out / "manifest.json").is_file()
