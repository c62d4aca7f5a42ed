"""The fake NTPU server matches each reply to the ask it answers (a late or repeated answer is
logged and dropped, never read as the next one) and asks for claims in the lab referee's
order (every win first, then kong/pong, then chow to the next seat only if nobody claimed).
Clients are our bot on real loopback sockets, some made slow or sloppy on purpose."""

from __future__ import annotations

import random
import select
import socket
import threading
import time
from pathlib import Path

import pytest

from adapter.fakes.ntpu_server import Channel, NtpuServer
from adapter.local.walls import tile_set
from protocols import events as ev
from protocols import tiles as T
from protocols.ntpu import LineBuffer
from protocols.ntpu_asks import Answer, AskTracker, Late, Unasked
from replay.log import EventFrame, TxFrame, read_log
from tests.ntpu_helpers import BotClient, claim_order_errors, serve

TIME_LIMIT = 1.0

# ---------------------------------------------------------------------- the tracker itself


def test_tracker_matches_a_late_reply_to_the_ask_it_answers() -> None:
    asks = AskTracker()
    asks.asked("pong")
    asks.expire()                                 # no reply in time
    asks.asked("hu")
    assert asks.match("/pass") == Late("pong")    # in order: the pong's reply comes first
    assert asks.match("/hu") == Answer("hu")
    assert asks.match("/hu") == Unasked("hu")     # a repeat answers nothing


def test_tracker_forgets_an_expired_ask_the_line_cannot_answer() -> None:
    asks = AskTracker()
    asks.asked("throw")
    asks.expire()                                 # never answered at all
    asks.asked("eat")
    assert asks.match("/pass") == Answer("eat")   # /pass is no /throw: the eat's answer
    asks.asked("throw")
    assert asks.match("/throw 111") == Answer("throw")
    assert asks.match("/dance") == Unasked("throw")


# ---------------------------------------------------------------------- late and repeated answers


def test_lines_already_waiting_are_dropped_before_the_next_ask() -> None:
    """One connection, driven step by step: a late answer, then a repeated one, are waiting
    in the server's socket when it sends its next ask; each is dropped, and each ask gets the
    client's own answer to it."""
    with socket.create_server(("127.0.0.1", 0)) as listener:
        client = socket.create_connection(listener.getsockname())
        conn, _ = listener.accept()
    # the asks answered get 5 s, which only a hang runs past; the one left unanswered
    # expires at its own 0.3 s (on a loaded machine the helper thread may take longer than
    # that to answer the others)
    server = NtpuServer([Channel.for_socket("c1", conn)], ["c1"], time_limit=5.0)
    answers = {"/ask hu": b"/hu\n", "/ask eat": b"/pass\n"}  # /ask pong: never answered

    def play_client() -> None:
        lines = LineBuffer()
        while answers:
            for line in lines.feed(client.recv(4096)):
                if line in answers:
                    client.sendall(answers.pop(line))

    def send_stale(data: bytes) -> None:
        client.sendall(data)
        assert select.select([conn], [], [], 5)[0]  # it is at the server before the ask

    helper = threading.Thread(target=play_client, daemon=True)
    with client, conn:
        helper.start()
        assert server.request(0, "pong", limit=0.3) is None  # no answer: the ask expired
        send_stale(b"/pass\n")                     # its answer, late
        assert server.request(0, "hu") == "/hu"
        send_stale(b"/hu\n")                       # the same answer again
        assert server.request(0, "eat") == "/pass"
        helper.join(5)
    stats = server.stats[0]
    assert (stats.timeouts, stats.late, stats.unasked, stats.illegal) == (1, 1, 1, 0)
    assert stats.problems[1:] == ["client 1: late reply to /ask pong, dropped: /pass",
                                  "client 1: line answering no ask, dropped: /hu"]


class LateBot(BotClient):
    """Answers two asks after the server's time limit: the ``sleepy``-th by thinking too long
    (the answer goes out after the limit, whatever the server does meanwhile), the
    ``held``-th by holding it back until the next ask has arrived, then sending both answers
    in one write (the late answer reaches the server after its next ask was sent)."""

    def __init__(self, sleepy: int, held: int) -> None:
        super().__init__()
        self.sleepy, self.held = sleepy, held
        self.late: list[str] = []
        self._holding: str | None = None

    def answer(self, line: str, reply: str | None) -> list[str]:
        out = [reply] if reply is not None else []
        if not line.startswith("/ask"):
            return out
        if self._holding is not None:
            out.insert(0, self._holding)
            self._holding = None
        n = self.asks()
        if n == self.sleepy and reply is not None:
            time.sleep(TIME_LIMIT + 0.3)
            self.late.append(reply)
        elif n == self.held and reply is not None:
            self._holding = reply
            self.late.append(reply)
            out.remove(reply)
        return out


