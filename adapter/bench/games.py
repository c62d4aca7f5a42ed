"""`mjbot bench games`: the viewer's game list filtered on a folder of many logs, against
reading every log's header on each filter (what the list did before its index), measured in
the same run.

A folder of ``--logs`` real logs is made in a temporary folder: ``--sources`` one-hand games
of the local table (MCR), copied under new names into day folders of 300 as serve's sessions
write them (named and dated by their start, the header's start and game id made each copy's
own). Then one page of ``/api/games?q=WORDS`` as the viewer's handler computes it
(GameIndex.page, in this process), with a word no log holds, so that every log's header is
searched: the first filter (an empty index), the second (a warm index), and one after
``--new`` more logs are written. The reference is the same page read by a GameIndex with an
empty index each time. The warm filter, the one after new logs and their references are the
best of ROUNDS (new logs written before each of those rounds); the ratio is the warm filter's
time over the reference's. ``--cold``: before each timed page the logs' pages are dropped
from the page cache (posix_fadvise DONTNEED on these files only), as for logs not read
lately: each header the reference reads comes from the disk. Last, the index's memory per
log: the traced allocations of a fresh index filled with the folder's logs, divided by their
number.
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import shutil
import tempfile
import threading
import time
import tracemalloc
from pathlib import Path
from typing import Any

import msgpack

from adapter.bench.common import add_bench, report
from adapter.commands import UserInputError, at_least
from replay.log import is_log_name

PER_DAY = 300
ROUNDS = 3
QUERY = "nobody-plays-here"


def register(benches: Any) -> None:
    p = add_bench(benches, "games", run, "the viewer's game list filtered on many logs: its "
                  "index vs reading every header")
    p.add_argument("--logs", type=at_least(10), default=12_000, help="logs in the folder")
    p.add_argument("--new", type=at_least(1), default=1_000,
                   help="logs written before the last filter")
    p.add_argument("--sources", type=at_least(1), default=32,
                   help="local-table games the logs are copies of")
    p.add_argument("--cold", action="store_true",
                   help="drop the logs from the page cache before each timed page (Linux)")


def _sources(folder: Path, games: int) -> list[tuple[dict[str, Any], bytes]]:
    from adapter.serve.practice import PracticeSettings, play_one

    settings = PracticeSettings(session="bench", variant="mcr", log_dir=str(folder), pause=0,
                                hands=1)
    for n in range(games):
        if not play_one(settings, n, threading.Event(), lambda _report: None):
            raise RuntimeError("a local-table game for the bench did not finish")
    return [_split(p.read_bytes()) for p in sorted(folder.rglob("*.mjlog.msgpack"))]


def _split(log: bytes) -> tuple[dict[str, Any], bytes]:
    """A log's header frame and the frames after it."""
    unpacker = msgpack.Unpacker(raw=False, strict_map_key=False)
    unpacker.feed(log)
    head = next(unpacker)
    return head, log[unpacker.tell():]


