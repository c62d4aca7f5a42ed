"""The game logs' upkeep in a long-lived serve process: finished logs compressed in place,
an optional disk budget and age limit for practice logs, and a low-disk warning.

A practice session at the local table writes a log a game with no end (a soak of one-hand
games wrote 1.8 GB in 33 minutes) until the disk is full and the workers die. Each pass (every
``check_every`` seconds, and at once on a reload) runs in a thread, never on the event loop:

- a log with its footer written (the game over, its writer closed) and not written to for
  ``compress_after`` seconds becomes ``NAME.gz`` (replay/logzip.py: every byte kept, checked
  before the original goes; mtime kept, so lists and ages do not move);
- ``keep_days`` removes practice logs older than that; ``max_disk_mb`` removes the oldest
  practice logs while the logs take more than that. Platform logs (Tenhou, NTPU, mjai: a
  tournament's record) only where ``remove_platform_logs`` says so, after every practice log.
  A log is removable only once finished (its footer, or compressed), or untouched for a day
  (a game cut by a crash), and while no writer holds it open (replay.locking.being_written):
  never a game in progress, nor one whose worker is suspended for days. Each removal is
  logged and counted;
- the free space under the log folder is watched: below ``low_disk_mb`` /health is
  ``degraded`` with a warning, and /metrics says so, before the disk is full.

A practice log is one below ``<session>/local/``: the local table's platform folder
(replay.log.log_path), which only practice sessions write, so a session since removed from the
config is still known for one. The default removes nothing.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import functools
import os
import shutil
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import structlog

from adapter.serve.config import LogUpkeep
from adapter.serve.games import read_footer
from adapter.serve.metrics import Metrics
from replay import logzip
from replay.locking import being_written
from replay.log import GZ_SUFFIX, is_log_name

log = structlog.get_logger("mjbot.serve")

MB = 1 << 20
DAY = 86400.0
STALE_AFTER = DAY  # a log without a footer untouched this long is no game in progress
TMP_GRACE = 3600.0  # a compression's temporary file left this long was cut by a crash
MAX_DEPTH = 6
OVER_BUDGET_REPEAT = 3600.0  # the warning repeated this often while the logs stay over budget
PRACTICE_PLATFORM = "local"  # practice.py's Header(platform="local")


@dataclass
class LogFile:
    path: str
    relative: str  # below the log folder, as the viewer names it
    mtime: float
    disk: int  # bytes it takes on the disk (du's count where the system gives it)
    practice: bool
    compressed: bool


def _disk(st: os.stat_result) -> int:
    blocks = getattr(st, "st_blocks", None)
    return st.st_size if blocks is None else blocks * 512


class LogKeeper:
    """One serve process's upkeep of its log folder (``root``), by ``settings``."""

    def __init__(self, root: str | Path, settings: LogUpkeep, metrics: Metrics,
                 clock: Callable[[], float] = time.time) -> None:
        self.root = Path(root)
        self.settings = settings
        self.metrics = metrics
        self.clock = clock
        self._stopping = threading.Event()
        self._wake: asyncio.Event | None = None
        self._task: asyncio.Task[None] | None = None
        self.passes = 0
        self.last_pass: dict[str, Any] | None = None
        self.compressed = 0
        self.removed: dict[str, int] = {}
        self._counts = threading.Lock()  # the pass's thread updates ``removed``; /health reads
        self.errors = 0
        # what is wrong now (an error of the last pass, or of the one under way), cleared by a
        # pass without one: the dashboard showed an error until a restart though every later
        # pass went well; ``last_failure`` keeps the last one and its time
        self.last_error: dict[str, Any] | None = None
        self.last_failure: dict[str, Any] | None = None
        self._low = False
        # while the logs are over max_disk_mb with nothing left the upkeep may remove (the
        # platform logs alone over it): since when, and how far; None otherwise. Warned as it
        # begins, then once an hour: every pass said it, 1,440 lines a day at the default 60 s
        self.over_budget: dict[str, Any] | None = None
        self._over_said = 0.0
        self._disk: tuple[int, int] = (0, 0)  # (free, total) as the last pass measured them
        metrics.set_function("mjbot_log_disk_free_bytes", lambda: float(self.disk()[0]))
        metrics.set_function("mjbot_log_disk_low", lambda: float(self.low_disk() is not None))

    # ------------------------------------------------------------------ the task

    def start(self) -> None:
        self._wake = asyncio.Event()
        self._task = asyncio.create_task(self._loop(), name="log-upkeep")

    def configure(self, settings: LogUpkeep) -> None:
        """New settings (a reload): applied by a pass at once."""
        if settings != self.settings:
            log.info("serve: log upkeep settings changed", **_public(settings))
        self.settings = settings
        if self._wake is not None:
            self._wake.set()

    async def stop(self) -> None:
        """Ends the pass under way after the file in hand (a compression is never cut half
        way) and the task."""
        self._stopping.set()
        if self._wake is not None:
            self._wake.set()
        if self._task is not None:
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None

    async def _loop(self) -> None:
        assert self._wake is not None
        while not self._stopping.is_set():
            self._wake.clear()
            try:
                await asyncio.to_thread(self.run_pass)
            except Exception as exc:  # a fault of ours: one line, and the next pass
                self._error("pass", str(self.root), exc)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), self.settings.check_every)

    # ------------------------------------------------------------------ one pass

    def run_pass(self) -> dict[str, Any]:
        """Compress, apply the age limit and the budget; what it did (also kept for
        /health)."""
        started = time.monotonic()
        errors_before = self.errors
        s = self.settings
        now = self.clock()
        self._disk = self._measure_disk()
        done = {"compressed": 0, "removed": 0, "freed": 0}
        # by name below the root: a pair left by a cut compression (X and X.gz, the same bytes)
        # becomes X.gz as X is compressed, and the walk gives X.gz too; counted twice, the
        # budget removed a log the folder had room for
        kept: dict[str, LogFile] = {}
        compressing = s.compress
        for f in self._walk(now):
            if self._stopping.is_set():
                return done
            if s.keep_days and f.mtime < now - s.keep_days * DAY and self._may_remove(f, now):
                self._remove(f, "age", done)
                continue
            if compressing and not f.compressed and f.mtime <= now - s.compress_after \
                    and read_footer(Path(f.path)) is not None \
                    and not self._held(f):
                try:
                    target = logzip.compress(f.path)
                except OSError as exc:
                    self._error("compress", f.relative, exc)
                    if exc.errno == errno.ENOSPC:
                        compressing = False  # no room for any copy: the budget's turn
                else:
                    f = self._compressed(f, target)
                    done["compressed"] += 1
            kept[f.relative] = f
        total = sum(f.disk for f in kept.values())
        over = False
        if s.max_disk_mb and total > s.max_disk_mb * MB:
            total = self._budget(list(kept.values()), total, now, done)
            # a budget cut short by a stop has not run out of logs to remove
            over = total > s.max_disk_mb * MB and not self._stopping.is_set()
        self._note_budget(over, total, now)
        self.metrics.set("mjbot_logs_bytes", float(total))
        self.metrics.set("mjbot_logs_files", float(len(kept)))
        self.passes += 1
        self.last_pass = {"at": round(now, 1), "seconds": round(time.monotonic() - started, 3),
                          "files": len(kept), "bytes": total, **done}
        self._disk = self._measure_disk()
        self._check_disk()
        if self.errors == errors_before:
            self.last_error = None  # this pass went well: what failed before is no more
        return self.last_pass

    def _budget(self, files: list[LogFile], total: int, now: float,
                done: dict[str, int]) -> int:
        """The oldest removable practice logs removed until the logs fit the budget; then,
        where allowed, the oldest platform logs."""
        budget = self.settings.max_disk_mb * MB
        kinds = [True, False] if self.settings.remove_platform_logs else [True]
        for practice in kinds:
            for f in sorted((f for f in files if f.practice is practice),
                            key=lambda f: (f.mtime, f.path)):
                if total <= budget or self._stopping.is_set():
                    return total
                if self._may_remove(f, now) and self._remove(f, "budget", done):
                    total -= f.disk
        return total

    def _note_budget(self, over: bool, total: int, now: float) -> None:
        """Say that the logs are over their budget with nothing more to remove as it begins,
        then at most once an hour while it lasts, and that it is over as it ends; /health
        shows it meanwhile (``over_budget``)."""
        s = self.settings
        if over:
            first = self.over_budget is None
            since = self.over_budget["since"] if self.over_budget is not None else round(now, 1)
            self.over_budget = {"since": since, "bytes": total, "mb": round(total / MB, 1),
                                "max_disk_mb": s.max_disk_mb,
                                "remove_platform_logs": s.remove_platform_logs}
            if first or now - self._over_said >= OVER_BUDGET_REPEAT:
                self._over_said = now
                log.warning("serve: the game logs are over their budget with nothing more to "
                            "remove", **self.over_budget)
        elif self.over_budget is not None:
            log.info("serve: the game logs are within their budget again",
                     mb=round(total / MB, 1), max_disk_mb=s.max_disk_mb,
                     since=self.over_budget["since"])
            self.over_budget = None

    def _may_remove(self, f: LogFile, now: float) -> bool:
        """A practice log (or any, where allowed) of a game that is over: compressed (only a
        finished log is), or its footer written or untouched for STALE_AFTER (cut by a crash),
        and no writer holding it: a game in play whose worker is suspended for days is
        untouched as long, and a platform's raw frame may end in a footer's bytes."""
        if not f.practice and not self.settings.remove_platform_logs:
            return False
        if f.compressed:
            return True
        return (f.mtime < now - STALE_AFTER or read_footer(Path(f.path)) is not None) \
            and not self._held(f)

    def _held(self, f: LogFile) -> bool:
        """Whether a writer holds ``f``; held where that cannot be checked (out of file
        descriptors: it was "not held", and the log of a game in play could go), said as an
        error of the pass."""
        return being_written(f.path, functools.partial(self._error, "check", f.relative))

    def _remove(self, f: LogFile, reason: str, done: dict[str, int]) -> bool:
        kind = "practice" if f.practice else "platform"
        try:
            os.unlink(f.path)
        except FileNotFoundError:
            return True  # gone already
        except OSError as exc:
            self._error("remove", f.relative, exc)
            return False
        log.info("serve: game log removed", log=f.relative, reason=reason, kind=kind,
                 bytes=f.disk)
        self.metrics.inc("mjbot_logs_removed_total", kind=kind, reason=reason)
        key = f"{kind} {reason}"
        with self._counts:
            self.removed[key] = self.removed.get(key, 0) + 1
        done["removed"] += 1
        done["freed"] += f.disk
        return True

    def _compressed(self, f: LogFile, target: Path) -> LogFile:
        self.metrics.inc("mjbot_logs_compressed_total")
        self.compressed += 1
        try:
            disk = _disk(target.stat())
        except OSError:
            disk = 0
        return LogFile(str(target), f.relative + logzip.GZ, f.mtime, disk, f.practice, True)

    def _walk(self, now: float) -> Iterator[LogFile]:
        """Every log below the root (compressed or not; no link followed, no hidden folder),
        and a compression's temporary file left by a crash removed."""
        stack: list[tuple[str, tuple[str, ...]]] = [(str(self.root), ())]
        while stack:
            folder, parts = stack.pop()
            try:
                with os.scandir(folder) as it:
                    entries = list(it)
            except OSError:
                continue
            for entry in entries:
                name = entry.name
                try:
                    if name.startswith("."):
                        if name.endswith(GZ_SUFFIX + ".tmp") and entry.is_file(
                                follow_symlinks=False) and entry.stat(
                                follow_symlinks=False).st_mtime < now - TMP_GRACE:
                            os.unlink(entry.path)
                        continue
                    if entry.is_dir(follow_symlinks=False):
                        if len(parts) < MAX_DEPTH:
                            stack.append((entry.path, (*parts, name)))
                        continue
                    if not is_log_name(name) or not entry.is_file(follow_symlinks=False):
                        continue
                    st = entry.stat(follow_symlinks=False)
                except OSError:
                    continue
                rel = (*parts, name)
                yield LogFile(entry.path, "/".join(rel), st.st_mtime, _disk(st),
                              len(rel) >= 3 and rel[1] == PRACTICE_PLATFORM,
                              name.endswith(GZ_SUFFIX))

    # ------------------------------------------------------------------ the disk

    def disk(self) -> tuple[int, int]:
        """(free, total) bytes of the log folder's file system as the last pass measured them
        ((0, 0) before the first or where none is found): /health and /metrics read it on
        the event loop, and a statvfs of a disk that does not answer (a hung network mount)
        would hold the whole process; the pass measures it in its thread."""
        return self._disk

    def _measure_disk(self) -> tuple[int, int]:
        where = self.root
        while not where.exists() and where != where.parent:
            where = where.parent
        try:
            usage = shutil.disk_usage(where)
        except OSError:
            return 0, 0
        return usage.free, usage.total

    def low_disk(self) -> str | None:
        """The warning while the free space is below ``low_disk_mb`` (None otherwise)."""
        limit = self.settings.low_disk_mb
        free, total = self.disk()
        if not limit or not total or free >= limit * MB:
            return None
        return (f"low disk: {free / MB:.0f} MB free under the log folder {self.root} "
                f"(warned below {limit:g} MB)")

    def _check_disk(self) -> None:
        warning = self.low_disk()
        if (warning is not None) != self._low:
            self._low = warning is not None
            if warning:
                log.warning("serve: " + warning)
            else:
                log.info("serve: disk space under the log folder is back above the warning",
                         low_disk_mb=self.settings.low_disk_mb)

    def _error(self, what: str, where: str, exc: BaseException) -> None:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        self.errors += 1
        self.last_error = self.last_failure = {"error": f"{what} {where}: {reason}",
                                               "at": time.time()}
        self.metrics.inc("mjbot_log_upkeep_errors_total")
        log.warning("serve: log upkeep failed", action=what, log=where, error=reason)

    def status(self) -> dict[str, Any]:
        """What /health shows of the upkeep."""
        free, total = self.disk()
        with self._counts:
            removed = dict(self.removed)
        return {"settings": _public(self.settings), "passes": self.passes,
                "last_pass": self.last_pass, "compressed": self.compressed,
                "removed": removed, "errors": self.errors,
                "last_error": self.last_error, "last_failure": self.last_failure,
                "disk_free": free, "disk_total": total,
                "low_disk": self.low_disk(), "over_budget": self.over_budget}


def _public(settings: LogUpkeep) -> dict[str, Any]:
    return {k: getattr(settings, k) for k in LogUpkeep.__dataclass_fields__}
