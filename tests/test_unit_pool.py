"""The worker pool of arenas and self-play (adapter/local/stopping.UnitPool) closes whatever
state its workers are ended in. A real pool in a real subprocess: a close that hangs must
not hang the test run."""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

# In a unit: a length header and a few bytes of its result into the pipe, the rest never sent.
SEND_HALF_A_RESULT = textwrap.dedent("""
    import struct, sys

    def send_half_a_result():
        frame = sys._getframe()
        while "result_queue" not in frame.f_locals:  # the worker loop of the executor
            frame = frame.f_back
        frame.f_locals["result_queue"]._writer._send(struct.pack("!i", 1_000_000) + b"x" * 10)
""")

# A unit that sends half of its result (a length header and a few bytes of the rest) and is
# then ended by the pool's close, as a SIGTERM can end a worker in the middle of sending.
HALF_A_RESULT = SEND_HALF_A_RESULT + textwrap.dedent("""
    import sys, time
    from pathlib import Path
    from adapter.local.stopping import UnitPool

    def half_a_result(marker, unit):
        send_half_a_result()
        Path(marker).write_text("sent")
        time.sleep(600)

    if __name__ == "__main__":
        marker = Path(sys.argv[1])
        pool = UnitPool(1)
        pool.submit(half_a_result, str(marker), 0)
        deadline = time.monotonic() + 60
        while not marker.exists():
            assert time.monotonic() < deadline, "the unit never started"
            time.sleep(0.05)
        time.sleep(0.5)  # the executor's thread is reading the half message
        pool.close()
        print("closed")
""")


def test_a_worker_ended_while_sending_its_result_does_not_hang_the_close(tmp_path: Path
                                                                         ) -> None:
    """The executor's thread waited for the rest of the message for ever, and the close
    (a --stop-after, a signal) with it: a self-play run that never ended (seen once in a
    full test run)."""
    script = tmp_path / "half.py"
    script.write_text(HALF_A_RESULT)
    done = subprocess.run([sys.executable, str(script), str(tmp_path / "sent")],
                          capture_output=True, text=True, timeout=60, cwd=ROOT,
                          env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})
    assert done.returncode == 0 and done.stdout.strip() == "closed", done.stderr[-2000:]


# A unit whose worker is killed (SIGKILL: the OOM killer) in the middle of sending its result:
# a length header and a few bytes of the rest are in the pipe, and the rest never comes.
KILLED_WHILE_SENDING = SEND_HALF_A_RESULT + textwrap.dedent("""
    import os, signal
    from adapter.local.stopping import StopRequest, WorkerDied, play_units

    def killed_while_sending(config, unit):
        send_half_a_result()
        os.kill(os.getpid(), signal.SIGKILL)

    if __name__ == "__main__":
        try:
            for _ in play_units(killed_while_sending, None, 4, 1, StopRequest(), ordered=True):
                print("a result")
        except WorkerDied as exc:
            print(exc)
""")


def test_a_worker_killed_while_sending_its_result_ends_the_run(tmp_path: Path) -> None:
    """A self-play worker killed (the OOM killer) while it sent its unit's result, 2 MB that
    a loaded run is slow to read, left the executor's thread waiting for the rest of the
    message for ever: the executor never saw the worker die, and the run waited for its unit
    for ever instead of ending with the worker's death (test_selfplay_stop's killed-worker
    test failed so under load). The run now watches its workers itself."""
    script = tmp_path / "killed.py"
    script.write_text(KILLED_WHILE_SENDING)
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                          timeout=60, cwd=ROOT,
                          env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.startswith("a worker process ended abruptly (killed, out of memory"), (
        done.stdout, done.stderr[-2000:])
    assert "a result" not in done.stdout


# mjbot on a loaded machine, made so at one moment: the run pauses after it forks its first
# worker (which gets going) and the second worker is slow to reach its initializer, the
# window in which a forked worker still has the run's signal handlers.
SLOW_SECOND_WORKER = textwrap.dedent("""
    import os, runpy, sys, time
    forks = []

    def after_in_parent():
        forks.append(1)
        if len(forks) == 1:
            time.sleep(0.5)

    os.register_at_fork(after_in_parent=after_in_parent,
                        after_in_child=lambda: time.sleep(2.0) if forks else None)
    sys.argv = ["mjbot", *sys.argv[1:]]
    runpy.run_module("adapter.cli", run_name="__main__")
""")


@pytest.mark.parametrize("variant", ["mass", "riichi"])
def test_a_stop_while_a_worker_starts_ends_the_run(tmp_path: Path, variant: str) -> None:
    """`mjbot selfplay --workers 2 --stop-after 0.001` on a loaded machine hung for ever
    (seen at a subprocess's 300 s and 600 s limits). The stop closed the pool while the
    second worker was still starting, with the run's handlers: its SIGTERM only noted a
    stop ("mjbot: SIGTERM: stopping with what has finished" in the run's stderr, a second
    time from the executor, which saw the first worker end), the worker played a unit and
    waited for ever to send its 2 MB result, and the executor waited for it to exit. The
    signal now reaches the worker's own handler."""
    script = tmp_path / "slow_second_worker.py"
    script.write_text(SLOW_SECOND_WORKER)
    out = tmp_path / "d"
    done = subprocess.run(
        [sys.executable, str(script), "selfplay", "--variant", variant, "--policies",
         "rulebased,greedy,rulebased,greedy", "--hands", "150", "--seed", "6",
         "--shard-decisions", "400", "--workers", "2", "--stop-after", "0.001",
         "--out", str(out)],
        capture_output=True, text=True, timeout=120, cwd=ROOT,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})
    assert done.returncode == 1, done.stderr[-2000:]
    assert done.stderr.splitlines() == [
        "mjbot selfplay: stopped (--stop-after passed) before the first wall set was "
        f"finished: no dataset written in {out}"]