def _write(root: Path, sources: list[tuple[dict[str, Any], bytes]], first: int,
           count: int) -> None:
    """Logs ``first`` .. ``first + count - 1``, PER_DAY a day, named and dated by start."""
    base = dt.datetime(2026, 1, 1)
    step = dt.timedelta(seconds=86400 // PER_DAY)
    days: set[Path] = set()
    for k in range(first, first + count):
        when = base + k * step
        day = root / "bench" / "local" / f"{when:%Y-%m-%d}"
        if day not in days:
            day.mkdir(parents=True, exist_ok=True)
            days.add(day)
        path = day / f"{when:%H%M%S}-bench-g{k}.mjlog.msgpack"
        head, rest = sources[k % len(sources)]
        path.write_bytes(msgpack.packb({**head, "started": when.isoformat(),
                                        "game_id": f"bench-g{k}"}) + rest)
        os.utime(path, (when.timestamp(), when.timestamp()))
    for day in days:
        newest = max(f.stat().st_mtime for f in day.iterdir())
        os.utime(day, (newest, newest))


def _evict(root: Path) -> None:
    """Drop the logs under ``root`` from the page cache (these files only; written first, as
    the kernel keeps a page not yet written)."""
    for path in root.rglob("*.mjlog.msgpack"):
        fd = os.open(path, os.O_RDONLY)
        try:
            os.fdatasync(fd)
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        finally:
            os.close(fd)


def _timed(call: Any, cold: Path | None = None) -> tuple[float, Any]:
    if cold is not None:
        _evict(cold)
    start = time.perf_counter()
    value = call()
    return time.perf_counter() - start, value


def bench_games(logs: int, new: int, sources: int, rounds: int = ROUNDS,
                cold: bool = False) -> dict[str, Any]:
    from adapter.serve.games import GameIndex

    with tempfile.TemporaryDirectory(prefix="mjbot-bench-games-") as tmp:
        made = _sources(Path(tmp) / "sources", sources)
        root = Path(tmp) / "logs"
        evict = root if cold else None
        _write(root, made, 0, logs)
        shutil.rmtree(Path(tmp) / "sources")
        index = GameIndex([str(root)])
        first, page = _timed(lambda: index.page(QUERY), evict)
        read_first = index.logs.counts.headers_read
        warm, reference = [], []
        for _ in range(rounds):  # the two alternated, the best of each: a busy machine
            seconds, again = _timed(lambda: index.page(QUERY), evict)
            warm.append(seconds)
            seconds, anew = _timed(lambda: GameIndex([str(root)]).page(QUERY), evict)
            reference.append(seconds)
            if not page == again == anew:
                raise RuntimeError("the indexed list differs from the one read anew")
        read_warm = index.logs.counts.headers_read - read_first
        after, reference_after, read_after = [], [], []
        written = logs
        for _ in range(rounds):  # ``new`` more logs each round
            _write(root, made, written, new)
            written += new
            before = index.logs.counts.headers_read
            after.append(_timed(lambda: index.page(QUERY), evict)[0])
            read_after.append(index.logs.counts.headers_read - before)
            reference_after.append(_timed(lambda: GameIndex([str(root)]).page(QUERY), evict)[0])
        per_log = _bytes_per_log(root)
    return {"logs": logs, "new": new, "sources": sources, "rounds": rounds, "cold": cold,
            "first_filter_s": round(first, 3), "headers_read_first": read_first,
            "second_filter_s": round(min(warm), 3), "headers_read_second": read_warm,
            "after_new_s": round(min(after), 3), "headers_read_after_new": max(read_after),
            "reference_s": round(min(reference), 3),
            "reference_after_new_s": round(min(reference_after), 3),
            "ratio_warm_vs_reference": round(min(warm) / min(reference), 3),
            "ratio_after_new_vs_reference": round(min(after) / min(reference_after), 3),
            "memory_entries": len(index.logs), "index_bytes_per_log": per_log}


def _bytes_per_log(root: Path) -> int:
    """What a fresh index holds per log, by tracemalloc: filled as the listing's walk fills
    it, each log's path and stat made from its folder's entry while traced (the index keeps
    that path string and its version's numbers; made before the trace, they went uncounted)."""
    from adapter.serve.logindex import LogIndex

    folders = [str(p) for p in root.rglob("*") if p.is_dir()]
    index = LogIndex()
    tracemalloc.start()
    try:
        for folder in folders:
            with os.scandir(folder) as entries:
                for entry in entries:
                    if is_log_name(entry.name) and entry.is_file(follow_symlinks=False):
                        index.summary(entry.path, entry.stat(follow_symlinks=False))
        held, _peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return round(held / max(1, len(index)))


def run(args: argparse.Namespace) -> int:
    if args.cold and not hasattr(os, "posix_fadvise"):
        raise UserInputError("--cold needs posix_fadvise (Linux), which this system lacks")
    report(args, bench_games(args.logs, args.new, args.sources, cold=args.cold), text)
    return 0


def text(r: dict[str, Any]) -> str:
    return "\n".join([
        f"game list filter, {r['logs']:,} logs (copies of {r['sources']} local-table games), "
        "a word no log holds" + (", page cache dropped before each" if r["cold"] else ""),
        f"  first filter     {r['first_filter_s']:>8} s   "
        f"{r['headers_read_first']:>7,} headers read",
        f"  second filter    {r['second_filter_s']:>8} s   "
        f"{r['headers_read_second']:>7,} headers read",
        # padded as the other labels are, whatever --new is (its figure stood out of the
        # column for any count but 1,000)
        f"  {'after ' + format(r['new'], ',') + ' new':<17}{r['after_new_s']:>8} s   "
        f"{r['headers_read_after_new']:>7,} headers read",
        f"  reference        {r['reference_s']:>8} s   (every header read, each filter; "
        f"{r['reference_after_new_s']} s after the new logs)",
        f"  ratio warm / ref {r['ratio_warm_vs_reference']:>8} x   (after the new logs: "
        f"{r['ratio_after_new_vs_reference']} x)",
        f"  index memory     {r['index_bytes_per_log']:>8} bytes a log (path included)"])
