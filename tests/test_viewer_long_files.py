"""The replay viewer on multi-game files: opening one builds no hand's steps, a hand's steps
are built when that hand is asked for, and every hand shows exactly the steps the walk of the
whole file (every step built at open, as the viewer did before) gives it. Through the real
routes (aiohttp's test server) on real files: a Tenhou client transcript of ten games played
from different seats, a local-table log of three games with every seat's decisions, and an
`ntpu-server` match log whose clients move between its games."""

from __future__ import annotations

import gc
import json
import types
from pathlib import Path
from typing import Any

import pytest
from aiohttp.test_utils import TestClient, TestServer

from adapter.bench.view import repeated
from adapter.fakes.ntpu_server import run_match
from adapter.serve.status import StatusServer
from replay import formats, timeline
from tests.viewer_fixtures import practice_game

TRANSCRIPT = (Path(__file__).resolve().parent / "data/shared/tenhou/dnovikoff_protocol_captures"
              / "kokushi.log")


def _practice_games(tmp_path: Path) -> Path:
    """A local-table game written three times after one header: one log of three games."""
    source = practice_game(tmp_path / "source")
    path = tmp_path / "files" / "three.mjlog.msgpack"
    path.parent.mkdir(parents=True)
    path.write_bytes(repeated(source.read_bytes(), 3))
    return path


def _match_log(tmp_path: Path) -> Path:
    result = run_match(8, ["rulebased", "greedy", "greedy", "greedy"], seed=5,
                       transport="stdio", client_args=["--no-log"],
                       log_dir=str(tmp_path / "match"))
    assert result.log_path is not None
    return Path(result.log_path)


async def _client(path: Path) -> TestClient[Any, Any]:
    client = TestClient(TestServer(StatusServer(roots=[], imports=[str(path)]).app()))
    await client.start_server()
    return client


