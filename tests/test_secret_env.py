"""mjbot's secrets reach no child it starts: each child, a real process, shows its environment
as ``/proc/PID/environ`` does (what another local user's tools, or the child itself, read).

Our own children (the viewer's reading child, serve's practice worker, the fake servers' bots,
a thinking worker and its fork server) read no secret. An outside program seated at the table
(someone else's bot), or the user's browser, gets the user's other variables as they are, and
a secret only where ``$MJBOT_PASS_SECRETS`` names it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from adapter import secret_env
from adapter.local.external.process import LineProcess
from adapter.own_python import own_python
from adapter.serve.config import loads
from adapter.serve.supervisor import Supervisor
from adapter.serve.wholeread import ChildReader
from tests.env_helpers import ENV_SPY
from tests.serve_helpers import until
from tests.test_external_seats import BOTZONE_ONESHOT_SIMPLE
from tests.test_serve_sessions import practice_pids

pytestmark = pytest.mark.skipif(not Path("/proc/self/environ").exists(),
                                reason="reads /proc/PID/environ (Linux)")

ID = "ID0123abcd-98765432"  # a well-formed Tenhou ID
TOKEN = "status-token-not-for-children"
SECRETS = {"MJBOT_TENHOU_ID": ID, "MJBOT_STATUS_TOKEN": TOKEN}
USERS = {"MY_BOT_HOME": "/opt/my-bot"}  # a user's own variable an outside bot relies on


def environ_of(pid: int) -> dict[str, str]:
    raw = Path(f"/proc/{pid}/environ").read_bytes()
    return dict(e.split("=", 1) for e in raw.decode().split("\0") if "=" in e)


# An mjai bot that writes its own environment as /proc shows it, then plays tsumogiri
ENV_BOT = textwrap.dedent("""
    import json, sys
    out, seat = sys.argv[1], int(sys.argv[-1])
    raw = open("/proc/self/environ", "rb").read().decode()
    with open(out, "w") as f:
        json.dump(dict(e.split("=", 1) for e in raw.split("\\0") if "=" in e), f)
    for line in sys.stdin:
        last = json.loads(line)[-1]
        answer = {"type": "none"}
        if last["type"] == "tsumo" and last["actor"] == seat:
            answer = {"type": "dahai", "actor": seat, "pai": last["pai"], "tsumogiri": True}
        print(json.dumps(answer), flush=True)
""")


def _arena_with_env_bot(tmp_path: Path, **extra: str) -> dict[str, str]:
    """``mjbot arena`` (a real process, the secrets in its environment) with the bot at seat
    0 for one hand: the environment the bot had."""
    bot = tmp_path / "bot.py"
    bot.write_text(ENV_BOT)
    seen = tmp_path / "env.json"
    env = {**os.environ, **SECRETS, **USERS, **extra}
    done = subprocess.run(own_python("-m", "adapter.cli", "--log-level", "error", "arena",
                                     "--policies",
                                     f"mjai:{sys.executable} {bot} {seen},rulebased,"
                                     "rulebased,rulebased", "--hands", "1", "--no-log"),
                          env=env, capture_output=True, text=True, timeout=300,
                          stdin=subprocess.DEVNULL)
    assert done.returncode == 0, done.stderr
    bots_env: dict[str, str] = json.loads(seen.read_text())
    return bots_env


def test_an_outside_program_at_the_table_gets_no_secret(tmp_path: Path) -> None:
    """Someone else's bot seated by ``mjai:CMD`` got the Tenhou ID and the status token (the
    whole environment mjbot had); it gets the user's other variables, PATH and HOME as they
    are, and no secret."""
    seen = _arena_with_env_bot(tmp_path)
    assert not set(SECRETS) & set(seen), sorted(set(SECRETS) & set(seen))
    assert ID not in json.dumps(seen) and TOKEN not in json.dumps(seen)
    assert seen["MY_BOT_HOME"] == USERS["MY_BOT_HOME"]
    assert seen["PATH"] == os.environ["PATH"]
    assert seen.get("HOME") == os.environ.get("HOME")


# A one-shot Botzone bot (started anew for every request) that writes its environment at
# its first start, then answers as the external seats' tests' one does
BOTZONE_ENV_BOT = textwrap.dedent("""
    import json, os, sys
    out = sys.argv[1]
    if not os.path.exists(out):
        raw = open("/proc/self/environ", "rb").read().decode()
        with open(out, "w") as f:
            json.dump(dict(e.split("=", 1) for e in raw.split("\\0") if "=" in e), f)
