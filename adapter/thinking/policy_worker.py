"""The worker process's side of a slow policy (adapter/thinking/worker_process.py starts it): it
answers one decision at a time over a pipe, so that the policy's CPU work never holds the session's
GIL and a policy that overruns can be killed without touching the session.

Messages to the parent, each a tuple: ``("ready", pid)`` once the policy is loaded;
``("progress", job, Progress)`` for an anytime policy's best so far (a new best action at
once, more work on the same one at most every :data:`PUBLISH_EVERY` seconds; the parent keeps
the latest); ``("done", job, Decision)`` or ``("error", job, text)``. The third item goes
pickled on its own (:func:`packed`): the parent reads a message's kind and job even where it
cannot read what the message carries, so what it cannot read fails that job alone, never the
one in hand when a message of an older job comes late. A job from the parent is
``(job, state, request, legal, budget)``;
None or the end of the pipe ends the process, and so does the end of the session's process
(a thread watches for it). No asyncio here: the process runs nothing else.
"""

from __future__ import annotations

import importlib
import multiprocessing
import os
import pickle
import signal
import sys
import threading
import time
from multiprocessing.connection import Connection, wait
from typing import Any

from brain import anytime
from brain.brain import call_policy
from brain.policies.base import Policy

PUBLISH_EVERY = 0.02  # seconds between two progress messages: the pipe never floods


def serve(conn: Connection, policy: Policy, warm: tuple[str, ...] = ()) -> None:
    """The process's whole life: ready, then jobs until the parent says stop or goes away.
    ``warm``: the modules the fork server imports for this policy (:func:`warm_up`)."""
    # Ctrl-C reaches the whole process group: the session stops its workers itself
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _end_with_the_session()
    warm_up(warm)
    conn.send(("ready", os.getpid()))
    while True:
        try:
            job = conn.recv()
        except (EOFError, OSError):
            return
        if job is None:
            return
        number = job[0]
        kind, _, payload = _run(conn, policy, *job)
        try:
            conn.send((kind, number, packed(payload)))
        except (pickle.PicklingError, TypeError, AttributeError) as exc:
            conn.send(("error", number, packed(f"its answer cannot be sent: {exc}")))


def packed(payload: Any) -> bytes:
    """What a message carries, pickled apart from its kind and job (the parent unpickles
    it only for the job in hand: worker_process.PolicyWorker.think)."""
    return pickle.dumps(payload, pickle.HIGHEST_PROTOCOL)


def warm_up(modules: tuple[str, ...]) -> None:
    """Import what this process lacks of ``modules`` (the fork server's preload: their
    import does the work of a first decision, mc's tables and models, the networks) before
    the worker says it is ready. A worker forked from a server that has them lacks none; a
    spawned one (no fork server: Windows) lacks them all, and did that work in its first
    search, which under load ran late, was killed, and its replacement, a fresh interpreter
    that took seconds to start, did the same: one late answer, then a run of "not ready"."""
    for name in modules:
        if name in sys.modules:
            continue
        try:
            importlib.import_module(name)
        except Exception:  # as the fork server passes over what it cannot import: the
            continue  # decision that needs it says what is wrong


def _end_with_the_session() -> None:
    """End this process the moment the session's process is gone, however it went (SIGKILL,
    out of memory, a crash): the pipe is read only between two jobs, so a policy that overran
    (the worker the session would have killed) thought on for ever, an orphan using a CPU.
    Our parent is the fork server, which lives on while any of its children does (no
    PR_SET_PDEATHSIG then); multiprocessing's sentinel of the process that started us ends
    with that process, and a thread of ours waits on it."""
    parent = multiprocessing.parent_process()
    if parent is None or parent.sentinel is None:
        return
    sentinel = parent.sentinel

    def watch() -> None:
        wait([sentinel])
        os._exit(1)

    threading.Thread(target=watch, name="mjbot-session-watch", daemon=True).start()


def _run(conn: Connection, policy: Policy, job: int, state: Any, request: Any,
         legal: list[Any], budget: float | None) -> tuple[str, int, Any]:
    sent: list[Any] = [None, float("-inf")]  # the last action sent, and when

    def publish(progress: anytime.Progress) -> None:
        now = time.monotonic()
        if progress.action != sent[0] or now - sent[1] >= PUBLISH_EVERY:
            sent[:] = [progress.action, now]
            conn.send(("progress", job, packed(progress)))

    try:
        decision = call_policy(policy, state, request, legal, budget, publish)
    except Exception as exc:
        return ("error", job, f"{type(exc).__name__}: {exc}")
    return ("done", job, decision)
