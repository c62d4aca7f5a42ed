"""`mjbot bench viewstop`: how long `mjbot view` takes to end after SIGTERM with a long
match log's exports in flight, against the same process stopped with nothing in flight,
measured in the same run.

The file: one local-table game written ``--games`` times into one log, as a match log holds
game after game (``mjbot bench view``'s :func:`~adapter.bench.view.repeated`). Each run
starts ``mjbot view`` on it as a user does, opens the game (its outline and first hand: the
parsed game kept by the viewer), then either stops it at once (the reference) or first asks
for both exports (tenhou.net/6 and mjai, each a read of the whole file) and stops it
``--after`` seconds later, while they are read; from the signal to the process's end is
timed. Given up by the stop, a 300-game log's read left a million objects that the
collections on the way out walked: 1.3 to 2.9 s, where the reference took a tenth of a second
(replay/gcpause.py ``off_until_exit``).
"""

from __future__ import annotations

import argparse
import http.client
import json
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any

from adapter.bench.common import add_bench, report
from adapter.commands import at_least, positive_seconds

ROOT = Path(__file__).resolve().parents[2]
EXPORTS = ("tenhou6", "mjai")


def register(benches: Any) -> None:
    p = add_bench(benches, "viewstop", run, "mjbot view stopped by SIGTERM with a long match "
                  "log's exports in flight, vs stopped with nothing in flight")
    p.add_argument("--games", type=at_least(1), default=300,
                   help="copies of a local-table game in the match log")
    p.add_argument("--runs", type=at_least(1), default=3, help="stops of each kind")
    p.add_argument("--after", type=positive_seconds, default=1.0,
                   help="seconds between asking for the exports and the signal")


def _started(log: Path) -> tuple[subprocess.Popen[str], str]:
    proc = subprocess.Popen([sys.executable, "-m", "adapter.cli", "--log-json", "view",
                             str(log)], cwd=ROOT, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True)
    assert proc.stderr is not None
    for line in proc.stderr:
        found = re.search(r"(http://\S+/)games", line)
        if found:
            return proc, found.group(1)
    proc.wait()
    raise RuntimeError(f"mjbot view ended before it listened (exit {proc.returncode})")


def _get(url: str) -> int:
    try:
        with urllib.request.urlopen(url, timeout=600) as response:
            response.read()
            return int(response.status)
    except urllib.error.HTTPError as exc:
        return int(exc.code)


def export(url: str, answers: dict[str, int | str], fmt: str) -> None:
    """``answers[fmt]``: the export's status, or how its connection ended without one: a stop
    that came before the server read the request (a short ``--after``) resets it, which
    printed a thread's traceback and left the export out of the results."""
    try:
        answers[fmt] = _get(url)
    except (urllib.error.URLError, http.client.HTTPException, OSError) as exc:
        answers[fmt] = f"dropped ({type(exc).__name__})"


def one_stop(log: Path, exports: bool, after: float) -> dict[str, Any]:
    """One ``mjbot view``: the game opened, the exports asked for (or not), SIGTERM; the
    seconds from the signal to its end, its exit status, each export's answer."""
    proc, url = _started(log)
    try:
        with urllib.request.urlopen(url + "api/games", timeout=60) as response:
            game = urllib.parse.quote(json.loads(response.read())["games"][0]["id"])
        for path in (f"api/games/{game}", f"api/games/{game}/hands/0"):
            _get(url + path)
        answers: dict[str, int | str] = {}
        threads = [threading.Thread(target=export, daemon=True,
                                    args=(f"{url}games/{game}/export/{fmt}", answers, fmt))
                   for fmt in (EXPORTS if exports else ())]
        for thread in threads:
            thread.start()
        if exports:
            time.sleep(after)
        start = time.perf_counter()
        proc.send_signal(signal.SIGTERM)
        assert proc.stderr is not None
        proc.stderr.read()  # (the pipe drained: the process never waits on it)
        status = proc.wait(600)
        seconds = time.perf_counter() - start
        for thread in threads:
            thread.join(60)
        return {"exit_s": round(seconds, 3), "status": status, "exports": answers}
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def bench_viewstop(games: int, runs: int, after: float) -> dict[str, Any]:
    from adapter.bench.view import repeated, source_game

    with tempfile.TemporaryDirectory(prefix="mjbot-bench-viewstop-") as tmp:
        game = source_game(Path(tmp) / "source", "riichi")
        log = Path(tmp) / "match.mjlog.msgpack"
        log.write_bytes(repeated(game.read_bytes(), games))
        idle, busy = [], []
        for _ in range(runs):  # taking turns: the machine's other work falls on both
            idle.append(one_stop(log, False, after))
            busy.append(one_stop(log, True, after))
        size = log.stat().st_size
    idle_s = statistics.median(r["exit_s"] for r in idle)
    busy_s = statistics.median(r["exit_s"] for r in busy)
    return {"games": games, "bytes": size, "runs": runs, "after_s": after,
            "idle": idle, "exporting": busy, "idle_median_s": idle_s,
            "exporting_median_s": busy_s, "ratio": round(busy_s / max(idle_s, 1e-9), 2)}


def run(args: argparse.Namespace) -> int:
    report(args, bench_viewstop(args.games, args.runs, args.after), text)
    return 0


def text(r: dict[str, Any]) -> str:
    def row(label: str, key: str) -> str:
        times = ", ".join(f"{x['exit_s']:.3f}" for x in r[key])
        statuses = sorted({x["status"] for x in r[key]})
        answers = sorted({str(v) for x in r[key] for v in x["exports"].values()})
        said = f"; exports answered {', '.join(answers)}" if answers else ""
        return f"  {label:<34}{times} s (exit {', '.join(map(str, statuses))}{said})"

    return "\n".join([
        f"mjbot view stopped by SIGTERM, a {r['games']}-game match log "
        f"({r['bytes'] / 1e6:.1f} MB) opened, {r['runs']} runs of each",
        row("nothing in flight (reference)", "idle"),
        row(f"both exports in flight ({r['after_s']:g} s in)", "exporting"),
        f"  median {r['exporting_median_s']:.3f} s vs {r['idle_median_s']:.3f} s: "
        f"ratio {r['ratio']} x"])