""") + BOTZONE_ONESHOT_SIMPLE


def test_a_botzone_program_at_the_table_gets_no_secret(tmp_path: Path) -> None:
    """``botzone:CMD``, a program started anew for every request, gets no secret either.
    Only its first start's environment is read, so the run is kept short: the bot's Python
    starts without ``site`` (-S; it needs only the standard library: 8 ms of CPU a start where
    the environment's site-packages cost 22 ms, and -S leaves the environment it is given as
    it is), and the walls are seed 26's, whose wall set (4 one-hand games) starts it 246
    times where seed 0's started it 361."""
    bot = tmp_path / "bot.py"
    bot.write_text(BOTZONE_ENV_BOT)
    seen = tmp_path / "env.json"
    env = {**os.environ, **SECRETS, **USERS}
    done = subprocess.run(own_python("-m", "adapter.cli", "--log-level", "error", "arena",
                                     "--variant", "mcr", "--policies",
                                     f"botzone:{sys.executable} -S {bot} {seen},rulebased,"
                                     "rulebased,rulebased", "--hands", "1", "--seed", "26",
                                     "--no-log"),
                          env=env, capture_output=True, text=True, timeout=300,
                          stdin=subprocess.DEVNULL)
    assert done.returncode == 0, done.stderr
    got = json.loads(seen.read_text())
    assert not set(SECRETS) & set(got)
    assert got["MY_BOT_HOME"] == USERS["MY_BOT_HOME"]


def test_a_secret_the_user_passes_by_name_reaches_the_outside_program(tmp_path: Path) -> None:
    seen = _arena_with_env_bot(tmp_path, MJBOT_PASS_SECRETS="MJBOT_TENHOU_ID")
    assert seen["MJBOT_TENHOU_ID"] == ID
    assert "MJBOT_STATUS_TOKEN" not in seen


PRINT_ENV = [sys.executable, "-c", "import json; print(json.dumps(dict("
             "e.split('=', 1) for e in open('/proc/self/environ', 'rb').read().decode()"
             ".split(chr(0)) if '=' in e)))"]