class TwiceBot(BotClient):
    """Sends every answer twice in one write (as tenhou-python-bot does on some offers)."""

    def answer(self, line: str, reply: str | None) -> list[str]:
        if line.startswith("/ask") and reply is not None:
            return [reply, reply]
        return super().answer(line, reply)


def _notices(log_path: str, marker: str) -> list[str]:
    return [f.event.text for f in read_log(log_path).frames if isinstance(f, EventFrame)
            and isinstance(f.event, ev.PlatformNotice) and marker in f.event.text]


def test_a_late_answer_is_dropped_and_every_later_answer_read_for_its_own_ask(
        tmp_path: Path) -> None:
    slow = LateBot(sleepy=6, held=25)
    others = [BotClient() for _ in range(3)]
    result = serve([slow, *others], hands=4, log_dir=tmp_path, time_limit=TIME_LIMIT)
    late, *good = result.stats
    assert late.illegal == 0, late.problems         # nothing read one ask late
    assert (late.timeouts, late.late, late.unasked, late.dropped) == (2, 2, 0, False), \
        late.problems
    assert len(slow.late) == 2
    for stats in good:
        assert (stats.illegal, stats.timeouts, stats.late, stats.unasked) == (0, 0, 0, 0), \
            stats.problems
    assert all(s.hands == 4 for s in result.stats)
    assert result.as_json()["clients"][0]["late"] == 2
    header, *rows = result.table().splitlines()
    assert header.split()[-2:] == ["late", "unasked"]
    assert next(r for r in rows if r.startswith("client-1")).split()[-2:] == ["2", "0"]
    assert result.log_path is not None
    # exactly the two late answers are logged as late and dropped
    dropped = _notices(result.log_path, "late reply")
    assert [text.rsplit(": ", 1)[1] for text in dropped] == slow.late
    assert all(text.startswith("client 1:") for text in dropped)
    # and our bot, seeing only the server's lines, never lost track of the table
    assert slow.bot.summary.errors == []
    assert "/close" in slow.seen


def test_an_answer_sent_twice_is_dropped_once_and_never_carried(tmp_path: Path) -> None:
    twice = TwiceBot()
    result = serve([twice, *(BotClient() for _ in range(3))], hands=4, log_dir=tmp_path)
    stats = result.stats[0]
    assert (stats.illegal, stats.timeouts, stats.late) == (0, 0, 0), stats.problems
    assert stats.unasked == twice.asks()  # one repeat per ask, each dropped
    assert all((s.illegal, s.timeouts, s.unasked) == (0, 0, 0) for s in result.stats[1:])
    assert twice.bot.summary.errors == []


# ---------------------------------------------------------------------- the order of claims

# Hand 0 (dealer seat 0). Seat 0 throws 3m; seat 1 can win on it (1m2m edge wait) or chow it;
# seat 2 holds 3m3m3m (open kong or pong); seat 3 can win on it. Nobody else holds a 3m.
HANDS = ("3m 1p4p7p 1s4s7s9s 5m 1234567z",
         "12m 456789m 123456s 66z",
         "333m 9m 258p 6p 258s 12345z",
         "12m 123456789p 789s 77z")


def _wall() -> tuple[int, ...]:
    hands = [T.parse_mpsz(h.replace(" ", "")) for h in HANDS]
    assert [len(h) for h in hands] == [16] * 4
    rest = tile_set("taiwan16")
    for hand in hands:
        for tile in hand:
            rest.remove(tile)
    random.Random(14).shuffle(rest)
    return tuple(t for hand in hands for t in hand) + tuple(rest)


class ScriptedBot(BotClient):
    """Our bot, but on the dealer's first discard it answers the asks from ``script`` (ask
    word -> reply, "<kinds>" in a reply naming the ids of those tiles it holds); the dealer
    (``throws``) throws that tile first."""

    def __init__(self, script: dict[str, str], throws: str | None = None) -> None:
        super().__init__()
        self.script, self.throws = script, throws
        self.held: list[int] = []
        self.on_discard = self.discarded = False
        self.asked: list[str] = []  # the asks seen on that discard

    def _ids(self, mpsz: str) -> str:
        tiles = T.NtpuTiles()
        ids: list[int] = []
        for kind in T.parse_mpsz(mpsz):
            ids.append(next(i for i in self.held if tiles.to_tile(i) == kind and i not in ids))
        return " ".join(map(str, ids))

    def answer(self, line: str, reply: str | None) -> list[str]:
        parts = line.split()
        if parts[0] == "/initCard":
            self.held = [int(p) for p in parts[1:]]
        if parts[0] == "/ask" and parts[1] == "throw" and self.throws:
            reply, self.throws = f"/throw {self._ids(self.throws)}", None
        if parts[0] == "/throw" and parts[1] == "1" and not self.discarded:
            self.on_discard = self.discarded = True
            return []
        if self.on_discard and parts[0] == "/ask":
            self.asked.append(parts[1])
            scripted = self.script.get(parts[1], "/pass")
            if "<" in scripted:
                head, _, kinds = scripted.partition("<")
                scripted = head + self._ids(kinds.rstrip(">"))
            return [scripted]
        if self.on_discard:
            self.on_discard = False
        return super().answer(line, reply)