# The run killed (SIGKILL) right after it forks its first worker, which is slow to reach its
# initializer: the worker notes its pid and finds its parent gone when it gets there.
RUN_KILLED_AS_A_WORKER_STARTS = textwrap.dedent("""
    import os, runpy, signal, sys, time
    from pathlib import Path
    noted = Path(sys.argv[1])

    def in_child():
        noted.write_text(str(os.getpid()))
        time.sleep(1.0)

    os.register_at_fork(after_in_parent=lambda: os.kill(os.getpid(), signal.SIGKILL),
                        after_in_child=in_child)
    sys.argv = ["mjbot", *sys.argv[2:]]
    runpy.run_module("adapter.cli", run_name="__main__")
""")


def ended(pid: int) -> bool:
    """Whether ``pid`` has exited (a zombie that its new parent has not reaped included)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z"
    except FileNotFoundError:
        return True


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the kernel's parent-death "
                    "signal (prctl) is Linux's; elsewhere a worker is not tied to the run")
def test_a_worker_whose_run_died_before_it_started_ends(tmp_path: Path) -> None:
    """A worker finds its run gone when it reaches its initializer (the run killed while
    its workers start): the kernel's parent-death signal, set too late to be sent, was
    backed by comparing the parent's pid with itself (os.getppid() read in the worker), and
    the worker waited for units for ever, orphaned. Its run's pid is now taken before the
    fork, and the worker ends."""
    script = tmp_path / "killed_as_a_worker_starts.py"
    script.write_text(RUN_KILLED_AS_A_WORKER_STARTS)
    noted = tmp_path / "worker"
    log = tmp_path / "log"
    with log.open("w") as output:  # a file: the worker would hold a pipe open
        done = subprocess.run(
            [sys.executable, str(script), str(noted), "selfplay", "--variant", "mass",
             "--policies", "rulebased,greedy,rulebased,greedy", "--hands", "150", "--seed",
             "6", "--shard-decisions", "400", "--workers", "2", "--out", str(tmp_path / "d")],
            stdout=output, stderr=output, timeout=120, cwd=ROOT,
            env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})
    assert done.returncode == -signal.SIGKILL, log.read_text()[-2000:]
    worker = int(noted.read_text())
    try:
        deadline = time.monotonic() + 60
        while not ended(worker) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert ended(worker), "the worker of a run that is gone still runs"
    finally:
        if not ended(worker):  # not left behind by a failing test
            with contextlib.suppress(ProcessLookupError):
                os.kill(worker, signal.SIGKILL)


# mjbot with the forkserver start method, Python 3.14's default on Linux (set here, as a
# program embedding the run or a later Python does): a worker is the forkserver's child.
WITH_START_METHOD = textwrap.dedent("""
    import multiprocessing, runpy, sys
    if __name__ == "__main__":
        multiprocessing.set_start_method(sys.argv[1])
        sys.argv = ["mjbot", *sys.argv[2:]]
        runpy.run_module("adapter.cli", run_name="__main__")
""")


@pytest.mark.skipif("forkserver" not in multiprocessing.get_all_start_methods(),
                    reason="no forkserver start method here")
def test_workers_from_a_forkserver_play(tmp_path: Path) -> None:
    """With the forkserver start method (Python 3.14's default on Linux) every worker took
    the run's pid for its parent's, found its parent (the forkserver) another, sent itself
    SIGTERM as for a run that is gone, and every `--workers 2` run failed with "a worker
    process ended abruptly". The workers now play."""
    script = tmp_path / "with_start_method.py"
    script.write_text(WITH_START_METHOD)
    out = tmp_path / "d"
    done = subprocess.run(
        [sys.executable, str(script), "forkserver", "selfplay", "--variant", "mass",
         "--policies", "rulebased,greedy,rulebased,greedy", "--hands", "8", "--seed", "6",
         "--shard-decisions", "400", "--workers", "2", "--out", str(out)],
        capture_output=True, text=True, timeout=120, cwd=ROOT,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.startswith("selfplay mass: 24 hands"), (done.stdout, done.stderr)


# mjbot as on Windows: no signal masks (signal.pthread_sigmask), workers spawned. At the
# top, not under the __main__ guard: a spawned worker runs it too.
WITHOUT_SIGNAL_MASKS = textwrap.dedent("""
    import multiprocessing, runpy, signal, sys
    del signal.pthread_sigmask
    if __name__ == "__main__":
        multiprocessing.set_start_method("spawn")
        sys.argv = ["mjbot", *sys.argv[1:]]
        runpy.run_module("adapter.cli", run_name="__main__")
""")


@pytest.mark.skipif(not hasattr(signal, "pthread_sigmask"), reason="no masks to take away")
def test_workers_play_where_signals_have_no_masks(tmp_path: Path) -> None:
    """Windows has no signal.pthread_sigmask: every `--workers 2` run there ended in a
    traceback (AttributeError) at its first unit, where it had played. The workers play."""
    script = tmp_path / "without_signal_masks.py"
    script.write_text(WITHOUT_SIGNAL_MASKS)
    done = subprocess.run(
        [sys.executable, str(script), "selfplay", "--variant", "mass", "--policies",
         "rulebased,greedy,rulebased,greedy", "--hands", "8", "--seed", "6",
         "--shard-decisions", "400", "--workers", "2", "--out", str(tmp_path / "d")],
        capture_output=True, text=True, timeout=120, cwd=ROOT,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.startswith("selfplay mass: 24 hands"), (done.stdout, done.stderr)
