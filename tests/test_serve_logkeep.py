"""The serve process's log upkeep (adapter/serve/logkeep.py) on real files: finished logs
compressed in place, a game in progress never touched, the budget and the age limit taking the
oldest practice logs first and platform logs only where allowed, each removal logged and
counted, the low-disk warning; and a real `mjbot serve` that compresses its practice logs and
takes a changed [logs] on SIGHUP."""

from __future__ import annotations

import gzip
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import msgpack
import pytest
from structlog.testing import capture_logs

from adapter.serve.config import ConfigError, LogUpkeep, loads
from adapter.serve.logkeep import MB, LogKeeper
from adapter.serve.metrics import Metrics
from adapter.serve.runners import Outcome, RunContext
from adapter.serve.supervisor import Supervisor
from replay import logzip
from replay.log import GZ_SUFFIX, SUFFIX, Footer, GameLogWriter, Header, is_log_name, read_log
from tests.in_process import mjbot_here
from tests.log_samples import sample_hand, write_steps
from tests.serve_helpers import PYTHON_ENV, ROOT, ServeProcess, mjbot
from tests.viewer_fixtures import platform_game, practice_game

HOUR = 3600.0
DAY = 86400.0
OFF = LogUpkeep(compress=False, low_disk_mb=0)  # nothing done unless a test says so


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[Path]]:
    """Real logs: four practice games (the local table) and two platform games."""
    root = tmp_path_factory.mktemp("made") / "logs"
    practice = [practice_game(root / "practice", "riichi", game=n) for n in range(4)]
    platform = [platform_game(root / "ladder" / "tenhou" / "2026-11-20" / f"g{n}{SUFFIX}")
                for n in range(2)]
    return {"practice": practice, "platform": platform}


@pytest.fixture
def logs(made: dict[str, list[Path]], tmp_path: Path) -> Iterator[dict[str, Any]]:
    """A copy of the folder, every log made old (hours apart: practice 0 oldest), and a game
    in progress in the practice folder (its writer open, no footer, last written an hour
    ago)."""
    source = made["practice"][0].parents[3]
    root = tmp_path / "logs"
    shutil.copytree(source, root)
    now = time.time()
    practice = [root / p.relative_to(source) for p in made["practice"]]
    platform = [root / p.relative_to(source) for p in made["platform"]]
    for n, path in enumerate(practice):
        os.utime(path, (now - (20 - n) * HOUR, now - (20 - n) * HOUR))
    for n, path in enumerate(platform):
        os.utime(path, (now - (30 - n) * HOUR, now - (30 - n) * HOUR))  # older still
    live = practice[0].with_name("235959-practice-live" + SUFFIX)
    writer = GameLogWriter(live, Header("local", "riichi", game_id="live"))
    write_steps(writer, sample_hand(0))
    os.utime(live, (now - HOUR, now - HOUR))
    yield {"root": root, "practice": practice, "platform": platform, "live": live,
           "writer": writer}
    writer.close()


def keeper(root: Path, **settings: Any) -> LogKeeper:
    return LogKeeper(root, replace(OFF, **settings), Metrics())


def gz(path: Path) -> Path:
    return logzip.compressed_name(path)


def disk(paths: list[Path]) -> int:
    return sum(p.stat().st_blocks * 512 for p in paths)


def test_finished_logs_are_compressed_and_a_game_in_progress_is_not(
        logs: dict[str, Any]) -> None:
    finished = logs["practice"] + logs["platform"]
    data = {p: p.read_bytes() for p in finished}
    live, live_bytes = logs["live"], logs["live"].read_bytes()
    k = keeper(logs["root"], compress=True, compress_after=60)
    done = k.run_pass()
    assert done["compressed"] == len(finished) == 6
    for path in finished:
        assert not path.exists() and logzip.read_bytes(gz(path)) == data[path]
    assert live.exists() and not gz(live).exists() and live.read_bytes() == live_bytes
    assert k.metrics.get("mjbot_logs_compressed_total") == 6
    assert k.metrics.get("mjbot_logs_files") == 7
    # the game goes on and ends: its log is compressed once it has not been written for
    # compress_after
    writer = logs["writer"]
    write_steps(writer, sample_hand(1))
    writer.close(Footer({"hands": 2}, (25000, 25000, 25000, 25000)))
    assert k.run_pass()["compressed"] == 0  # just written
    now = time.time()
    os.utime(live, (now - 120, now - 120))
    assert k.run_pass()["compressed"] == 1
    assert read_log(gz(live)).footer is not None and not live.exists()


