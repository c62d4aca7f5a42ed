"""The session's handle on one worker process that runs a slow policy
(adapter/thinking/policy_worker.py is the process's side).

Our own process and pipe rather than a ``ProcessPoolExecutor``: a pool's future cannot be
cancelled once it runs, and a policy that overruns must be stopped, its CPU given back and a
fresh process put in its place. Processes come from the ``forkserver`` start method where the
platform has it (each worker is a fork of a server that has the policy modules imported
already, so a replacement is ready in milliseconds), else ``spawn``; never a plain fork of the
session, which has an event loop and threads.

The pipe and the process's sentinel are watched by the event loop (``add_reader``): no thread
per worker, and a death is seen the moment it happens. Where the loop cannot watch a pipe
(Windows), a thread per worker reads it (adapter/thinking/pipe_watch.py); the worker is still a
process, killed when it overruns.
"""

from __future__ import annotations

import ast
import asyncio
import contextlib
import functools
import importlib.util
import io
import multiprocessing
import os
import pickle
import socket
import sys
import threading
import types
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from multiprocessing import forkserver, popen_forkserver
from multiprocessing.connection import Connection, wait
from pathlib import Path
from typing import Any

from adapter import secret_env
from adapter.logging_setup import get_logger
from adapter.thinking import policy_worker
from adapter.thinking.deadline import within
from adapter.thinking.frames import Frames, Garbled
from adapter.thinking.pipe_watch import PipeThread, exit_code
from brain import anytime
from brain.clock import MONOTONIC, Clock
from brain.policies import get_policy
from brain.policies.base import Decision, Policy
from brain.tally import FallbackKind

# Imported once by the fork server (brain, numpy, rules), and this module: a worker's process
# object is a _WorkerProcess, unpickled in the child by importing its module (and asyncio), which
# a child of a server without it did at every start; warm_server: mc's first-search work, done
# once in the server. The modules of the policy itself are added (policy_modules), and where
# they hold the network's policy (mc's fast=nn), warm_network: the networks read once there.
PRELOAD = ["adapter.thinking.policy_worker", "adapter.thinking.worker_process",
           "adapter.thinking.warm_server"]
NETWORK_POLICY = "brain.policies.nn"
WARM_NETWORK = "adapter.thinking.warm_network"
IPC_ALLOWANCE = 0.05  # seconds of the budget kept for the answer to come back over the pipe
REAP_EVERY = 0.01  # seconds between two looks at a killed worker whose status is not there yet
REAP_TRIES = 500  # looks before it is left to multiprocessing's own (at the next start)
# bytes a job sent to a worker stays under (job_message): a quarter of a Linux pipe's 64 KiB,
# and the Unix socket pair that multiprocessing.Pipe() makes took some 176 KiB here
JOB_BOUND = 16 * 1024
# bytes the worker's job socket takes before a send waits, asked of the platform where it gives
# less (room_for_jobs): macOS gives a Unix socket pair 8 KiB (net.local.stream.sendspace),
# under two of the largest jobs
JOB_ROOM = 4 * JOB_BOUND
STATUS_TRIES = 10  # looks for a dead worker's status before its end is reported without it

log = get_logger("mjbot.thinker")


START_METHODS = ("forkserver", "spawn")  # never a plain fork of a session (its loop, threads)


def default_start_method() -> str:
    """The fork server where the platform has one (Linux, macOS), else spawn (Windows)."""
    return "forkserver" if "forkserver" in multiprocessing.get_all_start_methods() else "spawn"


