"""``mjbot bench serve``: the tournament process's decision latency with and without HTTP load on
the status server (a benchmark: it reports, it asserts nothing).

One process runs what ``mjbot serve`` runs: the supervisor with local practice sessions (each
in its worker process) and a Tenhou session playing the fake Tenhou server (a subprocess) on a
real socket, whose decisions are made in this process beside the event loop that also serves
HTTP; and the status server. After a warm-up, decision latency is sampled for ``--seconds``
without load, then for as long again while a separate load process sends ``--rate`` requests
per second (open loop: on schedule, whether or not earlier ones have been answered) to
/health, /metrics, /api/status, /api/games and /, round robin.

``--viewer N``: the load is the replay viewer's instead: N clients at once (closed loop: each
asks again when answered), for ``--seconds``, ask for the largest hand of a practice game
written before the start (``/api/games/ID/hands/K``, a few hundred KB of JSON). In both
phases a probe (a process of its own) asks for /health ``--probe-rate`` times a second, so
that the table shows /health's latency beside the decisions' with and without the load.
Loopback only, and bounded: N clients, each phase ``--seconds`` long.

    mjbot bench serve [--rate 100] [--seconds 10] [--practice 2] [--json FILE]
    mjbot bench serve --viewer 50 [--seconds 10] [--practice 0]

(``python -m adapter.bench.serve --generate URL`` is the load process it starts.)
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from typing import Any

from adapter.bench.common import add_bench, child_figures, report
from adapter.commands import (
    UserInputError,
    add_fallback_argument,
    fallback_verdict,
    positive_seconds,
    require_networks,
    require_policy,
)
from adapter.own_python import own_python
from brain.tally import FallbackTally

LOAD_PATHS = ("/health", "/metrics", "/api/status", "/api/games", "/")
MAX_VIEWER_CLIENTS = 500


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


async def _generate(base: str, rate: float, seconds: float, viewer: str = "",
                    clients: int = 0, probe_rate: float = 0.0) -> dict[str, Any]:
    """The load: ``rate`` requests a second round robin over LOAD_PATHS, or (``viewer``, a
    path) ``clients`` closed-loop clients asking for it; and a /health probe."""
    import aiohttp

    latencies: list[float] = []
    probes: list[float] = []
    errors: dict[str, int] = {}
    started = time.monotonic()
    ends = started + seconds
    total = 0 if viewer else int(rate * seconds)

    async def one(session: aiohttp.ClientSession, path: str, into: list[float]) -> None:
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
        into.append(time.perf_counter() - t)

    async def client(session: aiohttp.ClientSession) -> int:
        asked = 0
        while time.monotonic() < ends:
            await one(session, viewer, latencies)
            asked += 1
        return asked

    async def probe(session: aiohttp.ClientSession) -> None:
        tasks = []
        for i in range(int(probe_rate * seconds)):
            delay = started + i / probe_rate - time.monotonic()
            if delay > 0:
                await asyncio.sleep(delay)
            tasks.append(asyncio.create_task(one(session, "/health", probes)))
        await asyncio.gather(*tasks)

    timeout = aiohttp.ClientTimeout(total=10)
    async with aiohttp.ClientSession(timeout=timeout, connector=aiohttp.TCPConnector(
            limit=0)) as session, aiohttp.ClientSession(
            timeout=timeout, connector=aiohttp.TCPConnector(limit=0)) as probing:
        probing_task = asyncio.create_task(probe(probing)) if probe_rate > 0 else None
        if viewer:
            total = sum(await asyncio.gather(*(client(session) for _ in range(clients))))
        else:
            tasks = []
            for i in range(total):
                delay = started + i / rate - time.monotonic()
                if delay > 0:
                    await asyncio.sleep(delay)
                tasks.append(asyncio.create_task(
                    one(session, LOAD_PATHS[i % len(LOAD_PATHS)], latencies)))
            await asyncio.gather(*tasks)
        if probing_task is not None:
            await probing_task
    elapsed = time.monotonic() - started
    return {"requests": total, "answered": len(latencies), "errors": errors,
            "rate_achieved": round(len(latencies) / elapsed, 1), "latency": _quantiles(latencies),
            "health": _quantiles(probes)}


# ---------------------------------------------------------------------- the serve side


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]  # an AF_INET address: (host, port)
        return port


def _fake_tenhou(port: int) -> subprocess.Popen[bytes]:
    """The fake Tenhou server on ``port``, silent, serving 100000 games: a bench's session
    plays it until the bench kills it."""
    return subprocess.Popen(
        own_python("-m", "adapter.cli", "--log-level", "error", "tenhou-server",
                   "--port", str(port), "--games", "100000", "--no-log"),
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def _viewer_game(logs: str) -> tuple[str, int, int]:
    """A practice game written into the log folder for the viewer load: its id, its largest
    hand's number and that hand's JSON size."""
    import threading
    from pathlib import Path

    from adapter.serve.practice import PracticeSettings, play_one
    from replay import formats
    from replay.timeline import build

    reports: list[dict[str, Any]] = []
    settings = PracticeSettings(session="viewer", variant="riichi", log_dir=logs, pause=0)
    if not play_one(settings, 1, threading.Event(), reports.append):
        raise RuntimeError("the viewer's practice game did not finish")
    path = Path(reports[-1]["log"])
    timeline = build(formats.read(path.read_bytes(), path))
    sizes = [len(json.dumps({"label": h["label"], "steps": timeline.steps(n),
                             "result": h["result"]})) for n, h in enumerate(timeline.hands)]
    hand = max(range(len(sizes)), key=sizes.__getitem__)
    return "~".join(["0", *path.relative_to(logs).parts]), hand, sizes[hand]


async def _generator(url: str, args: list[str]) -> dict[str, Any]:
    load = await asyncio.create_subprocess_exec(
        *own_python("-m", "adapter.bench.serve", "--generate", url.rstrip("/"), *args),
        stdout=asyncio.subprocess.PIPE)
    out, _ = await load.communicate()
    return child_figures(out, "the load generator")


async def _bench(rate: float | None, seconds: float, practice: int, warmup: float,
                 viewer: int = 0, probe_rate: float = 20.0,
                 policy: str = "rulebased") -> dict[str, Any]:
    port = _free_port()
    fake = _fake_tenhou(port)
    try:
        return await _bench_on(port, rate, seconds, practice, warmup, viewer, probe_rate,
                               policy)
    finally:  # however the bench ends (the viewer's game or the status port failed, Ctrl-C
        # while they start): the fake server, which serves 100000 games, never outlives it
        fake.kill()
        fake.wait(10)


async def _bench_on(port: int, rate: float | None, seconds: float, practice: int,
                    warmup: float, viewer: int, probe_rate: float,
                    policy: str) -> dict[str, Any]:
    """The bench against the fake Tenhou server on ``port``, every session playing
    ``policy``."""
    from adapter.serve.config import loads
    from adapter.serve.metrics import Metrics
    from adapter.serve.status import StatusServer
    from adapter.serve.supervisor import Supervisor

    text = "".join(f"""
