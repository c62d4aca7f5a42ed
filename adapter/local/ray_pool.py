"""Units of work (a wall set in every seating) as Ray tasks, for runs beyond one machine.

Ray is an optional extra (``pip install -e '.[ray]'`` in mjbot's checkout) and is imported only
here, only when ``--ray`` is given. Each unit is one task; Ray retries a task whose worker
process dies, and the driver takes exactly one result per unit, so a dead worker loses no unit
and counts none twice.
Ray reuses its worker processes from task to task, so what a policy caches per process (the
``mc`` opponent models) is read once per worker, not once per unit: every task reports its
worker's pid and weight reads, and :class:`WorkerTally` sums them (the run's figures show it).
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from adapter import secret_env
from adapter.hostport import parse_host_port

# mjbot is not on PyPI: the extra is installed from the checkout (deploy/ray.md)
INSTALL_HINT = "pip install -e '.[ray]' in mjbot's checkout"
TASK_RETRIES = 3  # per unit, on a worker's death (a policy's exception is a result, not a retry)


class RayUnavailable(RuntimeError):
    """Ray is not installed, or the cluster asked for cannot be reached (one line for users)."""


@dataclass
class RayCluster:
    """The cluster a run uses; ``started`` when this process initialised Ray (a local cluster,
    or its connection to a remote one), which :meth:`close` then ends (a remote cluster stays
    up); False when Ray was initialised already (a test's cluster)."""

    address: str
    cpus: int
    nodes: int
    started: bool

    def close(self) -> None:
        if self.started:
            import ray

            ray.shutdown()


def _ray() -> Any:
    try:
        import ray
    except ImportError:
        raise RayUnavailable(f"--ray needs Ray, which is not installed: {INSTALL_HINT}") from None
    return ray


def connect(address: str, cpus: int | None = None) -> RayCluster:
    """Join the cluster at ``address`` (``auto``: the one this node belongs to; ``HOST:PORT``:
    its head) or start one on this machine (``local``, with ``cpus`` CPUs, default all).
    A Ray already initialised in this process (a test's cluster) is used as it is."""
    ray = _ray()
    started = False
    if not ray.is_initialized():
        if address == "local":
            # the cluster's processes (GCS, raylet, the workers that run the units) take this
            # process's environment as they start: not its secrets, which none of them reads
            with secret_env.withheld():
                ray.init(num_cpus=cpus or os.cpu_count() or 1, include_dashboard=False,
                         log_to_driver=False, configure_logging=False)
        else:
            _reachable(address)
            try:
                ray.init(address=address, log_to_driver=False, configure_logging=False)
            except (ConnectionError, ValueError, RuntimeError) as exc:
                first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc)
                raise RayUnavailable(
                    f"no Ray cluster at {address!r} ({first}); start one with `ray start "
                    "--head` or use --ray local") from None
        started = True
    nodes = [n for n in ray.nodes() if n.get("Alive")]
    total = int(ray.cluster_resources().get("CPU", 0))
    return RayCluster(address, total, len(nodes), started)


def _reachable(address: str) -> None:
    """A ``HOST:PORT`` that nothing answers is refused at once (Ray itself waits minutes)."""
    if address == "auto" or "://" in address:
        return
    try:
        host, port = parse_host_port(address, "--ray")
    except ValueError as exc:  # 'h:²' was int()'s own "invalid literal" (isdigit took it)
        raise RayUnavailable(f"{exc} (or auto, or local)") from None
    import socket

    try:
        socket.create_connection((host, port), timeout=5).close()
    except OSError as exc:
        raise RayUnavailable(f"no Ray cluster at {address!r} ({exc.strerror or exc}); start "
                             "one with `ray start --head` or use --ray local") from None


@dataclass
class WorkerTally:
    """Which worker processes played units, and how often each read policy weights."""

    reads: dict[tuple[str, int], int] = field(default_factory=dict)  # (node, pid) -> reads

    def add(self, stamp: tuple[str, int, int]) -> None:
        node, pid, reads = stamp
        self.reads[(node, pid)] = max(reads, self.reads.get((node, pid), 0))

    def figures(self, units: int) -> dict[str, int]:
        return {"units": units, "worker_processes": len(self.reads),
                "weight_reads": sum(self.reads.values())}


def _stamp() -> tuple[str, int, int]:
    """This worker: its node, pid, and how many times it has read weights from disk."""
    import socket

    from brain.policies.mc.models import weight_reads

    return socket.gethostname(), os.getpid(), weight_reads()


def run_unit(env: dict[str, str], fn: Callable[..., Any], *args: Any
             ) -> tuple[Any, tuple[str, int, int]]:
    """The task body: one unit under the driver's ``MJBOT_*`` settings (:func:`shipped_env`),
    and the stamp of the process that played it."""
    with driver_env(env):
        result = fn(*args)
    return result, _stamp()


def mjbot_env() -> dict[str, str]:
    """This process's ``MJBOT_*`` settings (e.g. ``MJBOT_MC``), which policies read when built:
    workers on other nodes do not inherit the driver's environment, so they travel along."""
    return {k: v for k, v in os.environ.items() if k.startswith("MJBOT_")}


def shipped_env() -> dict[str, str]:
    """The driver's ``MJBOT_*`` settings that go with each unit: :func:`mjbot_env` without
    the secrets (:func:`adapter.secret_env.is_secret`): no unit reads them, and Ray keeps
    task arguments where its dashboard and logs may show them."""
    return secret_env.without_secrets(mjbot_env())