def _context(method: str | None, warm: list[str]) \
        -> (multiprocessing.context.ForkServerContext | multiprocessing.context.SpawnContext):
    """The context of ``method`` (None: :func:`default_start_method`); the fork server's
    preload ``warm`` (:func:`warm_modules`) and the main script's imports (only the first
    start of a session's server counts: it then runs). ValueError for a method that is not
    one of :data:`START_METHODS` here."""
    method = method or default_start_method()
    here = [m for m in START_METHODS if m in multiprocessing.get_all_start_methods()]
    if method not in here:
        raise ValueError(f"no {method!r} worker processes on this platform "
                         f"(it has: {', '.join(here)})")
    if method == "forkserver":
        context = multiprocessing.get_context("forkserver")
        context.set_forkserver_preload(warm + main_modules())
        return context
    return multiprocessing.get_context("spawn")


def start_server(method: str | None = None, warm: list[str] | None = None) -> None:
    """Start the fork server now, without the secrets (secret_env.withheld), if it is not
    running and this is the process's only thread: commands that think call it before
    their event loop, so no later worker start changes the environment under running
    threads. ``warm``: its preload (:func:`warm_modules`); nothing for spawn."""
    method = method or default_start_method()
    if method != "forkserver" or not secret_env.alone():
        return
    _context(method, warm if warm is not None else PRELOAD)
    with secret_env.withheld():
        forkserver.ensure_running()


def start_server_for(policies: Iterable[str], always: bool = False) -> None:
    """:func:`start_server` with the preload of the named policies (a name as ``--policy``
    takes it), for a command that knows them before its event loop; nothing where none
    thinks in a worker (a fast policy answers inline) or one cannot be made (the session
    reports that itself), unless ``always`` (serve: a reload may bring a policy that
    thinks, and the server started then, under threads, would hold the secrets)."""
    warm: list[str] = []
    for name in dict.fromkeys(policies):
        try:
            policy = get_policy(name)
        except Exception:  # the session's own start says why
            continue
        if not getattr(policy, "fast", False):
            warm += [m for m in warm_modules(policy) if m not in warm]
    if warm or always:
        try:
            start_server(warm=warm or None)
        except OSError as exc:  # no temporary folder it can write (a full disk, RLIMIT_FSIZE)
            # the command goes on: a session that thinks starts its worker at its first
            # decision (and falls back, counted, if that fails too), as before this start
            log.warning("thinker: the worker processes' fork server could not be started "
                        "before the event loop; it is started at the first decision that "
                        "needs it", error=f"{type(exc).__name__}: {exc}")


def _server_pid() -> int | None:
    """The fork server's pid, None before it is started."""
    pid = getattr(getattr(forkserver, "_forkserver", None), "_forkserver_pid", None)
    return pid if isinstance(pid, int) else None


_unclean_said = False


def _said_unclean() -> None:
    """Say once that a child starts with our secrets in its environment (another thread
    ran, so the environment could not be changed for its start); nothing where it holds
    none."""
    global _unclean_said
    if _unclean_said:  # said: the environment is not scanned again at each start
        return
    secrets = sorted(k for k in os.environ if secret_env.is_secret(k))
    if secrets:
        _unclean_said = True
        # what a user can act on: which secrets, who can see them now, that the worker does
        # not use them (it was "start_server was not called before the event loop")
        log.warning("thinker: the policy's worker processes start with mjbot's secrets in "
                    "their environment (other threads were running, and the environment "
                    "cannot be changed under them); they use none of them, but anyone who "
                    "can read a process's environment as your user sees them there, as in "
                    "mjbot's own", secrets=", ".join(secrets))


def warm_modules(policy: object) -> list[str]:
    """:data:`PRELOAD`, the policy's modules, and :data:`WARM_NETWORK` after them where the
    policy plays the network: what the fork server imports for workers that run ``policy``
    (with the main script's imports), and what such a worker imports before it says it is
    ready where it was not forked from a server that had (policy_worker.warm_up)."""
    modules = policy_modules(policy)
    network = [WARM_NETWORK] if NETWORK_POLICY in modules else []
    return PRELOAD + modules + network


