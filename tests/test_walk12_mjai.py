"""What an mjai user meets, walking the README (walk 12): the mjai.app upload, `mjbot mjai`
on stdin and over TCP, mjai bots as outside seats of `mjbot arena`."""

from __future__ import annotations

import json
import shutil
import socket
import subprocess
import venv
import zipfile
from pathlib import Path

import numpy
import pytest

from adapter.platforms.mjai_bundle import VENDOR, build_mjai_bundle
from tests.in_process import mjbot_here


def test_a_listening_seat_whose_port_is_taken_ends_the_run_in_one_line(
        capsys: pytest.CaptureFixture[str]) -> None:
    """A port another program holds (an arena left running, an mjai server): the seat was
    counted crashed in every game and the arena played them all, printing a table of a bot
    that never sat, with a warning a game and a fallback share of 100%. Now the run ends
    before its table in one line naming the address and why, as where no bot came."""
    holder = socket.socket()
    holder.bind(("127.0.0.1", 0))
    holder.listen(1)
    port = holder.getsockname()[1]
    try:
        run = mjbot_here(capsys, "arena", "--policies",
                         f"mjai-tcp:127.0.0.1:{port},rulebased,rulebased,rulebased",
                         "--hands", "4", "--no-log", "--connect-wait", "1")
    finally:
        holder.close()
    assert run.returncode == 1, run
    assert run.stdout == ""
    assert run.stderr.splitlines() == [
        f"mjbot arena: cannot listen on 127.0.0.1:{port} for an mjai client: "
        "Address already in use"], run.stderr


def _numpy_only_python(root: Path) -> str:
    """A venv whose site-packages hold numpy alone (linked from ours), as mjai.app's image
    lacks what the upload carries itself."""
    venv.EnvBuilder(with_pip=False).create(root)
    site = next((root / "lib").glob("python3*/site-packages"))
    numpy_dir = Path(numpy.__file__).parent
    for target in [numpy_dir, *numpy_dir.parent.glob("numpy.libs")]:
        (site / target.name).symlink_to(target)
    return str(root / "bin" / "python")


@pytest.mark.parametrize("left_out", ["protocols/mjai.py", f"{VENDOR}/mahjong"])
def test_an_upload_missing_a_file_says_so_in_one_line(tmp_path: Path, left_out: str) -> None:
    """The unpacked zip with a file left out (a partial unzip or copy): ``python -u bot.py 0``
    died in a traceback, at its import of the mjai module or, without the carried ``mahjong``,
    deep in the rules' import. Now one line says what could not be loaded and what to do."""
    python = _numpy_only_python(tmp_path / "venv")
    with zipfile.ZipFile(build_mjai_bundle(tmp_path / "dist")) as zf:
        zf.extractall(tmp_path / "bot")
    gone = tmp_path / "bot" / left_out
    if gone.is_dir():
        shutil.rmtree(gone)
    else:
        gone.unlink()
    start = json.dumps([{"type": "start_game", "names": ["0", "1", "2", "3"], "id": 0}])
    done = subprocess.run([python, "-I", "-u", "bot.py", "0"], cwd=tmp_path / "bot",
                          input=start + "\n", capture_output=True, text=True, timeout=120)
    assert done.returncode == 1 and done.stdout == "", done
    (line,) = done.stderr.splitlines()
    missing = "protocols.mjai" if left_out.endswith(".py") else "mahjong"
    assert line.startswith("mjbot: this bot is missing part of its own code (No module named "
                           f"'{missing}'"), line
    assert line.endswith("unzip the whole zip here, or build it again with mjbot bundle mjai")