[sessions.practice-{i}]
kind = "local"
variant = "riichi"
pause = 0
policy = {json.dumps(policy)}
""" for i in range(practice)) + f"""
[sessions.tenhou]
kind = "tenhou"
policy = {json.dumps(policy)}
server = "127.0.0.1:{port}"
games = 100000
connect_timeout = 30
"""
    samples: list[tuple[float, str, float]] = []  # (when, kind, seconds)
    fallbacks: list[tuple[float, str, str]] = []  # (when, kind, why; "" for the policy's own)
    with tempfile.TemporaryDirectory() as logs:
        game = _viewer_game(logs) if viewer else None
        load_args = ["--seconds", str(seconds), "--probe-rate", "0"]
        if game is not None:
            load_args += ["--viewer", str(viewer), "--path",
                          f"/api/games/{game[0]}/hands/{game[1]}"]
        else:
            load_args += ["--rate", str(rate)]
        metrics = Metrics()
        supervisor = Supervisor(loads(text, environ={}), metrics, log_dir=logs)
        server = StatusServer(supervisor, metrics, roots=[logs])
        url = await server.start("127.0.0.1", 0)
        supervisor.start()
        for handle in supervisor.handles.values():
            _sample(handle, samples, fallbacks)
        lag = asyncio.create_task(_loop_lag(samples))
        try:
            await asyncio.sleep(warmup)
            hands_at = [{n: h.hands_played for n, h in supervisor.handles.items()}]
            quiet_from = time.monotonic()
            # the probe in a process of its own: the load's client loop does not delay it
            probe = ["--seconds", str(seconds), "--rate", "0", "--probe-rate", str(probe_rate)]
            quiet = await _generator(url, probe)
            quiet_to = loaded_from = time.monotonic()
            hands_at.append({n: h.hands_played for n, h in supervisor.handles.items()})
            loaded, probed = await asyncio.gather(_generator(url, load_args),
                                                  _generator(url, probe))
            loaded_to = time.monotonic()
            hands_at.append({n: h.hands_played for n, h in supervisor.handles.items()})
        finally:
            lag.cancel()
            await supervisor.stop(10)
            await server.stop()

    def window(kind: str, start: float, end: float) -> dict[str, Any]:
        return _quantiles([s for t, k, s in samples if k == kind and start <= t < end])

    def tally(kind: str) -> dict[str, Any]:
        """Both phases' decisions of ``kind``: a time the brain's fallback answered is
        not the policy's."""
        counted = FallbackTally()
        for t, k, why in fallbacks:
            if k == kind and quiet_from <= t < loaded_to:
                counted.record(why)
        return counted.as_dict()

    rows = {kind: {"without_load": window(kind, quiet_from, quiet_to),
                   "with_load": window(kind, loaded_from, loaded_to)}
            for kind in ("tenhou", "local", "loop_lag")}
    return {
        "rate": rate, "seconds": seconds, "practice_sessions": practice, "policy": policy,
        "cpus": os.cpu_count(), "load": loaded,
        "viewer": None if game is None else {"clients": viewer, "hand": game[1],
                                             "hand_json_bytes": game[2]},
        "health": {"without_load": quiet["health"], "with_load": probed["health"]},
        "hands_played": {n: {"without_load": hands_at[1][n] - hands_at[0][n],
                             "with_load": hands_at[2][n] - hands_at[1][n]}
                         for n in hands_at[0]},
        "decisions": {kind: rows[kind] for kind in ("tenhou", "local")},
        # per kind, over both phases: decisions whose answer the brain gave in the policy's
        # place (FallbackTally.as_dict)
        "fallbacks": {kind: tally(kind) for kind in ("tenhou", "local")},
        "loop_lag": rows["loop_lag"],
        # the figure against the reference of the same run: the phase without load
        "p99_ratio_with_vs_without_load": {kind: _ratio(phases)
                                           for kind, phases in rows.items()},
    }