def main_modules() -> list[str]:
    """What the fork server must import for a worker's start not to import the session's
    main script's tree again: every child runs multiprocessing's ``prepare``, which re-runs
    the main script (as ``__mp_main__``). For ``mjbot`` (a console script) or ``python -m
    adapter.cli`` that imported adapter.cli's whole command tree at every worker start, some
    50 ms idle and 0.4-2.3 s beside twelve busy loops, so a replacement worker was not ready
    for the next decisions. The server imports the script's imports instead, never the script
    itself (a user's script without the ``__main__`` guard would start a session in it;
    ``'__main__'`` in the preload would not run it anyway: Python 3.11 never passes the
    server the script's path). The child still re-runs the script, its imports found done.
    ``python -c``, a REPL, a zip or ``-m`` of a package's ``__main__`` re-run nothing: none."""
    main = sys.modules.get("__main__")
    spec = getattr(main, "__spec__", None)
    name = getattr(spec, "name", None)
    if isinstance(name, str) and (name == "__main__" or name.endswith(".__main__")):
        return []
    path = getattr(main, "__file__", None)
    package = getattr(spec, "parent", None) or ""
    return list(_imports_of_script(path, package)) if isinstance(path, str) else []


@functools.cache
def _imports_of_script(path: str, package: str) -> tuple[str, ...]:
    """The modules that the script at ``path`` (of ``package``, for its relative imports)
    imports and that this process has imported (so the server imports nothing that the
    session did not), in order."""
    try:
        tree = ast.parse(Path(path).read_bytes(), path)
    except (OSError, SyntaxError, ValueError):  # not source (a .pyc): nothing to preload
        return ()
    names: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and (node.level == 0 or package):
            try:
                module = importlib.util.resolve_name("." * node.level + (node.module or ""),
                                                     package)
            except (ImportError, ValueError):  # beyond the top package: it fails as it did
                continue
            names += [module] + [f"{module}.{alias.name}" for alias in node.names]
    return tuple(dict.fromkeys(n for n in names if n in sys.modules))


class _ModuleNames(pickle.Pickler):
    """A pickler that writes nowhere and notes the module of every class and function it
    meets: the modules unpickling the same object imports."""

    def __init__(self) -> None:
        super().__init__(io.BytesIO(), pickle.HIGHEST_PROTOCOL)
        self.names: set[str] = set()

    def persistent_id(self, obj: Any) -> None:
        named = obj if isinstance(obj, type | types.FunctionType) else type(obj)
        self.names.add(getattr(named, "__module__", None) or "builtins")


def policy_modules(policy: object) -> list[str]:
    """The modules a worker imports to unpickle ``policy`` (mc's; with ``fast=nn`` the
    network's too), for the fork server to import once: a child of a server without them
    imported mc's whole package at every start, some 85 ms on an idle machine and over
    0.5 s on a busy one, so a worker replaced under load was not ready for the next
    decision or two. A policy that cannot be pickled names none (its start says why)."""
    names = _ModuleNames()
    try:
        names.dump(policy)
    except Exception:  # the start itself reports it
        return []
    return sorted(n for n in names.names
                  if n not in ("builtins", "__main__", "__mp_main__") and n in sys.modules)


class _StatusReadOnce(popen_forkserver.Popen):
    """A fork-server child whose exit status is read by one thread only. The server writes
    it once onto the sentinel: the first reader takes it, and multiprocessing records 255 for
    any other that was already reading (the end of the pipe), over the real status. A worker
    start on a thread polls every child (``_cleanup``) while the event loop may be joining a
    dying worker: its death read "exit code 255", not "signal 9". A poll that must not wait
    (``_cleanup``, ``exitcode``) finds the status unknown while another thread reads it; one
    that waits (``join``) waits for that read."""

    def __init__(self, process_obj: Any) -> None:
        self._reading = threading.Lock()
        super().__init__(process_obj)

    def poll(self, flag: int = os.WNOHANG) -> int | None:
        if self.returncode is not None:
            return self.returncode
        if flag == os.WNOHANG:
            if not self._reading.acquire(blocking=False):
                return None
        else:
            wait([self.sentinel])  # the status is there (or the server is gone): no lock held
            self._reading.acquire()
        try:
            return super().poll(os.WNOHANG)
        finally:
            self._reading.release()