def test_young_logs_and_compress_false_are_left(logs: dict[str, Any]) -> None:
    paths = logs["practice"] + logs["platform"]
    assert keeper(logs["root"], compress=True, compress_after=40 * HOUR).run_pass()[
        "compressed"] == 0
    assert keeper(logs["root"], compress=False, compress_after=0).run_pass()["compressed"] == 0
    assert all(p.exists() for p in paths) and not list(logs["root"].rglob(f"*{GZ_SUFFIX}"))


def test_the_budget_removes_the_oldest_practice_logs_first(logs: dict[str, Any]) -> None:
    practice, platform, live = logs["practice"], logs["platform"], logs["live"]
    # room for the platform logs, the game in play and the two newest practice games
    budget = disk([*platform, live, *practice[2:]]) + 1
    k = keeper(logs["root"], max_disk_mb=budget / MB)
    with capture_logs() as captured:
        done = k.run_pass()
    assert done["removed"] == 2
    assert [p.exists() for p in practice] == [False, False, True, True]  # oldest first
    assert all(p.exists() for p in platform) and live.exists()  # older, but not practice
    removed = [e for e in captured if e["event"] == "serve: game log removed"]
    assert [e["log"] for e in removed] == [str(p.relative_to(logs["root"])) for p in
                                           practice[:2]]
    assert {(e["reason"], e["kind"]) for e in removed} == {("budget", "practice")}
    assert k.metrics.get("mjbot_logs_removed_total", kind="practice", reason="budget") == 2
    assert k.status()["removed"] == {"practice budget": 2}


def test_the_budget_never_removes_a_game_in_progress_or_platform_logs_unless_told(
        logs: dict[str, Any]) -> None:
    practice, platform, live = logs["practice"], logs["platform"], logs["live"]
    with capture_logs() as captured:
        keeper(logs["root"], max_disk_mb=0.001).run_pass()
    assert not any(p.exists() for p in practice)
    assert all(p.exists() for p in platform) and live.exists()
    assert any(e["event"].startswith("serve: the game logs are over their budget")
               for e in captured)
    # the operator allows platform logs: they go after every practice log, oldest first
    k = keeper(logs["root"], max_disk_mb=(disk([live, platform[1]]) + 1) / MB,
               remove_platform_logs=True)
    k.run_pass()
    assert [p.exists() for p in platform] == [False, True] and live.exists()
    assert k.metrics.get("mjbot_logs_removed_total", kind="platform", reason="budget") == 1


def test_logs_over_budget_with_nothing_to_remove_are_said_once_an_hour_and_on_health(
        logs: dict[str, Any]) -> None:
    """The platform logs alone over ``max_disk_mb``: every pass (each minute by default) logged
    "over their budget with nothing more to remove", 1,440 lines a day, and /health said
    nothing. Now it is said as it begins, again after an hour, and once as it ends; /health's
    log upkeep shows it while it lasts."""
    now = [time.time()]
    k = LogKeeper(logs["root"], replace(OFF, max_disk_mb=0.001), Metrics(),
                  clock=lambda: now[0])
    started = now[0]
    with capture_logs() as captured:
        for _ in range(5):  # five passes a minute apart
            k.run_pass()
            now[0] += 60
        over = k.status()["over_budget"]
        now[0] = started + HOUR + 1
        k.run_pass()
        k.run_pass()
        k.configure(replace(OFF, max_disk_mb=10_000.0))
        k.run_pass()
        k.run_pass()
    said = [e["event"] for e in captured if "budget" in e["event"]]
    assert said == ["serve: the game logs are over their budget with nothing more to remove"] * 2 \
        + ["serve: the game logs are within their budget again"], said
    assert over is not None and over["since"] == round(started, 1), over
    assert over["max_disk_mb"] == 0.001 and over["bytes"] > 0.001 * MB
    assert k.status()["over_budget"] is None
    assert all(p.exists() for p in logs["platform"])  # never removed unless told


def test_compressed_logs_fit_a_budget_the_plain_ones_did_not(logs: dict[str, Any]) -> None:
    everything = disk(logs["practice"] + logs["platform"] + [logs["live"]])
    k = keeper(logs["root"], compress=True, compress_after=60, max_disk_mb=everything / 2 / MB)
    done = k.run_pass()
    assert done["compressed"] == 6 and done["removed"] == 0  # compressed first: nothing lost
    assert k.metrics.get("mjbot_logs_bytes") < everything / 2