@contextlib.contextmanager
def driver_env(env: dict[str, str]) -> Iterator[None]:
    """This worker's ``MJBOT_*`` variables are ``env``'s for the block, then its own again.
    They travel as a task argument, not as Ray's ``runtime_env``: a task with a runtime_env
    has workers started for that environment by Ray's runtime-env agent, several seconds
    before the first unit of every run (and of every test that sets one); a worker runs one
    task at a time, so the block is the unit's alone."""
    own = mjbot_env()
    for key in own:
        del os.environ[key]
    os.environ.update(env)
    try:
        yield
    finally:
        for key in mjbot_env():
            del os.environ[key]
        os.environ.update(own)


@contextlib.contextmanager
def lost_as_worker_died(ray: Any, what: str) -> Iterator[None]:
    """Ray's own failures inside the block (a worker dead past its retries, the node's raylet
    or the whole node gone, an object lost) are :class:`WorkerDied`, which the command says in
    one line (exit 1), as the process pool's dead worker: they were a traceback. A task's own
    exception (``RayTaskError``, raised as its cause's class too) passes as it is, but for an
    OSError (a worker's full disk), which is raised as the worker's own: Ray's copy of its
    class has no errno, so the command's full-disk line did not know it (a traceback)."""
    try:
        yield
    except ray.exceptions.RayTaskError as exc:
        cause = exc.cause
        if isinstance(cause, OSError) and cause.errno is not None:
            raise cause from exc  # the task's traceback still shown where it is not said
        raise
    except ray.exceptions.RayError as exc:
        from adapter.local.stopping import WorkerDied

        text = str(exc).strip()
        first = text.splitlines()[0] if text else ""
        raise WorkerDied(f"Ray lost {what} ({type(exc).__name__}: {first}): the run cannot "
                         "finish") from None


def map_units(fn: Callable[..., Any], args: Callable[[int], tuple[Any, ...]], units: int,
              window: int, tally: WorkerTally | None = None, ordered: bool = False,
              on_complete: Callable[[int, Any], None] | None = None
              ) -> Iterator[tuple[int, Any]]:
    """``fn(*args(u))`` for every unit ``u`` as Ray tasks; yields ``(u, result)`` once per
    unit, whatever was retried: as each completes, or in unit order (``ordered``, with
    ``window`` bounding the units submitted but not yet yielded, so the driver holds few).
    ``on_complete(u, result)`` is called as each completes, in either case."""
    ray = _ray()
    task = remote(run_unit)
    env = shipped_env()
    pending: dict[Any, int] = {}
    finished: dict[int, Any] = {}
    submitted = yielded = 0
    while yielded < units:
        while submitted < units and (submitted - yielded if ordered else len(pending)) < window:
            pending[task.remote(env, fn, *args(submitted))] = submitted
            submitted += 1
        with lost_as_worker_died(ray, "a unit under way"):
            done, _ = ray.wait(list(pending), num_returns=1)
        for ref in done:
            unit = pending.pop(ref)
            with lost_as_worker_died(ray, f"unit {unit}"):
                result, stamp = ray.get(ref)
            if tally is not None:
                tally.add(stamp)
            if on_complete is not None:
                on_complete(unit, result)
            finished[unit] = result
        while finished and (not ordered or yielded in finished):
            unit = yielded if ordered else next(iter(finished))
            yield unit, finished.pop(unit)
            yielded += 1


@dataclass
class RayRun:
    """One run's use of a cluster: at most ``window`` units in flight, workers tallied."""

    cluster: RayCluster
    workers: int
    tally: WorkerTally = field(default_factory=WorkerTally)

    @property
    def window(self) -> int:
        """Units in flight: twice the workers keeps every CPU fed between completions, where
        the cluster itself caps the concurrency; exactly ``workers`` where it is a cap."""
        return 2 * self.workers if self.workers >= self.cluster.cpus else self.workers

    def map(self, fn: Callable[..., Any], args: Callable[[int], tuple[Any, ...]], units: int,
            ordered: bool = False, on_complete: Callable[[int, Any], None] | None = None
            ) -> Iterator[tuple[int, Any]]:
        return map_units(fn, args, units, max(1, self.window), self.tally, ordered,
                         on_complete)

    def figures(self, units: int) -> dict[str, Any]:
        return {"address": self.cluster.address, "nodes": self.cluster.nodes,
                "cluster_cpus": self.cluster.cpus, **self.tally.figures(units)}


def start(address: str, workers: int | None) -> RayRun:
    """Connect (see :func:`connect`) and size the run: ``workers`` units at once, default
    every CPU of the cluster."""
    cluster = connect(address, workers)
    return RayRun(cluster, workers or max(1, cluster.cpus))


def remote(fn: Callable[..., Any]) -> Any:
    """``fn`` as a Ray task with the retries of the unit tasks (the driver's environment goes
    with the units themselves: :func:`run_unit`)."""
    ray = _ray()
    return ray.remote(fn).options(max_retries=TASK_RETRIES, retry_exceptions=False)


def get(refs: list[Any]) -> list[Any]:
    ray = _ray()
    with lost_as_worker_died(ray, "a shard's task"):
        return list(ray.get(refs))