class _WorkerProcess(multiprocessing.context.ForkServerProcess):
    """A fork-server process with :class:`_StatusReadOnce` (multiprocessing's hook for the
    start method's Popen)."""

    @staticmethod
    def _Popen(process_obj: Any) -> Any:
        return _StatusReadOnce(process_obj)


@dataclass(frozen=True)
class Thought:
    """How one job went: the policy's ``decision`` (None when it has none), the ``problem``
    ("" when the decision came in time) and its ``kind``, its ``best`` so far, and whether the
    process must be replaced (``stuck``: it is still thinking on the job given up, which
    overran or sent a best so far that could not be read; ``died``: it is gone)."""

    decision: Decision | None
    problem: str = ""
    best: anytime.Progress | None = None
    stuck: bool = False
    died: bool = False
    kind: FallbackKind = FallbackKind.NONE


class WorkerDied(Exception):
    """The worker process ended (or never started)."""


class _Launch:
    """One ``process.start`` on a thread, and who cleans up after it.

    The child's end of the pipe goes to the fork server as a raw descriptor number, with no
    duplicate: it must stay open until the start has sent it, even when the awaiting task is
    cancelled (a session that ends while its worker starts). Closed early, the number was
    sent closed (the fork server died of it, and every later start failed until it was
    relaunched) or reused by the next worker's pipe (two processes on one pipe). So the thread
    that starts the process closes the child's end, and a start abandoned by its task kills
    the process it made, whichever of the two finishes last."""

    def __init__(self, process: Any, child: Connection, parent: Connection) -> None:
        self.process, self.child, self.parent = process, child, parent
        self._lock = threading.Lock()
        self._finished = self._abandoned = False

    def run(self) -> None:
        started = False
        try:
            # the fork server was started clean (start_server) where it could be; one started
            # here, on a thread, or a spawned child takes our environment as it is: the
            # environment is never changed while another thread runs (secret_env.withheld)
            served = getattr(self.process, "_start_method", None) == "forkserver"
            before = _server_pid()
            with secret_env.withheld() as clean:
                self.process.start()
            if not clean and (not served or _server_pid() != before):  # a process exec'd
                _said_unclean()
            started = True
        finally:
            self.child.close()  # the child's copy is the only one left: its death ends the pipe
            with self._lock:
                self._finished = True
                abandoned = self._abandoned
            # a start that failed (the policy cannot be pickled, the fork server gone): no
            # one will use the parent's end, which its error's traceback held open until
            # the cycle collector came by, one socket a failed try (nor a process it made)
            if abandoned or not started:
                self._discard()

    def abandon(self) -> None:
        with self._lock:
            self._abandoned = True
            finished = self._finished
        if finished:
            self._discard()

    def _discard(self) -> None:
        self.parent.close()
        if self.process.pid is not None:  # started: SIGKILL, reaped by multiprocessing later
            with contextlib.suppress(OSError, ValueError):
                self.process.kill()


def job_message(job: int, state: Any, request: Any, legal: list[Any],
                budget: float | None) -> tuple[Any, ...]:
    """What :meth:`PolicyWorker.think` sends a worker for one decision. It is sent whole from
    the event loop (``Connection.send``), which waits only where the pipe cannot take it;
    a worker is always waiting for its next job then (one that overran was replaced), and a
    job pickles to under :data:`JOB_BOUND` bytes (the largest of 300 MCR games, 4,879), far
    under what the pipe takes before a write waits, :data:`JOB_ROOM` (:func:`room_for_jobs`;
    tests/test_thinking_leftovers6.py and 7 check both, so a job that grows is seen there,
    not as a loop held in a send)."""
    return (job, state, request, legal, budget)


