"""How long our own seats took per decision: what a time budget actually bought.

A policy under ``--budget`` may stop early (mc's switch plays its fast move at once), search to
its share of the budget, or run late and be replaced by its fallback (the tally counts that).
The figures here say which: the decisions timed, their mean and 99th-percentile seconds and
decisions per second of thinking, pooled per policy over units like the fallback tally.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

SERVER_SUFFIX = "-server"  # the header platform of a fake server's log (ntpu-, tenhou-server)


@dataclass
class DecisionTimes:
    """Seconds per decision the brain was asked for (a forced single legal action is not
    one, as in :class:`~brain.tally.FallbackTally`)."""

    seconds: list[float] = field(default_factory=list)
    searched: int = 0  # decisions whose played answer reports work (mc: its playouts)
    work: int = 0  # that work, summed

    def record(self, elapsed: float, work: int = 0) -> None:
        self.seconds.append(max(0.0, elapsed))
        if work > 0:
            self.searched += 1
            self.work += work

    def add(self, other: DecisionTimes) -> None:
        self.seconds.extend(other.seconds)
        self.searched += other.searched
        self.work += other.work

    def as_dict(self) -> dict[str, Any]:
        """``timed_decisions``, ``mean_s``, ``p99_s``, ``max_s``, ``decisions_per_s``
        (decisions over the seconds they took; None where nothing was timed), ``searched``
        and ``work_per_search`` (what more time buys: how often, and how much)."""
        n = len(self.seconds)
        total = sum(self.seconds)
        return {"timed_decisions": n,
                "mean_s": total / n if n else None,
                "p99_s": percentile(self.seconds, 0.99) if n else None,
                "max_s": max(self.seconds) if n else None,
                "decisions_per_s": n / total if total > 0 else None,
                "searched": self.searched,
                "work_per_search": self.work / self.searched if self.searched else None}


def percentile(values: list[float], q: float) -> float:
    """The nearest-rank ``q`` quantile (a value that occurred: no interpolation)."""
    ordered = sorted(values)
    rank = max(1, math.ceil(q * len(ordered)))
    return ordered[rank - 1]


def times_from_logs(paths: list[str]) -> dict[str, Any]:
    """Per policy, the decision times platform sessions recorded in their game logs (``paths``:
    log files or folders of them): the budget a platform session actually used. A forced
    single legal action and a fake server's own log are left out; ``fallbacks`` counts late
    or replaced answers and ``sources`` what answered (brain/anytime.py)."""
    from pathlib import Path

    from replay.log import is_log_name, plain_name, read_log

    files: list[Path] = []
    for p in map(Path, paths):  # compressed logs (.gz) too
        found = [f for f in p.rglob("*.mjlog.msgpack*") if is_log_name(f.name)] \
            if p.is_dir() else []
        names = {str(f) for f in found}
        # a log there twice, plain and compressed (a compression cut by a kill between its
        # rename and its removal): counted once, as the viewer and the day's quota do
        files += sorted(f for f in found if f.name == plain_name(f.name)
                        or str(f.with_name(plain_name(f.name))) not in names) \
            if p.is_dir() else [p]
    times: dict[str, DecisionTimes] = {}
    extra: dict[str, dict[str, Any]] = {}
    for path in files:
        log = read_log(path)
        header = log.header
        if header is not None and header.platform.endswith(SERVER_SUFFIX):
            # a fake server's record of the answers at its table (the NTPU one's timed as
            # its waits): its clients' own logs hold their decisions, timed where made
            continue
        for d in log.decisions():
            if d.source == "forced" or len(d.legal) == 1:
                continue
            name = d.policy or (header.policy if header is not None else "") or "?"
            times.setdefault(name, DecisionTimes()).record(d.elapsed, d.work)
            row = extra.setdefault(name, {"games": set(), "fallbacks": 0, "sources": {}})
            row["games"].add(str(path))
            row["fallbacks"] += bool(d.fallback)
            row["sources"][d.source or "?"] = row["sources"].get(d.source or "?", 0) + 1
    return {name: {**times[name].as_dict(), "games": len(extra[name]["games"]),
                   "fallbacks": extra[name]["fallbacks"], "sources": extra[name]["sources"]}
            for name in sorted(times)}


if __name__ == "__main__":
    import argparse
    import json
    import sys
    from pathlib import Path

    from replay.log import LogError

    parser = argparse.ArgumentParser(
        prog="python -m adapter.local.timing",
        description="Per policy, the seconds per decision (mean, p99, max, decisions/s) and "
        "the fallbacks that platform sessions recorded in their game logs (files, or folders "
        "of them), as JSON: the budget a session actually used.")
    parser.add_argument("paths", nargs="+", metavar="LOG_OR_FOLDER")
    paths = parser.parse_args().paths  # --help: its usage, not a path named '--help'
    missing = [p for p in paths if not Path(p).exists()]
    if missing:
        sys.exit(f"adapter.local.timing: no such file or folder: {', '.join(missing)}")
    try:
        print(json.dumps(times_from_logs(paths), indent=2))
    except (LogError, OSError) as exc:
        sys.exit(f"adapter.local.timing: {exc}")
