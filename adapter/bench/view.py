"""`mjbot bench view`: the replay viewer on one long multi-game log, per hand, against the
same game in a short log, measured in the same run: linear costs give a ratio of about 1.

The files: one local-table game (``--variant``, our policy's decisions and the three others'
in it, as a practice session writes it) whose frames are written again and again after one
header into one log, as a long match log holds game after game (``mjbot ntpu-server``'s),
until it holds ``--hands`` hands; the short log holds ``--short``. ``--source FILE`` repeats
that file instead: a game log's frames, or a text file's whole text (a Tenhou client
transcript of a session holds game after game so). On each, what the viewer's routes cost
(in this process, the functions they call): opening (the file read and parsed, the outline
built and gzipped: ``/api/games/ID``), the first hand's steps (``/api/games/ID/hands/0``)
and every hand's steps one after the other (an analyst stepping through the whole file).
The reference, on the same parsed game: every step of every hand built at once
(:func:`replay.timeline.every_step`), which is what opening a game cost before hands were
built one at a time. Beside them, one full collection of Python's cycle collector with the
opened game in memory: every one the process makes while the viewer keeps the game walks
all of its objects.

What that costs ``mjbot serve`` (``--stall-seconds``): its status server with the viewer on a
loopback port, the long log among its imports, and the event loop's lag sampled (how late
it wakes a timer, what every session's socket read and answer waits) for that long without
the game held, then as long again after a client opened the game and its first hand (the
viewer's cache keeps it), in the same run. Meanwhile a thread forces a full collection every
``--collect-every`` seconds, standing in for those the long-lived process's own allocations
set off: each holds the interpreter (and so the loop) for as long as it walks. As those, none
is forced while a read has the collector paused (replay/gcpause.py).
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import tempfile
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from adapter.bench.common import add_bench, report
from adapter.commands import UserInputError, add_variant_option, at_least, positive_seconds

if TYPE_CHECKING:
    from replay.timeline import Timeline


def register(benches: Any) -> None:
    p = add_bench(benches, "view", run, "the replay viewer opening and stepping a long "
                  "multi-game log: per hand vs a short log, and vs every step built at open")
    p.add_argument("--hands", type=at_least(2), default=800,
                   help="hands in the long log (whole copies of the game: about)")
    p.add_argument("--short", type=at_least(1), default=40, help="hands in the short log")
    add_variant_option(p, help="the local-table game's (without --source)")
    p.add_argument("--source", metavar="FILE",
                   help="repeat this file instead: a game log's frames between its header "
                        "and footer, or a text file's whole text (a Tenhou client transcript, "
                        "an NTPU command log)")
    p.add_argument("--stall-seconds", type=at_least(0), default=3,
                   help="how long the status server's event loop is watched without and "
                        "with the long game held (0: not measured)")
    p.add_argument("--collect-every", type=positive_seconds, default=0.5,
                   help="seconds between the full collections forced meanwhile")


def source_game(folder: Path, variant: str) -> Path:
    """One local-table game's log, written under ``folder``."""
    from adapter.serve.practice import PracticeSettings, play_one

    reports: list[dict[str, Any]] = []
    settings = PracticeSettings(session="bench", variant=variant, log_dir=str(folder), pause=0)
    if not play_one(settings, 1, threading.Event(), reports.append):
        raise RuntimeError("the local-table game for the bench did not finish")
    return Path(reports[-1]["log"])


def repeated(log: bytes, copies: int) -> bytes:
    """The log with its frames between the header and the footer written ``copies`` times:
    one log of ``copies`` games, as a match log holds them."""
    import msgpack

    unpacker = msgpack.Unpacker(raw=False, strict_map_key=False, max_buffer_size=0)
    unpacker.feed(log)
    ends = []
    for _frame in unpacker:
        ends.append(unpacker.tell())
    if len(ends) < 3:
        raise RuntimeError("the bench's source log holds no frame between header and footer")
    return log[:ends[0]] + log[ends[0]:ends[-2]] * copies + log[ends[-2]:]


def _timed(call: Any, collect: bool = True) -> tuple[float, Any]:
    if collect:  # what the previous phase left is not this one's to collect
        gc.collect()
    start = time.perf_counter()
    value = call()
    return time.perf_counter() - start, value