def test_a_pair_left_by_a_cut_compression_counts_once_in_the_budget(
        logs: dict[str, Any]) -> None:
    """A compression cut between its rename and its removal leaves X and X.gz, the same
    bytes. The next pass removes X and keeps X.gz, which it counted twice (once compressed
    from X, once as walked), so a budget the logs fit removed the oldest practice log."""
    root, oldest = logs["root"], logs["practice"][0]
    data, st = oldest.read_bytes(), oldest.stat()
    logzip.compress(oldest)
    oldest.write_bytes(data)  # the original, as the cut left it beside its copy
    os.utime(oldest, ns=(st.st_atime_ns, st.st_mtime_ns))
    # what the logs take once every finished one is compressed, measured on a copy
    twin = root.parent / "twin"
    shutil.copytree(root, twin)
    for path in twin.rglob(f"*{SUFFIX}"):
        if "live" not in path.name:
            logzip.compress(path)
    after = disk([p for p in twin.rglob("*") if is_log_name(p.name)])
    k = keeper(root, compress=True, compress_after=60, max_disk_mb=(after + 1) / MB)
    done = k.run_pass()
    assert done["removed"] == 0 and all(gz(p).exists() for p in logs["practice"])
    assert not oldest.exists() and logzip.read_bytes(gz(oldest)) == data
    assert k.metrics.get("mjbot_logs_files") == 7  # six compressed and the game in play
    assert k.metrics.get("mjbot_logs_bytes") == after


def test_keep_days_removes_old_practice_logs_only(logs: dict[str, Any]) -> None:
    practice, platform = logs["practice"], logs["platform"]
    old = time.time() - 10 * DAY
    for path in (practice[0], platform[0]):
        os.utime(path, (old, old))
    k = keeper(logs["root"], keep_days=7)
    assert k.run_pass()["removed"] == 1
    assert not practice[0].exists() and all(p.exists() for p in practice[1:])
    assert platform[0].exists()
    assert k.metrics.get("mjbot_logs_removed_total", kind="practice", reason="age") == 1
    keeper(logs["root"], keep_days=7, remove_platform_logs=True).run_pass()
    assert not platform[0].exists() and platform[1].exists()


WRITER = """
import sys
from replay.log import Footer, GameLogWriter, Header
from tests.log_samples import sample_hand, write_steps
writer = GameLogWriter(sys.argv[1], Header("local", "riichi", game_id="in-play"))
write_steps(writer, sample_hand(0))
print("playing", flush=True)
sys.stdin.readline()  # the game goes on when the test says
writer.close(Footer({"hands": 1}, (25000, 25000, 25000, 25000)))
"""


def game_in_play(path: Path) -> subprocess.Popen[str]:
    """A real process with a game's log open at ``path`` (no footer yet), as a practice
    worker has; it ends the game (footer, exit 0) on a line on its stdin."""
    proc = subprocess.Popen([sys.executable, "-c", WRITER, str(path)], cwd=ROOT,
                            env=PYTHON_ENV, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            text=True)
    assert proc.stdout is not None and proc.stdout.readline() == "playing\n"
    return proc


def age(path: Path, seconds: float) -> None:
    old = time.time() - seconds
    os.utime(path, (old, old))


def test_a_log_left_without_footer_by_a_crash_a_day_ago_may_go(logs: dict[str, Any]) -> None:
    live = logs["live"].with_name("235959-practice-crashed" + SUFFIX)
    proc = game_in_play(live)
    proc.kill()  # the worker dies in the game: the OS closes its log, no footer
    proc.wait(10)
    age(live, 2 * DAY)
    keeper(logs["root"], max_disk_mb=0.001).run_pass()
    assert not live.exists()  # untouched for a day, no writer: no game in progress
    assert not gz(live).exists()  # and never compressed: it has no footer


