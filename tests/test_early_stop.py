"""A SIGTERM while `mjbot` is still importing its modules (its first second, before a command
has a handler of its own) ended the process with no line at all. The CLI now installs a
handler before its imports: one line naming the command, then the signal's death as before."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

# the program's start held where its own imports are done and no command has run: the moment
# a SIGTERM met the default action (the real window is the command's imports, about a second)
STARTING = """
import sys
sys.argv = {argv!r}
import adapter.cli
print("imported", flush=True)
sys.stdin.read()
"""
TENHOU = ["--log-level", "info", "tenhou", "--server", "127.0.0.1:1"]


def stopped_while_starting(argv: list[str]) -> subprocess.CompletedProcess[str]:
    """The program run as ``argv`` (its name first), SIGTERM'd once its imports are done."""
    proc = subprocess.Popen([sys.executable, "-c", STARTING.format(argv=argv)], cwd=ROOT,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "PYTHONPATH": str(ROOT)})
    try:
        assert proc.stdout is not None
        assert proc.stdout.readline() == "imported\n"
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)


@pytest.mark.parametrize("argv0", ["/opt/mjbot/.venv/bin/mjbot", "mjbot.exe"])
def test_a_sigterm_while_starting_says_one_line_and_dies_of_it(argv0: str) -> None:
    """Killed by the signal as the default did (a shell's status 143 both ways), not an
    exit 143: systemd counts a SIGTERM death as a clean stop and an exit 143 as a failure
    (`systemctl stop mjbot` in serve's first second left the unit failed), and a parent
    that told its child's stop by returncode -15 read 143."""
    done = stopped_while_starting([argv0, *TENHOU])
    assert done.returncode == -signal.SIGTERM, done
    assert done.stderr == "mjbot tenhou: stopped (SIGTERM)\n"


def test_a_process_that_only_imports_the_cli_keeps_the_default() -> None:
    """The tests import adapter.cli and call main() in their own process: no handler of the
    program's there, a SIGTERM ends them as it did."""
    done = stopped_while_starting(["/usr/bin/pytest", *TENHOU])
    assert done.returncode == -signal.SIGTERM and done.stderr == "", done


def test_a_child_forked_while_starting_dies_of_the_signal_as_before() -> None:
    """A child forked before it set a handler of its own inherits the program's: it ends as
    the default would (killed by the signal), silent, not as the program with its line."""
    script = STARTING.replace('print("imported", flush=True)\nsys.stdin.read()', """
import os, signal
ready, told = os.pipe()
child = os.fork()
if child == 0:  # a signal before the interpreter's after-fork is lost: it says when
    os.write(told, b"x")
    signal.pause()
    os._exit(0)
os.read(ready, 1)
os.kill(child, signal.SIGTERM)
print(os.waitstatus_to_exitcode(os.waitpid(child, 0)[1]))
""").format(argv=["mjbot", *TENHOU])
    done = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True,
                          text=True, timeout=60, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == str(-signal.SIGTERM) and done.stderr == "", done