def room_for_jobs(parent: Connection, child: Connection) -> int:
    """Make the socket pair a worker's jobs go over take :data:`JOB_ROOM` bytes before a
    send waits, where the platform gave it less: the send buffer of ``parent`` (the end jobs
    are sent from, on the event loop) and the receive buffer of ``child`` (the worker's
    end, for a platform that counts the room there). Never lowers one (Linux gives both
    some 208 KiB).
    Returns the smaller of the two as granted (the kernel may cap, or double, what is
    asked); 0 where the ends are not sockets (Windows' named pipes, whose size is set when
    they are made)."""
    if sys.platform == "win32":
        return 0
    granted = []
    for conn, option in ((parent, socket.SO_SNDBUF), (child, socket.SO_RCVBUF)):
        try:
            fd = os.dup(conn.fileno())
        except OSError:  # no descriptor left: the start fails as it did, if it must
            return 0
        try:
            sock = socket.socket(fileno=fd)
        except OSError:  # not a socket (a one-way Pipe is an os.pipe)
            os.close(fd)
            return 0
        with sock:  # closes the duplicate only: the option is the shared socket's
            try:
                if sock.getsockopt(socket.SOL_SOCKET, option) < JOB_ROOM:
                    sock.setsockopt(socket.SOL_SOCKET, option, JOB_ROOM)
                granted.append(sock.getsockopt(socket.SOL_SOCKET, option))
            except OSError:
                return 0
    return min(granted)


def _taken(done: asyncio.Future[Any]) -> None:
    if not done.cancelled():
        done.exception()


