"""The websockets library's own log with secrets taken out: at ``--log-level debug`` it
traces every frame, and a Tenhou HELO's frame carries the ID (ours in the client, every
client's in the fake server)."""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Callable
from typing import Any


class ScrubbedLog(logging.LoggerAdapter):  # type: ignore[type-arg]
    """``logger`` with each line cleaned by ``clean`` and each frame's payload by ``mask``
    before the library formats it: ``mask`` keeps the payload's length (the trace tells it
    beside it, "[57 bytes]"), and a long payload is masked before the library elides it in
    the middle, which could leave a part of a secret that no longer matches it."""

    def __init__(self, logger: logging.Logger, mask: Callable[[bytes], bytes],
                 clean: Callable[[str], str]) -> None:
        super().__init__(logger, {})
        self.mask, self.clean = mask, clean

    def log(self, level: int, msg: object, *args: object, **kwargs: Any) -> None:
        if not self.isEnabledFor(level):
            return
        from websockets.frames import Frame

        shown = tuple(dataclasses.replace(a, data=self.mask(bytes(a.data)))
                      if isinstance(a, Frame) else a for a in args)
        try:
            text = str(msg) % shown if shown else str(msg)
        except (TypeError, ValueError):  # not a format for these: shown as they are
            text = " ".join(map(str, (msg, *shown)))
        self.logger.log(level, self.clean(text), **kwargs)
