"""Clients and checks for the fake NTPU server's tests.

:class:`BotClient` is our own client (``adapter.platforms.ntpu.NtpuBot``) on a real loopback socket,
in a thread; subclasses override :meth:`BotClient.answer` to hold back, repeat or replace its
answers the way slow or sloppy programs do. :func:`serve` plays a match against four of them;
:func:`claim_order_errors` reads a match log for asks out of the lab referee's order.
"""

from __future__ import annotations

import socket
import threading
from collections.abc import Sequence
from pathlib import Path

from adapter.fakes.ntpu_server import MatchResult, run_match
from adapter.platforms.ntpu import NtpuBot, NtpuSettings
from protocols.ntpu import LineBuffer
from replay.log import RxFrame, TxFrame, read_log


class BotClient(threading.Thread):
    """Plays one seat with our bot; ``seen`` and ``sent`` record the lines both ways."""

    def __init__(self, policy: str = "greedy") -> None:
        super().__init__(daemon=True)
        self.bot = NtpuBot(NtpuSettings(policy=policy, budget=0.5, write_log=False))
        self.seen: list[str] = []
        self.sent: list[str] = []
        self.connected = threading.Event()
        self.port = 0
        self._sock: socket.socket | None = None

    def answer(self, line: str, reply: str | None) -> list[str]:
        """The lines to send now for ``line``, to which the bot would reply ``reply``."""
        return [reply] if reply is not None else []

    def run(self) -> None:
        sock = socket.create_connection(("127.0.0.1", self.port))
        self._sock = sock
        self.connected.set()
        lines = LineBuffer()
        try:
            while True:
                data = sock.recv(65536)
                if not data:
                    break
                for line in lines.feed(data):
                    self.seen.append(line)
                    out = self.answer(line, self.bot.handle(line))
                    if out:
                        self.sent.extend(out)
                        sock.sendall("".join(f"{o}\n" for o in out).encode())
        except OSError:
            pass
        finally:
            sock.close()
            self.bot.close()

    def asks(self) -> int:
        return sum(line.startswith("/ask") for line in self.seen)


def serve(clients: Sequence[BotClient], hands: int, log_dir: Path, time_limit: float = 1.0,
          walls: list[tuple[int, ...]] | None = None, seed: int = 7,
          wording: str = "spec") -> MatchResult:
    """A match of ``hands`` hands against the four clients (client i connects i-th), in the
    published protocol's wording or the lab referee's."""

    def listening(port: int) -> None:
        for client in clients:
            client.port = port
            client.start()
            assert client.connected.wait(10)  # connected before the next one starts

    result = run_match(hands, [], seed=seed, transport="external", time_limit=time_limit,
                       log_dir=str(log_dir), on_listening=listening, walls=walls or (),
                       wording=wording)
    for client in clients:
        client.join(30)
    return result


_PHASE = {"hu": 0, "gong": 1, "pong": 1, "eat": 2}


def claim_order_errors(log_path: str) -> list[str]:
    """Every discard's claim asks against the lab referee's order: all ``/ask hu`` first, in
    turn order from the discarder; then gong/pong in turn order (no gong to the next seat);
    then eat to the next seat only; nothing asked after a claim was accepted."""
    seat_of: dict[int, int] = {}
    errors: list[str] = []
    window: tuple[int, list[tuple[int, str]]] | None = None  # (discarder, asks so far)
    accepted = False
    for frame in read_log(log_path).frames:
        if isinstance(frame, RxFrame):
            client_text, _, reply = str(frame.raw).partition("< ")
            if window is not None and window[1] and reply.split()[:1] != ["/pass"] and \
                    seat_of[int(client_text) - 1] == window[1][-1][0]:
                accepted = True
            continue
        if not isinstance(frame, TxFrame):
            continue
        client_text, _, line = str(frame.raw).partition("> ")
        client, parts = int(client_text) - 1, line.split()
        if parts[0] == "/start":
            seat_of[client] = int(parts[2]) - 1
        if parts[0] == "/throw":
            window, accepted = (int(parts[1]) - 1, []), False
            continue
        if window is None:
            continue
        if parts[0] != "/ask":
            window = None
            continue
        discarder, asks = window
        seat, word = seat_of[client], parts[1]
        if word not in _PHASE:
            errors.append(f"/ask {word} to seat {seat} on a discard by seat {discarder}")
            continue
        if accepted:
            errors.append(f"/ask {word} to seat {seat} after a claim was accepted")
        if asks:
            last_seat, last_word = asks[-1]
            turn = (seat - discarder) % 4
            last_turn = (last_seat - discarder) % 4
            if (_PHASE[word], turn) < (_PHASE[last_word], last_turn) or \
                    (_PHASE[word] == _PHASE[last_word] and turn == last_turn and
                     (last_word, word) != ("gong", "pong")):
                errors.append(f"/ask {word} to seat {seat} after /ask {last_word} to seat "
                              f"{last_seat} (discard by seat {discarder})")
        if word == "eat" and seat != (discarder + 1) % 4:
            errors.append(f"/ask eat to seat {seat}, not next after seat {discarder}")
        if word == "gong" and seat == (discarder + 1) % 4:
            errors.append(f"/ask gong to seat {seat}, next after seat {discarder}")
        asks.append((seat, word))
    return errors