class PolicyWorker:
    """One worker process running ``policy``: :meth:`start` it, then :meth:`think` one job at a
    time; :meth:`kill` it when it overran or is no longer wanted. Deadlines are times on
    ``clock`` (the brain's); ``on_ready`` is handed the seconds from :meth:`start` to the
    process's ready message (what a session waits for a worker it replaced);
    ``start_method``: one of :data:`START_METHODS` (None: :func:`default_start_method`);
    ``pipe_thread``: a thread reads the pipe, for a loop that cannot watch one
    (adapter/thinking/pipe_watch.py)."""

    def __init__(self, policy: Policy, clock: Clock = MONOTONIC,
                 on_ready: Callable[[float], None] | None = None,
                 start_method: str | None = None, pipe_thread: bool = False) -> None:
        self.policy = policy
        self.clock = clock
        self.on_ready = on_ready
        self.start_method = start_method
        self.pipe_thread = pipe_thread
        self._watcher: PipeThread | None = None
        self._began = 0.0
        self.pid: int | None = None
        self.process: Any = None
        self._conn: Connection | None = None
        self._messages: asyncio.Queue[tuple[Any, ...]] | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._ready: asyncio.Future[int] | None = None
        self._frames = Frames()  # what the loop has read of the pipe (not the pipe thread)
        self.jobs = 0  # jobs sent so far
        self.best: anytime.Progress | None = None  # the best so far of the latest job
        self.exit_reason = ""

    # ------------------------------------------------------------------ life

    async def start(self) -> None:
        """Start the process (off the loop: a first forkserver start imports the policy
        modules in the server) and watch its pipe; :meth:`ready` says when it can think."""
        self._began = self.clock.now()
        self._loop = asyncio.get_running_loop()
        self._messages = asyncio.Queue()
        self._ready = self._loop.create_future()
        warm = warm_modules(self.policy)
        context = _context(self.start_method, warm)
        parent, child = context.Pipe()
        room_for_jobs(parent, child)
        kind = _WorkerProcess if context.get_start_method() == "forkserver" else context.Process
        process = kind(target=policy_worker.serve, args=(child, self.policy, tuple(warm)),
                       name=f"mjbot-policy-{getattr(self.policy, 'name', 'policy')}",
                       daemon=True)
        launch = _Launch(process, child, parent)
        served = context.get_start_method() == "forkserver"
        if served:  # its exec here, while it can start clean; its preload is not waited for
            start_server(self.start_method, warm)
        if not served and secret_env.alone():  # a spawn, the only thread: withheld here
            launch.run()
            starting: asyncio.Future[None] = self._loop.create_future()
            starting.set_result(None)
        else:
            starting = asyncio.ensure_future(asyncio.to_thread(launch.run))
        try:
            await asyncio.shield(starting)
        except asyncio.CancelledError:  # the session ended: the process must not outlive it
            launch.abandon()
            # no one awaits the start any more: a failure of it (the fork server gone) is
            # taken here, not logged as a task exception never retrieved, with its traceback
            starting.add_done_callback(_taken)
            raise
        self.process, self._conn = process, parent
        try:
            self._watch(parent, process)
        except BaseException:
            # no thread left to start (or a loop that refused the pipe): the process just
            # started would wait for jobs that never come, and nothing would end it
            self._discard(parent, process)
            raise

    def _watch(self, parent: Connection, process: Any) -> None:
        """Have the pipe and the process's end watched: by the loop, or by a thread."""
        assert self._loop is not None
        if self.pipe_thread:
            watcher = PipeThread(self._loop, parent, process, self._take, self._unreadable,
                                 self._report_end)
            watcher.start()  # RuntimeError where no thread can start
            self._watcher = watcher
            return
        self._loop.add_reader(parent.fileno(), self._readable)
        self._loop.add_reader(process.sentinel, self._ended)

    def _discard(self, parent: Connection, process: Any) -> None:
        """End a process whose watch could not be set up: unwatched, its pipe closed, killed
        and reaped by the loop's looks (:meth:`_reap`: no thread nor loop reader is there to
        do it), so that the start's error is all that is left of it. Its status was waited
        for here, up to pipe_watch.REAP_WITHIN (5 s), every session of the process held."""
        self._conn, loop = None, self._loop
        if not self.pipe_thread and loop is not None:  # the reader added before the failure
            with contextlib.suppress(Exception):
                loop.remove_reader(parent.fileno())
            with contextlib.suppress(Exception):
                loop.remove_reader(process.sentinel)
        parent.close()
        with contextlib.suppress(OSError, ValueError):
            process.kill()
        self._reap(process)

    async def ready(self, deadline: float | None) -> bool:
        """Wait until the process has loaded the policy (at most until ``deadline``, a
        time on :attr:`clock`); WorkerDied if it ended first."""
        assert self._ready is not None
        try:
            await within(self.clock, asyncio.shield(self._ready), deadline)
        except TimeoutError:
            return False
        return True

    def kill(self) -> None:
        """Stop the process now (SIGKILL: a policy in a C call cannot be asked nicely) and
        reap it in the background."""
        self._unwatch()
        process = self.process
        if process is None:
            return
        with contextlib.suppress(OSError, ValueError):
            process.kill()
        if self.pipe_thread:  # its thread reaps it
            return
        if self._loop is not None and not self._loop.is_closed():
            with contextlib.suppress(OSError, ValueError):
                self._loop.add_reader(process.sentinel, self._reap, process)
                return
        with contextlib.suppress(OSError, ValueError):
            process.join(1.0)

    def _reap(self, process: Any, tries: int = REAP_TRIES) -> None:
        """Reap a killed process once its sentinel fires; a spawned one's fires a moment
        before its status is there (pipe_watch.exit_code): looked at again shortly, never
        waited for on the loop."""
        loop = self._loop
        assert loop is not None
        # not watched where the watch could not be set up (_discard); a loop without
        # readers (Windows') has none to remove
        with contextlib.suppress(OSError, ValueError, NotImplementedError):
            loop.remove_reader(process.sentinel)
        if exit_code(process, 0.0) is None and tries > 0 and not loop.is_closed():
            loop.call_later(REAP_EVERY, self._reap, process, tries - 1)

    def _unwatch(self) -> None:
        conn, self._conn = self._conn, None
        watcher, self._watcher = self._watcher, None
        if watcher is not None:  # it closes the pipe, never under its own read
            watcher.stop()
            return
        if not self.pipe_thread and self._loop is not None and not self._loop.is_closed():
            with contextlib.suppress(OSError, ValueError):
                if conn is not None:
                    self._loop.remove_reader(conn.fileno())
                if self.process is not None:
                    self._loop.remove_reader(self.process.sentinel)
        if conn is not None:
            conn.close()

    # ------------------------------------------------------------------ the pipe

    def _readable(self) -> None:
        """What the pipe holds, read without waiting for more (adapter/thinking/frames.py):
        a message cut short waits in :attr:`_frames` for its rest, the loop never does."""
        conn = self._conn
        if conn is None:
            return
        try:
            still_open = self._frames.read(conn.fileno())
        except BlockingIOError:  # nothing there after all
            return
        except OSError:
            still_open = False
        self._deliver()
        if not still_open:
            self._ended()

    def _deliver(self) -> None:
        """Every whole message read so far to :meth:`_take`; one that cannot be unpickled is
        said and passed over, and after a bogus length nothing more is read (its job, left
        without an answer, is replaced as a late one)."""
        while True:
            try:
                for message in self._frames.messages():
                    self._take(message)
                return
            except Garbled as exc:
                self._unreadable(f"{exc}: nothing after it can be read")
                return
            except Exception as exc:  # a message this process cannot unpickle
                self._unreadable(f"{type(exc).__name__}: {exc}")

    def _unreadable(self, why: str) -> None:
        """A message whose kind and job cannot be read (what it carries is read apart, in
        :meth:`think`): it cannot be tied to the job in hand, so it fails none (the job
        still has its answer or its deadline); said, as the pipe should never carry one."""
        log.warning("thinker: a message from the worker process could not be read",
                    policy=getattr(self.policy, "name", "policy"), pid=self.pid, reason=why)

    def _take(self, message: tuple[Any, ...]) -> None:
        assert self._messages is not None and self._ready is not None
        if message[0] == "ready":
            self.pid = int(message[1])
            if not self._ready.done():
                self._ready.set_result(self.pid)
                if self.on_ready is not None:
                    self.on_ready(self.clock.now() - self._began)
        else:
            self._messages.put_nowait(message)

    def _ended(self) -> None:
        """The process is gone: what it sent before is still read, then it is reported."""
        conn = self._conn
        if conn is None:
            return
        with contextlib.suppress(OSError):  # each read after a look: none waits
            while conn.poll() and self._frames.read(conn.fileno()):
                pass
        self._deliver()
        self._unwatch()  # its sentinel stays readable: watched no more while its status comes
        self._look_for_status(self.process, STATUS_TRIES)

    def _look_for_status(self, process: Any, tries: int) -> None:
        """Report the end once the exit status is there, looked at every :data:`REAP_EVERY`
        seconds, never waited for on the loop: a spawned worker's sentinel fires a moment
        before its status is there, and a fork-server child's status is not readable while
        another thread reads it (_StatusReadOnce); the loop slept up to 0.1 s in
        pipe_watch.exit_code for it, every session of the process held. After ``tries``
        more looks (:data:`STATUS_TRIES` at first) the end is reported with no status."""
        code = exit_code(process, 0.0)
        loop = self._loop
        if code is None and tries > 0 and loop is not None and not loop.is_closed():
            loop.call_later(REAP_EVERY, self._look_for_status, process, tries - 1)
            return
        self._report_end(code)

    def _report_end(self, code: int | None) -> None:
        """Say that the process ended (``code``: its exit code, None if not known)."""
        self._unwatch()
        self.exit_reason = ("its worker process died" +
                            (f" (signal {-code})" if code is not None and code < 0 else
                             f" (exit code {code})" if code is not None else ""))
        assert self._messages is not None and self._ready is not None
        if not self._ready.done():
            self._ready.set_exception(WorkerDied(self.exit_reason))
            self._ready.exception()  # retrieved: nobody may be waiting yet
        self._messages.put_nowait(("ended",))

    # ------------------------------------------------------------------ thinking

    async def think(self, state: Any, request: Any, legal: list[Any],
                    deadline: float | None, waited: bool = False) -> Thought:
        """Ask the policy for one decision, to be answered by ``deadline``
        (a time on :attr:`clock`; None: no limit); its best so far is kept as it comes.
        ``waited``: the decision already waited for this worker's start."""
        name = getattr(self.policy, "name", "policy")
        allowed = None if deadline is None else deadline - self.clock.now()
        waited = waited or (self._ready is not None and not self._ready.done())
        try:
            if not await self.ready(deadline):
                return Thought(None, f"{name}'s worker process was not ready in time",
                               kind=FallbackKind.NOT_READY)
        except WorkerDied as exc:
            return Thought(None, f"{name}: {exc}", died=True, kind=FallbackKind.FAILED)
        if waited and deadline is not None and deadline - self.clock.now() <= IPC_ALLOWANCE:
            # ready with no budget left (a session's first decision while its worker starts):
            # a job sent now could not come back in time, and the fresh worker was killed as
            # stuck, the start paid again; it stays free for the next decision instead. Only
            # after a wait: a worker ready before the decision is asked however short its
            # budget (a limit up to 0.3 s leaves no more; mc's fast move is back in ms)
            return Thought(None, f"{name}'s worker process was not ready in time",
                           kind=FallbackKind.NOT_READY)
        conn, messages = self._conn, self._messages
        if conn is None or messages is None:
            return Thought(None, f"{name}: {self.exit_reason or 'no worker process'}",
                           died=True, kind=FallbackKind.FAILED)
        while not messages.empty():  # left from a job that ended in an error
            messages.get_nowait()
        self.jobs += 1
        job, self.best = self.jobs, None
        budget = None if deadline is None else max(0.0, deadline - self.clock.now()
                                                   - IPC_ALLOWANCE)
        try:
            conn.send(job_message(job, state, request, legal, budget))
        except (OSError, ValueError) as exc:
            return Thought(None, f"{name}: cannot reach its worker process ({exc})", died=True,
                           kind=FallbackKind.FAILED)
        best: anytime.Progress | None = None
        while True:
            try:
                if deadline is not None and deadline - self.clock.now() <= 0:
                    raise TimeoutError
                message = await within(self.clock, messages.get(), deadline)
            except TimeoutError:
                return Thought(None, f"{name} missed its {allowed:.3f}s budget", best,
                               stuck=True, kind=FallbackKind.LATE)
            if message[0] == "ended":
                return Thought(None, f"{name}: {self.exit_reason}", best, died=True,
                               kind=FallbackKind.FAILED)
            if message[1] != job:  # a job given up before (its late answer, read or not)
                continue
            try:
                carried = pickle.loads(message[2])
            except Exception as exc:  # this job's answer, or best so far, cannot be read here
                # a best so far: the policy thinks on, to its budget, and the next job would
                # wait behind it (late): replaced, as one that overran (an answer: it is free)
                return Thought(None, f"{name}'s answer could not be read "
                                     f"({type(exc).__name__}: {exc})", best,
                               stuck=message[0] == "progress", kind=FallbackKind.FAILED)
            if message[0] == "progress":
                best = self.best = carried
            elif message[0] == "done":
                return Thought(carried, "", best)
            else:
                return Thought(None, f"{name} raised {carried}", best,
                               kind=FallbackKind.FAILED)
