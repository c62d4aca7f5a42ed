"""What a test knows is there (a log's header and footer, the tile of a claim, a platform's text)
taken out of an Optional for the type checker: where it is missing after all, the test fails
with a sentence naming what was missing, not an AttributeError or TypeError on None."""

from __future__ import annotations

import re

from protocols import events as ev
from replay.log import Footer, GameLog, Header


def header_of(log: GameLog) -> Header:
    assert log.header is not None, f"{log.path}: no header read ({log.truncated})"
    return log.header


def footer_of(log: GameLog) -> Footer:
    assert log.footer is not None, f"{log.path}: no footer read ({log.truncated})"
    return log.footer


def text_of(raw: str | bytes) -> str:
    """A frame's raw message from a text platform (Tenhou, mjai, Botzone): never bytes."""
    assert isinstance(raw, str), f"a text platform's frame holds bytes: {raw!r}"
    return raw


def tile_of(request: ev.DecisionRequest) -> int:
    """The tile a claim (or a robbed kan) offers: such a request always names one."""
    assert request.tile is not None, f"a {request.kind} request without a tile: {request}"
    return request.tile


def searched(pattern: str, text: str, flags: int = 0) -> re.Match[str]:
    """``re.search`` that fails the test, quoting the text, where the pattern is not found."""
    found = re.search(pattern, text, flags)
    assert found is not None, f"no /{pattern}/ in {text[:2000]!r}"
    return found