def _ratio(phases: dict[str, dict[str, Any]]) -> float | None:
    """p99 with load over p99 without; None where a phase has no sample (no practice)."""
    without, loaded = phases["without_load"].get("p99_ms"), phases["with_load"].get("p99_ms")
    return round(loaded / without, 2) if without and loaded is not None else None


async def _loop_lag(samples: list[tuple[float, str, float]], every: float = 0.01) -> None:
    """How late the event loop wakes a timer: what every socket read and write waits."""
    while True:
        start = time.monotonic()
        await asyncio.sleep(every)
        now = time.monotonic()
        samples.append((now, "loop_lag", max(0.0, now - start - every)))


def _sample(handle: Any, samples: list[tuple[float, str, float]],
            fallbacks: list[tuple[float, str, str]]) -> None:
    """Keep every decision time the session reports, with when it arrived, and whether the
    brain answered in the policy's place (then the time is not the policy's). An only legal
    action, which the policy is not asked, is not reported (adapter/serve/runners.py), so
    neither the fallback share's divisor nor the times count it."""
    report = handle.decision
    kind = handle.spec.kind

    def decision(policy: str, elapsed: float, fallback: str, fallback_kind: str = "") -> None:
        now = time.monotonic()
        samples.append((now, kind, elapsed))
        fallbacks.append((now, kind, fallback))
        report(policy, elapsed, fallback, fallback_kind)

    handle.decision = decision


def _table(result: dict[str, Any]) -> str:
    load = result["load"]
    viewer = result.get("viewer")
    what = (f"{viewer['clients']} viewer clients at once on hand {viewer['hand']} "
            f"({viewer['hand_json_bytes']} bytes of JSON): {load['requests']} requests"
            if viewer else f"{load['requests']} requests at {result['rate']:g}/s")
    lines = [f"status server load: {what} for {result['seconds']:g} s, {load['answered']} "
             f"answered ({load['rate_achieved']}/s), errors {load['errors'] or 'none'}; "
             f"latency p50 {load['latency'].get('p50_ms')} ms, p99 "
             f"{load['latency'].get('p99_ms')} ms, max {load['latency'].get('max_ms')} ms",
             f"{'':<40}{'count':>7}{'p50 ms':>9}{'p90 ms':>9}{'p99 ms':>9}"
             f"{'max ms':>9}"]
    names = {"tenhou": "tenhou (serve process)", "local": "practice (workers)",
             "loop_lag": "event loop lag", "health": "/health probe"}
    rows = {**result["decisions"], "loop_lag": result["loop_lag"], "health": result["health"]}
    for kind, phases in rows.items():
        for phase, q in phases.items():
            label = f"{names[kind]}, {phase.replace('_', ' ')}"
            lines.append(f"{label:<40}{q['count']:>7}{q.get('p50_ms', '-'):>9}"
                         f"{q.get('p90_ms', '-'):>9}{q.get('p99_ms', '-'):>9}"
                         f"{q.get('max_ms', '-'):>9}")
    ratios = result["p99_ratio_with_vs_without_load"]
    lines.append("p99 with load / without: " + ", ".join(
        f"{names[kind].split(' (')[0]} {'-' if r is None else f'{r:g}x'}"
        for kind, r in ratios.items()))
    lines.append(f"fallbacks ({result['policy']}): " + ", ".join(
        f"{names[kind]} {f['fallbacks']} of {f['decisions']}"
        + (f" (first: {f['first_fallback']})" if f["fallbacks"] else "")
        for kind, f in result["fallbacks"].items()))
    for name, phases in result["hands_played"].items():
        lines.append(f"hands played by {name}: {phases['without_load']} without load, "
                     f"{phases['with_load']} with load")
    lines.append(f"({result['practice_sessions']} practice sessions + 1 Tenhou session vs the "
                 f"fake server; {result['cpus']} CPUs; decision times are the brain's, "
                 "request to answer; the loop lag is how late a 10 ms timer fires)")
    return "\n".join(lines)


