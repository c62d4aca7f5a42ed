"""Matches between four `mjbot ntpu` processes against the fake tournament server, over TCP
and over pipes, and a client that breaks every rule it can."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from adapter.fakes.ntpu_server import CLIENT_COMMAND, MatchNotStarted, MatchResult, run_match
from adapter.session import Stopped
from protocols import events as ev
from replay import replayer
from replay.log import EventFrame, TxFrame, read_log
from tests.in_process import mjbot_here
from tests.narrowing import text_of
from tests.ntpu_helpers import claim_order_errors


def _client_logs_are_clean(root: Path) -> int:
    """Every client game log is complete, holds no error notice and re-parses identically."""
    paths = sorted((root / "ntpu").rglob("*.mjlog.msgpack"))
    for path in paths:
        log = read_log(path)
        assert log.complete, path
        errors = [f.event.text for f in log.frames if isinstance(f, EventFrame)
                  and isinstance(f.event, ev.PlatformNotice) and f.event.text.startswith("error")]
        assert not errors, (path, errors)
    for path in paths[:8]:
        assert replayer.reparse(replayer.load(path))["identical"], path
    return len(paths)


@pytest.mark.parametrize("transport, hands", [("tcp", 8), ("stdio", 8)])
def test_a_match_between_four_client_processes(tmp_path: Path, transport: str,
                                               hands: int) -> None:
    result = run_match(hands, ["rulebased", "rulebased", "greedy", "greedy"], seed=5,
                       transport=transport, client_args=["--log-dir", str(tmp_path)],
                       log_dir=str(tmp_path))
    assert result.exit_codes == [0, 0, 0, 0]
    for stats in result.stats:
        assert (stats.illegal, stats.timeouts, stats.dropped) == (0, 0, False), stats.problems
        assert stats.hands == hands
    # 1000 + 500 per tai moves points between clients: the table sums to zero
    assert sum(s.points for s in result.stats) == 0
    assert sum(s.wins for s in result.stats) > 0
    assert "points" in result.table()
    # every hand of every seat is in the clients' logs (one game per /start)
    assert _client_logs_are_clean(tmp_path) == 4 * hands
    assert result.log_path is not None
    match = read_log(result.log_path)
    assert match.complete
    sent = [text_of(f.raw) for f in match.frames if isinstance(f, TxFrame)]
    init_cards = [line.split("> ", 1)[1].split() for line in sent if "/initCard" in line]
    assert sorted({len(parts) - 1 for parts in init_cards}) == [16, 17]
    assert sum(len(parts) == 18 for parts in init_cards) == hands  # one dealer per hand
    # every discard's claims were asked in the lab referee's order
    assert claim_order_errors(result.log_path) == []


@pytest.fixture(scope="module")
def seed9(tmp_path_factory: pytest.TempPathFactory) -> tuple[MatchResult, Path]:
    """Seed 9's two hands between four greedy stdio clients, played once for the module:
    the match's result and the folder of the clients' game logs (the tests only read them).
    Two hands: seed 9's table then has wins, deal-ins and points that differ by seat (its
    four hands even out to 0 points each)."""
    clients = tmp_path_factory.mktemp("seed9") / "clients"
    result = run_match(2, ["greedy"] * 4, seed=9, transport="stdio",
                       client_args=["--log-dir", str(clients)], write_log=False)
    return result, clients


def test_same_seed_same_match(seed9: tuple[MatchResult, Path]) -> None:
    # the module's seed-9 match against a second one (its clients not logging: what they
    # write is no part of the play)
    again = run_match(2, ["greedy"] * 4, seed=9, transport="stdio", write_log=False,
                      client_args=["--no-log"])
    assert seed9[0].table() == again.table()


def test_a_client_starting_up_is_not_timed_out_on_its_first_ready(tmp_path: Path) -> None:
    """The stdio clients are started with the match and still import the brain when the
    first ``/ready`` goes out: that wait took the per-reply limit (5 s), so on a busy machine
    ``mjbot ntpu-server --clients stdio`` counted a timeout (and a late ``/ready``) and exited
    1. A client that starts slower than the limit (here it sleeps first) is not timed out."""
    slow = ("sh", "-c", 'sleep 2.5 && exec "$@"', "sh", *CLIENT_COMMAND)
    result = run_match(1, ["greedy"] * 4, seed=4, transport="stdio", time_limit=1.5,
                       client_args=["--no-log"], log_dir=str(tmp_path), command=slow)
    for stats in result.stats:
        assert (stats.timeouts, stats.late, stats.illegal) == (0, 0, 0), stats.problems
        assert stats.hands == 1
    assert result.exit_codes == [0, 0, 0, 0]


def _bad_client(port: int, done: threading.Event, seen: list[str]) -> None:
    """Answers /ready, then: an id it does not hold, a reply that is no reply, silence past
    the time limit, a pass to /ask throw; then it hangs up in the middle of a hand."""
    sock = socket.create_connection(("127.0.0.1", port))
    tricks = ["/throw 999", "/dance", None, "/pass"]
    buffer = b""
    try:
        while tricks:
            data = sock.recv(65536)
            if not data:
                break
            buffer += data
            *lines, buffer = buffer.split(b"\n")
            for raw in lines:
                line = raw.decode()
                seen.append(line)
                if line == "/ready":
                    sock.sendall(b"/ready\n")
                elif line == "/ask throw" and tricks:
                    trick = tricks.pop(0)
                    if trick is not None:
                        sock.sendall((trick + "\n").encode())
                elif line.startswith("/ask"):
                    sock.sendall(b"/pass\n")
    finally:
        sock.close()
        done.set()


def test_the_server_survives_a_client_that_breaks_every_rule(tmp_path: Path) -> None:
    seen: list[str] = []
    done = threading.Event()
    procs: list[subprocess.Popen[bytes]] = []

    def listening(port: int) -> None:
        threading.Thread(target=_bad_client, args=(port, done, seen), daemon=True).start()
        # the bad client connects first (client 1); then three real bots
        for _ in range(3):
            procs.append(subprocess.Popen([*CLIENT_COMMAND, "--server", f"127.0.0.1:{port}",
                                           "--log-dir", str(tmp_path)]))

    result = run_match(8, [], seed=3, transport="external", time_limit=1.0,
                       log_dir=str(tmp_path), on_listening=listening)
    codes = [p.wait(timeout=60) for p in procs]
    assert done.wait(10)
    bad, *good = result.stats
    assert bad.illegal == 3, bad.problems   # not held, not a reply, pass to throw
    assert bad.timeouts == 1
    assert bad.dropped
    assert all(s.hands == 8 for s in result.stats)  # the match went on without it
    for stats in good:
        assert (stats.illegal, stats.timeouts, stats.dropped) == (0, 0, False), stats.problems
    assert codes == [0, 0, 0]
    assert sum(s.points for s in result.stats) == 0
    assert "/close" not in seen  # it left before the end
    assert _client_logs_are_clean(tmp_path) == 3 * 8
    assert result.log_path is not None and read_log(result.log_path).complete
    # the match log says what the table counts, each where it happened: a replay of it
    # showed the seat's safe moves as if the client had played them
    hands = replayer.summarize(replayer.load(result.log_path))["hands"]
    said = [n for hand in hands for n in hand["notices"] if n.startswith("client 1: ")]
    assert len(said) == 5, said  # the three bad replies, the silence and the drop
    assert "client 1: no reply to /ask throw in 1.0 s" in said
    assert "client 1: /pass to /ask throw" in said
    assert said[-1] == "client 1: its connection closed: dropped, its seat played safely"
    # the dropped client's longer name keeps the columns in line (it pushed its row right)
    header, *rows = result.table().splitlines()
    end = header.index("points") + len("points")
    for stats in result.stats:
        (row,) = [r for r in rows if r.startswith(stats.name)]
        assert row[:end].endswith(f" {stats.points}"), (header, row)


def test_a_match_stopped_early_says_so_in_its_log(tmp_path: Path) -> None:
    """Ctrl-C two hands into a match of 40: the match log's footer gives the 2 hands played
    and says the match was stopped (it gave the 40 asked for, as a finished match)."""
    def progress(done: int, _total: int) -> None:
        if done == 2:
            raise KeyboardInterrupt  # what Ctrl-C raises in the server's loop

    with pytest.raises(KeyboardInterrupt):
        run_match(40, ["greedy"] * 4, seed=5, transport="stdio", log_dir=str(tmp_path),
                  progress=progress)
    (path,) = sorted((tmp_path / "ntpu-server").rglob("*.mjlog.msgpack"))
    footer = read_log(path).footer
    assert footer is not None
    assert footer.result == {"hands": 2, "unfinished": True, "stopped": True}
    assert replayer.summarize(replayer.load(str(path)))["unfinished"] == "stopped on request"


def test_sigterm_stops_the_match_as_ctrl_c_does(tmp_path: Path) -> None:
    """SIGTERM (as `timeout` sends it) killed `mjbot ntpu-server` where it stood: no line,
    and a match log without its footer ("the log ends without a footer (cut, or its process
    ended in the game)"). It now stops as Ctrl-C does: the footer gives the hands played and
    says the match was stopped, the clients are ended, one line, exit 128 + 15."""
    proc = subprocess.Popen([sys.executable, "-m", "adapter.cli", "ntpu-server", "--hands",
                             "4000", "--clients", "stdio", "--policies",
                             "greedy,greedy,greedy,tsumogiri", "--log-dir", str(tmp_path)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        for _ in range(600):  # the match under way, hands played
            logs = list((tmp_path / "ntpu-server").rglob("*.mjlog.msgpack"))
            if logs and logs[0].stat().st_size > 150_000:  # about three hands
                break
            assert proc.poll() is None, proc.communicate()
            time.sleep(0.1)
        proc.send_signal(signal.SIGTERM)
        _out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 128 + signal.SIGTERM, err[-2000:]
    assert "mjbot ntpu-server: stopped (SIGTERM)" in err and "Traceback" not in err, err
    (path,) = list((tmp_path / "ntpu-server").rglob("*.mjlog.msgpack"))
    footer = read_log(path).footer
    assert footer is not None and footer.result["stopped"] is True
    assert 0 < footer.result["hands"] < 4000
    assert replayer.summarize(replayer.load(str(path)))["unfinished"] == "stopped on request"


def _own_children() -> list[int]:
    """The pids of this process's children still running (zombies are ended)."""
    alive = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            state, ppid = stat.rsplit(")", 1)[1].split()[:2]
            if int(ppid) == os.getpid() and state != "Z":
                alive.append(int(entry.name))
    return alive


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc")
def test_a_stop_while_the_clients_are_ended_still_closes_the_match_log(
        tmp_path: Path) -> None:
    """SIGTERM (or Ctrl-C) met while the server waits for its clients to exit (after the
    last hand, up to 30 s; or after a first stop, up to 5 s, where a second signal is
    likely) came out of that wait in the `finally`, so the match log was never closed: no
    footer ("the log ends without a footer"), and the clients were not waited for. The
    footer is written whatever interrupts the ending, and the clients still running are
    told to stop. Here each client lingers 30 s after its session, and SIGTERM comes while
    the server waits for them."""
    lingering = (sys.executable, "-c", "import subprocess, sys, time; subprocess.call("
                 "[sys.executable, '-m', 'adapter.cli', 'ntpu', *sys.argv[1:]]); time.sleep(30)")

    def stop(signum: int, _frame: object) -> None:  # as mjbot ntpu-server's handler
        raise Stopped(signum)

    timer = threading.Timer(3.0, os.kill, (os.getpid(), signal.SIGTERM))

    def progress(done: int, total: int) -> None:
        if done == total:  # the server is waiting for its clients when it comes
            timer.start()

    # children this process had already (an earlier test's multiprocessing fork server and
    # resource tracker, which live as long as the pytest worker) are none of the clients
    earlier = set(_own_children())
    before = signal.signal(signal.SIGTERM, stop)
    try:
        with pytest.raises(Stopped):
            run_match(1, ["greedy"] * 4, seed=2, transport="stdio", command=lingering,
                      client_args=["--no-log"], log_dir=str(tmp_path), progress=progress)
    finally:
        timer.cancel()  # never a SIGTERM after the handler is gone
        if timer.is_alive():
            timer.join(10)
        signal.signal(signal.SIGTERM, before)
    (path,) = list((tmp_path / "ntpu-server").rglob("*.mjlog.msgpack"))
    footer = read_log(path).footer
    assert footer is not None and footer.result == {"hands": 1}  # the match was played
    deadline = time.monotonic() + 10
    while set(_own_children()) - earlier and time.monotonic() < deadline:
        time.sleep(0.1)
    assert sorted(set(_own_children()) - earlier) == []


