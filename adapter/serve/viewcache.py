"""What the replay viewer builds, built once per file version and kept: a bounded LRU of
results keyed by (path, mtime_ns, size, inode, ctime_ns, what), so that a second request for
a hand's steps (hundreds of KB of JSON, gzipped) costs a dictionary lookup instead of a
rebuild.

Builds run in the cache's own small thread pool, at most ``concurrency`` at a time (its
slots, shared out below): a burst of viewer requests can neither hold the event loop (which also
drives the in-process sessions and /health) nor fill the loop's default executor. Identical
concurrent requests share one build (single-flight), and a build whose requesters went away
once it had started still finishes and is kept, unless it asks :meth:`BuildCache.check` as
it goes: it is then given up (:class:`Abandoned`) at its next check once no request waits
for it. The commentary asks at each part and move, where a client that asked for two long
commentaries and hung up held both slots for a minute; every run asks at the log readers'
and the exports' checks (replay/progress.py, between hands), so a game's parse, a seat's
read and an export (not kept: ``keep=False``) end there too, where a client that asked for a
300-game log's two exports and hung up held both slots for 12 s. One whose requesters all
went away while it waited for its first slot is not started (:class:`Abandoned`): a client
that asked for every game's commentary and hung up queued hours of work for both slots,
which every later viewer waited behind and which took the CPU from the games being played.
At most ``max_waiting`` runs wait for a slot; past that a new build is refused at once
(:class:`Busy`, a 503 to the viewer): each waiting request holds a connection busy, and a
few hundred of them left none for /health. A build's later parts were admitted with its
first and are never refused. Each client (:func:`serving`: the status server names it by its
address) has at most ``client_waiting`` runs queued; past that its new build is refused at
once (:class:`OverShare`, a 429 to the viewer). The slots are shared out work-conserving: a
client alone uses every free one, and while others wait a slot that frees goes to the waiting
client with the fewest builds running (in turn among equals): one client holding the token
filled both slots and the queue of 32, and every other viewer waited behind its requests,
while one slot a client left a lone viewer (the common case) one build at a time beside a
free slot. A build that raises ValueError (a file no reader accepts) is
kept as that error: the same file version would fail the same way. Once the server stops,
:meth:`BuildCache.check` raises :class:`Stopping`, so that the stop waits neither for a long
build nor for its request.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import gzip
import json
import os
import threading
from collections import Counter, OrderedDict, deque
from collections.abc import Awaitable, Callable, Hashable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from replay import progress

MAX_ENTRIES = 256
MAX_GAMES = 8  # parsed games (Timeline objects, megabytes each) kept apart, by count
MAX_BYTES = 64 << 20  # the kept results' sizes (bytes results; others count 1 KB)
CONCURRENCY = 2
IDLE_POLL = 0.2  # seconds between two looks for an idle pool (BuildCache.run_idle)
MAX_WAITING = 32  # runs queued for a slot; past that a new build is refused (Busy)
CLIENT_WAITING = 4  # runs one client has queued; past that its new build is refused (OverShare)
GZIP_LEVEL = 6

Key = tuple[str, int, int, int, int, Hashable]


def file_key(path: Path, what: Hashable) -> Key:
    """The cache key of ``what`` built from ``path`` as it is now on disk. The inode and
    ctime too: a file replaced by another of the same size and mtime (``cp -p other.log
    game.log``, an archive unpacked over the folder with its seconds-only mtimes) kept its
    path, size and mtime, and the viewer served the old game's outline and hands; ``cp -p``
    cannot keep the ctime, nor ``mv`` the inode."""
    st = os.stat(path)
    return (str(path), st.st_mtime_ns, st.st_size, st.st_ino, st.st_ctime_ns, what)


def gzipped_json(value: Any) -> bytes:
    """JSON as aiohttp's json_response writes it, gzipped: what the viewer's routes send. A
    value JSON cannot hold (bytes in a damaged log's field, which its reader takes) is a
    ValueError, the file's that the viewer cannot show, where the TypeError was a 500. So is
    a NaN or an infinity (a float field of a damaged log): json.dumps wrote them as ``NaN``
    and ``Infinity``, which are no JSON, and the page's JSON.parse refused the whole body."""
    try:
        text = json.dumps(value, allow_nan=False)
    except (TypeError, ValueError) as exc:  # ValueError: a float JSON has no word for
        raise ValueError(f"a value JSON cannot hold: {str(exc)[:200]}") from None
    except RecursionError:  # a crafted log's value nested past the encoder's limit
        raise ValueError("a value nested too deep for JSON (RecursionError)") from None
    return gzip.compress(text.encode(), GZIP_LEVEL)


_END = object()  # run_in_parts: no part left


class Stopping(Exception):
    """A build given up because the server stops (:meth:`BuildCache.stop_builds`)."""


class NotBuilt(Exception):
    """A build that was not run or not finished, and is not kept: asked again, it is tried
    again."""


class Abandoned(NotBuilt):
    """Every requester of the build went away: before its first slot, or (a build in parts,
    or one that asks :meth:`BuildCache.check` as it goes) before it ended."""


class Busy(NotBuilt):
    """``max_waiting`` runs already wait for a slot: a new build is refused."""


class OverShare(NotBuilt):
    """The client already has ``client_waiting`` runs queued: its new build is refused."""


class GaveWay(NotBuilt):
    """Work nobody asked for (:meth:`BuildCache.run_idle`) given up: a viewer's run came."""


class _Share:
    """One client's part of the pool: its runs waiting for a slot (in order) and those holding
    one. Kept only while the client has a run queued or running."""

    def __init__(self) -> None:
        self.queue: deque[asyncio.Future[None]] = deque()  # each set once it has a slot
        self.waiting = 0
        self.running = 0  # slots held
        self.runs = 0  # queued or running


# the client a request comes from (the status server's middleware sets it, :func:`serving`),
# copied into the tasks the request starts: a build is its first requester's
_CLIENT: contextvars.ContextVar[Hashable | None] = contextvars.ContextVar("viewer_client",
                                                                         default=None)


_IDLE = ("idle work",)  # run_idle's share: no client's address


@contextlib.contextmanager
def serving(client: Hashable) -> Iterator[None]:
    """The builds started in this context meanwhile are ``client``'s share."""
    token = _CLIENT.set(client)
    try:
        yield
    finally:
        _CLIENT.reset(token)


class _Flight:
    """One build in progress: the requests awaiting it, and whether it has had a slot (then
    it is counted in ``builds``, and its later runs, admitted already, are never Busy). Its
    own object, not its key's: a request that comes as a build is being given up starts a
    fresh one under the same key, which the old build's checks must not count as theirs."""

    future: asyncio.Future[Any]  # the build's task, set as it is made

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self.callers = 0  # written on the loop, read by the build's thread too
        self.started = False
        # the clients of the requests awaiting it, each with how many, the earliest first:
        # whose share each of its runs is charged to (BuildCache._charged)
        self.clients: dict[Hashable | None, int] = {}


# the build a run belongs to: set in each build's task, and copied into the pool thread
# that runs its parts, so that :meth:`BuildCache.check` there knows whom to ask
_FLIGHT: contextvars.ContextVar[_Flight | None] = contextvars.ContextVar("viewer_build",
                                                                         default=None)


class _Failed:
    """A kept ValueError, raised again to whoever asks for the same key."""

    def __init__(self, error: ValueError) -> None:
        self.error = error


def _no_stop_iteration(call: Callable[[], Any]) -> Any:
    """``call()``, a StopIteration it lets out raised as a RuntimeError that says so: asyncio
    cannot set a StopIteration on the future a route awaits ("StopIteration interacts badly
    with generators"), so that future was never done and the request hung (its build slot
    held, and every later request for the same key waiting on it) until the client gave up.
    As a RuntimeError it fails the request (a 500, logged) as any other fault of a build."""
    try:
        return call()
    except StopIteration as exc:
        raise RuntimeError(f"a viewer build raised StopIteration ({exc!r})") from exc


def _size(value: Any) -> int:
    if isinstance(value, bytes | bytearray):
        return len(value)
    return 1024


class BuildCache:
    """Single-flight, bounded, off-loop builds with an LRU of their results."""

    def __init__(self, max_entries: int = MAX_ENTRIES, max_bytes: int = MAX_BYTES,
                 concurrency: int = CONCURRENCY, max_games: int = MAX_GAMES,
                 max_waiting: int = MAX_WAITING, client_waiting: int = CLIENT_WAITING) -> None:
        self.max_entries, self.max_bytes, self.max_games = max_entries, max_bytes, max_games
        self.max_waiting = max_waiting
        self.client_waiting = client_waiting
        self._shares: dict[Hashable, _Share] = {}  # (None: runs of no client, never refused)
        self._queued: OrderedDict[Hashable, _Share] = OrderedDict()  # clients waiting, in turn
        self._free_slots = concurrency
        self._entries: OrderedDict[Hashable, Any] = OrderedDict()
        self._games: OrderedDict[Hashable, Any] = OrderedDict()
        self._bytes = 0
        self._pending: dict[Hashable, _Flight] = {}
        self._executor = ThreadPoolExecutor(max_workers=concurrency,
                                            thread_name_prefix="viewer-build")
        self.builds: Counter[str] = Counter()  # builds that had a slot, per kind of result
        self.hits = 0
        self.building = 0  # builds running now (at most ``concurrency``)
        self.waiting = 0  # runs queued for a slot
        self.abandoned = 0  # builds not run or given up: their requesters had gone
        self.refused = 0  # builds refused: max_waiting runs were queued
        self.refused_client = 0  # builds refused: their client had client_waiting queued
        self._stopping = threading.Event()

    async def get(self, key: Hashable, build: Callable[[], Any], kind: str = "",
                  game: bool = False) -> Any:
        """The result kept for ``key``, else ``build()`` run once (in the pool) for every
        caller asking meanwhile. ``kind`` names the result in :attr:`builds`; ``game``: a
        parsed game, kept among the last ``max_games`` rather than by size."""
        return await self.get_built(key, lambda: self.run(build), kind, game)

    async def get_built(self, key: Hashable, build: Callable[[], Awaitable[Any]],
                        kind: str = "", game: bool = False, keep: bool = True) -> Any:
        """:meth:`get` with a build of its own making, awaited once for every caller asking
        meanwhile: one that runs in the pool a part at a time (:meth:`run_in_parts`).
        ``keep=False``: the result goes to the callers that waited for it, not into the cache
        (an export, megabytes of text read afresh each time)."""
        entries = self._games if game else self._entries
        if keep and key in entries:
            entries.move_to_end(key)
            self.hits += 1
            return self._unwrap(entries[key])
        for fresh in (True, False):
            flight = self._pending.get(key)
            if flight is None or flight.future.done():
                flight = self._start(key, build, kind, game, keep)  # (done: given up)
            flight.callers += 1
            client = _CLIENT.get()
            flight.clients[client] = flight.clients.get(client, 0) + 1
            try:
                # shielded: a caller that goes away does not cancel the others' build
                return self._unwrap(await asyncio.shield(flight.future))
            except Abandoned:  # given up just before this request came: built afresh, once
                if not fresh:
                    raise
            finally:
                flight.clients[client] -= 1
                if not flight.clients[client]:
                    del flight.clients[client]
                self._leave(key, flight)
        raise AssertionError("unreachable")  # (the loop returns or raises)

    def _start(self, key: Hashable, build: Callable[[], Awaitable[Any]], kind: str,
               game: bool, keep: bool) -> _Flight:
        flight = _Flight(kind)
        future = asyncio.ensure_future(self._build(key, flight, build, game, keep))
        flight.future = future
        self._pending[key] = flight
        future.add_done_callback(lambda f: self._done(key, flight, f))
        return flight

    def _leave(self, key: Hashable, flight: _Flight) -> None:
        """A request no longer awaits ``flight``: the last one gone before its first slot
        takes it out of the queue (a later request builds anew); once started, a build in
        parts ends at its next part, one that checks as it goes at its next check."""
        flight.callers -= 1
        if not flight.callers and not flight.started:
            if self._pending.get(key) is flight:
                del self._pending[key]
            flight.future.cancel()

    def _done(self, key: Hashable, flight: _Flight, future: asyncio.Future[Any]) -> None:
        if self._pending.get(key) is flight:
            del self._pending[key]
        if future.cancelled() or isinstance(future.exception(), Abandoned):
            self.abandoned += 1  # (the exception read: one no caller was left for is not logged)

    async def run(self, call: Callable[[], Any]) -> Any:
        """``call()`` in the pool under the same bound, not kept (e.g. a folder listing).
        :class:`Busy` at once where ``max_waiting`` runs wait for a slot already, unless the
        build it belongs to has had its first slot (its later parts are not refused);
        :class:`Abandoned`, once the slot is had, where that build has no requester left. A
        caller that goes away while it waits is cancelled and never takes a slot; one that
        goes away while ``call`` runs (a route cancelled on its client's hang-up) leaves the
        slot to ``call`` until its thread ends: the thread cannot be stopped, and a slot
        given back at once let the next runs past the bound into the pool's own queue."""
        flight = _FLIGHT.get()
        client = self._charged(flight, _CLIENT.get())
        share = self._shares.get(client)
        if flight is None or not flight.started:
            if self.waiting >= self.max_waiting:
                self.refused += 1
                raise Busy(f"{self.waiting} viewer builds are waiting already")
            if (client is not None and share is not None
                    and share.waiting >= self.client_waiting):
                self.refused_client += 1
                raise OverShare(f"{share.waiting} of this client's viewer builds are "
                                "waiting already")
        if share is None:
            share = self._shares[client] = _Share()
        share.runs += 1
        try:
            await self._slot(client, share)
        except BaseException:
            self._leave_share(client, share)
            raise
        try:
            if flight is not None:
                if not flight.callers:
                    raise Abandoned("every request for this build went away")
                if not flight.started:
                    flight.started = True
                    self.builds[flight.kind] += 1  # once a build, at its first slot
            context = contextvars.copy_context()  # _FLIGHT, for check() in the thread
            job = asyncio.get_running_loop().run_in_executor(
                self._executor, context.run, self._checked, call)
        except BaseException:
            self._give_back(share)
            self._leave_share(client, share)
            raise
        self.building += 1
        # when the thread ends, awaited or not
        job.add_done_callback(lambda done: self._free(done, client, share))
        # shielded: a caller cancelled here does not end the call's hold on its slot
        return await asyncio.shield(job)

    def _charged(self, flight: _Flight | None, client: Hashable | None) -> Hashable | None:
        """The client whose share a run of ``flight`` is charged to: of the clients still
        awaiting the build, the one holding the fewest slots (the earliest among equals);
        ``client`` (the run's own context's: the build's first requester, or a run of no
        build) where none is left. A build shared by two clients was charged to the first
        for every run: a commentary's parts counted against that client's share (its next
        request waited as if it held two slots) while the other, who wanted the same
        build, held none and went first, and once the first hung up its share went on
        being charged for a build it no longer wanted."""
        if flight is None or not flight.clients:
            return client
        return min(flight.clients, key=lambda c: self._shares[c].running
                   if c in self._shares else 0)

    async def run_idle(self, call: Callable[[], Any]) -> Any:
        """``call()`` in the pool once no run holds or waits for a slot, under a share of its
        own, and given up (:class:`GaveWay`) at its next check (replay/progress.py) once
        another run wants a slot: work nobody waits for (the game list's whole reads of the
        logs it listed) takes one slot of an idle viewer, never a viewer's turn."""
        while self.building or self.waiting:
            await asyncio.sleep(IDLE_POLL)

        def give_way() -> None:
            self.check()  # (the server stops)
            if self.building > 1 or self.waiting:
                raise GaveWay("a viewer request came")

        def run() -> Any:
            with progress.checking(give_way):
                return call()

        with serving(_IDLE):
            return await self.run(run)

    def _checked(self, call: Callable[[], Any]) -> Any:
        """``call()`` in the pool thread, :meth:`check` asked at the readers' and writers'
        checks as it goes (replay/progress.py: between hands): a read of a long log or its
        export, which ran to its end for nobody (a 300-game log's export held its slot
        7-12 s after its client hung up), is given up at its next hand once no request waits
        for the build it belongs to, or the server stops."""
        with progress.checking(self.check):
            try:
                return _no_stop_iteration(call)
            except (Stopping, NotBuilt) as exc:
                # given up: without the frames it passed through, what the read made (a
                # 300-game log's: a million objects) dies here, by reference counting;
                # held by the traceback, in asyncio's reference cycles, it waited for the
                # next full collection, which walked it all with the loop held (1.7 s)
                raise exc.with_traceback(None) from None

    async def _slot(self, client: Hashable | None, share: _Share) -> None:
        """A build slot: a free one at once (none is free while any run waits), else the one
        :meth:`_give_back` hands this run in its client's turn."""
        if self._free_slots and not self._queued:
            self._free_slots -= 1
            share.running += 1
            return
        waiter = asyncio.get_running_loop().create_future()
        share.queue.append(waiter)
        self._queued.setdefault(client, share)
        self.waiting += 1
        share.waiting += 1
        try:
            await waiter
        except BaseException:
            if waiter.done() and not waiter.cancelled():  # handed a slot as it was cancelled
                self._give_back(share)
            elif waiter in share.queue:
                share.queue.remove(waiter)
                if not share.queue and self._queued.get(client) is share:
                    del self._queued[client]
            raise
        finally:
            self.waiting -= 1
            share.waiting -= 1

    def _give_back(self, share: _Share) -> None:
        """``share``'s run is done with its slot: it goes to the waiting client with the
        fewest slots held, the one waiting longest since its last among equals (min keeps
        the first; a client served goes to the back), else it is free."""
        share.running -= 1
        while self._queued:
            client, next_share = min(self._queued.items(), key=lambda item: item[1].running)
            waiter = next_share.queue.popleft()
            if next_share.queue:
                self._queued.move_to_end(client)
            else:
                del self._queued[client]
            if not waiter.done():  # (a cancelled one leaves on its own)
                waiter.set_result(None)
                next_share.running += 1
                return
        self._free_slots += 1

    def _leave_share(self, client: Hashable | None, share: _Share) -> None:
        share.runs -= 1
        if not share.runs and self._shares.get(client) is share:
            del self._shares[client]

    def _free(self, job: asyncio.Future[Any], client: Hashable | None,
              share: _Share) -> None:
        """A run's call has ended in its thread: its slot goes to the next run in turn."""
        self.building -= 1
        self._give_back(share)
        self._leave_share(client, share)
        if not job.cancelled():
            job.exception()  # (read: one whose caller went away is not logged as unretrieved)

    async def run_in_parts(self, parts: Iterator[Any]) -> list[Any]:
        """Every item of ``parts``, each worked out (``next``) in the pool as a run of its own
        under the bound: a long build (a 1,600-hand game's commentary, some 5 CPU s) gives its
        slot up between parts, and the requests that came meanwhile go first (a slot that
        frees goes to one waiting), where they waited for the whole build. What ``parts`` raises
        ends it, as a build's error."""
        items: list[Any] = []
        while True:
            self.check()  # the server stops: no next part (the pool may be shut down)
            item = await self.run(lambda: next(parts, _END))
            if item is _END:
                return items
            items.append(item)

    async def _build(self, key: Hashable, flight: _Flight,
                     build: Callable[[], Awaitable[Any]], game: bool, keep: bool) -> Any:
        _FLIGHT.set(flight)  # this task's own context: its runs and their threads see it
        try:
            value = await build()
        except ValueError as exc:
            value = _Failed(exc)
        if keep and game:
            self._games[key] = value
            while len(self._games) > self.max_games:
                self._games.popitem(last=False)
        elif keep:
            self._keep(key, value)
        return value

    def _keep(self, key: Hashable, value: Any) -> None:
        if key in self._entries:
            self._bytes -= _size(self._entries.pop(key))
        self._entries[key] = value
        self._bytes += _size(value)
        while self._entries and (len(self._entries) > self.max_entries
                                 or self._bytes > self.max_bytes):
            _old, dropped = self._entries.popitem(last=False)
            self._bytes -= _size(dropped)

    @staticmethod
    def _unwrap(value: Any) -> Any:
        if isinstance(value, _Failed):
            raise value.error.with_traceback(None)
        return value

    def __len__(self) -> int:
        return len(self._entries)

    def counters(self) -> dict[str, Any]:
        """What the viewer is doing and has done, read on the loop that changes it: the one
        source of ``mjbot serve``'s ``/health`` ``viewer`` and its ``mjbot_viewer_*``
        metrics. ``builds``: builds that had a slot, per kind of result; ``abandoned``: not
        run or given up, their requesters gone; ``refused``: a 503 at once, ``max_waiting``
        runs queued; ``refused_client``: a 429 at once, the client's ``client_waiting`` runs
        queued; ``cache``: what is kept (results and their bytes, parsed games)."""
        return {"building": self.building, "waiting": self.waiting, "hits": self.hits,
                "builds": dict(sorted(self.builds.items())), "abandoned": self.abandoned,
                "refused": self.refused, "refused_client": self.refused_client,
                "cache": {"entries": len(self._entries), "bytes": self._bytes,
                          "games": len(self._games), "max_entries": self.max_entries,
                          "max_bytes": self.max_bytes, "max_games": self.max_games}}

    def stop_builds(self) -> None:
        """The server stops: builds that :meth:`check` as they go end with :class:`Stopping`."""
        self._stopping.set()

    def check(self, *_progress: object) -> None:
        """Raises :class:`Stopping` once the server stops, and :class:`Abandoned` once no
        request awaits the build it is called in (from that build's runs in the pool, or its
        task); a long build calls it as it goes (it takes a progress callback's arguments).
        A read of an int the loop writes: cheap enough for every move."""
        if self._stopping.is_set():
            raise Stopping("the server is stopping")
        flight = _FLIGHT.get()
        if flight is not None and not flight.callers:
            raise Abandoned("every request for this build went away")

    def close(self) -> None:
        self.stop_builds()
        self._executor.shutdown(wait=False, cancel_futures=True)
