"""`mjbot bench idleread`: what the viewer's idle whole reads of listed logs cost the sessions
of a serve process, read by the low-priority child (adapter/serve/wholeread.py) and, the
reference, in the viewer's pool thread as they were, measured in the same run against a quiet
phase.

A serve-like process: one Tenhou session (rulebased) against the fake Tenhou server, and the
viewer on a folder of ``--logs`` match logs of ``--games`` local-table games each. Phases:
quiet (``--seconds``, no page asked), then for each way of reading: one ``/api/games`` page
asked (every log listed: each is to be read whole) and the phase lasts until every log is read
(at most ``--limit`` seconds), then quiet again. The files are touched between the two reads
(a new version each: read again). Each phase reports the session's decisions per second and
the event loop's lag; the ratios are those decisions per second against both quiet phases'
(the session's pace drifts over a run, and the shared machine's load with it).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import tempfile
import time
from pathlib import Path
from typing import Any

from adapter.bench.common import add_bench, report
from adapter.commands import at_least, positive_seconds

MODES = ("thread", "child")  # the reference first, then the child
GAP = 1.0  # seconds between two phases


def register(benches: Any) -> None:
    p = add_bench(benches, "idleread", run, "serve's sessions while the viewer reads listed "
                  "logs whole: in a low-priority child vs in its thread, vs a quiet phase")
    p.add_argument("--logs", type=at_least(1), default=6, help="match logs in the folder")
    p.add_argument("--games", type=at_least(1), default=40, help="games in each match log")
    p.add_argument("--seconds", type=positive_seconds, default=10.0,
                   help="the quiet phase's length")
    p.add_argument("--limit", type=positive_seconds, default=300.0,
                   help="the most seconds a phase of reads lasts")


def _folder(root: Path, logs: int, games: int) -> tuple[Path, int]:
    from adapter.bench.view import repeated, source_game

    game = source_game(root / "source", "riichi")
    data = repeated(game.read_bytes(), games)
    folder = root / "logs" / "match" / "2026-01-01"
    folder.mkdir(parents=True)
    for i in range(logs):
        (folder / f"1{i:05d}-match-s0-g{i}.mjlog.msgpack").write_bytes(data)
    return root / "logs", len(data)


async def bench_idleread(logs: int, games: int, seconds: float,
                         limit: float) -> dict[str, Any]:
    from adapter.bench.serve import _fake_tenhou, _free_port

    with tempfile.TemporaryDirectory(prefix="mjbot-bench-idleread-") as tmp:
        root, size = _folder(Path(tmp), logs, games)
        port = _free_port()
        fake = _fake_tenhou(port)
        try:
            phases = await _phases(port, root, Path(tmp) / "session", logs, seconds, limit)
        finally:
            fake.kill()
            fake.wait(10)
    quiet = round((phases["quiet"]["decisions"] + phases["quiet_after"]["decisions"])
                  / (phases["quiet"]["seconds"] + phases["quiet_after"]["seconds"]), 1)
    return {"logs": logs, "games": games, "bytes": size, **phases, "quiet_per_s": quiet,
            **{f"{mode}_ratio": round(phases[mode]["decisions_per_s"] / quiet, 2)
               if quiet else None for mode in MODES}}


async def _phases(port: int, root: Path, session_logs: Path, logs: int, seconds: float,
                  limit: float) -> dict[str, Any]:
    import aiohttp

    from adapter.bench.serve import _loop_lag, _quantiles, _sample
    from adapter.serve.config import loads
    from adapter.serve.metrics import Metrics
    from adapter.serve.status import StatusServer
    from adapter.serve.supervisor import Supervisor
    from adapter.serve.viewer import VIEW_READER

    config = loads(f'[sessions.tenhou]\nkind = "tenhou"\npolicy = "rulebased"\n'
                   f'server = "127.0.0.1:{port}"\ngames = 100000\nconnect_timeout = 30\n',
                   environ={})
    metrics = Metrics()
    supervisor = Supervisor(config, metrics, log_dir=str(session_logs))
    server = StatusServer(supervisor, metrics, roots=[str(root)])
    url = await server.start("127.0.0.1", 0)
    assert server.runner is not None
    reader, index = server.runner.app[VIEW_READER], server.index
    samples: list[tuple[float, str, float]] = []
    supervisor.start()
    for handle in supervisor.handles.values():
        _sample(handle, samples, [])
    lag = asyncio.ensure_future(_loop_lag(samples))

    def phase(start: float, end: float, **more: Any) -> dict[str, Any]:
        decisions = [x for t, k, x in samples if k == "tenhou" and start <= t < end]
        return {"seconds": round(end - start, 2), "decisions": len(decisions),
                "decisions_per_s": round(len(decisions) / max(end - start, 1e-9), 1),
                "loop_lag": _quantiles([x for t, k, x in samples
                                        if k == "loop_lag" and start <= t < end]), **more}

    result: dict[str, Any] = {}
    try:
        await asyncio.sleep(3)  # the session logged in and playing
        start = time.monotonic()
        await asyncio.sleep(seconds)
        result["quiet"] = phase(start, time.monotonic())
        async with aiohttp.ClientSession() as client:
            for n, mode in enumerate(MODES):
                await asyncio.sleep(GAP)
                reader.apart = mode == "child" and os.name == "posix"
                for path in root.rglob("*.mjlog.msgpack"):  # a new version: read again
                    os.utime(path, ns=(time.time_ns(), time.time_ns() + n))
                before, children = index.logs.counts.read_whole, reader.reads
                start = time.monotonic()
                async with client.get(url.rstrip("/") + f"/api/games?limit={logs}") as r:
                    unread = (await r.json())["unread"]
                while (index.logs.counts.read_whole - before < unread
                       and time.monotonic() - start < limit):
                    await asyncio.sleep(0.05)
                result[mode] = phase(start, time.monotonic(), unread=unread,
                                     read=index.logs.counts.read_whole - before,
                                     by_child=reader.reads - children)
        await asyncio.sleep(GAP)
        start = time.monotonic()
        await asyncio.sleep(seconds)
        result["quiet_after"] = phase(start, time.monotonic())
    finally:
        lag.cancel()
        await supervisor.stop(10)
        await server.stop()
    return result


def run(args: argparse.Namespace) -> int:
    from adapter.logging_setup import configure_logging

    # the session's errors only, as `bench serve`: its info lines (each login and game
    # logged) filled stderr around the table
    configure_logging(json_lines=True, level="error")
    report(args, asyncio.run(bench_idleread(args.logs, args.games, args.seconds,
                                            args.limit)), text)
    return 0


def text(r: dict[str, Any]) -> str:
    def row(label: str, p: dict[str, Any]) -> str:
        lag = p["loop_lag"]
        reads = f", {p['read']}/{p['unread']} read ({p['by_child']} by the child)" \
            if "read" in p else ""
        return (f"  {label:<24}{p['decisions_per_s']:>8.1f} decisions/s over {p['seconds']} s; "
                f"loop lag p50 {lag.get('p50_ms')} ms, p99 {lag.get('p99_ms')} ms{reads}")

    return "\n".join([
        f"serve's Tenhou session while the viewer reads {r['logs']} listed {r['games']}-game "
        f"logs whole ({r['bytes'] / 1e6:.1f} MB each)",
        row("quiet (reference)", r["quiet"]),
        row("read in the thread", r["thread"]),
        row("read by the child", r["child"]),
        row("quiet again (reference)", r["quiet_after"]),
        f"  decisions/s vs quiet ({r['quiet_per_s']}/s, both quiet phases): "
        f"thread {r['thread_ratio']} x, child {r['child_ratio']} x"])