def test_a_serve_configs_secret_names_are_kept_from_outside_programs(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The variables a loaded serve config names as id_env and token_env (any name the user
    chose) are secrets too: an outside program does not get them."""
    monkeypatch.setenv("MY_TENHOU_LOGIN", ID)
    monkeypatch.setenv("MY_STATUS_KEY", TOKEN)
    config = loads("[status]\ntoken_env = 'MY_STATUS_KEY'\n"
                   "[sessions.t]\nkind = 'tenhou'\nid_env = 'MY_TENHOU_LOGIN'\n")
    assert config.sessions[0].secret == ID and config.status.token == TOKEN
    proc = LineProcess(PRINT_ENV)
    try:
        line = proc.read_line(60)
    finally:
        proc.close()
    assert line is not None
    seen = json.loads(line)
    assert "MY_TENHOU_LOGIN" not in seen and "MY_STATUS_KEY" not in seen
    assert os.environ["MY_TENHOU_LOGIN"] == ID  # ours still: a reload reads it again


def test_the_secret_names() -> None:
    """One place says which names are secrets: the known ones, MJBOT_ names that look like
    one, and declared ones; a user's own look-alike outside MJBOT_ is theirs."""
    assert secret_env.is_secret("MJBOT_TENHOU_ID") and secret_env.is_secret("MJBOT_SERVE2_ID")
    assert not secret_env.is_secret("MJBOT_MC") and not secret_env.is_secret("GITHUB_TOKEN")
    assert not secret_env.is_secret("MJBOT_PASS_SECRETS")
    secret_env.declare(["SOME_LOGIN_FOR_THE_TEST"])
    assert secret_env.is_secret("SOME_LOGIN_FOR_THE_TEST")


def test_the_browser_view_opens_gets_no_secret(tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """``mjbot view --open`` starts the user's browser (an outside program) with no secret."""
    from tests.test_serve_viewer import _view_with_browser

    for key, value in {**SECRETS, **USERS}.items():
        monkeypatch.setenv(key, value)
    seen = tmp_path / "env.json"
    browser = tmp_path / "browser.py"
    browser.write_text(f"{PRINT_ENV[2]}\n")
    err, status = _view_with_browser(
        tmp_path, f"sh -c '{sys.executable} {browser} > {seen}' %s",
        lambda _: seen.exists() and seen.stat().st_size > 0)
    assert status == 0, err
    got = json.loads(seen.read_text())
    assert not set(SECRETS) & set(got)
    assert got["MY_BOT_HOME"] == USERS["MY_BOT_HOME"]


def test_the_viewers_reading_child_gets_no_secret(tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    for key, value in SECRETS.items():
        monkeypatch.setenv(key, value)
    monkeypatch.setenv("MJBOT_LOG_DIR", str(tmp_path))
    reader = ChildReader()
    try:
        with pytest.raises(OSError):  # a read starts the child
            reader.read(str(tmp_path / "gone.mjlog.msgpack"))
        assert reader.pid is not None
        seen = environ_of(reader.pid)
    finally:
        reader.close()
    assert not set(SECRETS) & set(seen)
    assert seen["MJBOT_LOG_DIR"] == str(tmp_path)  # an MJBOT_ setting it may read stays
    assert seen["PYTHONPATH"].split(os.pathsep)[0] == str(Path(__file__).resolve().parents[1])


async def test_serves_practice_worker_gets_no_secret(tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """mjbot serve holds the status token (and a Tenhou ID for its Tenhou sessions): its
    practice worker process, which reads neither, has neither."""
    for key, value in SECRETS.items():
        monkeypatch.setenv(key, value)
    config = loads("[sessions.drill]\nkind = 'local'\nvariant = 'mass'\npause = 0.05\n")
    assert config.status.token == TOKEN
    sup = Supervisor(config, log_dir=str(tmp_path))
    try:
        sup.start()
        await until(lambda: practice_pids("drill", tmp_path), timeout=60.0)
        (pid,) = practice_pids("drill", tmp_path)
        seen = environ_of(pid)
    finally:
        await sup.stop(10)
    assert not set(SECRETS) & set(seen)


def test_the_botzone_judges_bots_get_no_secret(tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """``mjbot botzone-judge`` runs each bot (ours, or a user's) with no secret of ours."""
    from adapter.fakes.botzone_judge import BotProcess

    for key, value in {**SECRETS, **USERS}.items():
        monkeypatch.setenv(key, value)
    seen = tmp_path / "env.json"
    bot = tmp_path / "bot.py"
    bot.write_text(BOTZONE_ENV_BOT)
    judged = BotProcess(0, "simple", (sys.executable, str(bot), str(seen)), 30.0, 30.0)
    judged.requests.append("0 0 0")
    assert judged._one_shot() == "PASS"
    got = json.loads(seen.read_text())
    assert not set(SECRETS) & set(got)
    assert got["MY_BOT_HOME"] == USERS["MY_BOT_HOME"]


def test_the_ntpu_servers_clients_get_no_secret(tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """``mjbot ntpu-server`` starts its four clients (ours) with no secret of ours."""
    from adapter.fakes.ntpu_server import run_match

    for key, value in SECRETS.items():
        monkeypatch.setenv(key, value)
    seen = tmp_path / "env.json"
    client = tmp_path / "client.py"  # writes its environment and leaves: each seat dropped
    client.write_text(f"{PRINT_ENV[2]}\n")
    result = run_match(1, ["rulebased"] * 4, transport="stdio", write_log=False,
                       command=("sh", "-c", f"{sys.executable} {client} > {seen}", "client"))
    assert result.exit_codes == [0, 0, 0, 0]
    got = json.loads(seen.read_text())
    assert not set(SECRETS) & set(got)


def test_an_nn_iterate_phase_gets_no_secret(tmp_path: Path,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """``mjbot nn iterate`` runs each phase as a child ``mjbot``: without the secrets. Seen
    through a bot at the phase's arena, which is passed the ID by name: it gets what the
    phase had, and the phase had none."""
    from adapter.nn_iterate import _mjbot

    for key, value in {**SECRETS, "MJBOT_PASS_SECRETS": "MJBOT_TENHOU_ID"}.items():
        monkeypatch.setenv(key, value)
    bot = tmp_path / "bot.py"
    bot.write_text(ENV_BOT)
    seen = tmp_path / "env.json"
    _mjbot("selection", ["--log-level", "error", "arena"],
           ["--policies", f"mjai:{sys.executable} {bot} {seen},rulebased,rulebased,rulebased",
            "--hands", "1", "--no-log"])
    got = json.loads(seen.read_text())
    assert got["MJBOT_PASS_SECRETS"] == "MJBOT_TENHOU_ID"  # the phase had the setting
    assert not set(SECRETS) & set(got)


# A session that starts a thinking worker: what the worker and its fork server had
_WORKER = """
import asyncio, json, os, sys
from adapter.thinking.worker_process import PolicyWorker
from brain.policies import get_policy

def environ_of(pid):
    raw = open(f"/proc/{pid}/environ", "rb").read().decode()
    return dict(e.split("=", 1) for e in raw.split(chr(0)) if "=" in e)

async def main():
    worker = PolicyWorker(get_policy("rulebased"), start_method=sys.argv[1])
    await worker.start()
    assert await worker.ready(None)
    pid = worker.process.pid
    server = int(open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()[1])
    print(json.dumps({"worker": environ_of(pid), "server": environ_of(server),
                      "server_pid": server, "own": os.getpid(), "ours": dict(os.environ)}))
    worker.kill()

asyncio.run(main())
"""


@pytest.mark.parametrize("method", [m for m in ("forkserver", "spawn")
                                    if m in __import__("multiprocessing")
                                    .get_all_start_methods()])
def test_a_thinking_worker_and_its_fork_server_get_no_secret(method: str) -> None:
    """A fresh session (its own fork server) with the secrets in its environment: the worker
    it starts, and the fork server that forks it, hold none; the session itself still has
    them (it reads the ID there) once the start is done."""
    done = subprocess.run(own_python("-c", _WORKER, method),
                          env={**os.environ, **SECRETS}, capture_output=True, text=True,
                          timeout=300, stdin=subprocess.DEVNULL)
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout)
    assert not set(SECRETS) & set(seen["worker"]), method
    if method == "forkserver":
        assert seen["server_pid"] != seen["own"]
        assert not set(SECRETS) & set(seen["server"])
    assert {k: seen["ours"][k] for k in SECRETS} == SECRETS


def test_git_asked_for_the_build_version_gets_no_secret(tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """Every command that writes a game log (serve's sessions, arena, the Botzone judge's
    bots) runs ``git`` for the build's version (replay/version.py): it got the Tenhou ID and
    the status token, and git runs the user's own programs (hooks, core.fsmonitor)."""
    from replay import version

    seen = tmp_path / "env.json"
    git = tmp_path / "bin" / "git"  # the git found first on PATH: writes what it was given
    git.parent.mkdir()
    git.write_text(f"#!/bin/sh\nexec {sys.executable} -c \"{PRINT_ENV[2]}\" > {seen}\n")
    git.chmod(0o755)
    for key, value in {**SECRETS, **USERS}.items():
        monkeypatch.setenv(key, value)
    monkeypatch.setenv("PATH", f"{git.parent}{os.pathsep}{os.environ['PATH']}")
    version._git("status", "--porcelain")
    got = json.loads(seen.read_text())
    assert not set(SECRETS) & set(got), sorted(set(SECRETS) & set(got))
    assert got["MY_BOT_HOME"] == USERS["MY_BOT_HOME"]  # the user's own variables stay


# Commands that think start the fork server before their loop; then a session with threads
# running starts workers: every change of the C environment, and the threads running then
_UNDER_THREADS = ENV_SPY + """
import asyncio, json, os, sys, threading
from adapter.thinking import worker_process
from adapter.thinking.worker_process import PolicyWorker
from brain.policies import get_policy


if hasattr(worker_process, "start_server"):
    worker_process.start_server()

def environ_of(pid):
    raw = open(f"/proc/{pid}/environ", "rb").read().decode()
    return dict(e.split("=", 1) for e in raw.split(chr(0)) if "=" in e)

async def main():
    stop = threading.Event()
    poller = threading.Thread(target=lambda: stop.wait(), daemon=True)  # the viewer's pool
    poller.start()
    seen = []
    for _ in range(2):  # a worker and its replacement
        worker = PolicyWorker(get_policy("rulebased"))
        await worker.start()
        assert await worker.ready(None)
        seen.append(environ_of(worker.process.pid))
        worker.kill()
    stop.set()
    print(json.dumps({"changes": changes, "workers": seen}))

asyncio.run(main())
"""


def test_the_environment_never_changes_once_a_second_thread_runs() -> None:
    """The fork server started before the loop (as the commands that think do) without the
    secrets: the workers a session starts later, with other threads running, need no change
    of the environment (glibc's setenv/unsetenv race a getenv in another thread), and have
    no secret."""
    done = subprocess.run(own_python("-c", _UNDER_THREADS),
                          env={**os.environ, **SECRETS}, capture_output=True, text=True,
                          timeout=300, stdin=subprocess.DEVNULL)
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout)
    assert [c for c in seen["changes"] if c[2] > 1] == []
    for worker in seen["workers"]:
        assert not set(SECRETS) & set(worker)


_COMMAND = ENV_SPY + """
import json, os, sys, threading
from multiprocessing import forkserver
from adapter.cli import main
code = main(sys.argv[1:])
pid = forkserver._forkserver._forkserver_pid
raw = open(f"/proc/{pid}/environ", "rb").read().decode() if pid else ""
print(json.dumps({"code": code, "changes": changes, "server": pid,
                  "server_env": [e.split("=", 1)[0] for e in raw.split(chr(0)) if "=" in e]}))
"""


@pytest.mark.skipif("forkserver" not in __import__("multiprocessing").get_all_start_methods(),
                    reason="no fork server here")
def test_a_command_that_thinks_starts_its_fork_server_before_its_loop() -> None:
    """``mjbot ntpu --policy mc`` (as serve, tenhou and mjai) starts the fork server before
    its event loop, without the secrets: it never changes the environment with a second
    thread running."""
    done = subprocess.run(own_python("-c", _COMMAND, "ntpu", "--stdio", "--policy", "mc",
                                     "--no-log"),
                          env={**os.environ, **SECRETS}, capture_output=True, text=True,
                          timeout=300, stdin=subprocess.DEVNULL)
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    assert seen["code"] == 0 and seen["server"]
    assert not set(SECRETS) & set(seen["server_env"])
    assert [c for c in seen["changes"] if c[2] > 1] == []


_LATE = """
import asyncio, threading
from adapter.thinking.worker_process import PolicyWorker
from brain.policies import get_policy

async def main():
    stop = threading.Event()
    threading.Thread(target=stop.wait, daemon=True).start()  # a thread before any start
    for _ in range(2):
        worker = PolicyWorker(get_policy("rulebased"))
        await worker.start()
        assert await worker.ready(None)
        worker.kill()
    stop.set()

asyncio.run(main())
"""


@pytest.mark.parametrize("secrets", [True, False])
def test_a_fork_server_started_under_threads_is_said_once_where_it_holds_secrets(
        secrets: bool) -> None:
    """No fork server started before the loop: the one a session starts with a thread
    running takes the environment as it is (never changed then). Said once where that
    holds a secret; nothing is said where it holds none."""
    env = {k: v for k, v in os.environ.items() if k not in SECRETS}
    done = subprocess.run(own_python("-c", _LATE), env={**env, **(SECRETS if secrets else {})},
                          capture_output=True, text=True, timeout=300,
                          stdin=subprocess.DEVNULL)
    assert done.returncode == 0, done.stderr
    said = (done.stdout + done.stderr).count("start with mjbot's secrets in their environment")
    assert said == (1 if secrets else 0), done.stderr


_LEFT_OUT = """
import json, os, threading
from adapter import secret_env
from adapter.platforms.tenhou import TenhouSettings, load_config

stop = threading.Event()
with secret_env.withheld() as clean:  # a start that leaves threads running (ray.init)
    threading.Thread(target=stop.wait, daemon=True).start()
print(json.dumps({"clean": clean, "in_os_environ": "MJBOT_TENHOU_ID" in os.environ,
                  "name": load_config(None, TenhouSettings()).name}))
stop.set()
"""


def test_secrets_left_out_under_threads_are_still_read() -> None:
    """A start under withheld() that leaves threads running (``--ray local``'s) leaves the
    secrets out of os.environ for good, never put back under those threads: the Tenhou
    ID is still read where mjbot reads it (secret_env.environ)."""
    done = subprocess.run(own_python("-c", _LEFT_OUT), env={**os.environ, **SECRETS},
                          capture_output=True, text=True, timeout=120,
                          stdin=subprocess.DEVNULL)
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    assert seen == {"clean": True, "in_os_environ": False, "name": SECRETS["MJBOT_TENHOU_ID"]}


_SERVE = """
import json, os, signal, sys
from multiprocessing import forkserver
from adapter.cli import main
# stopped as a user stops it, once its loop runs (a timer thread would be a thread before it)
signal.signal(signal.SIGALRM, lambda *_: os.kill(os.getpid(), signal.SIGTERM))
signal.setitimer(signal.ITIMER_REAL, 3.0)
code = main(sys.argv[1:])
server = getattr(forkserver._forkserver, "_forkserver_pid", None)
raw = open(f"/proc/{server}/environ", "rb").read().decode() if server else ""
print(json.dumps({"code": code, "server": server,
                  "server_env": [e.split("=", 1)[0] for e in raw.split(chr(0)) if "=" in e]}))
"""


@pytest.mark.skipif("forkserver" not in __import__("multiprocessing").get_all_start_methods(),
                    reason="no fork server here")
def test_serve_starts_its_fork_server_before_its_loop_where_no_session_thinks_yet(
        tmp_path: Path) -> None:
    """A serve whose sessions think in no worker at start (rulebased) may be reloaded into
    one that does (mc): its fork server is started before the loop all the same, without
    the secrets; started at the reload, under the loop's threads, it held them."""
    config = tmp_path / "serve.toml"
    config.write_text('[sessions.a]\nkind = "mjai"\nserver = "127.0.0.1:9"\n'
                      'policy = "rulebased"\n')
    done = subprocess.run(own_python("-c", _SERVE, "serve", str(config), "--status",
                                     "127.0.0.1:0", "--log-dir", str(tmp_path / "logs")),
                          env={**os.environ, **SECRETS}, capture_output=True, text=True,
                          timeout=120, stdin=subprocess.DEVNULL)
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    assert seen["code"] == 0 and seen["server"], done.stderr
    assert not set(SECRETS) & set(seen["server_env"])
