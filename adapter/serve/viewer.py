"""The replay viewer's routes: the game list and one game's page (static HTML and plain JS
from ./static), the JSON they read, and the tenhou.net/6 and mjai exports.

``/games`` and ``/api/games``: the list (``?q=WORDS&offset=N&limit=N``, a page at a time,
with each own log's result); ``/games/ID``: the page; ``/api/games/ID``: the game's
outline (players, hands, results); ``/api/games/ID/hands/N``: hand N's steps;
``/games/ID/export/tenhou6`` and ``.../mjai``: the game converted (riichi games with every
seat's tiles: imports and the local table's logs); ``/api/games/ID/commentary``: one sentence
per move, placed on the steps (every seat where all hands are known, else ours). Files are
read, parsed and their JSON built and gzipped in the BuildCache's small thread pool, a
bounded number at a time, once per version of the file (viewcache.py): the event loop (and
the sessions it drives, and /health) never waits on a large log or a burst of viewers.
A file no reader takes is a 422 that names no part of its content (the readers' reasons
quote lines of the file; they go to the log only). In the commentary, a move whose recorded
choice the rulebased policy cannot rank keeps its sentence with ``no_prediction`` (the first
such move's reason logged, once for the game), and a hand the table cannot follow is left out
with a note in ``skipped`` (its reason logged): the game's other moves keep theirs.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import gzip
import json
import os
import urllib.parse
from collections import OrderedDict
from collections.abc import Callable, Coroutine, Generator, Hashable, Iterator
from pathlib import Path
from typing import Any

import structlog
from aiohttp import web

from adapter.serve.games import (
    MAX_OFFSET,
    MAX_PAGE,
    PAGE_SIZE,
    GameIndex,
    GameNotFound,
    whole_number,
)
from adapter.serve.logindex import READER_DIED, Cancel, Cancelled, Summary
from adapter.serve.viewcache import (
    IDLE_POLL,
    Abandoned,
    BuildCache,
    Busy,
    GaveWay,
    OverShare,
    Stopping,
    file_key,
    gzipped_json,
)
from adapter.serve.wholeread import ChildDied, ChildGone, ChildReader

log = structlog.get_logger("mjbot.serve")
UNREADABLE = ("cannot show this file: it is not a complete game log in a format the viewer "
              "reads (mjbot log, tenhou.net/6, mjlog, mjai, Botzone judge or preprocessed "
              "human games, NYCU SGF, NTPU log, Tenhou client transcript)")
REASON_CHARS = 500  # of the readers' reasons, in the log line
STATIC = Path(__file__).with_name("static")  # the pages, scripts and style of both servers
STATIC_PAGES = {"list": "games.html", "game": "viewer.html"}
EXPORTS = {"tenhou6": ("application/json", ".json"), "mjai": ("application/x-ndjson",
                                                              ".jsonl")}
# an export's notes (what `mjbot replay --export` says on stderr), a JSON list of lines, and
# the most characters it takes (aiohttp's client reads a header of up to 8190)
EXPORT_NOTE = "X-Mjbot-Export-Note"
NOTE_CHARS = 4000
GONE_POLL = 0.05  # seconds between two looks at a waiting request's connection


VIEW_CACHE: web.AppKey[BuildCache] = web.AppKey("view_cache", BuildCache)
VIEW_READER: web.AppKey[ChildReader] = web.AppKey("view_reader", ChildReader)
# the game-list requests in hand, by their scans' cancel flags
LIST_SCANS: web.AppKey[set[Cancel]] = web.AppKey("list_scans", set)


def add_routes(app: web.Application, index: GameIndex) -> None:
    cache = BuildCache()
    app[VIEW_CACHE] = cache
    scans: set[Cancel] = set()  # the listings in hand, given up when the server stops
    unexportable: OrderedDict[Hashable, None] = OrderedDict()  # versions logged as unreadable
    app[LIST_SCANS] = scans

    async def stop_builds(_app: web.Application) -> None:
        cache.stop_builds()  # before the server waits for the requests in hand
        for cancel in scans:
            cancel.set()

    reader = ChildReader()  # the idle reads' low-priority child (wholeread.py)
    app[VIEW_READER] = reader

    async def close_cache(_app: web.Application) -> None:
        cache.close()
        reader.close()

    listed = asyncio.Event()  # set by each list page: its finished logs may want a read
    readings: list[asyncio.Task[None]] = []

    async def start_reading(_app: web.Application) -> None:
        readings.append(asyncio.ensure_future(_read_listed(index, cache, listed, reader)))

    async def stop_reading(_app: web.Application) -> None:
        for task in readings:
            task.cancel()
        await asyncio.gather(*readings, return_exceptions=True)

    app.on_startup.append(start_reading)
    app.on_shutdown.append(stop_builds)
    app.on_shutdown.append(stop_reading)
    app.on_cleanup.append(close_cache)

    async def page(name: str) -> web.StreamResponse:
        return web.FileResponse(STATIC / name, headers={"Cache-Control": "no-cache"})

    async def game_list(request: web.Request) -> web.StreamResponse:
        return await page(STATIC_PAGES["list"])

    async def api_list(request: web.Request) -> web.StreamResponse:
        query, offset, limit = _page_query(request)
        cancel = Cancel()
        scans.add(cancel)
        try:
            page = await _unless_gone(request, cancel, cache.run(
                lambda: index.page(query, offset, limit, cancel)))
        except Cancelled:
            log.info("viewer: a game list request was given up (its client went away, or "
                     "the server stops)", query_words=len(query.split()))
            raise web.HTTPServiceUnavailable(text="given up") from None
        except Busy:
            raise _busy() from None
        except OverShare:
            raise _over_share() from None
        finally:
            scans.discard(cancel)
        if page["unread"]:
            listed.set()
        return web.json_response({**page, "roots": len(index.roots)})

    async def game_page(request: web.Request) -> web.StreamResponse:
        _resolve(index, request.match_info["id"])
        return await page(STATIC_PAGES["game"])

    async def api_game(request: web.Request) -> web.StreamResponse:
        game_id = request.match_info["id"]
        version, timeline = await _timeline(cache, index, game_id)

        def outline() -> bytes:
            body = timeline.outline()
            body["id"] = game_id
            body["exports"] = _exports(body)
            return _outline_json(game_id, body)

        try:
            body = await cache.get((*version, "outline"), _logs_failure(game_id, outline),
                                   "outline")
        except ValueError:  # a value the outline cannot hold (gzipped_json)
            raise _unreadable() from None
        return await _json(request, body)

    async def api_hand(request: web.Request) -> web.StreamResponse:
        game_id, number = request.match_info["id"], request.match_info["n"]
        version, timeline = await _timeline(cache, index, game_id)
        n = whole_number(number)
        if n is None or n >= len(timeline.hands):
            raise web.HTTPNotFound(text=f"no hand {number[:40]!r} in this game")
        hand = timeline.hands[n]

        def steps() -> bytes:  # the hand's steps are built here, once per file version
            shown = {"label": hand["label"], "steps": timeline.steps(n),
                     "result": hand["result"], "damaged": timeline.damage(n)}
            try:
                return gzipped_json(shown)
            except ValueError as exc:  # the log line names the hand, as the steps' own do
                raise ValueError(f"hand {n + 1}: {exc}") from None

        try:
            body = await cache.get((*version, "hand", n), _logs_failure(game_id, steps), "hand")
        except ValueError:  # a record the table cannot draw (a tile that is none)
            raise _unreadable() from None
        return await _json(request, body)

    async def api_commentary(request: web.Request) -> web.StreamResponse:
        game_id = request.match_info["id"]
        version, timeline = await _timeline(cache, index, game_id)

        async def commentary() -> bytes:  # a hand of one seat at a time, the slot given up
            skipped: dict[int | None, str] = {}  # between each; hand -> why it has none
            with _failure_logged(game_id):  # once: the failure is kept
                parts = _kept_frozen(_subtitle_parts(index, game_id, timeline, cache.check,
                                                     skipped))
                try:
                    rows = [row for part in await cache.run_in_parts(parts) for row in part]
                finally:  # the freeze ends here, given up or failed too, not when (if ever)
                    with contextlib.suppress(ValueError):  # the collector frees the parts
                        parts.close()  # (ValueError: a part still runs; it ends the freeze)
                body: bytes = await cache.run(
                    lambda: gzipped_json(_commentary_body(game_id, rows, skipped)))
            return body

        try:
            body = await cache.get_built((*version, "commentary"), commentary, "commentary")
        except Stopping:
            raise web.HTTPServiceUnavailable(text="the viewer is stopping") from None
        except ValueError:  # a seat's replay no reader takes
            raise _unreadable() from None
        return await _json(request, body)

    async def export(request: web.Request) -> web.StreamResponse:
        game_id, fmt = request.match_info["id"], request.match_info["fmt"]
        if fmt not in EXPORTS:
            raise web.HTTPNotFound(text=f"no export {fmt!r} (tenhou6, mjai)")
        path = _resolve(index, game_id)
        try:
            version: Hashable = file_key(path, "export")
        except OSError:  # gone meanwhile: the export says so
            version = None

        async def build() -> tuple[str, list[str]]:
            made: tuple[str, list[str]] = await cache.run(
                lambda: _export_text(index, game_id, fmt))
            return made

        try:  # one read for identical requests at once, given up once they all went away
            text, notes = await cache.get_built((version or (game_id, "export"), fmt), build,
                                                "export", keep=False)
        except Stopping:
            raise web.HTTPServiceUnavailable(text="the viewer is stopping") from None
        except NotExportable as exc:
            raise web.HTTPUnprocessableEntity(text=str(exc)) from None
        except ValueError as exc:  # not kept: each export reads the file again
            # its reasons logged once per version of the file, as the other routes' are
            if version is None or version not in unexportable:
                _log_unreadable(game_id, exc)
            if version is not None:
                unexportable[version] = None
                unexportable.move_to_end(version)
                while len(unexportable) > cache.max_entries:
                    unexportable.popitem(last=False)
            raise _unreadable() from None
        content_type, suffix = EXPORTS[fmt]
        name = game_id.rsplit("~", 1)[-1].split(".")[0] + suffix
        headers = {"Content-Disposition": attachment(name)}
        if notes:  # what the CLI says on stderr: the export itself has no place for it
            headers[EXPORT_NOTE] = note_header(notes)
        return web.Response(text=text + "\n", content_type=content_type, headers=headers)

    app.router.add_get("/games", game_list, name="page-games")  # "page-": ?token= login
    app.router.add_get("/api/games", api_list)  # its own watch: the scan reads a cancel flag
    app.router.add_get("/games/{id}", game_page, name="page-game")
    app.router.add_get("/games/{id}/export/{fmt}", _while_connected(export))
    app.router.add_get("/api/games/{id}", _while_connected(api_game))
    app.router.add_get("/api/games/{id}/hands/{n}", _while_connected(api_hand))
    app.router.add_get("/api/games/{id}/commentary", _while_connected(api_commentary))


async def _read_listed(index: GameIndex, cache: BuildCache, listed: asyncio.Event,
                       reader: ChildReader) -> None:
    """Read whole, once per file version, the finished logs the list has shown and not yet
    read whole, one at a time while the viewer is idle (BuildCache.run_idle), so that the
    list marks one damaged before its footer. The list's request reads only a log's header
    and footer: reading each shown log whole there (some 10 ms per practice game, seconds
    for a long match log) would make every page wait on it. Only logs a list page showed
    are read (bounded by what users look at, and by MAX_UNCHECKED), not every log under the
    roots. A page built reads its game whole anyway and tells the index as well. The read
    itself is done by ``reader``'s child at the lowest priority: in a pool thread it took
    the interpreter from the event loop and its sessions."""
    while True:
        await listed.wait()
        listed.clear()
        while (item := index.logs.next_unread()) is not None:
            if not await _read_one(index, cache, reader, *item):
                break


async def _read_one(index: GameIndex, cache: BuildCache, reader: ChildReader, path: str,
                    st: os.stat_result, summary: Summary) -> bool:
    """One listed log read whole (:func:`_read_listed`); False: the pass stops (the server
    stops, or the reading process cannot go on) until the next page. A child killed by a
    signal on the log is replaced by a fresh one once (a stray kill says nothing of the
    log); a log that kills that one too (a crash, a memory limit) is kept as READER_DIED for
    its version: without it the log was read again, a child started and killed, at every
    page that showed it."""
    for fresh in (False, True):
        try:
            await cache.run_idle(functools.partial(index.read_whole, path, st, reader.read))
        except (GaveWay, Busy, OverShare):
            index.logs.ask_whole(path, st, summary)  # again, once the viewer is idle
            # (refused at once where no run may wait, max_waiting 0: not a loop that
            # never lets the event loop run)
            await asyncio.sleep(IDLE_POLL)
        except Stopping:
            return False
        except ChildDied as exc:
            if not fresh:
                log.warning("viewer: the process that reads listed logs whole died on a "
                            "log; a fresh one tries it once more", path=path, error=str(exc))
                continue
            log.warning("viewer: the process that reads listed logs whole died on a log "
                        "twice; it is listed as not read whole", path=path, error=str(exc))
            index.logs.read_whole(path, st, f"{READER_DIED} ({exc.how})")
        except ChildGone as exc:  # no verdict on the log: not marked (a child that
            # cannot start would have marked every listed log damaged); the rest wait
            # for the next page, not a child started and lost for each
            log.warning("viewer: the process that reads listed logs whole ended; they "
                        "are left unread", path=path, error=str(exc)[:200])
            index.logs.ask_whole(path, st, summary)
            return False
        except Exception as exc:  # a read that fails so is not tried again
            log.warning("viewer: cannot read a listed log whole", path=path,
                        error=f"{type(exc).__name__}: {str(exc)[:200]}")
            index.logs.read_whole(path, st, f"the log cannot be read whole "
                                            f"({type(exc).__name__})")
        return True
    raise AssertionError("unreachable")  # (the first try returns or goes on to the second)


Route = Callable[[web.Request], Coroutine[Any, Any, web.StreamResponse]]


def _while_connected(handler: Route) -> Route:
    """``handler``, cancelled once its client's connection is gone (aiohttp, without
    handler_cancellation, its default, runs a handler to its end for nobody): a build it
    waits for is then not started unless another request wants it too, and one that checks
    as it goes (the commentary) ends at its next part (viewcache.py), where a client that
    asked for every game's commentary and hung up left both build slots busy for as long as
    that took. A build refused because too many wait (Busy), or given up just as this
    request came and given up again, is a 503 that says to try again; one refused because
    this client's own requests fill its share (OverShare), a 429 that says so. The transport is
    looked at every GONE_POLL seconds."""
    async def route(request: web.Request) -> web.StreamResponse:
        task = asyncio.ensure_future(handler(request))

        def gone() -> None:
            task.cancel()
            raise web.HTTPServiceUnavailable(text="given up: the client went away")

        try:
            result: web.StreamResponse = await _watching(request, task, gone)
            return result
        except (Busy, Abandoned):
            raise _busy() from None
        except OverShare:
            raise _over_share() from None
        except asyncio.CancelledError:
            task.cancel()
            raise
    return route


async def _unless_gone(request: web.Request, cancel: Cancel,
                       work: Coroutine[Any, Any, Any]) -> Any:
    """``work``'s result, ``cancel`` set once the request's connection is gone (the tab
    closed, the page's next filter aborted this one) or this handler is cancelled: the scan
    in the pool asks it before each file and ends with Cancelled, where it went on reading
    every header for nobody and held a pool slot from the next request. aiohttp (without
    handler_cancellation, its default) says nothing of a client gone: the transport is
    looked at every GONE_POLL seconds."""
    task = asyncio.ensure_future(work)
    # where this handler is cancelled, the scan's end (Cancelled) is nobody's to read
    task.add_done_callback(lambda t: t.cancelled() or t.exception())
    try:  # once gone, the scan ends at its next file; its Cancelled is awaited
        return await _watching(request, task, cancel.set)
    except asyncio.CancelledError:
        cancel.set()
        raise


async def _watching(request: web.Request, task: asyncio.Future[Any],
                    gone: Callable[[], None]) -> Any:
    """``task``'s result, ``gone()`` called at each look (every GONE_POLL seconds) that
    finds the request's connection gone: aiohttp says nothing of a client that left."""
    while True:
        done, _ = await asyncio.wait({task}, timeout=GONE_POLL)
        if done:
            return task.result()
        transport = request.transport
        if transport is None or transport.is_closing():
            gone()


def _busy() -> web.HTTPServiceUnavailable:
    return web.HTTPServiceUnavailable(
        text="the viewer is busy with other requests, try again in a moment",
        headers={"Retry-After": "1"})


def _over_share() -> web.HTTPTooManyRequests:
    """A build refused because this client's own requests fill its share (viewcache.py)."""
    return web.HTTPTooManyRequests(
        text="too many of your viewer requests are waiting already: try again once they "
             "are answered", headers={"Retry-After": "1"})


def attachment(name: str) -> str:
    """A Content-Disposition for a download named ``name`` (a file name from the log folder
    may hold quotes, a newline or any script): a plain-ASCII ``filename`` for old clients and
    the exact name in RFC 6266's ``filename*``. The name written into quotes as it was cut
    the header at a quote, and a newline in it dropped the connection (aiohttp refuses it)."""
    plain = "".join(c if " " <= c <= "~" and c not in '"\\' else "_" for c in name)
    return (f'attachment; filename="{plain}"; '
            f"filename*=UTF-8''{urllib.parse.quote(name, safe='')}")


def _page_query(request: web.Request) -> tuple[str, int, int]:
    """``?q=WORDS&offset=N&limit=N`` of the game list; 400 naming the bad one."""
    values = {"offset": 0, "limit": PAGE_SIZE}
    bounds = {"offset": (0, MAX_OFFSET), "limit": (1, MAX_PAGE)}
    for name, (low, high) in bounds.items():
        text = request.query.get(name, "")
        if text:
            value = whole_number(text)
            if value is None or not low <= value <= high:
                raise web.HTTPBadRequest(text=f"{name} must be a whole number from {low} to "
                                              f"{high}, got {text[:40]!r}")
            values[name] = value
    return request.query.get("q", "")[:200], values["offset"], values["limit"]


def _resolve(index: GameIndex, game_id: str) -> Path:
    try:
        return index.resolve(game_id)
    except GameNotFound:
        raise web.HTTPNotFound(text="no such game") from None


async def _timeline(cache: BuildCache, index: GameIndex, game_id: str) -> tuple[Any, Any]:
    """The file's version (path, mtime_ns, size, inode, ctime_ns: the cache keys' stem, read
    before the parse, so that a file that changes meanwhile is never kept under its new
    version) and the parsed game, one parse shared by concurrent requests and the last few
    kept."""
    path = _resolve(index, game_id)
    try:
        version = file_key(path, "timeline")
        timeline = await cache.get(version, _logs_failure(game_id, lambda: index.timeline(game_id)),
                                   "timeline", game=True)
    except (GameNotFound, FileNotFoundError):
        raise web.HTTPNotFound(text="no such game") from None
    except Stopping:  # the read, given up between two hands (replay/progress.py)
        raise web.HTTPServiceUnavailable(text="the viewer is stopping") from None
    except ValueError:  # no reader accepts the file (UnknownFormat, LogError, ...)
        raise _unreadable() from None
    return version[:-1], timeline


class NotExportable(ValueError):
    """A game the exports cannot hold (our own message, safe to show)."""


def _unreadable() -> web.HTTPUnprocessableEntity:
    """The 422 for a file no reader takes; the readers' reasons (which quote the file) are
    logged where they are met (:func:`_logs_failure`, the export), never sent."""
    return web.HTTPUnprocessableEntity(text=UNREADABLE)


def _log_unreadable(game_id: str, exc: ValueError) -> None:
    log.warning("viewer: cannot show a file", game=game_id, error_type=type(exc).__name__,
                reasons=_logged_reason(str(exc)))


def _logged_reason(reason: str) -> str:
    """A reason (a reader's, which may quote the file and span lines) as one log field."""
    return " | ".join(reason.split("\n"))[:REASON_CHARS]


@contextlib.contextmanager
def _failure_logged(game_id: str) -> Iterator[None]:
    """A build's failure logged, one line, as it happens: the cache keeps a failed build's
    error per version of the file, so a request that asks again is answered from it without
    a line. Logged by each answer, a line per request (some 400 bytes, the reasons quoting
    the file) was the client's to repeat as fast as the kept error could be sent."""
    try:
        yield
    except ValueError as exc:
        _log_unreadable(game_id, exc)
        raise


def _logs_failure(game_id: str, build: Callable[[], Any]) -> Callable[[], Any]:
    """``build``, its failure logged once (:func:`_failure_logged`)."""
    def run() -> Any:
        with _failure_logged(game_id):
            return build()
    return run


async def _json(request: web.Request, gzipped: bytes) -> web.StreamResponse:
    """Gzipped JSON as it was kept; unpacked (off the loop) for a client without gzip."""
    headers = {"Vary": "Accept-Encoding"}
    if "gzip" in request.headers.get("Accept-Encoding", "").lower():
        headers["Content-Encoding"] = "gzip"
        body = gzipped
    else:
        body = await asyncio.to_thread(gzip.decompress, gzipped)
    return web.Response(body=body, content_type="application/json", headers=headers)


def _writer(fmt: str) -> Any:
    """The replay.formats module that writes ``fmt``; its VARIANT is the one it can hold."""
    from replay.formats import mjai_log, tenhou6

    return tenhou6 if fmt == "tenhou6" else mjai_log


def _exports(outline: dict[str, Any]) -> list[str]:
    if outline.get("full_information"):
        return [fmt for fmt in EXPORTS if outline.get("variant") == _writer(fmt).VARIANT]
    return []


def note_header(notes: list[str]) -> str:
    """An export's notes (:func:`replay.replayer.export_notes`) as one header value: a JSON
    list, ASCII (a header holds no newline nor, safely, other than ASCII), its notes kept
    while they fit NOTE_CHARS and the rest counted in a last one."""
    kept: list[str] = []
    for n, note in enumerate(notes):
        more = [f"and {len(notes) - n} more (mjbot replay --export names them all)"]
        if len(json.dumps([*kept, note, *more])) > NOTE_CHARS:
            return json.dumps(kept + more)
        kept.append(note)
    return json.dumps(kept)


def _export_text(index: GameIndex, game_id: str, fmt: str) -> tuple[str, list[str]]:
    """The game written in ``fmt``, and what `mjbot replay --export` would say of it on
    stderr (a cut game, a hand written as recorded): the viewer's export was the same bytes,
    a 200 and no word, so a damaged game passed for a sound one."""
    from replay import replayer

    with damaged_as_value_error("the export"):
        rep = replayer.load(index.resolve(game_id))
        writer = _writer(fmt)
        if rep.record is None or rep.variant != writer.VARIANT:
            raise NotExportable("only riichi games with every seat's tiles (imports, the "
                                "local table's logs) can be exported")
        replayer.check_exportable(rep.record)  # a name that is no tile: not written
        text: str = writer.dumps(rep.record)
        notes, _unfit = replayer.export_notes(rep)
    return text, notes


@contextlib.contextmanager
def damaged_as_value_error(what: str) -> Iterator[None]:
    """A damaged or hand-edited log's value that the replay or a writer meets as the wrong
    type or out of range (a seat 9, a tile list that is None, a detail that is a number:
    the log's reader takes any value) raised as the ValueError of a file the viewer cannot
    show (a 422, the reason logged), where it was a 500 with a traceback at every ask."""
    try:
        yield
    except (LookupError, TypeError, AttributeError, ArithmeticError, RecursionError) as exc:
        raise ValueError(f"{what}: {type(exc).__name__}: {str(exc)[:200]}") from None


def _subtitle_parts(index: GameIndex, game_id: str, timeline: Any,
                    progress: Callable[[int, int], None], skipped: dict[int | None, str]
                    ) -> Iterator[list[dict[str, Any]]]:
    """The commentary's rows a hand of one seat at a time (subtitle_parts), the game's
    replays read at the first part; each part worked out when it is asked for. A hand the
    table cannot follow (a damaged or hand-edited log) is put in ``skipped`` with why (the
    first seat's reason), its rows left for :func:`_commentary_body` to drop."""
    from replay import replayer
    from replay.review.evaluators import RankingEvaluator
    from replay.review.subtitles import subtitle_parts

    path = index.resolve(game_id)
    meta = timeline.meta
    seats = range(4) if meta.get("full_information") else [meta.get("our_seat") or 0]
    with damaged_as_value_error("the commentary"):
        reps = []
        for s in seats:  # asked before each seat's read too (a long file's is seconds):
            progress(0, 0)  # a build nobody waits for is given up (cache.check)
            reps.append(replayer.load(path, s))
        yield from subtitle_parts(reps, timeline.event_steps, RankingEvaluator("rulebased"),
                                  progress=progress, damaged=skipped.setdefault)


def _kept_frozen(parts: Iterator[Any]) -> Generator[Any, None, None]:
    """``parts``, the first (which reads every seat's replay of the file) worked out with the
    cycle collector paused, and what it made frozen out of the collector's walks until the
    last part (replay/gcpause.py). The commentary holds those replays to its end: a full
    collection its allocations set off walked all of them with the interpreter held, the
    event loop (which plays the sessions' games) standing still meanwhile, 1.1 s on a
    480-hand file. Paused for the whole commentary (the longest build, its parts taking
    turns with other builds), the collector would have been off that long process-wide;
    paused a part at a time, the replays outlived the first part's pause and the collections
    after it walked them anyway (0.6 s, then 0.9 s). Frozen, they are never walked, and the
    collector goes on with everything else."""
    from replay.gcpause import collector_paused, freeze_kept, thaw

    token = None
    try:
        with collector_paused():
            first = next(parts, _NO_PART)
            if first is not _NO_PART:
                token = freeze_kept()
        if first is _NO_PART:
            return
        yield first
        yield from parts
    finally:
        if token is not None:
            thaw(token)


_NO_PART = object()


def _outline_json(game_id: str, body: dict[str, Any]) -> bytes:
    """The outline, gzipped. A hand holding a value JSON cannot hold (a crafted log's win
    detail nested 1000 deep, bytes in a field its reader takes) is listed without it, with a
    note naming the hand (its steps are its own 422), where the whole game was a 422 that
    showed no hand. A value outside the hands (a header field of our own log: a start time,
    a platform, the players, bytes where text belongs) is shown as unknown (null) with a
    note naming the field, where one such field made the whole game the file's 422."""
    try:
        return gzipped_json(body)
    except ValueError:
        pass
    kept, notes = dict(body), []
    for key, value in body.items():
        if key in ("hands", "notes"):
            continue
        try:
            gzipped_json({key: value})
        except ValueError as exc:
            kept[key] = None
            notes.append(f"the log's {key} is unreadable (a damaged or edited header): "
                         "shown as unknown")
            log.warning("viewer: a game's value cannot be shown", game=game_id, field=key,
                        error=str(exc))
    body = {**kept, "notes": [*body.get("notes", ()), *notes]}
    hands, notes = [], []
    for n, hand in enumerate(body["hands"]):
        kept, dropped = dict(hand), []
        for key, value in hand.items():
            # encoded at the depth it has in the outline, as the outline was: alone, three
            # levels up, a value nested just past the encoder's limit there passed, nothing
            # was dropped and the whole game was the file's 422 again
            try:
                gzipped_json({"hands": [{key: value}]})
            except ValueError as exc:
                kept[key] = None
                dropped.append(key)
                log.warning("viewer: a hand's value cannot be shown", game=game_id,
                            hand=f"hand {n + 1}", field=key, error=str(exc))
        if dropped:
            notes.append(f"hand {n + 1}: its {', '.join(dropped)} cannot be shown (a damaged "
                         "or edited log)")
        hands.append(kept)
    return gzipped_json({**body, "hands": hands, "notes": [*body.get("notes", ()), *notes]})


def _commentary_body(game_id: str, rows: list[dict[str, Any]],
                     skipped: dict[int | None, str]) -> dict[str, Any]:
    """The commentary's JSON: the rows of every hand but those in ``skipped``, which go in
    ``skipped`` as one line each naming the hand (the page shows it on that hand), their
    reasons (which may quote the file) logged. One damaged hand made the whole game's
    commentary a 422. A move the policy gave no answer on keeps its sentence and says
    ``no_prediction`` (true: its reason, which may quote the log, is logged once for the
    game), where one such move made the whole game's commentary a 422."""
    from replay.review.subtitles import ordered

    notes = []
    for hand, reason in sorted(skipped.items(), key=lambda item: -1 if item[0] is None
                               else item[0]):
        where = "before the first hand" if hand is None else f"hand {hand + 1}"
        log.warning("viewer: no commentary for a hand", game=game_id, hand=where,
                    reason=_logged_reason(reason))
        notes.append({"hand": hand, "note": f"no commentary for {where}: the log's moves "
                      "there do not fit the table (a damaged or edited log)"})
    kept = ordered([r for r in rows if r["hand"] not in skipped])
    unranked = [r for r in kept if "no_prediction" in r]
    if unranked:  # the policy's reasons (which may quote the log) logged, once for the game
        first = unranked[0]
        log.warning("viewer: no prediction for some moves", game=game_id, moves=len(unranked),
                    # counted from 1, as the page shows them and its links (#hand/step) go
                    first=f"hand {first['hand'] + 1} step {first['step'] + 1}",
                    reason=_logged_reason(first["no_prediction"]))
    return {"subtitles": [{**r, "no_prediction": True} if "no_prediction" in r else r
                          for r in kept],
            "skipped": notes}

