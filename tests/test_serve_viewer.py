"""The replay viewer's routes through aiohttp's test client: the list, a game's outline and
steps (own logs full or one-seat, imports of every format), exports that read back, and ids
that try to leave the log folder."""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
import gc
import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
import urllib.parse
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from aiohttp import web
from aiohttp.multipart import content_disposition_filename, parse_content_disposition
from aiohttp.test_utils import TestClient, TestServer
from yarl import URL

from adapter.serve.games import GameIndex, GameNotFound
from adapter.serve.practice import PracticeSettings, play_one
from adapter.serve.status import StatusServer
from adapter.serve.viewer import VIEW_CACHE
from replay.formats import mjai_log, tenhou6
from replay.log import log_path, read_log
from tests.in_process import mjbot_here
from tests.narrowing import footer_of, header_of
from tests.serve_helpers import until
from tests.viewer_fixtures import IMPORTS, game_folder, platform_game


@pytest.fixture(scope="module")
def made_folder(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The game folder, its practice game played once for the module; name -> path."""
    return game_folder(tmp_path_factory.mktemp("made") / "logs")


@pytest.fixture
def folder(made_folder: dict[str, Path], tmp_path: Path) -> dict[str, Any]:
    """A copy of the game folder of its own for each test (some add or change files)."""
    root = tmp_path / "logs"
    made = made_folder["practice"].parents[3]  # made/logs/practice/local/DAY/GAME
    shutil.copytree(made, root)
    files = {name: root / path.relative_to(made) for name, path in made_folder.items()}
    (root / ".hidden.json").write_text("{}")
    (root / "notes.py").write_text("print('not a game')")
    (root / "imports" / "junk.json").write_text('{"not": "a game"}')
    secret = tmp_path / "outside.json"
    secret.write_text('{"secret": true}')
    os.symlink(secret, root / "imports" / "link.json")
    return {"root": root, "files": files}


async def client_for(*roots: Path, files: list[str] | None = None
                     ) -> TestClient[web.Request, web.Application]:
    return await client_for_server(StatusServer(roots=[str(r) for r in roots], imports=files))


async def client_for_server(server: StatusServer) -> TestClient[web.Request, web.Application]:
    client = TestClient(TestServer(server.app()))
    await client.start_server()
    return client


def gid(root: Path, path: Path, index: int = 0) -> str:
    return "~".join([str(index), *path.relative_to(root).parts])


async def test_the_list(folder: dict[str, Any]) -> None:
    client = await client_for(folder["root"])
    try:
        games = (await (await client.get("/api/games")).json())["games"]
        names = {g["name"] for g in games}
        assert set(IMPORTS) | {"junk.json", "game.mjlog.msgpack"} <= names
        assert folder["files"]["practice"].name in names
        assert not names & {".hidden.json", "notes.py", "link.json"}
        practice = next(g for g in games if g["name"] == folder["files"]["practice"].name)
        assert practice["own"] and practice["platform"] == "local"
        assert practice["variant"] == "riichi" and len(practice["players"]) == 4
        assert practice["session"] == "practice"
        assert [g["mtime"] for g in games] == sorted((g["mtime"] for g in games),
                                                     reverse=True)
        page = await client.get("/games")
        assert page.status == 200 and "mjbot games" in await page.text()
        assert (await client.get("/")).status == 200  # redirected to the list
    finally:
        await client.close()


async def test_a_local_game_step_by_step(folder: dict[str, Any]) -> None:
    root, path = folder["root"], folder["files"]["practice"]
    client = await client_for(root)
    game_id = gid(root, path)
    try:
        assert (await client.get(f"/games/{game_id}")).status == 200
        outline = await (await client.get(f"/api/games/{game_id}")).json()
        log = read_log(path)
        assert outline["full_information"] and outline["our_seat"] == 1
        assert outline["exports"] == ["tenhou6", "mjai"]
        assert outline["players"] == header_of(log).extra["players"]
        assert outline["final_scores"] == list(footer_of(log).scores)
        assert len(outline["hands"]) == footer_of(log).result["hands"]
        assert sum(h["decisions"] for h in outline["hands"]) == len(log.decisions())
        hand = await (await client.get(f"/api/games/{game_id}/hands/0")).json()
        steps = hand["steps"]
        assert hand["label"] == "E1-0" and len(steps) == outline["hands"][0]["steps"]
        first = steps[0]
        assert [len(s["hand"]) for s in first["seats"]] == [13, 13, 13, 13]
        assert first["scores"] == [25000] * 4 and len(first["dora"]) == 1
        draw = steps[1]
        assert draw["actor"] == 0 and draw["seats"][0]["drawn"] is not None
        discards = [s for s in steps if " discards " in s["text"]]
        assert discards and discards[0]["seats"][discards[0]["actor"]]["river"]
        chosen = [d for s in steps for d in s["decisions"] if d["candidates"]]
        assert chosen and all(d["policy"] and d["legal"] >= 1 for d in chosen)
        assert any(d["action"] == d["candidates"][0][0] for d in chosen)
        last = steps[-1]
        assert last["result"] is not None and last["result"] == hand["result"]
        assert (await client.get(f"/api/games/{game_id}/hands/99")).status == 404
        assert (await client.get(f"/api/games/{game_id}/hands/x")).status == 404
        for bad in ("%C2%B2", "%D9%A0", "0" * 5000):  # digits int() refuses: were a 500
            refused = await client.get(f"/api/games/{game_id}/hands/{bad}")
            assert refused.status == 404 and "no hand" in await refused.text(), bad
    finally:
        await client.close()


async def test_exports_read_back(folder: dict[str, Any]) -> None:
    root, path = folder["root"], folder["files"]["practice"]
    client = await client_for(root)
    game_id = gid(root, path)
    try:
        six = await client.get(f"/games/{game_id}/export/tenhou6")
        assert six.status == 200 and "attachment" in six.headers["Content-Disposition"]
        record = tenhou6.loads(await six.text())
        hands = footer_of(read_log(path)).result["hands"]
        assert len(record.hands()) == hands
        jsonl = await client.get(f"/games/{game_id}/export/mjai")
        assert len(mjai_log.loads(await jsonl.text()).hands()) == hands
        assert (await client.get(f"/games/{game_id}/export/pdf")).status == 404
        one_seat = gid(root, folder["files"]["platform"])
        refused = await client.get(f"/games/{one_seat}/export/tenhou6")
        assert refused.status == 422 and "every seat" in await refused.text()
    finally:
        await client.close()


async def test_an_export_keeps_any_file_name(folder: dict[str, Any]) -> None:
    """An import's name may hold quotes, a newline or any script: the download is named
    exactly that (RFC 6266 ``filename*``, read back by aiohttp's parser, as a browser), with a
    plain-ASCII ``filename`` beside it. A quote cut the name short; a newline made aiohttp
    drop the connection with a logged traceback."""
    root = folder["root"]
    for stem in ('牌譜 "final"', "two\nlines", "semi; x=1,y"):
        shutil.copy(folder["files"]["tenhou6.json"], root / "imports" / f"{stem}.json")
    client = await client_for(root)
    try:
        for stem in ('牌譜 "final"', "two\nlines", "semi; x=1,y"):
            game_id = urllib.parse.quote(gid(root, root / "imports" / f"{stem}.json"), safe="")
            response = await client.get(f"/games/{game_id}/export/tenhou6")
            assert response.status == 200, stem
            header = response.headers["Content-Disposition"]
            assert header.isascii() and "\n" not in header, header
            kind, params = parse_content_disposition(header)
            assert kind == "attachment"
            assert content_disposition_filename(params, "filename") == f"{stem}.json", header
    finally:
        await client.close()


async def test_one_seat_logs_and_every_import(folder: dict[str, Any]) -> None:
    root = folder["root"]
    client = await client_for(root)
    try:
        platform = await (await client.get(
            f"/api/games/{gid(root, folder['files']['platform'])}")).json()
        assert not platform["full_information"] and platform["our_seat"] == 1
        assert platform["exports"] == []
        steps = (await (await client.get(
            f"/api/games/{gid(root, folder['files']['platform'])}/hands/0")).json())["steps"]
        seats = steps[0]["seats"]
        assert seats[1]["hand"] and all(seats[s]["hand"] is None and seats[s]["hidden"] == 13
                                        for s in (0, 2, 3))
        decided = [d for s in steps for d in s["decisions"]]
        assert decided[0]["action"] == "riichi 1z" and decided[0]["candidates"][0][1] == 0.75
        assert decided[1]["fallback"] == "timeout"
        for name in IMPORTS:
            response = await client.get(f"/api/games/{gid(root, folder['files'][name])}")
            assert response.status == 200, name
            outline = await response.json()
            assert outline["hands"] and outline["full_information"] is not None, name
        junk = await client.get(f"/api/games/{gid(root, root / 'imports' / 'junk.json')}")
        assert junk.status == 422 and "cannot show this file" in await junk.text()
    finally:
        await client.close()


async def test_a_file_no_reader_takes_is_neither_listed_nor_quoted(
        folder: dict[str, Any]) -> None:
    """Prose in a served folder (README, LICENSE, notes) is not listed; a file that starts
    like a game format but is none is listed, and opening it (or any unlisted file by its id)
    is a 422 that quotes nothing of the file."""
    root = folder["root"]
    prose = {"README.txt": "Private notes: the password is hunter2\n",
             "LICENSE.txt": "MIT License hunter2\n\nCopyright\n",
             "notes.log": "# a heading\nsome prose hunter2\n", "empty.json": "  \n"}
    lookalikes = {"almost.txt": "/draw hunter2 1m\n", "secret.json": '{"pw": "hunter2"}\n',
                  "bom.xml": "\ufeff<hunter2/>\n"}
    for name, text in {**prose, **lookalikes}.items():
        (root / "imports" / name).write_text(text, encoding="utf-8")
    client = await client_for(root)
    try:
        names = {g["name"] for g in (await (await client.get("/api/games")).json())["games"]}
        assert not names & set(prose) and set(lookalikes) <= names
        for name in (*prose, *lookalikes):
            game = gid(root, root / "imports" / name)
            for path in (f"/api/games/{game}", f"/api/games/{game}/hands/0",
                         f"/api/games/{game}/commentary", f"/games/{game}/export/mjai"):
                response = await client.get(path)
                body = await response.text()
                assert response.status == 422, (path, response.status, body)
                assert "hunter2" not in body and "cannot show this file" in body, (path, body)
    finally:
        await client.close()


BAD_IDS = ["..", "0~..~..~etc~passwd", "0~imports~..~..~outside.json", "0~%2e%2e~outside.json",
           "0~imports%2Flink.json", "0~imports~link.json", "0~.hidden.json", "0~notes.py",
           "1~imports~junk.json", "-1~x", "x~y", "0~", "0", "0~~imports", "0~imports~",
           "0~%2Fetc%2Fpasswd", "0~imports~game.xml%00", "0~imports\\game.xml",
           "0~C:~x.json", "%C2%B2~imports~game.xml", "%D9%A0~imports~game.xml",
           "0" * 5000 + "~imports~game.xml"]


@pytest.mark.parametrize("bad", BAD_IDS)
async def test_ids_that_leave_the_folder_are_refused(folder: dict[str, Any], bad: str) -> None:
    client = await client_for(folder["root"])
    try:
        for path in (f"/games/{bad}", f"/api/games/{bad}", f"/api/games/{bad}/hands/0",
                     f"/games/{bad}/export/mjai"):
            # sent as written: no client-side normalisation of "..", "%2e%2e" or "%2F"
            base = str(client.make_url("/")).rstrip("/")
            response = await client.session.get(URL(base + path, encoded=True))
            assert response.status == 404, (path, response.status)
            assert "secret" not in await response.text()
    finally:
        await client.close()


def test_resolve_accepts_only_what_the_list_names(folder: dict[str, Any]) -> None:
    root = folder["root"]
    index = GameIndex([str(root)])
    for entry in index.listing().games:
        assert index.resolve(entry["id"]).is_relative_to(root.resolve())
    for bad in BAD_IDS:
        with pytest.raises(GameNotFound):
            index.resolve(bad)


async def test_single_files_given_to_view(folder: dict[str, Any]) -> None:
    xml = folder["files"]["game.xml"]
    client = await client_for(files=[str(xml)])
    try:
        games = (await (await client.get("/api/games")).json())["games"]
        assert [g["id"] for g in games] == ["0~game.xml"]
        assert (await client.get("/api/games/0~game.xml")).status == 200
        assert (await client.get("/api/games/0~game.mjai.jsonl")).status == 404
    finally:
        await client.close()


async def test_a_file_given_alone_opens_whatever_its_name(folder: dict[str, Any],
                                                          tmp_path: Path) -> None:
    """A file named to `mjbot view` is listed whatever its name, so it opens whatever its name:
    an mjai log saved as `.mjson` (as Mortal's tools name them) shows, as `mjbot replay` reads
    it, and a file no reader takes is the 422 that says so, not "no such game"."""
    mjson = tmp_path / "mortal game.mjson"
    shutil.copy(folder["files"]["game.mjai.jsonl"], mjson)
    binary = tmp_path / "save.dat"
    binary.write_bytes(bytes(range(256)) * 8)
    client = await client_for(files=[str(mjson), str(binary)])
    try:
        games = (await (await client.get("/api/games")).json())["games"]
        ids = {g["name"]: g["id"] for g in games}
        assert set(ids) == {mjson.name, binary.name}
        shown = await client.get(f"/api/games/{ids[mjson.name]}")
        assert shown.status == 200 and (await shown.json())["variant"] == "riichi"
        refused = await client.get(f"/api/games/{ids[binary.name]}")
        assert refused.status == 422 and "cannot show this file" in await refused.text()
        # a file given alone names only itself: its neighbours stay out of reach
        sibling = ids[mjson.name].rsplit("~", 1)[0] + "~" + binary.name
        assert (await client.get(f"/api/games/{sibling}")).status == 404
    finally:
        await client.close()


def test_view_names_a_missing_path_in_one_line(tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    out = mjbot_here(capsys, "view", str(tmp_path / "no"))
    assert out.returncode == 2 and out.stderr.count("\n") == 1
    assert "no such file or folder" in out.stderr
    refused = mjbot_here(capsys, "view", str(tmp_path), "--host", "0.0.0.0")
    assert refused.returncode == 2 and "loopback" in refused.stderr
    assert json  # (imported for the fixtures' JSON files)


@pytest.mark.parametrize(("flag", "value", "words"), [
    ("--port", "99999", "must be 0..65535"), ("--port", "-1", "must be 0..65535"),
    ("--port", "http", "must be 0..65535"), ("--host", "no such host", "not an IP address"),
    ("--host", "999.0.0.1", "not an IP address")])
def test_view_refuses_a_bad_port_or_host_in_one_line(
        tmp_path: Path, flag: str, value: str, words: str,
        capsys: pytest.CaptureFixture[str]) -> None:
    out = mjbot_here(capsys, "view", str(tmp_path), f"{flag}={value}")
    assert out.returncode == 2 and "Traceback" not in out.stderr, out.stderr
    assert words in out.stderr.strip().splitlines()[-1] and "token" not in out.stderr


def test_serve_names_a_bad_status_host(tmp_path: Path,
                                      capsys: pytest.CaptureFixture[str]) -> None:
    config = tmp_path / "serve.toml"
    config.write_text("[status]\nhost = '10.0.0.0.1'\n")
    for argv in (["--check"], ["--check", "--status", "bad host:8750"]):
        out = mjbot_here(capsys, "serve", str(config), *argv)
        # the config's host is refused by the status server's check; --status's by the one
        # HOST:PORT rule (adapter/hostport.py), which names the space in it
        words = "whitespace" if "--status" in argv else "not an IP address or host name"
        assert out.returncode == 2 and words in out.stderr, out.stderr
        assert "token" not in out.stderr and len(out.stderr.strip().splitlines()) == 1


async def test_commentary_subtitles_sit_on_the_steps_of_the_moves(folder: dict[str, Any]) -> None:
    """Every sentence is placed on the step that draws the move it explains: that step's
    actor is the commented seat, and a discard's step shows the discarded tile."""
    root = folder["root"]
    client = await client_for(root)
    try:
        for name, seats in (("tenhou6.json", {0, 1, 2, 3}),
                            ("platform", {1})):
            game = gid(root, folder["files"][name])
            response = await client.get(f"/api/games/{game}/commentary")
            assert response.status == 200, name
            rows = (await response.json())["subtitles"]
            assert rows and {r["seat"] for r in rows} <= seats, name
            hands: dict[int, list[dict[str, Any]]] = {}
            for r in rows:
                if r["hand"] not in hands:
                    hands[r["hand"]] = (await (await client.get(
                        f"/api/games/{game}/hands/{r['hand']}")).json())["steps"]
                step = hands[r["hand"]][r["step"]]
                assert step["actor"] == r["seat"] or r["played"] == "pass", (name, r)
                if r["played"].startswith("discard "):
                    tile = r["played"].split()[1]
                    assert step["seats"][r["seat"]]["river"][-1]["t"] == tile, (name, r)
                assert r["sentence"].startswith(f"seat {r['seat']} ")
                if r["hit"] is None:  # a table the rules cannot read: no prediction (one in
                    assert r["predicted"] == [], (name, r)  # the legal set's order passed)
            assert any(r["hit"] is not None for r in rows), name
            unread = [r["played"] for r in rows if r["hit"] is None]
            # the platform sample's claim on a hand of 15 tiles: it was a 500 for the game
            assert unread == (["pass"] if name == "platform" else []), (name, unread)
    finally:
        await client.close()


async def test_a_stop_gives_up_a_commentary_in_the_making(folder: dict[str, Any]) -> None:
    """Stopping `mjbot view` (or `mjbot serve`) while a game's commentary was being built (a
    whole riichi game: seconds) waited for the build, and for the request that asked for it
    (the server waits for the requests in hand): Ctrl-C seemed to hang, and a test's view
    process outlived its 10 s. The build now gives up at the stop; its request gets a 503."""
    root = folder["root"]
    server = StatusServer(roots=[str(root)])
    url = await server.start("127.0.0.1", 0)
    assert server.runner is not None
    cache = server.runner.app[VIEW_CACHE]
    game = gid(root, folder["files"]["practice"])
    async with aiohttp.ClientSession() as session:
        asked = asyncio.ensure_future(session.get(f"{url}api/games/{game}/commentary"))
        await until(lambda: cache.builds["commentary"] == 1 and cache.building == 1)
        await server.stop()
        response = await asked
        assert response.status == 503 and "stopping" in await response.text()
    assert cache.builds["commentary"] == 1


async def test_the_list_pages_and_shows_our_seat_and_result(folder: dict[str, Any]) -> None:
    root = folder["root"]
    platform = folder["files"]["platform"]
    data = platform.read_bytes()  # the same game still being written: no footer yet
    (platform.parent / "live.mjlog.msgpack").write_bytes(data[:data.rfind(b"\xa1k\xa6footer")
                                                              - 1])
    client = await client_for(root)
    try:
        page = await (await client.get("/api/games")).json()
        games = {g["name"]: g for g in page["games"]}
        assert page["total"] == page["matched"] == len(games) and page["offset"] == 0
        practice = games[folder["files"]["practice"].name]
        footer = footer_of(read_log(folder["files"]["practice"]))
        assert practice["our_seat"] == 1 and practice["finished"]
        assert practice["scores"] == list(footer.scores)
        assert practice["our_score"] == footer.scores[1]
        assert practice["our_rank"] == 1 + sorted(footer.scores, reverse=True).index(
            footer.scores[1])
        ladder = games["game.mjlog.msgpack"]
        assert (ladder["our_seat"], ladder["our_score"], ladder["our_rank"]) == (1, 31000, 1)
        live = games["live.mjlog.msgpack"]
        assert live["our_seat"] == 1 and live["finished"] is False and "our_rank" not in live
        assert "our_seat" not in games["game.xml"]  # an import: no seat of ours

        first = await (await client.get("/api/games?limit=3")).json()
        second = await (await client.get("/api/games?limit=3&offset=3")).json()
        assert len(first["games"]) == len(second["games"]) == 3
        assert not {g["id"] for g in first["games"]} & {g["id"] for g in second["games"]}
        assert [g["id"] for g in first["games"] + second["games"]] == \
            [g["id"] for g in page["games"][:6]]
        found = await (await client.get("/api/games?q=ladder%20TENHOU")).json()
        assert found["matched"] == 2 and found["total"] == page["total"]
        assert {g["name"] for g in found["games"]} == {"game.mjlog.msgpack",
                                                       "live.mjlog.msgpack"}
        # "²" passes str.isdigit and int() refuses it, as it does 5000 digits: each was a 500
        for bad in ("limit=0", "limit=x", "offset=-1", "limit=100000", "offset=%C2%B2",
                    "limit=%D9%A3", "offset=" + "9" * 5000, "limit=" + "1" * 5000):
            refused = await client.get(f"/api/games?{bad}")
            assert refused.status == 400, bad
            text = await refused.text()
            assert bad.split("=")[0] + " must be a whole number" in text and "\n" not in text
    finally:
        await client.close()


async def test_a_stopped_game_is_listed_without_a_final_result(tmp_path: Path) -> None:
    """A game its session stopped has a footer holding the scores where it stopped: listed
    as unfinished, not with a rank and score as if it had been played out."""
    stop = threading.Event()
    stop.set()  # serve's stop, before the game's first hand
    settings = PracticeSettings(session="early", variant="riichi", policy="greedy",
                                log_dir=str(tmp_path), pause=0)
    assert play_one(settings, 1, stop, lambda _report: None) is False
    client = await client_for(tmp_path)
    try:
        (game,) = (await (await client.get("/api/games")).json())["games"]
        assert game["our_seat"] == 1 and game["finished"] is True
        assert game["unfinished"] == "stopped on request"
        assert "our_rank" not in game and "our_score" not in game
    finally:
        await client.close()


@pytest.mark.parametrize(("footer", "rank"), [
    ({"result": "won", "scores": [1, 2, 3, 4]}, 3),  # a result that is no map: the rule's
    ({"result": {"ranks": [1, 2]}, "scores": [25000, None, "x", 25000]}, None),  # no numbers
    ({"result": {"ranks": "1234"}, "scores": [25000, 25000, 25000, 25000]}, 2),  # no list
    ({"result": {}, "scores": {"0": 1}}, None),
])
async def test_a_damaged_footer_is_listed_without_a_result_not_a_500(
        folder: dict[str, Any], footer: dict[str, Any], rank: int | None) -> None:
    """A footer of another shape (a hand-edited or damaged log of ours) took the whole game
    list down with a 500 and a traceback; now that game is listed with what can be read."""
    import msgpack

    practice = folder["files"]["practice"]
    data = practice.read_bytes()
    damaged = practice.parent / "damaged.mjlog.msgpack"
    damaged.write_bytes(data[:data.rfind(b"\xa1k\xa6footer") - 1] + msgpack.packb(
        {"k": "footer", "ended": "2026-11-28T00:00:00", **footer}))
    client = await client_for(folder["root"])
    try:
        response = await client.get("/api/games")
        assert response.status == 200, await response.text()
        games = {g["name"]: g for g in (await response.json())["games"]}
        assert games[practice.name]["our_rank"] >= 1  # the others as before
        shown = games["damaged.mjlog.msgpack"]
        assert shown["our_seat"] == 1 and shown["finished"] is True
        if rank is None:
            assert "scores" not in shown and "our_rank" not in shown
        else:  # four numbers, the ranks unreadable: the table's rule on the scores
            assert shown["scores"] == footer["scores"] and shown["our_rank"] == rank
    finally:
        await client.close()


async def test_an_ntpu_clients_own_win_shows_our_value(ntpu_match: Path) -> None:
    """The NTPU server sends no value: the viewer showed a client's own win as worth 0 tai
    with no score change, where `mjbot replay` and the server's match log value it. The
    match (tests/conftest.py): seed 51, whose first hand a client wins."""
    logs = ntpu_match
    (match,) = (logs / "ntpu-server").rglob("*.mjlog.msgpack")
    client = await client_for(logs)
    try:
        table = (await (await client.get(f"/api/games/{gid(logs, match)}")).json())
        won = table["hands"][0]["result"]
        assert won["type"] == "win" and won["value"] > 0
        winner = table["names"][won["winner"]]
        (own,) = (logs / "ntpu").rglob(f"*-{winner}-g1-*.mjlog.msgpack")
        mine = (await (await client.get(f"/api/games/{gid(logs, own)}")).json())
        result = mine["hands"][0]["result"]
        assert (result["value"], result["deltas"]) == (won["value"], won["deltas"])
    finally:
        await client.close()


async def test_a_full_list_keeps_every_sessions_newest_games(tmp_path: Path) -> None:
    """The list holds the newest games up to its cap across every session and day. Sessions
    were walked in reverse name order and the cap cut there: a fast session named after the
    others filled it and every other session's games were not listed; nothing said the list
    was cut."""
    sample = platform_game(tmp_path / "sample.mjlog.msgpack").read_bytes()
    root, now = tmp_path / "logs", 1_800_000_000.0
    ages = {"zz-fast": [10.0 * i for i in range(12)] + [86400.0 * 3 + i for i in range(5)],
            "alpha": [5.0, 5000.0], "beta": [15.0, 6000.0]}
    written: dict[str, list[tuple[float, str]]] = {}
    for session, session_ages in ages.items():
        for n, age in enumerate(session_ages):  # where serve's sessions write them
            path = log_path(root / session, "local", f"{session}-g{n}",
                            dt.datetime.fromtimestamp(now - age))
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(sample)
            os.utime(path, (now - age, now - age))
            written.setdefault(session, []).append((now - age, gid(root, path)))
    # a long game of a session beside them: named by its start 50 minutes ago, written to now
    long = log_path(root / "tenhou", "tenhou", "long", dt.datetime.fromtimestamp(now - 3000))
    long.parent.mkdir(parents=True)
    long.write_bytes(sample)
    os.utime(long, (now - 1, now - 1))
    written["tenhou"] = [(now - 1, gid(root, long))]
    for day in root.glob("*/local/*"):  # a folder changes when a log is created in it
        newest = max(f.stat().st_mtime for f in day.iterdir())
        os.utime(day, (newest, newest))
    by_time = sorted((game for games in written.values() for game in games), reverse=True)
    newest8 = [game_id for _, game_id in by_time[:8]]
    client = await client_for_server(StatusServer(roots=[str(root)], max_games=8))
    try:
        page = await (await client.get("/api/games")).json()
        assert [g["id"] for g in page["games"]] == newest8
        assert {g["session"] for g in page["games"]} == {"zz-fast", "alpha", "beta", "tenhou"}
        assert page["total"] == 8 and page["cut"] is True and page["max_files"] == 8
        second = await (await client.get("/api/games?limit=3&offset=3")).json()
        assert [g["id"] for g in second["games"]] == newest8[3:6] and second["cut"] is True
        alpha = await (await client.get("/api/games?q=alpha")).json()  # the one cut too
        assert [g["id"] for g in alpha["games"]] == [game for _, game in written["alpha"]]
        assert (await client.get(f"/api/games/{written['beta'][0][1]}")).status == 200
    finally:
        await client.close()
    client = await client_for_server(StatusServer(roots=[str(root)], max_games=22))
    try:  # room for every game: all listed, nothing said cut
        page = await (await client.get("/api/games")).json()
        assert page["total"] == 22 and page["cut"] is False and page["total_cut"] is False
    finally:
        await client.close()


async def test_a_filter_finds_matching_games_older_than_the_cut(tmp_path: Path) -> None:
    """A filter searched only the listed games (the newest ``max_games``): a game older than
    the cut that matched, by its path, a player in its header or an import's name, was not
    found. Now the filter searches every game and the cap applies to the matching ones; and
    the page said its matches were "1284 of 5000" where 7,197 were searched: ``total_cut``
    says the unfiltered list's total is a cap ("of 5000+")."""
    import dataclasses

    from replay.log import Footer, GameLogWriter
    from tests.log_samples import sample_hand, sample_header, write_steps

    root, now = tmp_path / "logs", 1_800_000_000.0
    sample = platform_game(tmp_path / "sample.mjlog.msgpack").read_bytes()

    def place(session: str, name: str, age: float, data: bytes | None = None) -> str:
        path = log_path(root / session, "tenhou", name, dt.datetime.fromtimestamp(now - age))
        path.parent.mkdir(parents=True, exist_ok=True)
        if data is None:
            writer = GameLogWriter(path, dataclasses.replace(
                sample_header(), extra={"players": ["Alice", "Bob", "Carol", "Dana"]}))
            write_steps(writer, sample_hand(0))
            writer.close(Footer({"hands": 1}, (23000, 31000, 23000, 23000)))
        else:
            path.write_bytes(data)
        os.utime(path, (now - age, now - age))
        return gid(root, path)

    recent = [place("recent", f"g{n}", 10.0 * n, sample) for n in range(10)]
    old = place("old", "g1", 86400.0 * 5, sample)
    carol = place("recent", "g99", 86400.0 * 6)  # a player named only in its header
    archive = root / "imports" / "archive-game.xml"
    archive.parent.mkdir()
    shutil.copy(IMPORTS["game.xml"], archive)
    os.utime(archive, (now - 86400.0 * 7, now - 86400.0 * 7))
    for day in root.glob("*/tenhou/*"):
        newest = max(f.stat().st_mtime for f in day.iterdir())
        os.utime(day, (newest, newest))
    for folder in (root / "imports", root):
        os.utime(folder, (now - 86400.0 * 7, now - 86400.0 * 7))
    client = await client_for_server(StatusServer(roots=[str(root)], max_games=4))
    try:
        page = await (await client.get("/api/games")).json()
        assert [g["id"] for g in page["games"]] == recent[:4] and page["cut"] is True

        async def search(query: str) -> dict[str, Any]:
            found: dict[str, Any] = await (await client.get(
                "/api/games?" + urllib.parse.urlencode({"q": query}))).json()
            # every game searched: the page says its matches are of more than the list's 4
            assert found["total"] == 4 and found["total_cut"] is True
            return found

        assert [g["id"] for g in (await search("old"))["games"]] == [old]
        carols = await search("CAROL tenhou")
        assert [g["id"] for g in carols["games"]] == [carol] and carols["cut"] is False
        assert carols["games"][0]["our_rank"] == 1  # its result read as a listed game's
        assert [g["id"] for g in (await search("archive"))["games"]] == [gid(root, archive)]
        many = await search("recent")  # more match than the cap: the newest four, said cut
        assert [g["id"] for g in many["games"]] == recent[:4] and many["cut"] is True
        assert many["matched"] == 4
        none = await search("nobody")
        assert none["games"] == [] and none["matched"] == 0 and none["cut"] is False
        # what a filter read does not push the listed games' headers out: the list still shows them
        again = await (await client.get("/api/games")).json()
        assert [g["id"] for g in again["games"]] == recent[:4]
        assert all(g["our_seat"] == 1 for g in again["games"])
    finally:
        await client.close()


async def test_a_move_the_policy_cannot_rank_keeps_its_sentence_and_the_game_its_commentary(
        tmp_path: Path, caplog: pytest.LogCaptureFixture,
        capsys: pytest.CaptureFixture[str]) -> None:
    """A log whose recorded choice on a turn is a discard of a tile not in the hand (a
    hand-edited or damaged log): rulebased raises on that move (PolicyFailed). The whole
    game's commentary was a 422 for that one move. Now that move keeps its sentence with
    ``no_prediction`` (its reason logged in one line, not sent), and the game's other moves
    keep their commentary."""
    from protocols import events as ev
    from protocols.tiles import parse_mpsz
    from replay.log import Footer, GameLogWriter
    from tests.log_samples import sample_hand, sample_header, write_steps

    steps = sample_hand(0)
    stray = ev.Discard(parse_mpsz("9p")[0])  # the hand holds no 9p
    steps[4] = ("decision", (ev.DecisionRequest("turn", frozenset({"discard"}), 12.5),
                             (stray,), stray, "greedy", (), 0.01, ""))
    path = tmp_path / "logs" / "edited.mjlog.msgpack"
    path.parent.mkdir()
    writer = GameLogWriter(path, sample_header())
    write_steps(writer, [*steps, *sample_hand(1)])
    writer.close(Footer({"hands": 2}, (23000, 31000, 23000, 23000)))
    client = await client_for(tmp_path / "logs")
    try:
        game = gid(tmp_path / "logs", path)
        for _ in range(2):  # kept: the second ask gets the same answer, nothing logged again
            response = await client.get(f"/api/games/{game}/commentary")
            assert response.status == 200, await response.text()
            body = await response.json()
            rows = body["subtitles"]
            assert body["skipped"] == []
            unranked = [r for r in rows if r.get("no_prediction")]
            assert [(r["hand"], r["played"]) for r in unranked] == [(0, "discard 9p")]
            assert unranked[0]["no_prediction"] is True  # the reason is not sent
            assert unranked[0]["sentence"] == "seat 1 discards 9p (not in the hand as logged)."
            assert unranked[0]["predicted"] == [] and unranked[0]["hit"] is None
            ranked = [r for r in rows if r["hand"] == 1 and r["predicted"]]
            assert ranked and not any("no_prediction" in r for r in ranked)
        assert (await client.get(f"/api/games/{game}")).status == 200
    finally:
        await client.close()
    printed = capsys.readouterr()
    logged = caplog.text + printed.out + printed.err  # structlog's lines, where they go
    assert "Traceback" not in logged and "Error handling request" not in logged
    lines = [x for x in logged.splitlines() if "viewer: no prediction for some moves" in x]
    assert len(lines) == 1 and "rulebased raised ValueError" in lines[0], logged
    # where the page shows that move (steps counted from 1, as its #hand/step links): the
    # line said the step before it (the row's step counted from 0)
    assert unranked[0]["step"] == 2 and "first='hand 1 step 3'" in lines[0], lines[0]


async def test_a_filter_says_older_games_match_only_where_one_does(tmp_path: Path) -> None:
    """A filtered list whose matches filled the cap was said cut ("only the newest N matching
    games are listed: older ones match") whenever any older file was left unread, matching or
    not: here exactly the cap's four games match and the older ones do not. The walk now reads
    on to one match past the cap, so ``cut`` says that one exists (the unfiltered list too)."""
    root, now = tmp_path / "logs", 1_800_000_000.0
    sample = platform_game(tmp_path / "sample.mjlog.msgpack").read_bytes()
    for session, ages in (("alpha", (10, 20, 30, 40)), ("beta", (86400, 86410, 86420))):
        for n, age in enumerate(ages):
            path = log_path(root / session, "tenhou", f"g{n}",
                            dt.datetime.fromtimestamp(now - age))
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(sample)
            os.utime(path, (now - age, now - age))
    for day in root.glob("*/tenhou/*"):
        newest = max(f.stat().st_mtime for f in day.iterdir())
        for folder in (day, day.parent, day.parent.parent):
            os.utime(folder, (newest, newest))
    os.utime(root, (now, now))
    client = await client_for_server(StatusServer(roots=[str(root)], max_games=4))
    try:
        page = await (await client.get("/api/games")).json()
        assert page["total"] == 4 and page["cut"] is True  # three older games exist
        alpha = await (await client.get("/api/games?q=alpha")).json()
        assert alpha["matched"] == 4 and alpha["cut"] is False, alpha
        beta = await (await client.get("/api/games?q=beta")).json()
        assert beta["matched"] == 3 and beta["cut"] is False
        tenhou = await (await client.get("/api/games?q=tenhou")).json()
        assert tenhou["matched"] == 4 and tenhou["cut"] is True
    finally:
        await client.close()


BROWSER = """import sys, urllib.request
# a console browser (lynx, w3m: what Python's webbrowser runs where there is no display)
# runs in the foreground, and webbrowser waits for it to end
try:
    with urllib.request.urlopen(sys.argv[2], timeout=10) as page:
        text = f"{page.status} {page.read().decode()[:2000]}"
except OSError as exc:
    text = f"failed: {exc}"
open(sys.argv[1], "w").write(text)
"""


def _view_with_browser(tmp_path: Path, browser: str,
                       until: Callable[[str], bool]) -> tuple[str, int]:
    """`mjbot view DIR --open` with ``BROWSER`` set to ``browser`` (as webbrowser reads it),
    ended by SIGTERM once it has printed its address and ``until`` holds of its stderr so
    far (or after a minute): its stderr and exit status."""
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY")}
    env.update(BROWSER=browser, PYTHONPATH=str(Path(__file__).resolve().parents[1]))
    proc = subprocess.Popen([sys.executable, "-m", "adapter.cli", "view", str(tmp_path),
                             "--open"], env=env, stderr=subprocess.PIPE, text=True,
                            stdout=subprocess.DEVNULL)
    lines: list[str] = []

    def read() -> None:
        assert proc.stderr is not None
        for line in proc.stderr:
            lines.append(line)

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and proc.poll() is None and not (
                "(Ctrl-C to stop)" in "".join(lines) and until("".join(lines))):
            time.sleep(0.1)
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        reader.join(timeout=10)
    return "".join(lines), proc.returncode


def test_open_serves_the_page_to_the_browser_it_starts(tmp_path: Path) -> None:
    """`mjbot view --open` called the browser on the event loop that serves the page: a
    console browser, which webbrowser waits for, asked for a page nobody could answer, and
    the command hung with it (the browser timed out here)."""
    script = tmp_path / "browser.py"
    script.write_text(BROWSER)
    err, status = _view_with_browser(tmp_path, f"{sys.executable} {script} "
                                               f"{tmp_path / 'browsed'} %s",
                                     lambda _: (tmp_path / "browsed").exists())
    page = (tmp_path / "browsed").read_text()
    assert page.startswith("200 ") and "mjbot" in page, page
    assert status == 0 and "Traceback" not in err, err


def test_open_without_a_browser_says_so(tmp_path: Path) -> None:
    """Where no browser could be opened (none on a server, or it failed) `--open` did
    nothing and said nothing."""
    err, status = _view_with_browser(tmp_path, "false", lambda err: "no browser" in err)
    assert status == 0, err
    # the line before the stop's own (`view: stopped`, as serve's: the test stops it)
    lines = err.splitlines()
    assert lines[-2] == ("mjbot view: no browser could be opened here; open the address "
                         "above in one"), err
    assert "view: stopped" in lines[-1], err


def test_view_help_names_the_files_a_folder_lists(capsys: pytest.CaptureFixture[str]) -> None:
    """A game saved as `.mjson` in a folder is not listed: --help said folders are searched
    for mjai files, not by which names, and --host had no help (it takes loopback only)."""
    from adapter.serve.games import IMPORT_SUFFIXES

    out = " ".join(mjbot_here(capsys, "view", "--help").stdout.split())
    assert all(suffix in out for suffix in IMPORT_SUFFIXES), out
    assert "a file named here opens whatever its name" in out
    assert "--host HOST a loopback address (default: 127.0.0.1)" in out


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


@contextlib.contextmanager
def _view_with_a_browser_script(tmp_path: Path, body: str
                                ) -> Iterator[tuple[str, int, Path]]:
    """`mjbot view --open` (:func:`_view_with_browser`) with a $BROWSER script of ``body``
    (``{pid_file}`` in it: where the script writes its browser's pid), ended once that pid
    is written: its stderr, exit status and the pid's file. The browser is killed after."""
    script = tmp_path / "browser.sh"
    pid_file = tmp_path / "browser.pid"
    script.write_text("#!/bin/sh\n" + body.format(pid_file=pid_file))
    script.chmod(0o755)
    try:
        err, status = _view_with_browser(tmp_path, f"{script} %s",
                                         lambda _: pid_file.exists() and
                                         pid_file.read_text().strip() != "")
        yield err, status, pid_file
    finally:
        if pid_file.exists() and pid_file.read_text().strip():
            with contextlib.suppress(ProcessLookupError):
                os.kill(int(pid_file.read_text()), signal.SIGKILL)


def test_open_ends_the_console_browser_it_started(tmp_path: Path) -> None:
    """A console browser (lynx, w3m) stays until its user quits it, and webbrowser waits for
    it: `mjbot view --open` stopped by SIGTERM first waited for that wait at exit (the
    command did not end until the browser did), then ended and left the browser running,
    asking a server that was gone. The view ends the console browser it started."""
    # its output elsewhere, as a browser in its own terminal: holding the pipe of the
    # command's stderr, it kept the test's reader of that pipe waiting (10 s) past the exit
    with _view_with_a_browser_script(
            tmp_path, "echo $$ > {pid_file}\nexec sleep 600 >/dev/null 2>&1\n") as (
            err, status, pid_file):
        assert status == 0 and "Traceback" not in err, err
        pid = int(pid_file.read_text())
        assert not _alive(pid), f"the browser {pid} outlived the view: {err}"
        assert "ended the browser it started" in err, err
        assert "no browser could be opened" not in err, err  # nor was another tried


def _ended(pid: int, within: float = 5.0) -> bool:
    """Whether process ``pid`` is gone (or a zombie its new parent has yet to reap)."""
    deadline = time.monotonic() + within
    while True:
        try:
            state = Path(f"/proc/{pid}/stat").read_bytes().rsplit(b")", 1)[1].split()[0]
        except OSError:
            return True
        if state == b"Z":
            return True
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc (Linux)")
def test_open_ends_the_browser_a_wrapper_started(tmp_path: Path) -> None:
    """A $BROWSER that is a wrapper (xdg-open where there is no display, a script of the
    user's) runs the console browser as its child and waits for it: the view ended the
    wrapper alone, said it had ended the browser, and left the browser running on the
    terminal, asking a server that was gone. The wrapper's children are ended too."""
    with _view_with_a_browser_script(
            tmp_path, "sleep 600 >/dev/null 2>&1 &\necho $! > {pid_file}\nwait\n") as (
            err, status, pid_file):
        assert status == 0 and "Traceback" not in err, err
        pid = int(pid_file.read_text())
        assert _ended(pid), f"the browser {pid} its wrapper started outlived the view: {err}"
        assert "ended the browser it started" in err and str(pid) in err, err


def test_open_leaves_a_browser_that_returned_running(tmp_path: Path) -> None:
    """A GUI browser asked to open a tab returns at once and keeps running: it is the
    user's, and stopping the view must not end it."""
    # the browser is the user's to quit: here, the test's (killed after)
    with _view_with_a_browser_script(
            tmp_path, "sleep 600 >/dev/null 2>&1 </dev/null &\necho $! > {pid_file}\n"
            "exit 0\n") as (err, status, pid_file):
        assert status == 0 and "Traceback" not in err, err
        assert _alive(int(pid_file.read_text())), err
        assert "ended the browser" not in err, err


async def test_a_file_no_reader_takes_is_logged_once_not_per_request(
        folder: dict[str, Any], caplog: pytest.LogCaptureFixture,
        capsys: pytest.CaptureFixture[str]) -> None:
    """The cache keeps a file's failure, so asking again costs the server nothing, but every
    answer logged the readers' reasons again: a client could write some 400 bytes of log a
    request, as fast as it liked. The line is written by the build that failed, once per
    version of the file; a changed file is read, and logged, again."""
    root = folder["root"]
    path = root / "imports" / "cut.json"
    path.write_text('{"name": ["a", "b"], "log": [', encoding="utf-8")  # tenhou6, cut short
    client = await client_for(root)
    game = gid(root, path)
    try:
        for _ in range(5):
            for route in (f"/api/games/{game}", f"/api/games/{game}/hands/0",
                          f"/api/games/{game}/commentary"):
                assert (await client.get(route)).status == 422
        printed = capsys.readouterr()
        logged = caplog.text + printed.out + printed.err
        assert logged.count("viewer: cannot show a file") == 1, logged
        st = path.stat()
        os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))
        assert (await client.get(f"/api/games/{game}")).status == 422
        printed = capsys.readouterr()  # (what was read above is not read again)
        assert (printed.out + printed.err).count("viewer: cannot show a file") == 1
    finally:
        await client.close()


def test_the_commentary_reads_paused_and_keeps_its_replays_out_of_the_collectors_walks(
        folder: dict[str, Any]) -> None:
    """The commentary holds every seat's replay of the file as objects to its end: a full
    collection its allocations set off walked all of them with the interpreter held, and the
    event loop that plays the sessions' games stood still meanwhile (1.1 s during the
    commentary of a 480-hand file). Its first part, which reads them, runs with the collector
    paused (asked at each of its moves), and what it made is frozen (gc.freeze) to the last
    part: the later parts run with the collector on (paused for the whole commentary it was
    off process-wide for a minute), and at the end, or when the build is given up, the freeze
    is gone."""
    from adapter.serve.viewer import _kept_frozen, _subtitle_parts

    root = folder["root"]
    index = GameIndex([str(root)])
    game = gid(root, folder["files"]["practice"])
    timeline = index.timeline(game)
    seen: list[Any] = []
    assert gc.isenabled() and gc.get_freeze_count() == 0
    parts = _kept_frozen(_subtitle_parts(
        index, game, timeline, lambda *_progress: seen.append(gc.isenabled()), {}))
    for part in parts:
        assert part
        seen.append(("between", gc.isenabled(), gc.get_freeze_count() > 0))
    marks = [i for i, s in enumerate(seen) if isinstance(s, tuple)]
    first, later = seen[:marks[0]], [s for s in seen[marks[0]:] if not isinstance(s, tuple)]
    assert first and not any(first), "the read ran with the collector on"
    assert later and all(later), "a later part ran with the collector paused"
    assert len(marks) > 1 and all(seen[i] == ("between", True, True) for i in marks)
    assert gc.isenabled() and gc.get_freeze_count() == 0

    given_up = _kept_frozen(_subtitle_parts(index, game, timeline, lambda *_progress: None, {}))
    assert next(given_up) and gc.get_freeze_count() > 0
    given_up.close()  # the build given up (its request gone) or failed: the freeze goes
    assert gc.get_freeze_count() == 0


async def test_an_export_of_a_file_no_reader_takes_is_logged_once_not_per_request(
        folder: dict[str, Any], capsys: pytest.CaptureFixture[str]) -> None:
    """The export reads the file again at each request (its text is not kept), and each
    422 logged the readers' reasons again: the line per request the outline, hand and
    commentary no longer wrote was still one export URL away, some 400 bytes of log a
    request for whoever could reach the viewer. Logged once per version of the file."""
    root = folder["root"]
    path = root / "imports" / "cut.json"
    path.write_text('{"name": ["a", "b"], "log": [', encoding="utf-8")  # tenhou6, cut short
    client = await client_for(root)
    game = gid(root, path)
    try:
        for _ in range(5):
            for fmt in ("mjai", "tenhou6"):
                assert (await client.get(f"/games/{game}/export/{fmt}")).status == 422
        printed = capsys.readouterr()
        assert (printed.out + printed.err).count("viewer: cannot show a file") == 1
        st = path.stat()
        os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))
        assert (await client.get(f"/games/{game}/export/mjai")).status == 422
        printed = capsys.readouterr()  # a changed file is read, and logged, again
        assert (printed.out + printed.err).count("viewer: cannot show a file") == 1
    finally:
        await client.close()