def measure(path: Path) -> dict[str, Any]:
    """The viewer's costs on one file, in seconds."""
    from replay import formats
    from replay.gcpause import collector_paused
    from replay.timeline import build, every_step

    with collector_paused():  # as the viewer's GameIndex.timeline reads and builds
        read_s, loaded = _timed(lambda: formats.read(path.read_bytes(), path))
        outline_s, opened = _timed(lambda: _opened(build(loaded)), collect=False)
    # the viewer keeps the timeline alone: every full collection while it does walks what
    # that holds (the first after the read also frees the read's leftovers): one, timed
    del loaded
    collect_s, _ = _timed(gc.collect)
    first_s, every_s, steps = _stepped(opened)
    del opened  # the reference is timed with no other timeline kept beside it
    with collector_paused():  # read again, untimed: the reference's cost is its build's
        loaded = formats.read(path.read_bytes(), path)
    before_s, before = _timed(lambda: every_step(loaded))
    if sum(len(h) for h in before) != steps:
        raise RuntimeError("every step built at once differs from the hands built one at a "
                           "time")
    return {"bytes": path.stat().st_size, "hands": len(before), "steps": steps,
            "read_s": read_s, "outline_s": outline_s, "open_s": read_s + outline_s,
            "collection_s": collect_s, "first_hand_s": first_s, "every_hand_s": every_s,
            "before_build_s": before_s}


def _rounded(r: dict[str, Any]) -> dict[str, Any]:
    """One file's figures as printed and written, to the microsecond: the ratios are taken
    before (a short file's parse or a collection of a small heap takes under a millisecond)."""
    return {key: round(value, 6) if key.endswith("_s") else value for key, value in r.items()}


def ratio(long: dict[str, Any], short: dict[str, Any], key: str) -> float:
    """The long file's cost per hand over the short one's, from the times as measured: taken
    from figures rounded to the millisecond, a step of both under half a millisecond read
    0 x, and of the short one alone some 500000 x. Three significant figures, never 0."""
    per_hand = _per_hand(long, key) / max(_per_hand(short, key), 1e-9)
    return float(f"{per_hand:.3g}")


def _opened(timeline: Timeline) -> Timeline:
    """``/api/games/ID``'s work: the outline, gzipped as it is kept."""
    from adapter.serve.viewcache import gzipped_json

    gzipped_json(timeline.outline())
    return timeline


def _stepped(timeline: Timeline) -> tuple[float, float, int]:
    """The first hand's steps as ``/api/games/ID/hands/0`` sends them, then every hand's
    one after the other (seconds, seconds) and how many steps they hold."""
    from adapter.serve.viewcache import gzipped_json

    def hand(n: int) -> bytes:
        h = timeline.hands[n]
        return gzipped_json({"label": h["label"], "steps": timeline.steps(n),
                             "result": h["result"]})

    first_s, _ = _timed(lambda: hand(0))
    every_s, _ = _timed(lambda: [hand(n) for n in range(len(timeline.hands))])
    return first_s, every_s, sum(h["steps"] for h in timeline.hands)


def _per_hand(r: dict[str, Any], key: str) -> float:
    return float(r[key]) / int(r["hands"])


def loop_stall(path: Path, seconds: float, every: float) -> dict[str, Any]:
    """The status server's (viewer's) event-loop lag and the full collections, for
    ``seconds`` without ``path``'s game held and as long with it held (see the module's
    docstring)."""
    return asyncio.run(_loop_stall(path, seconds, every))


async def _loop_stall(path: Path, seconds: float, every: float) -> dict[str, Any]:
    import aiohttp

    from adapter.bench.serve import _loop_lag
    from adapter.serve.status import StatusServer

    server = StatusServer(roots=[], imports=[str(path)])
    url = (await server.start("127.0.0.1", 0)).rstrip("/")
    lags: list[tuple[float, str, float]] = []
    collections: list[tuple[float, float]] = []  # (when it began, when it ended)
    began: list[float] = []

    def timed(phase: str, info: dict[str, Any]) -> None:
        if info.get("generation") != 2:
            return
        if phase == "start":
            began.append(time.monotonic())
        elif began:
            collections.append((began.pop(), time.monotonic()))

    stop = threading.Event()

    def collector() -> None:
        while not stop.wait(every):
            if gc.isenabled():  # as the process's own: none while a read pauses them
                gc.collect()

    gc.callbacks.append(timed)
    lag = asyncio.create_task(_loop_lag(lags))
    thread = threading.Thread(target=collector, name="bench-collections", daemon=True)
    try:
        thread.start()
        phases = {}
        start = time.monotonic()
        await asyncio.sleep(seconds)
        phases["without_game"] = (start, time.monotonic())
        game = f"{url}/api/games/0~{path.name}"
        async with aiohttp.ClientSession() as session:
            for ask in (game, f"{game}/hands/0"):
                async with session.get(ask) as response:
                    await response.read()
                    if response.status != 200:
                        raise RuntimeError(f"the viewer answered {response.status} to {ask}")
        start = time.monotonic()
        await asyncio.sleep(seconds)
        phases["with_game"] = (start, time.monotonic())
    finally:
        stop.set()
        lag.cancel()
        gc.callbacks.remove(timed)
        await server.stop()
    thread.join()

    def phase(start: float, end: float) -> dict[str, Any]:
        lagged = [s for t, _k, s in lags if start <= t < end]
        walked = [b - a for a, b in collections if a < end and b > start]  # overlapping
        return {"worst_lag_ms": round(1000 * max(lagged, default=0.0), 1),
                "samples": len(lagged), "collections": len(walked),
                "longest_collection_ms": round(1000 * max(walked, default=0.0), 1)}

    return {"seconds": seconds, "collect_every_s": every,
            **{name: phase(*span) for name, span in phases.items()}}


