"""Reading a game log pauses Python's cycle collector (replay/gcpause.py): every object the
read makes is kept, and each full collection walked them all again (a 1,602-hand local-table
log: 21 s to read, 8 s of it without the collector). The collector is on again once the last
read in any thread has ended, and stays off where the program had turned it off."""

from __future__ import annotations

import gc
import threading
from pathlib import Path
from typing import Any

from adapter.bench.view import repeated
from replay.gcpause import collector_paused
from replay.log import parse_log
from tests.viewer_fixtures import practice_game


def test_reading_a_long_log_starts_no_collection_until_it_ends(tmp_path: Path) -> None:
    data = repeated(practice_game(tmp_path).read_bytes(), 4)  # thousands of frames
    started: list[int] = []

    def seen(phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            started.append(info["generation"])

    assert gc.isenabled()
    gc.collect()  # none due as the read begins: its first allocations cannot start one
    gc.callbacks.append(seen)
    try:
        log = parse_log(data)
    finally:
        gc.callbacks.remove(seen)
    assert len(log.frames) > 4000 and log.truncated is None
    # none while it read (57 without the pause); the objects it made meanwhile are walked
    # once, by the young generation's collection that the first allocation after it starts
    assert len(started) <= 1 and gc.isenabled()


def test_the_collector_is_on_again_after_the_last_read_in_any_thread() -> None:
    assert gc.isenabled()
    inside, leave = threading.Event(), threading.Event()

    def other_read() -> None:
        with collector_paused():
            inside.set()
            leave.wait(10)

    other = threading.Thread(target=other_read)
    other.start()
    try:
        assert inside.wait(10)
        with collector_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()  # the other thread's read has not ended
    finally:
        leave.set()
        other.join(10)
    assert gc.isenabled()


def test_a_collector_the_program_turned_off_stays_off() -> None:
    gc.disable()
    try:
        with collector_paused():
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()