def register(benches: Any) -> None:
    p = add_bench(benches, "serve", run, "decision latency of the serve process with and "
                  "without HTTP load (loopback)")
    p.add_argument("--rate", type=float, default=None,
                   help="the load: requests per second round robin (default 100)")
    p.add_argument("--seconds", type=float, default=10.0, help="length of each phase")
    p.add_argument("--practice", type=int, default=2, help="practice sessions")
    p.add_argument("--warmup", type=float, default=3.0, help="seconds before the first phase")
    p.add_argument("--viewer", type=int, default=0, metavar="N",
                   help=f"the load: N replay viewer clients at once (1..{MAX_VIEWER_CLIENTS})")
    p.add_argument("--probe-rate", type=float, default=20.0,
                   help="/health requests per second in both phases")
    p.add_argument("--policy", default="rulebased",
                   help="what every session plays (a policy name, nn@FILE, mc@OPTIONS)")
    add_fallback_argument(p)


def _check(args: argparse.Namespace) -> None:
    """Refuse an option out of range in one line naming it (not 0 <= x: nan too; a rate
    of inf or nan was the load process's traceback)."""
    checks = [
        ("--viewer", args.viewer, 0 <= args.viewer <= MAX_VIEWER_CLIENTS,
         f"0..{MAX_VIEWER_CLIENTS} clients"),
        ("--seconds", args.seconds, 0 < args.seconds <= 600, "seconds in (0, 600]"),
        ("--warmup", args.warmup, 0 <= args.warmup <= 600, "seconds in [0, 600]"),
        ("--rate", args.rate, args.rate is None or 0 <= args.rate < math.inf,
         "requests per second, at least 0 and finite"),
        ("--probe-rate", args.probe_rate, 0 <= args.probe_rate < math.inf,
         "requests per second, at least 0 and finite"),
        ("--practice", args.practice, args.practice >= 0, "sessions, at least 0"),
    ]
    for option, value, good, wanted in checks:
        if not good:
            raise UserInputError(f"{option} {value:g}: {wanted}")


def run(args: argparse.Namespace) -> int:
    _check(args)
    require_policy(args.policy)
    require_networks([args.policy], "riichi")
    if args.viewer and args.rate is not None:  # else the rate was ignored, and written down
        raise UserInputError("--rate and --viewer are two loads: give one")
    if not args.viewer and args.rate is None:
        args.rate = 100.0
    from adapter.logging_setup import configure_logging

    configure_logging(json_lines=True, level="error")
    result = asyncio.run(_bench(args.rate, args.seconds, args.practice, args.warmup,
                                args.viewer, args.probe_rate, args.policy))
    report(args, result, _table)
    # a run whose sessions' policy did not really play is no figure of that policy's
    return fallback_verdict(args, {f"{args.policy} in the {kind} session"
                                   + ("s" if kind == "local" else ""): f
                                   for kind, f in result["fallbacks"].items()})


def main(argv: list[str] | None = None) -> int:
    """The load (or probe) process the bench starts: ``python -m adapter.bench.serve
    --generate URL ...`` prints what it measured as one JSON line."""
    p = argparse.ArgumentParser(prog="python -m adapter.bench.serve")
    p.add_argument("--generate", metavar="URL", required=True)
    p.add_argument("--rate", type=float, default=0.0)
    p.add_argument("--seconds", type=positive_seconds, default=1.0)
    p.add_argument("--viewer", type=int, default=0)
    p.add_argument("--probe-rate", type=float, default=0.0)
    p.add_argument("--path", default="")
    args = p.parse_args(argv)
    print(json.dumps(asyncio.run(_generate(args.generate, args.rate, args.seconds,
                                           args.path, args.viewer, args.probe_rate))))
    return 0


if __name__ == "__main__":
    sys.exit(main())
