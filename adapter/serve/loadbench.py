"""Load benchmark of the tournament process: decision latency with and without HTTP load on
the status server (a benchmark: it reports, it asserts nothing).

One process runs what ``mjbot serve`` runs: the supervisor with local practice sessions (each
in its worker process) and a Tenhou session playing the fake Tenhou server (a subprocess) on a
real socket, whose decisions are made in this process beside the event loop that also serves
HTTP; and the status server. After a warm-up, decision latency is sampled for ``--seconds``
without load, then for as long again while a separate load process sends ``--rate`` requests
per second (open loop: on schedule, whether or not earlier ones have been answered) to
/health, /metrics, /api/status, /api/games and /, round robin.

    python -m adapter.serve.loadbench [--rate 100] [--seconds 10] [--practice 2] [--json]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from typing import Any

LOAD_PATHS = ("/health", "/metrics", "/api/status", "/api/games", "/")


def _quantiles(values: list[float]) -> dict[str, Any]:
    if not values:
        return {"count": 0}
    ordered = sorted(values)

    def at(q: float) -> float:
        return round(1000 * ordered[min(len(ordered) - 1, int(q * len(ordered)))], 3)

    return {"count": len(values), "p50_ms": at(0.50), "p90_ms": at(0.90), "p99_ms": at(0.99),
            "max_ms": round(1000 * ordered[-1], 3),
            "mean_ms": round(1000 * statistics.fmean(values), 3)}


# ---------------------------------------------------------------------- the load process


async def _generate(base: str, rate: float, seconds: float) -> dict[str, Any]:
    import aiohttp

    latencies: list[float] = []
    errors: dict[str, int] = {}
    started = time.monotonic()
    total = int(rate * seconds)

    async def one(session: aiohttp.ClientSession, path: str) -> None:
        t = time.perf_counter()
        try:
            async with session.get(base + path) as response:
                await response.read()
                if response.status != 200:
                    errors[str(response.status)] = errors.get(str(response.status), 0) + 1
                    return
        except (aiohttp.ClientError, OSError, TimeoutError) as exc:
            errors[type(exc).__name__] = errors.get(type(exc).__name__, 0) + 1
            return
        latencies.append(time.perf_counter() - t)

    timeout = aiohttp.ClientTimeout(total=10)
    connector = aiohttp.TCPConnector(limit=0)
    async with aiohttp.ClientSession(timeout=timeout, connector=connector) as session:
        tasks = []
        for i in range(total):
            delay = started + i / rate - time.monotonic()
            if delay > 0:
                await asyncio.sleep(delay)
            tasks.append(asyncio.create_task(one(session, LOAD_PATHS[i % len(LOAD_PATHS)])))
        await asyncio.gather(*tasks)
    elapsed = time.monotonic() - started
    return {"requests": total, "answered": len(latencies), "errors": errors,
            "rate_achieved": round(len(latencies) / elapsed, 1), "latency": _quantiles(latencies)}


# ---------------------------------------------------------------------- the serve side


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


async def _bench(rate: float, seconds: float, practice: int, warmup: float) -> dict[str, Any]:
    from adapter.serve.config import loads
    from adapter.serve.metrics import Metrics
    from adapter.serve.status import StatusServer
    from adapter.serve.supervisor import Supervisor

    port = _free_port()
    fake = subprocess.Popen(
        [sys.executable, "-m", "adapter.cli", "--log-level", "error", "tenhou-server",
         "--port", str(port), "--games", "100000", "--no-log"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    text = "".join(f"""
