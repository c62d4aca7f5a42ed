"""One progress bar for the long commands (arena, self-play, review): a line on stderr,
redrawn in place, shown only where stderr is a terminal unless asked for."""

from __future__ import annotations

import sys
import time


class ProgressBar:
    """``[####....] 12/80 <unit>, 3.1/s``; called with ``hands`` it shows those and their
    rate instead (an arena's wall sets differ in length, its hands do not)."""

    def __init__(self, enabled: bool | None = None, unit: str = "wall sets",
                 width: int = 30) -> None:
        self.enabled = sys.stderr.isatty() if enabled is None else enabled
        self.unit = unit
        self.width = width
        self.start = time.monotonic()
        self.open = False  # a bar drawn and not yet ended with a newline

    def __call__(self, done: int, total: int, hands: int | None = None) -> None:
        if not self.enabled:
            return
        filled = int(self.width * done / max(total, 1))
        elapsed = max(time.monotonic() - self.start, 1e-9)
        tail = (f"{done / elapsed:.1f}/s" if hands is None
                else f"{hands} hands, {hands / elapsed:.1f} hands/s")
        sys.stderr.write(f"\r[{'#' * filled}{'.' * (self.width - filled)}] {done}/{total} "
                         f"{self.unit}, {tail}")
        self.open = done != total
        if not self.open:
            sys.stderr.write("\n")
        sys.stderr.flush()

    def end(self) -> None:
        """Close the line of a run that stopped before its last unit, so that what is
        printed next starts on its own line."""
        if self.enabled and self.open:
            sys.stderr.write("\n")
            sys.stderr.flush()
            self.open = False
