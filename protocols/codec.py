"""The one contract every platform codec keeps, and the one error family they raise.

A codec is sans-IO: the transport frames the wire into messages (Tenhou's NUL-framed tags, NTPU
and Botzone lines, mjai JSON lines) and hands each one to :meth:`Codec.feed`, which returns the
internal events and, last where one is owed, the :class:`~protocols.events.DecisionRequest`
(or a platform's own session item: a login step, a keep-alive). :meth:`Codec.encode` writes the
answer to a request as the wire text the platform reads (without the framing: no newline, no
NUL). That is all the session loop in adapter/session.py needs of a codec
(``read -> feed -> brain -> encode -> write``); a platform's own session may ask its codec
more (NTPU's and Tenhou's safe replies from the ids they hold, mjai's seat).

Whatever a codec cannot read raises a :class:`ProtocolError` carrying the offending input
(``raw``), never a bare ``KeyError`` or ``IndexError``: the session logs it and answers a safe
default. The subclasses say what went wrong where a caller (or a log reader) tells them apart,
in the manner of h11's ``RemoteProtocolError`` / ``LocalProtocolError``.
"""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from typing import Any, ClassVar

from protocols import events as ev

RAW_SHOWN = 200  # characters of the offending input shown in the message


def raw_text(raw: Any) -> str:
    """The offending input as text: strings as they are, parsed JSON as JSON, anything else
    as its repr (bytes decoded where they are text)."""
    if isinstance(raw, str):
        return raw
    if isinstance(raw, bytes):
        return raw.decode("utf-8", errors="replace")
    try:
        return json.dumps(raw, ensure_ascii=False)
    except (TypeError, ValueError):
        return repr(raw)


def load_json(text: str | bytes) -> Any:
    """``json.loads`` for input from outside: JSON nested too deeply for the parser (it raises
    RecursionError, not a decode error), or holding an integer too long for Python to convert
    (a plain ValueError), is a :class:`json.JSONDecodeError` like any other."""
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        raise
    except (RecursionError, ValueError) as exc:
        # ValueError: an integer of more digits than Python converts (4300 by default,
        # sys.get_int_max_str_digits), which every caller's ``except JSONDecodeError`` missed:
        # the mjai bot ended with a traceback on one such number from its server
        why = "nested too deeply" if isinstance(exc, RecursionError) else \
            "a number with too many digits"
        doc = text if isinstance(text, str) else text.decode("utf-8", errors="replace")
        raise json.JSONDecodeError(why, doc[:RAW_SHOWN], 0) from None


class ProtocolError(ValueError):
    """Input that does not follow a platform's protocol. ``raw`` is the offending input (the
    whole of it, as text); the message shows its start, so that a log line stays one line.
    A ValueError, so that callers that guard a parse with ``except ValueError`` still hold."""

    def __init__(self, message: str, raw: Any) -> None:
        self.message = message
        self.raw = raw_text(raw)
        super().__init__(f"{message}: {self.raw[:RAW_SHOWN]!r}")

    def __reduce__(self) -> tuple[Any, ...]:  # pickle would call __init__(shown text) alone
        return type(self), (self.message, self.raw), self.__dict__


class MalformedMessage(ProtocolError):
    """The message cannot be read: bad syntax, a missing or bad field, a bad tile."""


class UnsupportedMessage(ProtocolError):
    """A well-formed message of a kind the codec does not know (an unknown command, tag or
    type): a newer server, or a message meant for another client."""


class UnexpectedMessage(ProtocolError):
    """A readable message that contradicts what came before (a game message before the game
    started, a call with no discard to call, a tile we do not hold)."""


class EncodeError(ProtocolError):
    """Our own answer cannot be written (the platform has no such reply, or we hold no tile
    for it); ``raw`` names the action. The session answers its safe default instead."""


class Codec(ABC):
    """One connection's protocol state, from our seat's side.

    ``wire`` is the type of what :meth:`feed` takes and :meth:`encode` returns (all four
    platforms speak text, so ``str``; a binary protocol would declare ``bytes``)."""

    platform: ClassVar[str]
    variant: ClassVar[str]
    wire: ClassVar[type] = str

    @abstractmethod
    def feed(self, data: Any) -> list[object]:
        """One framed message in; its events, then what it asks of us, out. Raises
        :class:`ProtocolError` (with the message as ``raw``) on anything it cannot read."""

    @abstractmethod
    def encode(self, action: object, request: ev.DecisionRequest | None = None) -> Any:
        """The wire text answering ``request`` with ``action``; :class:`EncodeError` where
        the platform has no such answer or the codec holds no tile for it."""

    def greeting(self) -> list[Any]:
        """What the client says before the server speaks (none, for the platforms where the
        server speaks first)."""
        return []
