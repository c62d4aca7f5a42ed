"""A long read's cancellation point (replay/progress.py): the log's read, a seat's replay
of it and the tenhou.net/6 and mjai exports ask the hook their caller set as they go (every
few hands), and what it raises ends them there. They ran to their end once started: the
viewer could not stop a seat's read of a 300-game log (seconds) nor an export of it (7 s)
for a client that had hung up. On a real match log of the local table's games."""

from __future__ import annotations

from pathlib import Path

import pytest

from adapter.bench.view import repeated
from replay import formats, progress, replayer, timeline
from replay import record as record_mod
from replay.formats import mjai_log, tenhou6
from tests.viewer_fixtures import practice_game

GAMES = 20


class GivenUp(Exception):
    """The hook's: the read is given up."""


class Hook:
    """Counts its calls and raises at the ``stop_at``-th."""

    def __init__(self, stop_at: int) -> None:
        self.calls, self.stop_at = 0, stop_at

    def __call__(self) -> None:
        self.calls += 1
        if self.calls >= self.stop_at:
            raise GivenUp


@pytest.fixture(scope="module")
def match_log(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = practice_game(tmp_path_factory.mktemp("logs"))
    path.write_bytes(repeated(path.read_bytes(), GAMES))
    return path


def test_a_seats_read_asks_as_it_goes_and_ends_where_the_hook_raises(match_log: Path) -> None:
    whole = Hook(stop_at=10**9)
    with progress.checking(whole):
        rep = replayer.load(match_log, 2)
    assert rep.events and whole.calls >= GAMES  # asked all along: at least once a game
    stopped = Hook(stop_at=3)
    with progress.checking(stopped), pytest.raises(GivenUp):
        replayer.load(match_log, 2)
    assert stopped.calls == 3  # ended at the check that raised, not at the end
    # without a hook (every caller but the viewer) the read is as it was
    assert replayer.load(match_log, 2).events == rep.events


@pytest.mark.parametrize("writer", [tenhou6, mjai_log])
def test_an_export_asks_between_hands(match_log: Path, writer: object) -> None:
    record = replayer.load(match_log).record
    assert record is not None
    dumps = writer.dumps  # type: ignore[attr-defined]
    counted = Hook(stop_at=10**9)
    with progress.checking(counted):
        text = dumps(record)
    assert counted.calls == len(record.hands())  # once a hand
    stopped = Hook(stop_at=2)
    with progress.checking(stopped), pytest.raises(GivenUp):
        dumps(record)
    assert stopped.calls == 2
    assert dumps(record) == text


def test_a_games_outline_asks_between_hands(match_log: Path) -> None:
    """Opening a game is its read and then its outline's walk of every hand (replay/
    timeline.py): on a 300-game match log 2.9 s and 1.7 s. The walk asked nothing, so a
    client that hung up once the read was done held its slot to the end for nobody, and
    the game was kept; it asks once a hand."""
    loaded = formats.read(match_log.read_bytes(), match_log)
    counted = Hook(stop_at=10**9)
    with progress.checking(counted):
        whole = timeline.build(loaded)
    assert counted.calls == len(whole.hands) >= GAMES  # once a hand
    stopped = Hook(stop_at=2)
    with progress.checking(stopped), pytest.raises(GivenUp):
        timeline.build(loaded)
    assert stopped.calls == 2
    assert timeline.build(loaded).hands == whole.hands


def test_a_long_mjai_files_read_asks_as_it_goes(match_log: Path, tmp_path: Path) -> None:
    """An import holding a match (the viewer's own mjai export of a match log, opened in it
    again): its read (mjai_log.loads) and a seat's replay of it (derive_decisions) asked
    nothing, 3 s and 3.4 s on 300 games, so an export or a seat's read of it ran to its end
    for a client that had hung up. The read asks every few hands, the replay once a hand."""
    record = replayer.load(match_log).record
    assert record is not None
    path = tmp_path / "match.mjai.jsonl"
    path.write_text(mjai_log.dumps(record) + "\n")
    lines = len(path.read_text().splitlines())
    read = Hook(stop_at=10**9)
    with progress.checking(read):
        loaded = formats.read(path.read_bytes(), path)
    assert loaded.record is not None and read.calls == lines // progress.EVERY >= GAMES
    replayed = Hook(stop_at=10**9)
    with progress.checking(replayed):
        rep = replayer.from_record(loaded.record, 2)
    views = -(-len(loaded.record.events) // progress.EVERY)  # the seat's view: every few hands
    assert replayed.calls == len(record.hands()) + views  # and the replay once a hand
    for stop_at in (2, read.calls + 2):  # in the read, then in the replay
        stopped = Hook(stop_at=stop_at)
        with progress.checking(stopped), pytest.raises(GivenUp):
            replayer.load(path, 2)
        assert stopped.calls == stop_at
    assert replayer.load(path, 2).events == rep.events


def test_the_hook_is_the_contexts_own(match_log: Path) -> None:
    """Set in a context, gone with it: a read after it (another request's, in the same pool
    thread) is not asked."""
    with progress.checking(Hook(stop_at=1)), pytest.raises(GivenUp):
        formats.read(match_log.read_bytes(), match_log)
    assert progress.hook() is None
    assert formats.read(match_log.read_bytes(), match_log).log is not None


def test_a_seats_view_of_the_whole_record_asks_as_it_goes(match_log: Path) -> None:
    """The seat's view of a local-table log's record (replay/record.py seat_view) came after
    the read's last check and ran on without one: 1.5 s of a 300-game match, so `mjbot view`
    stopped during an export answered its 503 at once but ended seconds later."""
    record = replayer.load(match_log).record
    assert record is not None
    whole = Hook(stop_at=10**9)
    with progress.checking(whole):
        view = record_mod.seat_view(record, 1)
    assert whole.calls >= len(record.events) // progress.EVERY >= GAMES
    assert view == record_mod.seat_view(record, 1)  # the same view with or without a hook
    stopped = Hook(stop_at=2)
    with progress.checking(stopped), pytest.raises(GivenUp):
        record_mod.seat_view(record, 1)
    assert stopped.calls == 2