def bench_view(hands: int, short: int, variant: str, source: str | None = None,
               stall_seconds: float = 0, collect_every: float = 0.5) -> dict[str, Any]:
    from replay import formats, logzip
    from replay.timeline import build

    with tempfile.TemporaryDirectory(prefix="mjbot-bench-view-") as tmp:
        path = Path(source) if source else source_game(Path(tmp) / "source", variant)
        try:
            data = path.read_bytes()
        except OSError as exc:
            raise UserInputError(f"--source {source}: {exc.strerror or exc}") from None
        try:
            # unpacked first: a finished log compressed by serve's upkeep is repeated as
            # its frames or text, not as gzip bytes of which a reader takes one member
            data = logzip.inflate(data)
            loaded = formats.read(data, path)
        except ValueError as exc:  # UnknownFormat, LogError, damaged gzip: no reader takes it
            raise UserInputError(f"--source {source}: no reader takes it") from exc
        per_game = len(build(loaded).hands)
        if not per_game:
            raise UserInputError(f"--source {source}: it holds no hand")
        label = loaded.label
        suffix = (".mjlog.msgpack" if loaded.log is not None
                  else Path(path.name.removesuffix(logzip.GZ)).suffix or ".log")
        files = {}
        for name, want in (("short", short), ("long", hands)):
            copies = max(1, round(want / per_game))
            files[name] = Path(tmp) / f"{name}{suffix}"
            files[name].write_bytes(repeated(data, copies) if loaded.log is not None
                                    else (data.rstrip(b"\n") + b"\n") * copies)
        del loaded
        measure(files["short"])  # once first: the imports and caches of a first run
        s, lg = measure(files["short"]), measure(files["long"])
        result: dict[str, Any] = {"short": _rounded(s), "long": _rounded(lg)}
        if stall_seconds > 0:
            result["serve_stall"] = loop_stall(files["long"], stall_seconds, collect_every)
    result.update(source=source or f"a {variant} local-table game", format=label,
                  hands_per_game=per_game, ratios_long_vs_short={
        key: ratio(lg, s, key) for key in ("open_s", "read_s", "outline_s", "collection_s",
                                           "every_hand_s", "before_build_s")})
    result["before_vs_outline_long"] = round(lg["before_build_s"] / lg["outline_s"], 1)
    return result


def run(args: argparse.Namespace) -> int:
    report(args, bench_view(args.hands, args.short, args.variant, args.source,
                            args.stall_seconds, args.collect_every), text)
    return 0


def text(r: dict[str, Any]) -> str:
    s, lg, ratio = r["short"], r["long"], r["ratios_long_vs_short"]

    def row(label: str, key: str) -> str:
        return (f"  {label:<26}{s[key]:>9.3f} s {lg[key]:>9.3f} s "
                f"{1000 * _per_hand(s, key):>8.2f} {1000 * _per_hand(lg, key):>8.2f} "
                f"{ratio[key]:>7} x")

    lines = [
        f"replay viewer, {r['source']} ({r['format']}, {r['hands_per_game']} hands) "
        f"written over and over into one file: short {s['hands']:,} hands "
        f"({s['bytes'] / 1e6:.1f} MB), long {lg['hands']:,} hands ({lg['bytes'] / 1e6:.1f} MB)",
        f"  {'':<26}{'short':>11} {'long':>11} {'ms/hand':>8} {'ms/hand':>8} "
        f"{'long/short':>9}",
        row("open: read + parse", "read_s"),
        row("open: outline", "outline_s"),
        row("open (both)", "open_s"),
        row("a full collection, open", "collection_s"),
        row("every hand's steps", "every_hand_s"),
        row("reference: every step", "before_build_s"),
        f"  first hand's steps: {s['first_hand_s'] * 1000:.1f} ms short, "
        f"{lg['first_hand_s'] * 1000:.1f} ms long; the reference (every step built at open, "
        f"as before) costs {r['before_vs_outline_long']} x the outline on the long log"]
    stall = r.get("serve_stall")
    if stall:
        off, on = stall["without_game"], stall["with_game"]
        lines.append(
            f"  mjbot serve's event loop, a full collection every {stall['collect_every_s']:g} s,"
            f" {stall['seconds']:g} s each: worst lag {off['worst_lag_ms']:.1f} ms without the "
            f"game held, {on['worst_lag_ms']:.1f} ms with the long one held (longest "
            f"collection {off['longest_collection_ms']:.1f} ms / "
            f"{on['longest_collection_ms']:.1f} ms)")
    return "\n".join(lines)
