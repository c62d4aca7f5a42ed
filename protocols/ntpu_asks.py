"""Which request a client's line answers, on the server side of NTPU (sans-IO).

A server reads each client's lines on one connection. It sends ``/ask <word>`` (or
``/ready``) and waits a limited time; when the time runs out it plays the seat safely and that
ask has *expired*, but a slow client still answers it, late. Read naively, the late line is
taken for the answer to the next ask and every reply after it is one ask late.

:class:`AskTracker` keeps, per connection, the ask outstanding and those that expired unanswered,
and matches each line read to the request it answers. A client answers each ask once, in order,
so a line first pays what is owed to an expired ask, when its verb can answer that ask; a line
whose verb cannot is the client's answer to a later ask (the expired one is forgotten: the
client never answered it). Otherwise a line read while an ask is outstanding is its answer, and
a line with no ask waiting for it is stale: a duplicate, or a line out of turn. So the server
drains what is readable before it sends a new ask (see ``adapter.local.ntpu_server``): a line
already waiting is matched then, and answers nothing new.

What stays ambiguous, as on any line protocol without request numbers: a client that skips an
ask and answers the next with ``/pass`` where the skipped one took ``/pass`` too (its pass is
read as the skipped one's), and a duplicate that reaches the server only after the next ask
was sent (it is read as that ask's answer).
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass

# the reply verbs that can answer each request
ANSWERS: dict[str, frozenset[str]] = {
    "throw": frozenset({"/throw"}),
    "hu": frozenset({"/hu", "/pass"}),
    "gong": frozenset({"/gong", "/pass"}),
    "pong": frozenset({"/pong", "/pass"}),
    "eat": frozenset({"/eat", "/pass"}),
    "ready": frozenset({"/ready"}),
}


def can_answer(line: str, word: str) -> bool:
    """Whether ``line``'s verb is one of the replies to ``/ask word``."""
    parts = line.split()
    return bool(parts) and parts[0] in ANSWERS.get(word, frozenset())


@dataclass(frozen=True)
class Answer:
    """The line answers the outstanding request ``word``."""

    word: str


@dataclass(frozen=True)
class Late:
    """The line answers ``word``, a request that expired before it came: drop it."""

    word: str


@dataclass(frozen=True)
class Unasked:
    """No request was waiting for the line (a duplicate, or out of turn): drop it.
    ``after``: the last request answered, if any."""

    after: str | None


Match = Answer | Late | Unasked


class AskTracker:
    """One connection's requests: the one outstanding, and those expired and still owed."""

    def __init__(self) -> None:
        self.outstanding: str | None = None
        self.owed: deque[str] = deque()  # expired, unanswered, oldest first
        self.last_answered: str | None = None

    def asked(self, word: str) -> None:
        """The request ``word`` was just sent (``/ask word``, or ``/ready`` for "ready")."""
        if self.outstanding is not None:  # never left unresolved by the server; be safe
            self.expire()
        self.outstanding = word

    def expire(self) -> None:
        """The outstanding request timed out: a line that answers it later is late."""
        if self.outstanding is not None:
            self.owed.append(self.outstanding)
            self.outstanding = None

    def match(self, line: str) -> Match:
        """What the line just read answers."""
        while self.owed:
            word = self.owed.popleft()
            if can_answer(line, word):
                return Late(word)
        if self.outstanding is None:
            return Unasked(self.last_answered)
        word, self.outstanding, self.last_answered = self.outstanding, None, self.outstanding
        return Answer(word)
