"""Peers for the serve tests: a free port, the fake Tenhou server as a subprocess, `mjbot
serve` as a subprocess with its status URL, and log checks."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from replay.log import SUFFIX, read_log

if TYPE_CHECKING:
    from adapter.serve.viewcache import BuildCache

ROOT = Path(__file__).resolve().parents[1]
PYTHON_ENV = {**os.environ, "PYTHONPATH": str(ROOT)}
# a config's [logs] without the low-disk warning (LogUpkeep.low_disk_mb, 1024 MB by default):
# a test that wants /health "ok" must not depend on the free disk of the machine it runs on
ROOMY = "[logs]\nlow_disk_mb = 0\n"


async def until(check: Callable[[], object], timeout: float = 10.0) -> None:
    """Let the event loop run until ``check()`` is true (any truthy value: a list of what was
    waited for, say; a deadline, not a measurement)."""
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, "timed out"
        await asyncio.sleep(0.01)


def mjbot(*args: str, timeout: float = 300, cwd: Path | str | None = None,
          env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """``mjbot ARGS`` as a real subprocess of this Python, its output captured as text."""
    return subprocess.run([sys.executable, "-m", "adapter.cli", *args], capture_output=True,
                          text=True, timeout=timeout, cwd=cwd, env=env)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_listening(port: int, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), 0.2).close()
            return
        except OSError:
            assert time.monotonic() < deadline, f"nothing listens on {port}"
            time.sleep(0.05)


def tenhou_server(port: int, games: int = 1, length: str = "south") -> subprocess.Popen[bytes]:
    """The fake Tenhou server (test games vs mjbot's policies) on ``port``."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "adapter.cli", "--log-level", "warning", "tenhou-server",
         "--port", str(port), "--games", str(games), "--length", length, "--no-log"],
        cwd=ROOT, env=PYTHON_ENV, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wait_listening(port)
    return proc


def stop_process(proc: subprocess.Popen[Any]) -> None:
    if proc.poll() is None:
        proc.kill()
        proc.wait(10)


class ServeProcess:
    """`mjbot serve CONFIG --status 127.0.0.1:0`, its JSON log lines collected."""

    def __init__(self, config: Path, log_dir: Path | None, env: dict[str, str] | None = None,
                 open_files: int | None = None, file_size: int | None = None,
                 module: str = "adapter.cli", status: str | None = "127.0.0.1:0") -> None:
        """``env``: added to the environment; ``open_files``: the soft RLIMIT_NOFILE;
        ``file_size``: RLIMIT_FSIZE in bytes, for serve and its workers (a write past it fails
        with EFBIG as one on a full disk with ENOSPC; SIGXFSZ ignored, as tests/full_disk.py
        does); ``module``: what ``python -m`` runs (tests.windows_loop: mjbot on a loop
        without signal handlers); ``status``: the --status address, None for the config's
        own, as deploy/mjbot.service runs it; ``log_dir`` None: the config's [serve]
        log_dir."""
        self.proc = subprocess.Popen(
            [sys.executable, "-m", module, "--log-json", "serve", str(config),
             *(("--status", status) if status else ()),
             *(("--log-dir", str(log_dir)) if log_dir is not None else ())],
            cwd=ROOT, env={**PYTHON_ENV, **(env or {})}, stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE, text=True,
            preexec_fn=None if open_files is None and file_size is None
            else lambda: _limit(open_files, file_size), restore_signals=file_size is None)
        self.lines: list[dict[str, Any]] = []
        self.raw: list[str] = []
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        found = self.wait_for(lambda e: e.get("event") == "serve: status server listening")
        self.url = found["url"]

    def _read(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self.raw.append(line)
            with contextlib.suppress(ValueError):
                self.lines.append(json.loads(line))

    def wait_for(self, check: Any, timeout: float = 60.0) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        while True:
            for entry in list(self.lines):
                if check(entry):
                    return entry
            assert self.proc.poll() is None or time.monotonic() < deadline, \
                "".join(self.raw[-20:])
            assert time.monotonic() < deadline, "".join(self.raw[-20:])
            time.sleep(0.05)

    def get(self, path: str) -> Any:
        with urllib.request.urlopen(self.url.rstrip("/") + path, timeout=10) as response:
            body = response.read().decode()
        return json.loads(body) if path in ("/health", "/api/status") else body

    def until(self, check: Any, timeout: float = 60.0) -> dict[str, Any]:
        """Poll /api/status until ``check(status)``."""
        deadline = time.monotonic() + timeout
        while True:
            status = self.get("/api/status")
            if check(status):
                return status
            assert time.monotonic() < deadline, json.dumps(status)[:2000]
            time.sleep(0.1)

    def signal(self, sig: signal.Signals) -> None:
        self.proc.send_signal(sig)

    def close(self) -> None:
        stop_process(self.proc)


def _limit(open_files: int | None, file_size: int | None) -> None:
    import resource

    if open_files is not None:
        _soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        resource.setrlimit(resource.RLIMIT_NOFILE, (open_files, hard))
    if file_size is not None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        _soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
        resource.setrlimit(resource.RLIMIT_FSIZE, (file_size, hard))


def game_logs(root: Path) -> list[Path]:
    return sorted(root.rglob(f"*{SUFFIX}"))


def assert_complete(path: Path) -> dict[str, Any]:
    """Every frame reads back and the footer is there; the footer's result."""
    log = read_log(path)
    assert log.truncated is None, (path, log.truncated)
    assert log.footer is not None, path
    return log.footer.result


@contextlib.contextmanager
def mjbot_view(*logs: Path) -> Iterator[str]:
    """`mjbot view LOGS...` as a user starts it; its base URL (a game's id starts with its
    folder's place in LOGS). Ended with SIGTERM, which it must answer with exit 0."""
    proc = subprocess.Popen([sys.executable, "-m", "adapter.cli", "view", *map(str, logs)],
                            cwd=ROOT, env=PYTHON_ENV, stderr=subprocess.PIPE, text=True)
    assert proc.stderr is not None
    line = proc.stderr.readline()
    found = re.search(r"(http://127\.0\.0\.1:\d+/)games", line)
    try:
        assert found, line
        yield found.group(1)
    finally:
        proc.terminate()
        assert proc.wait(10) == 0


@contextlib.contextmanager
def viewer_in_thread(logs: Path) -> Iterator[tuple[str, asyncio.AbstractEventLoop, BuildCache]]:
    """The viewer `mjbot view` serves (its StatusServer on ``logs``), on loopback in a thread
    of this process: the URL, the server's loop (a test can set its build cache's bounds as
    it runs), the cache. For the tests that need no process of its own: a `mjbot view` child
    costs a Python start and the viewer's imports."""
    from adapter.serve.status import StatusServer
    from adapter.serve.viewer import VIEW_CACHE

    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    server = StatusServer(roots=[str(logs)])
    try:
        url = asyncio.run_coroutine_threadsafe(server.start("127.0.0.1", 0), loop).result(10)
        assert server.runner is not None
        yield url, loop, server.runner.app[VIEW_CACHE]
    finally:
        asyncio.run_coroutine_threadsafe(server.stop(), loop).result(10)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(10)
        loop.close()