def _snapshots_counted(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Counts every step snapshot the timeline makes (each then made as before)."""
    made = [0]
    snapshot = timeline._Table.snapshot

    def counted(self: Any, text: str, actor: int | None) -> dict[str, Any]:
        made[0] += 1
        return snapshot(self, text, actor)

    monkeypatch.setattr(timeline._Table, "snapshot", counted)
    return made


async def test_opening_a_game_builds_no_step_and_a_hand_only_its_own(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Opening a game built a snapshot of every step of every hand (each seat's river and
    melds copied at each step): 800 hands of a transcript took 15.5 s to open. The outline
    now builds none, and each hand asked for builds its own steps, once."""
    path = _practice_games(tmp_path)
    made = _snapshots_counted(monkeypatch)
    client = await _client(path)
    game = f"0~{path.name}"
    try:
        outline = await (await client.get(f"/api/games/{game}")).json()
        assert len(outline["hands"]) >= 3 and made[0] == 0
        last = len(outline["hands"]) - 1
        for n in (last, 1, last):
            steps = (await (await client.get(f"/api/games/{game}/hands/{n}")).json())["steps"]
            assert len(steps) == outline["hands"][n]["steps"]
        assert made[0] == outline["hands"][last]["steps"] + outline["hands"][1]["steps"]
    finally:
        await client.close()


@pytest.mark.parametrize("make", [lambda _tmp: TRANSCRIPT, _practice_games, _match_log],
                         ids=["transcript", "local-table", "ntpu-match"])
async def test_every_hand_shows_the_steps_of_the_whole_walk(tmp_path: Path,
                                                            make: Any) -> None:
    path = make(tmp_path)
    every = timeline.every_step(formats.read(path.read_bytes(), path))
    # a file of several games, where what a hand shows depends on the games before it
    assert len(every) >= 8
    client = await _client(path)
    game = f"0~{path.name}"
    try:
        outline = await (await client.get(f"/api/games/{game}")).json()
        assert [h["steps"] for h in outline["hands"]] == [len(h) for h in every]
        for n, steps in enumerate(every):
            body = await (await client.get(f"/api/games/{game}/hands/{n}")).json()
            assert body["steps"] == json.loads(json.dumps(steps)), n
            assert body["result"] == outline["hands"][n]["result"], n
    finally:
        await client.close()


def _dora_no_tile(tmp_path: Path) -> Path:
    """A local-table log whose second hand's dora indicator is no tile (99): a damaged or
    hand-edited file, which the log's reader and the outline take (neither names a tile)."""
    import msgpack

    source = practice_game(tmp_path / "source").read_bytes()
    unpacker = msgpack.Unpacker(raw=False, strict_map_key=False, max_buffer_size=0)
    unpacker.feed(source)
    frames = list(unpacker)
    rounds = [f for f in frames if f.get("k") == "event"
              and f["event"]["type"] == "RoundStarted"]
    assert len(rounds) >= 2
    rounds[1]["event"]["dora_indicators"] = [99]
    path = tmp_path / "files" / "dora.mjlog.msgpack"
    path.parent.mkdir(parents=True)
    path.write_bytes(b"".join(msgpack.packb(f, use_bin_type=True) for f in frames))
    return path


async def test_a_hand_the_table_cannot_draw_is_a_422_not_a_500(tmp_path: Path) -> None:
    """Opening such a file built every step, so the viewer said at once that it cannot show
    it (422, the reason logged in one line); with the steps built when a hand is asked for,
    the outline opens and that hand's request was a 500 with a traceback in the log. It is
    the same 422 now, and the hands before it still show."""
    path = _dora_no_tile(tmp_path)
    client = await _client(path)
    game = f"0~{path.name}"
    try:
        assert (await client.get(f"/api/games/{game}")).status == 200
        assert (await client.get(f"/api/games/{game}/hands/0")).status == 200
        await _hand_unreadable_twice(client, game, 1)
    finally:
        await client.close()


async def _hand_unreadable_twice(client: Any, game: str, hand: int) -> None:
    """The hand's request is the 422 of a hand the table cannot draw, asked twice: built
    once, its failure kept."""
    from adapter.serve.viewer import UNREADABLE

    for _ in range(2):
        r = await client.get(f"/api/games/{game}/hands/{hand}")
        assert r.status == 422 and await r.text() == UNREADABLE


def _decision_not_an_action(tmp_path: Path) -> Path:
    """A local-table log whose second hand's first decision "played" a PlatformNotice: a
    damaged or hand-edited file, which the log's reader takes (its schema knows the type)."""
    import msgpack

    source = practice_game(tmp_path / "source").read_bytes()
    unpacker = msgpack.Unpacker(raw=False, strict_map_key=False, max_buffer_size=0)
    unpacker.feed(source)
    frames = list(unpacker)
    rounds = [i for i, f in enumerate(frames) if f.get("k") == "event"
              and f["event"]["type"] == "RoundStarted"]
    assert len(rounds) >= 3
    first = next(i for i in range(rounds[1], rounds[2]) if frames[i].get("k") == "decision")
    frames[first]["action"] = {"type": "PlatformNotice", "text": "damaged"}
    path = tmp_path / "files" / "action.mjlog.msgpack"
    path.parent.mkdir(parents=True)
    path.write_bytes(b"".join(msgpack.packb(f, use_bin_type=True) for f in frames))
    return path


async def test_a_damaged_decision_fails_its_hand_not_the_game(tmp_path: Path) -> None:
    """A decision whose view cannot be made failed only its own hand's request before its
    hand's items were packed at open (8074679); packing makes every decision's view while
    the outline is built, and only a ValueError kept the frame for its hand: an action of
    another type (a KeyError) made the whole game a 500, every hand with it. The game opens
    again and every other hand shows; that hand, a 500 with a traceback in the log at every
    ask (before 8074679 as well), is the 422 of a hand the table cannot draw."""
    path = _decision_not_an_action(tmp_path)
    client = await _client(path)
    game = f"0~{path.name}"
    try:
        outline = await client.get(f"/api/games/{game}")
        assert outline.status == 200
        hands = len((await outline.json())["hands"])
        for n in (0, 2, hands - 1):
            assert (await client.get(f"/api/games/{game}/hands/{n}")).status == 200, n
        await _hand_unreadable_twice(client, game, 1)
    finally:
        await client.close()


def test_the_page_says_when_a_hand_cannot_be_shown(tmp_path: Path) -> None:
    """In Chromium (tests/cdp.py): the page showed the hand before, or an empty table,
    with no word of why, the request's failure left unhandled; it says so now."""
    from tests.cdp import Chromium, find_chromium
    from tests.serve_helpers import mjbot_view

    binary = find_chromium()
    if binary is None:
        pytest.skip("no chromium binary (Debian: apt-get install chromium)")
    path = _dora_no_tile(tmp_path)
    chromium = Chromium(binary, tmp_path / "profile")
    try:
        b = chromium.page()
        with mjbot_view(path) as url:
            b.navigate(f"{url}games/0~{path.name}#1")
            b.wait_for("document.getElementById('step-index').textContent"
                       ".startsWith('step 1 /')")
            b.key("ArrowDown")
            b.wait_for("document.getElementById('link-note').textContent.length > 0")
            note = b.evaluate("document.getElementById('link-note').textContent")
            assert note.startswith("cannot show hand 2: 422 cannot show this file"), note
            assert b.evaluate("document.getElementById('hand-select').value") == "0"
            assert b.evaluate("document.getElementById('step-index').textContent"
                              ".startsWith('step 1 /')")
            b.evaluate("location.hash = '3'")  # a hand that can be shown: the note goes
            b.wait_for("document.getElementById('hand-select').value === '2'")
            assert b.evaluate("document.getElementById('link-note').textContent") == ""
        b.close()
    finally:
        chromium.close()


def _walked(root: Any) -> int:
    """How many objects a full collection walks to keep ``root`` alive: those reachable from it
    that the collector tracks (classes, modules and functions, which the program holds
    anyway, are not followed)."""
    seen: set[int] = set()
    todo = [root]
    while todo:
        obj = todo.pop()
        if id(obj) in seen or isinstance(obj, type | types.ModuleType | types.FunctionType):
            continue
        seen.add(id(obj))
        todo.extend(o for o in gc.get_referents(obj) if gc.is_tracked(o))
    return len(seen)


def test_a_kept_game_gives_the_collector_little_to_walk(tmp_path: Path) -> None:
    """The viewer's cache keeps the last few games opened: each full collection of a long-lived
    ``mjbot serve`` walks every object they hold, holding the interpreter and so the event
    loop that answers the platforms. A local-table log's decisions (each one's request, legal
    moves and candidates) were some 25 objects each, kept for every hand: 800 hands stalled
    the loop 0.7 to 1.9 s per collection (``mjbot bench view``). A hand's items are now
    kept as one bytes object until the hand is asked for: fewer objects than decisions."""
    path = _practice_games(tmp_path)
    kept = timeline.build(formats.read(path.read_bytes(), path))
    decisions = sum(h["decisions"] for h in kept.hands)
    assert decisions >= 100
    gc.collect()  # what stays tracked once a collection has looked (tuples of numbers do not)
    walked = _walked(kept)
    assert walked < decisions / 2, (walked, decisions)
