"""`mjbot bench logkeep`: what compressing finished game logs in place saves and costs.

On real logs, played here at the local table (``--games`` per ``--variant``, as a practice
session plays them) or copied from folders given: the size before and after (gzip level 6, the
upkeep's), the CPU a log to compress and to inflate again, and the serve process's whole pass
over them (footer read, write, fsync, rename, removal: process and wall time). The reference,
measured in the same run on the same logs, is the CPU to parse each log (replay.log.parse_log,
what `mjbot replay` and the viewer do to every log they open): the ratio says how many parses a
compression costs.

``--quota N``: a serve process's start-up over N compressed logs of today in a session with a
daily quota, whose count of the day's games inflates each: how long the event loop (the status
page, every platform session's line) is held by it. The reference, measured in the same run on
the same folder, is the count run on the loop, as start-up ran it before; the figure, start-up
now (the count in the session's task, in a thread): the longest the loop went unanswered.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime as dt
import gzip
import shutil
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from adapter.bench.common import VARIANTS, add_bench, report
from adapter.commands import UserInputError, add_variant_option, at_least
from replay import logzip
from replay.log import GZ_SUFFIX, SUFFIX, is_log_name, parse_log, plain_name


def _played(folder: Path, variants: list[str], games: int, seed: int) -> None:
    from adapter.serve.practice import PracticeSettings, play_one

    for variant in variants:
        settings = PracticeSettings(session=f"bench-{variant}", variant=variant, seed=seed,
                                    log_dir=str(folder / f"bench-{variant}"), pause=0)
        for game in range(games):
            play_one(settings, game, threading.Event(), lambda _report: None)


def walk_cost(files: int) -> dict[str, Any]:
    """A pass of the upkeep over ``files`` logs already compressed (one byte each, ten day
    folders of a practice session; nothing to do but walk and count): seconds and CPU, the
    second pass of two (the first warms the folder cache)."""
    from adapter.serve.config import LogUpkeep
    from adapter.serve.logkeep import LogKeeper
    from adapter.serve.metrics import Metrics

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        per_day = -(-files // 10)  # rounded up: every file made
        made = 0
        for day in range(10):
            folder = root / "practice" / "local" / f"2026-01-{day + 1:02d}"
            folder.mkdir(parents=True)
            for i in range(min(per_day, files - made)):
                (folder / f"{i:06d}-practice-s0-g{made}{SUFFIX}{logzip.GZ}").write_bytes(b"x")
                made += 1
        keeper = LogKeeper(root, LogUpkeep(low_disk_mb=0), Metrics())
        keeper.run_pass()
        start, wall = time.process_time(), time.perf_counter()
        keeper.run_pass()
        return {"files": made, "pass_seconds": round(time.perf_counter() - wall, 3),
                "pass_cpu_seconds": round(time.process_time() - start, 3)}


async def _loop_held(started: Any, done: Any) -> float:
    """The longest the event loop went without running a 1 ms tick, from ``started()`` (which
    may hold it) until ``done()``."""
    longest = 0.0
    last = time.perf_counter()
    finished = asyncio.Event()

    async def tick() -> None:
        nonlocal longest, last
        while not finished.is_set():
            await asyncio.sleep(0.001)
            now = time.perf_counter()
            longest, last = max(longest, now - last), now

    ticker = asyncio.create_task(tick())
    await asyncio.sleep(0.01)
    last = time.perf_counter()
    started()
    while not done():
        await asyncio.sleep(0.001)
    await asyncio.sleep(0.01)
    finished.set()
    await ticker
    return longest


def startup_cost(files: int, log: bytes) -> dict[str, Any]:
    """A serve start-up with ``files`` compressed logs of today (``log``'s bytes, a finished
    game) under a session whose quota counts them: the loop held by the count on it (before)
    and by the start-up now."""
    from adapter.serve.config import loads
    from adapter.serve.metrics import Metrics
    from adapter.serve.runners import Outcome, RunContext
    from adapter.serve.supervisor import SessionHandle, Supervisor

    async def idle(_spec: Any, ctx: RunContext) -> Outcome:
        await ctx.stop.event.wait()
        return Outcome("stopped")

    config = loads('[logs]\ncompress = false\ncheck_every = 3600\nlow_disk_mb = 0\n'
                   '[sessions.drill]\nkind = "local"\n[sessions.drill.limits]\n'
                   f'games_per_day = {files + 1}\n', environ={})
    packed = gzip.compress(log, logzip.LEVEL)

    async def measure(root: str) -> dict[str, Any]:
        sup = Supervisor(config, runners={"local": idle}, log_dir=root)
        handle = SessionHandle(config.sessions[0], Metrics(), root, idle)
        start = time.perf_counter()
        before = await _loop_held(handle.count_today, lambda: True)  # on the loop, as it was
        count_seconds = time.perf_counter() - start
        counted = handle.quota.count
        try:
            now = await _loop_held(sup.start, lambda: sup.handles["drill"].counted)
        finally:
            await sup.stop(5)
        return {"files": files, "counted": counted, "count_seconds": round(count_seconds, 3),
                "loop_held_before_ms": round(before * 1e3, 1),
                "loop_held_now_ms": round(now * 1e3, 1),
                "held_before_vs_now": round(before / now, 1) if now else None}

    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "drill" / "local" / f"{dt.date.today():%Y-%m-%d}"
        folder.mkdir(parents=True)
        for n in range(files):
            (folder / f"{n:06d}-drill-s0-g{n}{SUFFIX}{logzip.GZ}").write_bytes(packed)
        return asyncio.run(measure(tmp))


def bench_logkeep(dirs: list[str], games: int, variants: list[str], seed: int = 0,
                  quota_logs: int = 0) -> dict[str, Any]:
    from adapter.serve.config import LogUpkeep
    from adapter.serve.logkeep import LogKeeper
    from adapter.serve.metrics import Metrics

    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "logs"
        if dirs:
            for n, given in enumerate(map(Path, dirs)):
                # a serve's folder is mostly logs it compressed already: measured on their
                # bytes inflated again, as they were before (the bench said it held no logs)
                sources = sorted(p for p in given.rglob("*") if is_log_name(p.name)) \
                    if given.is_dir() else [given]
                for path in sources:
                    target = folder / str(n) / path.relative_to(
                        given if given.is_dir() else given.parent)
                    target = target.with_name(plain_name(target.name))
                    target.parent.mkdir(parents=True, exist_ok=True)
                    if path.name.endswith(GZ_SUFFIX):
                        target.write_bytes(logzip.read_bytes(path))
                        shutil.copystat(path, target)
                    else:
                        shutil.copy2(path, target)
        else:
            _played(folder, variants, games, seed)
        files = sorted(folder.rglob(f"*{SUFFIX}"))
        if not files:
            raise UserInputError(f"no game logs (*{SUFFIX} or *{GZ_SUFFIX}) in "
                                 f"{', '.join(dirs)}")
        datas = [p.read_bytes() for p in files]
        start = time.process_time()
        for data in datas:
            parse_log(data)
        parse = (time.process_time() - start) / len(datas)
        start = time.process_time()
        packed = [gzip.compress(d, logzip.LEVEL) for d in datas]
        compress = (time.process_time() - start) / len(datas)
        start = time.process_time()
        for p in packed:
            logzip.inflate(p)
        inflate = (time.process_time() - start) / len(datas)
        keeper = LogKeeper(folder, LogUpkeep(compress_after=0, low_disk_mb=0), Metrics())
        start, wall = time.process_time(), time.perf_counter()
        done = keeper.run_pass()
        pass_cpu = time.process_time() - start
        pass_wall = time.perf_counter() - wall
        # the size is of the logs the pass compressed: one without its footer (a game in play,
        # or cut by a crash) is left as it is, and counting it made the ratio up (40:1 where
        # one log of 11 was compressed)
        by_pass = [(len(d), p.with_name(p.name + logzip.GZ))
                   for p, d in zip(files, datas, strict=True)]
        sizes = [(n, gz.stat().st_size) for n, gz in by_pass if gz.exists()]
        quota = startup_cost(quota_logs, datas[0]) if quota_logs else None
    count = len(sizes)
    before, after = sum(n for n, _ in sizes), sum(z for _, z in sizes)
    return {
        "logs": len(datas), "compressed": done["compressed"], "left": len(datas) - count,
        "source": ", ".join(dirs) if dirs else f"{games} game(s) each of "
                                               f"{', '.join(variants)}, seed {seed}",
        "bytes_per_log": round(before / count) if count else None,
        "gz_bytes_per_log": round(after / count) if count else None,
        "ratio": round(before / after, 2) if after else None,
        "compress_ms_per_log": round(compress * 1e3, 3),
        "inflate_ms_per_log": round(inflate * 1e3, 3),
        "parse_ms_per_log": round(parse * 1e3, 3),
        "compress_vs_parse": round(compress / parse, 2) if parse else None,
        "pass_cpu_ms_per_log": round(pass_cpu / count * 1e3, 3) if count else None,
        "pass_wall_ms_per_log": round(pass_wall / count * 1e3, 3) if count else None,
        **({"quota": quota} if quota else {}),
    }


def register(benches: Any) -> None:
    p = add_bench(benches, "logkeep", run, "game logs compressed in place: size and cost "
                  "vs parsing them")
    p.add_argument("dirs", nargs="*", metavar="DIR", help="folders (or files) of our logs, "
                   "plain or compressed, to measure on (default: logs played here)")
    p.add_argument("--games", type=at_least(1), default=4, help="games per variant played "
                   "when no DIR is given (default %(default)s)")
    add_variant_option(p, None, action="append", help="variants played (repeat; default all)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--walk", type=at_least(0), default=0, metavar="N", help="also time a "
                   "pass over N compressed logs with nothing to do (default: not timed)")
    p.add_argument("--quota", type=at_least(0), default=0, metavar="N", help="also measure "
                   "how long serve's start-up holds its event loop counting the day's games "
                   "over N compressed logs of today, against the count on the loop (default: "
                   "not measured)")


def run(args: argparse.Namespace) -> int:
    missing = [d for d in args.dirs if not Path(d).exists()]
    if missing:
        raise UserInputError(f"no such file or folder: {', '.join(missing)}")
    result = bench_logkeep(args.dirs, args.games, args.variant or list(VARIANTS), args.seed,
                           args.quota)
    if args.walk:
        result["walk"] = walk_cost(args.walk)
    report(args, result, text)
    return 0


def text(r: dict[str, Any]) -> str:
    return "\n".join([
        f"game logs compressed in place (gzip level {logzip.LEVEL}), {r['logs']} logs "
        f"({r['source']})",
        *([f"  left as they are {r['left']:>8} without their footer (a game in play, or cut)"
           + ("" if r["left"] == r["logs"] else ": the size and the pass are of the others")]
          if r["left"] else []),
        f"  size            {r['bytes_per_log']:>10,} -> {r['gz_bytes_per_log']:,} bytes/log"
        f"   ratio {r['ratio']}:1" if r["ratio"] else
        "  size            none compressed: no log has its footer",
        f"  compress        {r['compress_ms_per_log']:>10} ms CPU/log",
        f"  inflate         {r['inflate_ms_per_log']:>10} ms CPU/log",
        f"  parse (ref)     {r['parse_ms_per_log']:>10} ms CPU/log",
        f"  compress/parse  {r['compress_vs_parse']:>10} x",
        f"  serve's pass    {r['pass_cpu_ms_per_log']:>10} ms CPU/log, "
        f"{r['pass_wall_ms_per_log']} ms wall/log (footer, write, fsync, rename)"
        if r["pass_cpu_ms_per_log"] is not None else "  serve's pass    compressed none",
        *([f"  a pass, nothing to do, over {r['walk']['files']:,} logs: "
           f"{r['walk']['pass_seconds']} s ({r['walk']['pass_cpu_seconds']} s CPU)"]
          if "walk" in r else []),
        *([f"  start-up, quota count over {q['files']:,} compressed logs of today "
           f"({q['counted']:,} counted, {q['count_seconds']} s): event loop held "
           f"{q['loop_held_now_ms']} ms at most (counted on the loop, the reference: "
           f"{q['loop_held_before_ms']} ms; {q['held_before_vs_now']}x)"]
          if (q := r.get("quota")) else [])])
