"""The viewer's idle whole reads are done by a low-priority child process (wholeread.py), not
in the serve process, whose event loop drives the sessions: read in a pool thread they held
the interpreter against it (the loop's lag up, a Tenhou session's decisions down by more than
half while they ran)."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
from pathlib import Path

import aiohttp
import msgpack
import pytest
from yarl import URL

from adapter.own_python import own_python
from adapter.serve.status import StatusServer
from adapter.serve.viewer import VIEW_READER
from adapter.serve.wholeread import NICE, ChildGone, ChildReader, read_here
from replay import progress
from tests.log_samples import log_frames
from tests.serve_helpers import until
from tests.viewer_fixtures import platform_game


@pytest.fixture
def root(tmp_path: Path) -> Path:
    root = tmp_path / "logs"
    sound = platform_game(root / "sound.mjlog.msgpack")
    packed = [msgpack.packb(f, use_bin_type=True) for f in log_frames(sound)]
    packed[len(packed) // 2] = b"\xc1" + packed[len(packed) // 2][1:]
    (root / "middle.mjlog.msgpack").write_bytes(b"".join(packed))
    return root


async def test_the_listed_logs_are_read_whole_by_a_low_priority_child(root: Path) -> None:
    """Through a real server: the two finished logs a page lists are read whole, each by the
    reader's child (its answers counted), one child for both, at the lowest priority, and
    the list marks the damaged one as a read here would."""
    server = StatusServer(roots=[str(root)])
    url = URL(await server.start("127.0.0.1", 0))
    assert server.runner is not None
    reader, index = server.runner.app[VIEW_READER], server.index
    try:
        async with aiohttp.ClientSession() as session:
            async with session.get(url.with_path("/api/games")) as response:
                assert (await response.json())["unread"] == 2
            await until(lambda: index.logs.counts.read_whole == 2)
            async with session.get(url.with_path("/api/games")) as response:
                page = await response.json()
        assert reader.reads == 2 and reader.started == 1
        assert reader.pid is not None and reader.pid != os.getpid()
        assert reader.nice == min(19, os.nice(0) + NICE)
        assert reader.idle is hasattr(os, "SCHED_IDLE")
        damaged = {g["name"]: g.get("damaged") for g in page["games"]}
        assert page["unread"] == 0 and damaged["sound.mjlog.msgpack"] is None
        assert damaged["middle.mjlog.msgpack"] == read_here(str(root / "middle.mjlog.msgpack"))
        assert damaged["middle.mjlog.msgpack"].startswith("the log is cut at byte ")
    finally:
        await server.stop()
    assert reader._child is None  # killed with the server


def test_a_read_given_up_kills_the_child(tmp_path: Path) -> None:
    """A read given up (a viewer request came, the server stops: the progress check raises)
    ends its child at once, not when its read ends; the next read starts a fresh one."""
    never = own_python("-c", "import time; time.sleep(60)")  # a child that never answers
    reader = ChildReader(never)
    asked = 0

    def give_up() -> None:
        nonlocal asked
        asked += 1
        if asked == 3:
            raise RuntimeError("a viewer request came")

    with progress.checking(give_up), pytest.raises(RuntimeError, match="request came"):
        reader.read(str(tmp_path / "x.mjlog.msgpack"))
    assert reader._child is None and reader.started == 1 and reader.pid is not None
    with pytest.raises(ProcessLookupError):
        os.kill(reader.pid, 0)  # killed and reaped
    reader.close()


def test_what_the_child_says_of_a_file(tmp_path: Path) -> None:
    """A file that is no log is the ValueError a read here raises, a missing one the
    OSError (the listing's next walk says so); a child that answers no JSON, or ends, is
    ChildGone (the viewer logs it), and the next read starts a fresh child."""
    reader = ChildReader()
    try:
        (tmp_path / "text.mjlog.msgpack").write_bytes(b"not a log")
        with pytest.raises(ValueError):
            read_here(str(tmp_path / "text.mjlog.msgpack"))
        with pytest.raises(ValueError):
            reader.read(str(tmp_path / "text.mjlog.msgpack"))
        with pytest.raises(OSError):
            reader.read(str(tmp_path / "gone.mjlog.msgpack"))
        assert reader.started == 1 and reader.reads == 2
    finally:
        reader.close()
    for code in ("print('hello')", "pass"):
        odd = ChildReader(own_python("-c", code))
        with pytest.raises(ChildGone):
            odd.read(str(tmp_path / "text.mjlog.msgpack"))
        assert odd._child is None
        odd.close()


async def test_a_child_that_ends_marks_no_log(root: Path) -> None:
    """A reading process that ends without an answer (it cannot start, or is killed) says
    nothing of the log: it was recorded as the log's failure, and a child that could not
    start marked every listed log damaged. The logs stay unread (asked again by the next
    page), and the pass waits for that page rather than starting a child for each."""
    from adapter.serve.viewcache import IDLE_POLL
    from adapter.serve.viewer import VIEW_CACHE

    server = StatusServer(roots=[str(root)])
    url = URL(await server.start("127.0.0.1", 0))
    assert server.runner is not None
    reader, cache = server.runner.app[VIEW_READER], server.runner.app[VIEW_CACHE]
    reader.command = own_python("-c", "pass")
    try:
        async with aiohttp.ClientSession() as session:
            async with session.get(url.with_path("/api/games")) as response:
                assert (await response.json())["unread"] == 2
            await until(lambda: reader.started == 1 and reader._child is None
                        and not cache.building)
            await asyncio.sleep(3 * IDLE_POLL)
            assert reader.started == 1  # not one child per listed log
            async with session.get(url.with_path("/api/games")) as response:
                page = await response.json()
        assert page["unread"] == 2 and not any("damaged" in g for g in page["games"])
        assert server.index.logs.counts.read_whole == 0
    finally:
        await server.stop()


@pytest.mark.skipif(os.name != "posix", reason="the child reads on POSIX only")
def test_ctrl_c_is_left_to_the_parent(root: Path) -> None:
    """Ctrl-C in a terminal reaches the whole process group, the reading child too: it died
    of it at once (KeyboardInterrupt) while mjbot serve went on for its stop deadline, the
    read in hand ended as ChildGone and the viewer warned that the reading process ended.
    The child ignores it: the parent ends it (close), as the thinking workers are."""
    reader = ChildReader()
    sound = str(root / "sound.mjlog.msgpack")
    try:
        assert reader.read(sound) == ""
        assert reader.pid is not None
        os.kill(reader.pid, signal.SIGINT)
        assert reader.read(sound) == ""  # the same child answers
        assert reader.started == 1 and reader.reads == 2
    finally:
        reader.close()


@pytest.mark.skipif(os.name != "posix", reason="the child reads on POSIX only")
def test_a_child_that_cannot_be_started_is_no_log_gone(root: Path, tmp_path: Path) -> None:
    """A reading process that cannot be started at all (its program missing, no process or
    file descriptor to spare) raised the OSError of a log gone: the index dropped each listed
    log from its queue without a word, a start tried for every one, and the list's unread
    never fell with nothing in the log to say why. It is ChildGone (the viewer warns, the log
    stays unread)."""
    from adapter.serve.games import GameIndex

    reader = ChildReader((str(tmp_path / "no-such-python"),))
    sound = root / "sound.mjlog.msgpack"
    with pytest.raises(ChildGone, match="cannot be started"):
        reader.read(str(sound))
    with pytest.raises(ChildGone):  # not taken for a log gone by the index
        GameIndex([str(root)]).read_whole(str(sound), sound.stat(), reader.read)
    assert reader.started == 0 and reader.reads == 0
    reader.close()


def test_the_viewer_imports_where_os_has_no_nice(root: Path) -> None:
    """Windows has no ``os.nice``: the reading module's ``main`` took it as a default
    argument, evaluated at import, and the viewer's modules (games.py, viewer.py) imported
    the module everywhere: mjbot view and mjbot serve failed to start there with an
    AttributeError. Without it they import and read in this process (Windows' way)."""
    code = ("import os, sys\n"
            "del os.nice  # as on Windows\n"
            "import adapter.serve.viewer, adapter.serve.games\n"
            "from adapter.serve.wholeread import ChildReader\n"
            "reader = ChildReader()\n"
            "reader.apart = False  # os.name is not 'posix' there\n"
            "print(repr(reader.read(sys.argv[1])), reader.started)\n")
    done = subprocess.run([*own_python("-c", code), str(root / "sound.mjlog.msgpack")],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == ["''", "0"]


@pytest.mark.skipif(os.name != "posix", reason="the child reads on POSIX only")
def test_a_child_past_descriptor_1024_is_waited_on(root: Path) -> None:
    """select() refuses a descriptor of 1024 or more (FD_SETSIZE), which a long-running serve
    reaches (many connections, logs, workers' pipes; the unit's LimitNOFILE is 8192): the
    wait on a child whose pipe got such a number raised ValueError, which the index takes for
    a file that is no log: every listed log left unread without a word, a child started and
    killed for each. The wait is poll's (local/external/process.ready_fds), as the seats'."""
    import resource

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and hard < 1100:
        pytest.skip("no room for descriptors past 1024")
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, 1100), hard))
    held: list[int] = []
    reader = ChildReader()
    try:
        while not held or held[-1] < 1030:
            held.append(os.open(os.devnull, os.O_RDONLY))
        assert reader.read(str(root / "sound.mjlog.msgpack")) == ""
        assert reader._child is not None and reader._child.stdout is not None
        assert reader._child.stdout.fileno() >= 1024 and reader.started == 1
    finally:
        reader.close()
        for fd in held:
            os.close(fd)
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