_OPENED: list[str] | None = None  # the paths opened while a test listens (an audit hook)


def _note_open(event: str, args: tuple[Any, ...]) -> None:
    if event == "open" and _OPENED is not None and isinstance(args[0], str | Path):
        _OPENED.append(str(args[0]))


def test_the_commentary_is_given_up_between_its_seats_reads(folder: dict[str, Any]) -> None:
    """The commentary's first part reads the file once per seat (four times for a local
    table's log: a 1,602-hand one's read took 8 s a seat with the collector paused) before
    its first move asks whether anyone still waits: a client that asked for two long
    files' commentaries and hung up held both build slots through all four reads, where the
    build is said to be given up at its next part or move. It is asked before each read."""
    from adapter.serve.viewcache import Abandoned
    from adapter.serve.viewer import _subtitle_parts

    global _OPENED
    root = folder["root"]
    index = GameIndex([str(root)])
    game = gid(root, folder["files"]["practice"])
    timeline = index.timeline(game)
    assert timeline.meta.get("full_information")  # four seats read

    def gone(*_progress: object) -> None:
        raise Abandoned("every request for this build went away")

    sys.addaudithook(_note_open)  # (not removable: idle once _OPENED is None again)
    _OPENED = []
    try:
        with pytest.raises(Abandoned):
            next(_subtitle_parts(index, game, timeline, gone, {}))
        opened = [p for p in _OPENED if Path(p) == index.resolve(game)]
    finally:
        _OPENED = None
    assert opened == [], "the file was read for a commentary nobody waited for"
