"""mjbot's commands on an event loop with no ``add_signal_handler``, as Windows' (a real
selector loop whose public one raises, tests/windows_loop.py; ``python -m tests.windows_loop``
runs mjbot with every loop one of these). The commands let the NotImplementedError pass and
went on with no handler: SIGTERM ended the process where it stood (on Windows Ctrl-C reached
asyncio's own handler instead: the session cancelled without being told, its game log not
saying it was stopped). They now fall back to ``signal.signal`` (adapter/loop_signals.py)
and stop as on Linux."""

from __future__ import annotations

import asyncio
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tests.serve_helpers import PYTHON_ENV, ROOMY, ROOT, ServeProcess
from tests.test_mjai import _assert_stopped_log, _scripted_server, _seen_by

ON_SUCH_A_LOOP = [sys.executable, "-m", "tests.windows_loop"]


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
async def test_a_signal_in_a_game_on_an_mjai_server_stops_it(tmp_path: Path,
                                                             signum: int) -> None:
    answered = asyncio.Event()  # then the server waits on: the client ends the connection
    server, port = await _scripted_server(_seen_by(0)[:30], held=answered)
    async with server:
        proc = await asyncio.create_subprocess_exec(
            *ON_SUCH_A_LOOP, "mjai", "--server", f"127.0.0.1:{port}",
            "--log-dir", str(tmp_path), cwd=ROOT, env=PYTHON_ENV,
            stderr=asyncio.subprocess.PIPE)
        try:
            await asyncio.wait_for(answered.wait(), 120)
            proc.send_signal(signum)
            _out, err = await asyncio.wait_for(proc.communicate(), 20)
        finally:
            if proc.returncode is None:
                proc.kill()
                await proc.wait()
    name = signal.Signals(signum).name
    assert proc.returncode == 128 + signum, err.decode()[-2000:]
    assert f"stopped ({name})" in err.decode() and "Traceback" not in err.decode()
    _assert_stopped_log(tmp_path)


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_the_viewer_stops_on_a_signal(tmp_path: Path, signum: int) -> None:
    proc = subprocess.Popen([*ON_SUCH_A_LOOP, "view", str(tmp_path)], cwd=ROOT, env=PYTHON_ENV,
                            stderr=subprocess.PIPE, text=True)
    assert proc.stderr is not None
    try:
        line = proc.stderr.readline()
        assert "(Ctrl-C to stop)" in line, line
        proc.send_signal(signum)
        code = proc.wait(20)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert code == 0, proc.stderr.read()


def test_serve_reloads_on_sighup_and_stops_on_sigterm(tmp_path: Path) -> None:
    config = tmp_path / "serve.toml"
    config.write_text(ROOMY + '[sessions.drill]\nkind = "local"\nenabled = false\n'
                      'opponents = ["greedy", "greedy", "greedy"]\n')
    serve = ServeProcess(config, tmp_path / "logs", module="tests.windows_loop")
    try:
        serve.signal(signal.SIGHUP)
        serve.wait_for(lambda e: e.get("event") == "serve: config reloaded")
        serve.signal(signal.SIGTERM)
        code = serve.proc.wait(30)
        serve.wait_for(lambda e: e.get("event") == "serve: stopped")
    finally:
        serve.close()
    assert code == 0, "".join(serve.raw[-20:])
    assert not any("Traceback" in line for line in serve.raw), serve.raw


def test_serve_starts_and_stops_where_there_is_no_sighup(tmp_path: Path) -> None:
    """``signal.SIGHUP`` failed serve's start on Windows (AttributeError): no reload there."""
    config = tmp_path / "serve.toml"
    config.write_text(ROOMY + '[sessions.drill]\nkind = "local"\nenabled = false\n'
                      'opponents = ["greedy", "greedy", "greedy"]\n')
    serve = ServeProcess(config, tmp_path / "logs", env={"MJBOT_TEST_NO_SIGHUP": "1"},
                         module="tests.windows_loop")
    try:
        serve.signal(signal.SIGTERM)
        code = serve.proc.wait(30)
        serve.wait_for(lambda e: e.get("event") == "serve: stopped")
    finally:
        serve.close()
    assert code == 0, "".join(serve.raw[-20:])
    assert not any("Traceback" in line for line in serve.raw), serve.raw