OUT_OF_DESCRIPTORS = """
import errno, json, os, resource, sys, time
from adapter.serve.config import LogUpkeep
from adapter.serve.logkeep import LogKeeper
from adapter.serve.metrics import Metrics
from replay.locking import being_written

soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
resource.setrlimit(resource.RLIMIT_NOFILE, (min(256, soft), hard))
keeper = LogKeeper(sys.argv[1], LogUpkeep(compress=False, low_disk_mb=0, keep_days=1),
                   Metrics())
now = time.time()
files = list(keeper._walk(now))  # the folder listed while descriptors are left
held = []
try:  # then every open fails: EMFILE
    while True:
        held.append(os.open(os.devnull, os.O_RDONLY))
except OSError as exc:
    assert exc.errno == errno.EMFILE, exc
told = []
said = {"removable": [keeper._may_remove(f, now) for f in files],
        "held": being_written(files[0].path, told.append)}
for fd in held:
    os.close(fd)
said.update(gone=being_written(files[0].path + ".none", told.append),  # descriptors again
            told=[e.errno == errno.EMFILE for e in told], errors=keeper.errors,
            last_error=keeper.last_error["error"] if keeper.last_error else None)
print(json.dumps(said))
"""


def test_a_log_whose_writer_cannot_be_checked_is_taken_as_held(tmp_path: Path) -> None:
    """Out of file descriptors, the check whether a writer holds a log could not open it
    and answered "not held": a log of a game in play untouched for a day (its worker
    suspended) was removed under it. Where the check cannot be made the log is now taken as
    held, the safe side, and the pass says so as an error (logged, on /health); a file gone
    is still no writer's (out of descriptors, Linux says EMFILE before it looks for the
    file: held too, and there is nothing to remove). Run in a child process, whose
    descriptors run out for real."""
    crashed = tmp_path / "practice" / "local" / "2026-01-01" / ("235959-practice" + SUFFIX)
    crashed.parent.mkdir(parents=True)
    proc = game_in_play(crashed)
    proc.kill()
    proc.wait(10)
    age(crashed, 3 * DAY)  # untouched for days, no footer: removable were it checked
    r = subprocess.run([sys.executable, "-c", OUT_OF_DESCRIPTORS, str(tmp_path)], cwd=ROOT,
                       env=PYTHON_ENV, capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    said = json.loads(r.stdout.splitlines()[-1])
    assert said["removable"] == [False] and said["held"] is True, said
    assert said["gone"] is False and said["told"] == [True], said
    assert said["errors"] == 1, said
    assert said["last_error"] == ("check practice/local/2026-01-01/235959-practice"
                                  f"{SUFFIX}: Too many open files"), said
    assert "serve: log upkeep failed" in r.stdout and "action=check" in r.stdout, r.stdout
    assert crashed.exists()


def test_a_game_in_play_is_never_removed_or_compressed_however_long_it_waits(
        logs: dict[str, Any]) -> None:
    """A game in play untouched for a day (its worker suspended: SIGSTOP, a machine asleep)
    looked like one cut by a crash, and the budget and keep_days removed its log under it.
    Nor may a log whose last frame reads as a footer (a platform's raw message that ends in
    one) be compressed while its game goes on: the frames after it went to a file removed. A
    log its writer holds open is now left, whatever its age or its last bytes."""
    suspended = logs["live"].with_name("235959-practice-suspended" + SUFFIX)
    proc = game_in_play(suspended)
    try:
        proc.send_signal(signal.SIGSTOP)
        age(suspended, 3 * DAY)
        k = keeper(logs["root"], max_disk_mb=0.001, keep_days=1, compress=True,
                   compress_after=0)
        k.run_pass()
        assert suspended.exists() and not gz(suspended).exists()
        # in this process, as a platform session's writer is: a raw frame that ends in a
        # footer's bytes, the game going on
        writer = logs["writer"]
        writer.rx(msgpack.packb({"k": "footer", "result": {"hands": 1}}))
        age(logs["live"], 3 * DAY)
        k.run_pass()
        assert logs["live"].exists() and not gz(logs["live"]).exists()
        write_steps(writer, sample_hand(1))
        writer.close(Footer({"hands": 2}, (25000, 25000, 25000, 25000)))
        assert read_log(logs["live"]).footer is not None  # every frame in the file
        # the game ends: its log goes like any other
        proc.send_signal(signal.SIGCONT)
        assert proc.stdin is not None
        proc.stdin.write("end\n")
        proc.stdin.flush()
        assert proc.wait(30) == 0
        age(suspended, 3 * DAY)
        k.run_pass()
        assert not suspended.exists() and not gz(suspended).exists()
    finally:
        proc.send_signal(signal.SIGCONT)
        proc.kill()
        proc.wait(10)


def test_a_compression_cut_by_a_crash_leaves_nothing_behind(logs: dict[str, Any]) -> None:
    path = logs["practice"][0]
    tmp = path.with_name(f".{path.name}.gz.tmp")
    tmp.write_bytes(b"half a copy")
    old = time.time() - 2 * HOUR
    os.utime(tmp, (old, old))
    keeper(logs["root"], compress=True, compress_after=60).run_pass()
    assert not tmp.exists() and gz(path).exists()


def test_low_disk_is_warned_on_health_and_metrics(logs: dict[str, Any]) -> None:
    free = shutil.disk_usage(logs["root"]).free
    k = keeper(logs["root"], low_disk_mb=(free + 10 * 2**30) / MB)  # more than is free
    with capture_logs() as captured:
        k.run_pass()
    warning = k.low_disk()
    assert warning is not None and "low disk" in warning
    assert k.metrics.get("mjbot_log_disk_low") == 1
    assert k.metrics.get("mjbot_log_disk_free_bytes") > 0
    assert [e for e in captured if "low disk" in e["event"]]
    k.configure(replace(k.settings, low_disk_mb=1))
    assert k.low_disk() is None and k.metrics.get("mjbot_log_disk_low") == 0


def test_health_and_metrics_answer_while_the_disk_does_not(
        logs: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> None:
    """/health and /metrics run on the event loop; the free space they show is the pass's
    (in its thread), not a statvfs of their own: on a disk that does not answer (a hung
    network mount, where statvfs blocks) the status page still answers."""
    import threading

    k = keeper(logs["root"], low_disk_mb=1)
    k.run_pass()
    hung = threading.Event()
    real = shutil.disk_usage

    def disk_usage(path: Any) -> Any:
        hung.wait(30)  # the file system answers when the test ends
        return real(path)

    monkeypatch.setattr(shutil, "disk_usage", disk_usage)
    answered: list[Any] = []
    asked = threading.Thread(target=lambda: answered.extend(
        [k.status(), k.metrics.exposition()]), daemon=True)
    try:
        asked.start()
        asked.join(5)
        assert answered, "/health waited on the disk"
        assert answered[0]["disk_free"] > 0 and answered[0]["low_disk"] is None
        assert "mjbot_log_disk_free_bytes" in answered[1]
    finally:
        hung.set()
        asked.join(30)


def idle() -> Any:
    async def run(spec: Any, ctx: RunContext) -> Outcome:
        await ctx.stop.event.wait()
        return Outcome("stopped")
    return run


async def test_the_supervisor_runs_passes_reloads_and_degrades_on_low_disk(
        logs: dict[str, Any]) -> None:
    from tests.serve_helpers import until

    text = ('[logs]\ncompress_after = 60\ncheck_every = 3600\nlow_disk_mb = 0\n'
            '[sessions.p]\nkind = "local"\n')  # "ok" until the test asks for more free disk
    sup = Supervisor(loads(text, environ={}), runners={"local": idle()},
                     log_dir=str(logs["root"]))
    sup.start()
    try:
        await until(lambda: sup.keeper.passes >= 1)
        assert sup.health()["logs"]["compressed"] == 6 and sup.health()["status"] == "ok"
        # a reload is applied at once, without waiting for check_every
        free = shutil.disk_usage(logs["root"]).free
        await sup.reload(loads(text.replace("low_disk_mb = 0", f"low_disk_mb = {free * 4 / MB}"),
                               environ={}))
        await until(lambda: sup.keeper.passes >= 2)
        health = sup.health()
        assert health["status"] == "degraded" and "low disk" in health["logs"]["low_disk"]
    finally:
        await sup.stop(2)
    assert sup.keeper._task is None


def test_the_config_reads_logs_and_refuses_mistakes_with_their_line() -> None:
    config = loads("[logs]\ncompress_after = 0\nmax_disk_mb = 2048\nkeep_days = 30\n"
                   "remove_platform_logs = true\nlow_disk_mb = 500\ncheck_every = 5\n",
                   environ={})
    assert config.logs == LogUpkeep(True, 0.0, 2048.0, 30.0, True, 500.0, 5.0)
    assert loads("", environ={}).logs == LogUpkeep()  # the default removes nothing
    assert LogUpkeep().max_disk_mb == 0 and LogUpkeep().keep_days == 0
    with pytest.raises(ConfigError, match=r"line 3: logs.max_disk_mb must be at least 0"):
        loads("[logs]\ncompress = true\nmax_disk_mb = -1\n", environ={})
    with pytest.raises(ConfigError, match=r"line 2: unknown key 'max_disk'"):
        loads("[logs]\nmax_disk = 5\n", environ={})


def test_a_real_serve_compresses_its_practice_logs_and_reloads_logs(tmp_path: Path) -> None:
    config = tmp_path / "serve.toml"
    body = ('[logs]\ncompress_after = 0\ncheck_every = 0.2\n'
            '[sessions.practice]\nkind = "local"\nvariant = "mcr"\nhands = 1\npause = 0\n'
            'opponents = ["greedy", "greedy", "greedy"]\npolicy = "greedy"\n')
    config.write_text(body)
    assert mjbot("serve", "--check", str(config)).returncode == 0
    log_dir = tmp_path / "logs"
    serve = ServeProcess(config, log_dir)
    try:
        serve.wait_for(lambda e: e.get("event") == "serve: sessions started")

        def packed() -> list[Path]:
            return sorted(log_dir.rglob(f"*{GZ_SUFFIX}"))

        deadline = time.monotonic() + 120
        while len(packed()) < 3:
            assert time.monotonic() < deadline and serve.proc.poll() is None, \
                "".join(serve.raw[-20:])
            time.sleep(0.2)
        for path in packed():
            assert read_log(path).complete  # finished games only, every frame
        metrics = serve.get("/metrics")
        assert "mjbot_logs_compressed_total" in metrics
        health = serve.get("/health")
        assert health["logs"]["compressed"] >= 3 and health["logs"]["last_pass"]
        # SIGHUP: a budget of almost nothing; the practice logs go, the game in play stays
        config.write_text(body.replace("check_every", "max_disk_mb = 0.0001\ncheck_every"))
        serve.signal(signal.SIGHUP)
        serve.wait_for(lambda e: e.get("event") == "serve: game log removed")
        serve.wait_for(lambda e: e.get("event") == "serve: log upkeep settings changed")
        serve.signal(signal.SIGTERM)
        assert serve.proc.wait(60) == 0
    finally:
        serve.close()
    assert "Traceback" not in "".join(serve.raw)
    removed = [e for e in serve.lines if e.get("event") == "serve: game log removed"]
    assert removed and all(e["kind"] == "practice" and e["reason"] == "budget"
                           for e in removed)
    for path in (p for p in log_dir.rglob("*") if is_log_name(p.name)):
        assert read_log(path).header is not None  # what is left reads



def test_an_upkeep_error_shows_until_a_pass_succeeds_over_http(tmp_path: Path) -> None:
    """The dashboard's "log upkeep: ..." line stayed until the process was restarted, though
    every later pass went well. It now clears once a pass ends without an error; /health keeps
    that error and its time as ``last_failure``."""
    log_dir = tmp_path / "logs"
    path = platform_game(log_dir / "ladder" / "tenhou" / "2026-11-20" / f"g0{SUFFIX}")
    data = path.read_bytes()
    blocker = gz(path)
    blocker.write_bytes(gzip.compress(b"other bytes"))  # compress() refuses to replace it
    config = tmp_path / "serve.toml"
    config.write_text('[logs]\ncompress_after = 0\ncheck_every = 0.2\nlow_disk_mb = 0\n'
                      '[sessions.ladder]\nkind = "local"\nenabled = false\n')
    serve = ServeProcess(config, log_dir)
    try:
        failing = serve.until(lambda s: s["logs"]["last_error"] is not None)["logs"]
        assert "holds other bytes" in failing["last_error"]["error"]
        assert failing["last_failure"] == failing["last_error"]
        blocker.unlink()  # the operator moves it away: the next pass compresses the log
        status = serve.until(lambda s: s["logs"]["last_error"] is None)
        assert logzip.read_bytes(blocker) == data and not path.exists()
        health = serve.get("/health")
        assert health["logs"]["last_error"] is None and health["logs"]["errors"] >= 1
        assert "holds other bytes" in health["logs"]["last_failure"]["error"]
        assert health["logs"]["last_failure"]["at"] <= status["logs"]["last_pass"]["at"]
        serve.signal(signal.SIGTERM)
        assert serve.proc.wait(60) == 0
    finally:
        serve.close()
    assert "Traceback" not in "".join(serve.raw)


def test_the_bench_measures_real_logs(capsys: pytest.CaptureFixture[str],
                                      logs: dict[str, Any]) -> None:
    import json

    done = mjbot_here(capsys, "bench", "logkeep", "--games", "1", "--variant", "mcr",
                      "--walk", "25", "--quota", "30", "--json", "-")
    assert done.returncode == 0, done.stderr
    figures = json.loads(done.stdout)
    assert figures["logs"] == figures["compressed"] == 1 and figures["ratio"] > 3
    assert figures["walk"]["files"] == 25
    # the start-up's quota count over copies of the game just played (it ended today)
    quota = figures["quota"]
    assert quota["files"] == quota["counted"] == 30
    assert quota["loop_held_before_ms"] > 0 and quota["loop_held_now_ms"] > 0
    given = mjbot_here(capsys, "bench", "logkeep", str(logs["root"] / "ladder"), "--json", "-")
    assert json.loads(given.stdout)["logs"] == 2
    assert all(p.exists() for p in logs["platform"])  # measured on copies
    missing = mjbot_here(capsys, "bench", "logkeep", str(logs["root"] / "nowhere"))
    assert missing.returncode == 2 and "no such file or folder" in missing.stderr


def test_the_bench_sizes_only_the_logs_it_compressed(capsys: pytest.CaptureFixture[str],
                                                     logs: dict[str, Any]) -> None:
    """A folder with a log left without its footer (a game in play, or cut by a crash), as a
    live serve's folder has: the pass leaves it, but its bytes counted among the logs before
    and none after, so the ratio was made up (40.69:1 on 11 logs of which one was compressed,
    10.8:1 on the others alone). The size and the pass's cost are now of the logs compressed,
    and the logs left are said; a folder of logs none of which has its footer says so."""
    import gzip
    import json

    folder = logs["live"].parent
    finished = [p for p in folder.iterdir() if p != logs["live"]]
    assert len(finished) == 4
    before = sum(p.stat().st_size for p in finished)
    packed = sum(len(gzip.compress(p.read_bytes(), logzip.LEVEL)) for p in finished)
    done = mjbot_here(capsys, "bench", "logkeep", str(folder), "--json", "-")
    assert done.returncode == 0, done.stderr
    figures = json.loads(done.stdout)
    assert figures["logs"] == 5 and figures["compressed"] == 4 and figures["left"] == 1
    assert figures["bytes_per_log"] == round(before / 4)
    # the pass's gzip names the file in its header: a few bytes a log more than gzip.compress
    assert 0 < packed / 4 <= figures["gz_bytes_per_log"] <= packed / 4 + 100
    text = mjbot_here(capsys, "bench", "logkeep", str(folder))
    assert "1 without their footer" in text.stdout, text.stdout
    alone = folder.parent / "alone"
    alone.mkdir()
    shutil.copy2(logs["live"], alone)
    none = mjbot_here(capsys, "bench", "logkeep", str(alone))
    assert none.returncode == 0, none.stderr
    assert "none compressed: no log has its footer" in none.stdout, none.stdout


def test_the_bench_measures_a_folder_of_compressed_logs(capsys: pytest.CaptureFixture[str],
                                                        logs: dict[str, Any]) -> None:
    """A serve's log folder is mostly logs its upkeep compressed: the bench, given it, said
    'no game logs (*.mjlog.msgpack) in logs' (361 compressed practice logs). It measures them
    now on their bytes inflated again, the same figures as on the plain logs."""
    import json

    plain = logs["root"] / "ladder"
    packed = logs["root"].parent / "packed"
    shutil.copytree(plain, packed)
    for path in list(packed.rglob(f"*{SUFFIX}")):
        logzip.compress(path)
    assert not list(packed.rglob(f"*{SUFFIX}")) and len(list(packed.rglob(f"*{GZ_SUFFIX}"))) == 2
    runs = [mjbot_here(capsys, "bench", "logkeep", str(folder), "--json", "-")
            for folder in (plain, packed)]
    assert [r.returncode for r in runs] == [0, 0], runs[1].stderr
    figures = [json.loads(r.stdout) for r in runs]
    assert figures[1]["logs"] == figures[1]["compressed"] == 2
    assert figures[1]["bytes_per_log"] == figures[0]["bytes_per_log"]
    one = next(packed.rglob(f"*{GZ_SUFFIX}"))
    assert json.loads(mjbot_here(capsys, "bench", "logkeep", str(one), "--json", "-")
                      .stdout)["logs"] == 1