def _asks_after_first_discard(log_path: str) -> tuple[list[tuple[int, str]], str]:
    """The asks the server sent (seat, word) between the dealer's first discard and the next
    line, and that line."""
    sent = [str(f.raw) for f in read_log(log_path).frames if isinstance(f, TxFrame)]
    start = next(i for i, raw in enumerate(sent) if raw.split("> ")[1].startswith("/throw 1"))
    asks, following = [], ""
    for raw in sent[start + 4:]:  # the discard goes to all four clients
        client, line = raw.split("> ", 1)
        if not line.startswith("/ask"):
            following = line
            break
        asks.append((int(client) - 1, line.split()[1]))  # hand 0: client i sits at seat i
    return asks, following


@pytest.mark.parametrize("scripts, asks, following", [
    # everyone passes: wins in turn order, then kong and pong, then the chow last
    ([{}, {}, {}, {}], [(1, "hu"), (3, "hu"), (2, "gong"), (2, "pong"), (1, "eat")], "/mo"),
    # seat 2 pongs: seat 1, who would chow, is never asked (no tile lost to a later pong)
    ([{}, {"eat": "/eat <12m>"}, {"pong": "/pong <33m>"}, {}],
     [(1, "hu"), (3, "hu"), (2, "gong"), (2, "pong")], "/pong 3"),
    # seat 1 passes its win, seat 3 takes it: nobody is asked to kong, pong or chow
    ([{}, {"eat": "/eat <12m>"}, {"pong": "/pong <33m>"}, {"hu": "/hu"}],
     [(1, "hu"), (3, "hu")], "/hu 4"),
    # the first winner in turn order wins: seat 3 is not asked
    ([{}, {"hu": "/hu"}, {}, {"hu": "/hu"}], [(1, "hu")], "/hu 2"),
], ids=["all-pass", "pong-before-chow", "win-ends-claims", "first-winner"])
def test_claims_are_asked_in_the_lab_referees_order(
        tmp_path: Path, scripts: list[dict[str, str]], asks: list[tuple[int, str]],
        following: str) -> None:
    clients = [ScriptedBot(script, throws="3m" if seat == 0 else None)
               for seat, script in enumerate(scripts)]
    result = serve(clients, hands=1, log_dir=tmp_path, walls=[_wall()])
    assert result.log_path is not None
    sent, next_line = _asks_after_first_discard(result.log_path)
    assert sent == asks
    assert next_line.startswith(following)
    for stats in result.stats:
        assert (stats.illegal, stats.timeouts, stats.late, stats.unasked) == (0, 0, 0, 0), \
            stats.problems
    # a client that answered /eat got its chow
    for client in clients:
        if "/eat" in " ".join(client.sent):
            assert f"/eat {clients.index(client) + 1}" in next_line
        assert client.bot.summary.errors == []
    assert claim_order_errors(result.log_path) == []


class PausingBot(BotClient):
    """Thinks 0.3 s over its first discard, as a searching program does."""

    def __init__(self) -> None:
        super().__init__()
        self.paused = False

    def answer(self, line: str, reply: str | None) -> list[str]:
        if line == "/ask throw" and not self.paused:
            self.paused = True
            time.sleep(0.3)
        return super().answer(line, reply)


def test_the_match_log_times_each_clients_answers(tmp_path: Path) -> None:
    """The match log recorded every client's decision as taking no time, so `mjbot replay`
    of it said "time 17 decisions, median 0.0 ms, max 0.0 ms" however long the clients
    thought. Each decision now holds how long its client took to answer it, under the
    client's name."""
    slow = PausingBot()
    result = serve([slow, *(BotClient() for _ in range(3))], hands=1, log_dir=tmp_path,
                   time_limit=2.0)
    assert result.log_path is not None
    decisions = read_log(result.log_path).decisions()
    mine = [d for d in decisions if d.policy == "client-1"]
    assert mine and {d.policy for d in decisions} == {f"client-{n}" for n in range(1, 5)}
    assert 0.3 <= max(d.elapsed for d in mine) < 2.0
    assert all(0.0 < d.elapsed < 2.0 for d in decisions)
