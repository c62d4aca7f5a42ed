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
"""

from __future__ import annotations

import argparse
import gc
import tempfile
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from adapter.bench.common import VARIANTS, add_bench, report
from adapter.commands import UserInputError, at_least

if TYPE_CHECKING:
    from replay.timeline import Timeline


def register(benches: Any) -> None:
    p = add_bench(benches, "view", run, "the replay viewer opening and stepping a long "
                  "multi-game log: per hand vs a short log, and vs every step built at open")
    p.add_argument("--hands", type=at_least(2), default=800,
                   help="hands in the long log (whole copies of the game: about)")
    p.add_argument("--short", type=at_least(1), default=40, help="hands in the short log")
    p.add_argument("--variant", choices=VARIANTS, default="riichi",
                   help="the local-table game's (without --source)")
    p.add_argument("--source", metavar="FILE",
                   help="repeat this file instead: a game log's frames between its header "
                        "and footer, or a text file's whole text (a Tenhou client transcript, "
                        "an NTPU command log)")


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
    # what the two made is walked by the collections after them, the next full one
    # included, and so is every later one while the viewer keeps the game: one, timed
    collect_s, _ = _timed(gc.collect, collect=False)
    first_s, every_s, steps = _stepped(opened)
    del opened  # the reference is timed with no other timeline kept beside it
    before_s, before = _timed(lambda: every_step(loaded))
    if sum(len(h) for h in before) != steps:
        raise RuntimeError("every step built at once differs from the hands built one at a "
                           "time")
    return {"bytes": path.stat().st_size, "hands": len(before), "steps": steps,
            "read_s": round(read_s, 3), "outline_s": round(outline_s, 3),
            "open_s": round(read_s + outline_s, 3), "collection_s": round(collect_s, 4),
            "first_hand_s": round(first_s, 4),
            "every_hand_s": round(every_s, 3), "before_build_s": round(before_s, 3)}


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


def bench_view(hands: int, short: int, variant: str,
               source: str | None = None) -> dict[str, Any]:
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
        result: dict[str, Any] = {name: measure(file) for name, file in files.items()}
    s, lg = result["short"], result["long"]
    result.update(source=source or f"a {variant} local-table game", format=label,
                  hands_per_game=per_game, ratios_long_vs_short={
        key: round(_per_hand(lg, key) / max(_per_hand(s, key), 1e-9), 2)
        for key in ("open_s", "read_s", "outline_s", "collection_s", "every_hand_s",
                    "before_build_s")})
    result["before_vs_outline_long"] = round(lg["before_build_s"] / lg["outline_s"], 1)
    return result


def run(args: argparse.Namespace) -> int:
    report(args, bench_view(args.hands, args.short, args.variant, args.source), text)
    return 0


def text(r: dict[str, Any]) -> str:
    s, lg, ratio = r["short"], r["long"], r["ratios_long_vs_short"]

    def row(label: str, key: str) -> str:
        return (f"  {label:<26}{s[key]:>9.3f} s {lg[key]:>9.3f} s "
                f"{1000 * _per_hand(s, key):>8.2f} {1000 * _per_hand(lg, key):>8.2f} "
                f"{ratio[key]:>7} x")

    return "\n".join([
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
        f"as before) costs {r['before_vs_outline_long']} x the outline on the long log"])
