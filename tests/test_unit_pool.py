"""The worker pool of arenas and self-play (adapter/local/stopping.UnitPool) closes whatever
state its workers are ended in. A real pool in a real subprocess: a close that hangs must
not hang the test run."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# A unit that sends half of its result (a length header and a few bytes of the rest) and is
# then ended by the pool's close, as a SIGTERM can end a worker in the middle of sending.
HALF_A_RESULT = textwrap.dedent("""
    import struct, sys, time
    from pathlib import Path
    from adapter.local.stopping import UnitPool

    def half_a_result(marker, unit):
        frame = sys._getframe()
        while "result_queue" not in frame.f_locals:  # the worker loop of the executor
            frame = frame.f_back
        frame.f_locals["result_queue"]._writer._send(struct.pack("!i", 1_000_000) + b"x" * 10)
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