def test_cli_prints_the_score_table(tmp_path: Path,
                                    capsys: pytest.CaptureFixture[str]) -> None:
    # the server in this process (its clients are still four processes): no signal is sent
    done = mjbot_here(capsys, "ntpu-server", "--hands", "1", "--clients", "stdio",
                      "--policies", "greedy,greedy,greedy,tsumogiri", "--log-dir",
                      str(tmp_path), "--json", str(tmp_path / "r.json"))
    assert done.returncode == 0, done.stderr
    assert "points" in done.stdout and "tsumogiri-4" in done.stdout
    assert (tmp_path / "r.json").exists()
    bad = mjbot_here(capsys, "ntpu-server", "--policies", "greedy,nobody")
    assert bad.returncode == 2 and "--policies" in bad.stderr


def test_the_local_server_seats_every_policy_mjbot_ntpu_plays(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`--policies` took only the plain names, so an entrant could not try at the local
    server the `mjbot ntpu --policy mc@KEY=VALUE` (or `nn@FILE`) it plays with: "--policies
    takes four of greedy, mc, ...". Each is now checked as `mjbot ntpu --policy` checks it,
    and a bad one is refused in one line naming what is wrong."""
    done = mjbot_here(capsys, "ntpu-server", "--hands", "1", "--clients", "stdio",
                      "--policies", "mc@playouts=8,greedy,greedy,tsumogiri",
                      "--client-budget", "0.5", "--no-log")
    assert done.returncode == 0, done.stderr[-2000:]
    assert "mc@playouts=8-1" in done.stdout
    bad = mjbot_here(capsys, "ntpu-server", "--policies", "mc@playout=8,greedy,greedy,greedy")
    assert bad.returncode == 2 and "did you mean 'playouts'" in bad.stderr, bad.stderr
    assert "Traceback" not in bad.stderr
    missing = mjbot_here(capsys, "ntpu-server", "--policies",
                         f"nn@{tmp_path / 'none.npz'},greedy,greedy,greedy")
    assert missing.returncode == 2 and "no weights file at" in missing.stderr, missing.stderr


def test_a_match_whose_clients_do_not_all_come_is_a_clear_error(tmp_path: Path) -> None:
    """``--clients external`` with three clients: the accept's timeout ended the server with a
    TimeoutError traceback. It is a MatchNotStarted naming how many came; the three that did
    are let go (their connections closed), and the match log says no hand was played."""
    socks: list[socket.socket] = []

    def listening(port: int) -> None:
        socks.extend(socket.create_connection(("127.0.0.1", port)) for _ in range(3))

    with pytest.raises(MatchNotStarted, match=r"only 3 of the four clients connected to "
                       r"127\.0\.0\.1:\d+ \(waited 0\.5 s for client 4\)"):
        run_match(4, [], seed=5, transport="external", log_dir=str(tmp_path),
                  on_listening=listening, accept_timeout=0.5)
    for sock in socks:
        sock.settimeout(10)
        assert sock.recv(100) == b""  # closed by the server, not left hanging
        sock.close()
    (path,) = sorted((tmp_path / "ntpu-server").rglob("*.mjlog.msgpack"))
    footer = read_log(path).footer
    assert footer is not None and footer.result == {"hands": 0, "unfinished": True}


def test_a_client_that_comes_after_the_four_is_refused_at_once(tmp_path: Path) -> None:
    """The port stayed open for the whole match: a fifth client, or one that reconnected
    after its line dropped, was let in by the system and then heard nothing until the match
    ended (`mjbot ntpu` logged "connected" and waited, for hours in a long match, then "the
    server closed the connection without /close"). Once the four are in, the port is closed
    and such a client is refused as it connects."""
    socks: list[socket.socket] = []
    ports: list[int] = []
    connected = threading.Event()

    def listening(port: int) -> None:
        ports.append(port)
        socks.extend(socket.create_connection(("127.0.0.1", port)) for _ in range(4))
        connected.set()

    match = threading.Thread(target=run_match, args=(1, []), daemon=True,
                             kwargs={"seed": 5, "transport": "external", "time_limit": 1.0,
                                     "log_dir": str(tmp_path), "on_listening": listening})
    match.start()
    try:
        assert connected.wait(30)
        socks[0].settimeout(30)
        assert socks[0].recv(100).startswith(b"/ready")  # the four are in: the match began
        with pytest.raises(ConnectionRefusedError):
            socket.create_connection(("127.0.0.1", ports[0]), timeout=10).close()
    finally:
        for sock in socks:
            sock.close()  # dropped: the server plays their seats safely to the end
        match.join(60)
    assert not match.is_alive()


def test_cli_an_address_it_cannot_listen_on_is_one_line(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A port in use (or a --host that is not this machine's): the bind's OSError came out
    of ``mjbot ntpu-server`` as a traceback. One line naming the address, exit 2, and no
    match log for a match that never began."""
    taken = socket.create_server(("127.0.0.1", 0))
    try:
        port = taken.getsockname()[1]
        done = mjbot_here(capsys, "ntpu-server", "--hands", "1", "--clients", "external",
                          "--port", str(port), "--log-dir", str(tmp_path))
    finally:
        taken.close()
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    assert f"cannot listen on 127.0.0.1:{port}: Address already in use" in done.stderr
    assert not list(tmp_path.rglob("*.mjlog.msgpack"))


@pytest.mark.parametrize("host", ["::1", "[::1]"])
def test_the_local_server_listens_on_an_ipv6_address(host: str) -> None:
    """`mjbot ntpu-server --host ::1` (an entrant trying the IPv6 address its client's
    `--server [::1]:PORT` now takes) was refused as an address it cannot listen on:
    "cannot listen on ::1:0: Address family for hostname not supported" (the listener was
    IPv4 only). It listens there, and the clients it starts connect and play."""
    try:
        socket.create_server(("::1", 0), family=socket.AF_INET6).close()
    except OSError as exc:
        pytest.skip(f"no IPv6 loopback here: {exc}")
    result = run_match(1, ["greedy", "greedy", "rulebased", "tsumogiri"], seed=4,
                       transport="tcp", host=host, write_log=False, client_args=["--no-log"])
    assert [s.hands for s in result.stats] == [1] * 4
    assert not any(s.dropped or s.illegal or s.timeouts for s in result.stats)
    assert result.exit_codes == [0] * 4


def test_no_log_is_passed_on_to_the_clients_it_starts(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    """``mjbot ntpu-server --no-log`` passed only ``--log-dir`` on, so the four ``mjbot ntpu``
    clients it started wrote their game logs to $MJBOT_LOG_DIR (or ./logs) all the same. With
    ``--no-log`` nothing is written, the server's match log nor the clients' game logs."""
    # the server in this process, from tmp_path (./logs is there); its clients inherit both
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("MJBOT_LOG_DIR", str(tmp_path / "env-logs"))
    done = mjbot_here(capsys, "ntpu-server", "--hands", "1", "--clients", "stdio",
                      "--policies", "greedy,greedy,greedy,tsumogiri", "--no-log")
    assert done.returncode == 0, done.stderr
    assert "no match log (--no-log)" in done.stdout
    assert sorted(tmp_path.rglob("*")) == []


def test_the_game_list_shows_each_clients_points_and_rank(
        seed9: tuple[MatchResult, Path]) -> None:
    """An NTPU client's log footer held no scores (the server sends none), so `mjbot view`'s
    game list showed no points or rank for any NTPU game. A game played out with every win
    valued now has the scores our rules count in its footer (as /health's last_game has): the
    list's points for each client add up to the server's own table."""
    from adapter.serve.games import GameIndex  # the viewer's list; loaded only here

    result, clients = seed9
    assert result.exit_codes == [0, 0, 0, 0]
    games = GameIndex([str(clients)]).page("", 0, 500)["games"]
    assert len(games) == 4 * 2
    for game in games:
        assert game["finished"] and sum(game["scores"]) == 0, game
        assert game["our_score"] == game["scores"][game["our_seat"]], game
        assert game["our_rank"] in (1, 2, 3, 4), game
    assert len({s.points for s in result.stats}) > 1, "seed 9's two hands differ by seat"
    for stats in result.stats:
        ours = [g["our_score"] for g in games if g["name"].rsplit("-g", 1)[0].endswith(stats.name)]
        assert len(ours) == 2 and sum(ours) == stats.points, (stats.name, ours)
