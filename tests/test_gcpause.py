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
from replay.gcpause import collector_paused, freeze_kept, thaw
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


def test_the_viewer_reads_and_outlines_a_transcript_in_one_pause(tmp_path: Path) -> None:
    """The viewer's parsed game (GameIndex.timeline): a Tenhou client transcript of 30 games
    (not a game log: its reader is the codec's) read and its outline built with no
    collection started until both are done (the outline of a 1,600-hand transcript took 1.54
    times a short one's per hand, paying the read's collections)."""
    from adapter.serve.games import GameIndex

    capture = Path(__file__).resolve().parent / "data/shared/tenhou/dnovikoff_protocol_captures"
    path = tmp_path / "session.log"
    path.write_text((capture / "kokushi.log").read_text(encoding="utf-8") * 3,
                    encoding="utf-8")
    index = GameIndex([], [str(path)])
    started: list[int] = []

    def seen(phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            started.append(info["generation"])

    gc.collect()
    gc.callbacks.append(seen)
    try:
        timeline = index.timeline(f"0~{path.name}")
    finally:
        gc.callbacks.remove(seen)
    assert len(timeline.hands) == 48
    assert len(started) <= 1 and gc.isenabled()



def test_a_steady_stream_of_overlapping_reads_lets_the_collector_run() -> None:
    """Reads in two threads, each beginning before the other's ends (the viewer's pool of
    two building one long game after another for a few analysts): the count of reads in
    progress never fell to zero, so the collector stayed off for good, in `mjbot serve`'s
    whole process, and every cycle its play made meanwhile was kept. A pause now takes in
    only the reads begun while the read that began it goes on: the collector runs between pauses
    and what the process left meanwhile is freed while the stream goes on."""
    import weakref

    class Cycle:
        me: Any = None

    assert gc.isenabled()
    garbage = Cycle()
    garbage.me = garbage
    freed = weakref.ref(garbage)
    reads: list[threading.Thread] = []
    ends: list[threading.Event] = []
    on: list[bool] = []  # the collector, as each read but the last ends

    def read(begun: threading.Event, end: threading.Event) -> None:
        with collector_paused():
            begun.set()
            end.wait(10)

    try:
        for n in range(12):
            begun = threading.Event()
            ends.append(threading.Event())
            reads.append(threading.Thread(target=read, args=(begun, ends[-1])))
            reads[-1].start()
            assert begun.wait(10)
            if n == 0:
                del garbage  # a cycle left while the stream reads: only the collector frees it
                continue
            ends[n - 1].set()  # the read before this one ends while this one goes on
            reads[n - 1].join(10)
            on.append(gc.isenabled())
            [[] for _ in range(2000)]  # the rest of the process allocating meanwhile
        assert any(on), on
        assert freed() is None, on
    finally:
        for end in ends:
            end.set()
        for thread in reads:
            thread.join(10)
    assert gc.isenabled()


def test_a_freeze_ends_with_the_holder_that_began_it() -> None:
    """Two commentaries at once share the freeze of what their reads kept; the one that
    began it ends it for both (their objects walked once then, as without a freeze), so
    that overlapping commentaries one after the other cannot keep the process's objects out
    of the collector's walks for good, every cycle among them kept."""
    assert gc.get_freeze_count() == 0
    first = freeze_kept()
    # made after the first freeze, frozen by the second
    kept: list[list[object]] = [[] for _ in range(1000)]
    second = freeze_kept()
    assert gc.get_freeze_count() > len(kept)
    thaw(first)
    assert gc.get_freeze_count() == 0
    third = freeze_kept()  # begun while the second still holds: its own freeze
    thaw(second)
    assert gc.get_freeze_count() > 0
    thaw(third)
    assert gc.get_freeze_count() == 0