[sessions.practice-{i}]
kind = "local"
variant = "riichi"
pause = 0
""" for i in range(practice)) + f"""
[sessions.tenhou]
kind = "tenhou"
server = "127.0.0.1:{port}"
games = 100000
connect_timeout = 30
"""
    samples: list[tuple[float, str, float]] = []  # (when, kind, seconds)
    with tempfile.TemporaryDirectory() as logs:
        metrics = Metrics()
        supervisor = Supervisor(loads(text, environ={}), metrics, log_dir=logs)
        server = StatusServer(supervisor, metrics, roots=[logs])
        url = await server.start("127.0.0.1", 0)
        supervisor.start()
        for handle in supervisor.handles.values():
            _sample(handle, samples)
        lag = asyncio.create_task(_loop_lag(samples))
        try:
            await asyncio.sleep(warmup)
            quiet_from = time.monotonic()
            await asyncio.sleep(seconds)
            quiet_to = loaded_from = time.monotonic()
            load = await asyncio.create_subprocess_exec(
                sys.executable, "-m", "adapter.serve.loadbench", "--generate", url.rstrip("/"),
                "--rate", str(rate), "--seconds", str(seconds),
                stdout=asyncio.subprocess.PIPE)
            out, _ = await load.communicate()
            loaded_to = time.monotonic()
            hands = {n: h.hands_played for n, h in supervisor.handles.items()}
        finally:
            lag.cancel()
            await supervisor.stop(10)
            await server.stop()
            fake.kill()
            fake.wait(10)

    def window(kind: str, start: float, end: float) -> dict[str, Any]:
        return _quantiles([s for t, k, s in samples if k == kind and start <= t < end])

    return {
        "rate": rate, "seconds": seconds, "practice_sessions": practice,
        "cpus": os.cpu_count(), "load": json.loads(out),
        "decisions": {
            kind: {"without_load": window(kind, quiet_from, quiet_to),
                   "with_load": window(kind, loaded_from, loaded_to)}
            for kind in ("tenhou", "local")},
        "loop_lag": {"without_load": window("loop_lag", quiet_from, quiet_to),
                     "with_load": window("loop_lag", loaded_from, loaded_to)},
        "hands_played": hands,
    }


async def _loop_lag(samples: list[tuple[float, str, float]], every: float = 0.01) -> None:
    """How late the event loop wakes a timer: what every socket read and write waits."""
    while True:
        start = time.monotonic()
        await asyncio.sleep(every)
        now = time.monotonic()
        samples.append((now, "loop_lag", max(0.0, now - start - every)))


def _sample(handle: Any, samples: list[tuple[float, str, float]]) -> None:
    """Keep every decision time the session reports, with when it arrived."""
    report = handle.decision
    kind = handle.spec.kind

    def decision(policy: str, elapsed: float, fallback: str) -> None:
        samples.append((time.monotonic(), kind, elapsed))
        report(policy, elapsed, fallback)

    handle.decision = decision


def _table(result: dict[str, Any]) -> str:
    load = result["load"]
    lines = [f"status server load: {load['requests']} requests at {result['rate']:g}/s for "
             f"{result['seconds']:g} s, {load['answered']} answered "
             f"({load['rate_achieved']}/s), errors {load['errors'] or 'none'}; latency p50 "
             f"{load['latency'].get('p50_ms')} ms, p99 {load['latency'].get('p99_ms')} ms, "
             f"max {load['latency'].get('max_ms')} ms",
             f"{'':<40}{'count':>7}{'p50 ms':>9}{'p90 ms':>9}{'p99 ms':>9}"
             f"{'max ms':>9}"]
    names = {"tenhou": "tenhou (serve process)", "local": "practice (workers)",
             "loop_lag": "event loop lag"}
    rows = {**result["decisions"], "loop_lag": result["loop_lag"]}
    for kind, phases in rows.items():
        for phase, q in phases.items():
            label = f"{names[kind]}, {phase.replace('_', ' ')}"
            lines.append(f"{label:<40}{q['count']:>7}{q.get('p50_ms', '-'):>9}"
                         f"{q.get('p90_ms', '-'):>9}{q.get('p99_ms', '-'):>9}"
                         f"{q.get('max_ms', '-'):>9}")
    lines.append(f"({result['practice_sessions']} practice sessions + 1 Tenhou session vs the "
                 f"fake server; {result['cpus']} CPUs; decision times are the brain's, "
                 "request to answer; the loop lag is how late a 10 ms timer fires)")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m adapter.serve.loadbench",
                                description=__doc__.split("\n\n")[0])
    p.add_argument("--rate", type=float, default=100.0, help="requests per second")
    p.add_argument("--seconds", type=float, default=10.0, help="length of each phase")
    p.add_argument("--practice", type=int, default=2, help="practice sessions")
    p.add_argument("--warmup", type=float, default=3.0)
    p.add_argument("--json", action="store_true")
    p.add_argument("--generate", metavar="URL", help=argparse.SUPPRESS)  # the load process
    args = p.parse_args(argv)
    if args.generate:
        print(json.dumps(asyncio.run(_generate(args.generate, args.rate, args.seconds))))
        return 0
    from adapter.logging_setup import configure_logging

    configure_logging(json_lines=True, level="error")
    result = asyncio.run(_bench(args.rate, args.seconds, args.practice, args.warmup))
    print(json.dumps(result, indent=2) if args.json else _table(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
