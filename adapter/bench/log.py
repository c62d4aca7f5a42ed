"""`mjbot bench log`: the cost of writing one game-log frame.

Writes a realistic mix (raw message, event, decision with legal set and candidates, outbound
message) to a real file, flushed per frame as in play, and compares it with a reference measured
in the same run: the same frames as JSON lines through ``json.dumps`` + write + flush.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path
from typing import Any

from adapter.bench.common import add_bench, report
from adapter.commands import at_least
from protocols import events as ev
from protocols.tiles import parse_mpsz
from replay import schema
from replay.log import GameLogWriter, Header


def _sample() -> tuple[str, ev.TileDrawn, ev.DecisionRequest, list[Any], Any, list[Any], str]:
    hand = parse_mpsz("123m406p789s1122z3m")
    legal = [ev.Discard(t) for t in hand] + [ev.Discard(hand[0], riichi=True)]
    cands = [(legal[i], 1.0 / (i + 1)) for i in range(5)]
    return ("<T36/>", ev.TileDrawn(1, hand[-1]), ev.DecisionRequest("turn"), legal, legal[3],
            cands, '<D p="36"/>')


def bench_log(frames: int = 20_000, sync_every: int = 0) -> dict[str, Any]:
    raw_in, drawn, req, legal, action, cands, raw_out = _sample()
    groups = max(1, frames // 4)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "bench.mjlog.msgpack"
        w = GameLogWriter(path, Header("bench", "riichi", seat=1, policy="greedy"))
        start = time.perf_counter()
        for _ in range(groups):
            w.rx(raw_in)
            w.event(drawn)
            w.decision(req, legal, action, "greedy", cands, 0.0012, "")
            w.tx(raw_out)
        ours = (time.perf_counter() - start) / (groups * 4)
        w.close()
        size = path.stat().st_size

        ref_path = Path(tmp) / "bench.jsonl"
        with open(ref_path, "w") as f:
            start = time.perf_counter()
            for _ in range(groups):
                t = time.monotonic()
                for obj in ({"k": "rx", "t": t, "raw": raw_in},
                            {"k": "event", "t": t, "event": schema.encode(drawn)},
                            {"k": "decision", "t": t, "request": schema.encode(req),
                             "legal": schema.encode_many(legal), "action": schema.encode(action),
                             "policy": "greedy",
                             "candidates": [[schema.encode(a), s] for a, s in cands],
                             "elapsed": 0.0012, "fallback": ""},
                            {"k": "tx", "t": t, "raw": raw_out}):
                    f.write(json.dumps(obj) + "\n")
                    f.flush()
            ref = (time.perf_counter() - start) / (groups * 4)
        # the fsync at each hand's end, measured on its own
        w2 = GameLogWriter(Path(tmp) / "sync.mjlog.msgpack", Header("bench", "riichi"))
        start = time.perf_counter()
        n_sync = 50
        for _ in range(n_sync):
            w2.rx(raw_in)
            w2.end_hand()
        sync = (time.perf_counter() - start) / n_sync
        w2.close()
    return {
        "frames": groups * 4, "us_per_frame": round(ours * 1e6, 2),
        "json_lines_us_per_frame": round(ref * 1e6, 2),
        "ratio_vs_json_lines": round(ref / ours, 2), "bytes_per_frame": round(size / (groups * 4)),
        "hand_end_fsync_ms": round(sync * 1e3, 3),
    }


def register(benches: Any) -> None:
    p = add_bench(benches, "log", run, "cost of one game-log frame vs JSON lines")
    p.add_argument("--frames", type=at_least(1), default=20_000, help="frames written")


def run(args: argparse.Namespace) -> int:
    report(args, bench_log(frames=args.frames), text)
    return 0


def text(result: dict[str, Any]) -> str:
    return "\n".join([
        f"game log, {result['frames']:,} frames (rx, event, decision, tx), flushed each",
        f"  msgpack log     {result['us_per_frame']:>9} us/frame   (target well under 1000)",
        f"  JSON lines ref  {result['json_lines_us_per_frame']:>9} us/frame",
        f"  ratio           {result['ratio_vs_json_lines']:>9} x",
        f"  size            {result['bytes_per_frame']:>9} bytes/frame",
        f"  hand-end fsync  {result['hand_end_fsync_ms']:>9} ms"])
