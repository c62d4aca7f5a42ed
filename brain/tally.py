"""How often the brain had to answer for a policy: what makes a measurement honest.

A policy that raises on every decision still "plays" (the brain falls back to rulebased, then
the safest action), so a match's figures alone cannot tell a policy from its fallback. Every
:class:`~brain.brain.Brain` keeps one tally; the arena, self-play and the benches add them up
per policy and refuse a run where a policy's share of fallbacks is above a threshold.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import Any

MAX_ERROR_CHARS = 300  # the first error is shown in one line: long messages are cut


class FallbackKind(Enum):
    """Why the policy's own answer was not played, for what counts answers (a session's
    summary, the log stream, ``mjbot bench think``): the answer's ``fallback`` text says the
    same for people, and is not to be parsed."""

    NONE = ""  # the policy's own answer, or an only legal action it was not asked for
    NOT_READY = "not-ready"  # its worker process was not started, or not ready, in time
    LATE = "late"  # it ran past its budget (its best so far is played where that is legal)
    FAILED = "failed"  # it raised; its worker died or could not start; its answer was unreadable
    ILLEGAL = "illegal"  # its answer, or its best so far when it ran late, cannot be played
    TABLE = "table"  # the rules cannot read our table: the policy was not asked

    @property
    def of_the_clock(self) -> bool:
        """The clock's alone (not ready, late), not the policy's failing."""
        return self in (FallbackKind.NOT_READY, FallbackKind.LATE)


@dataclass
class FallbackTally:
    """``decisions``: answers the policy was asked for (a forced single legal action is not
    one); ``fallbacks``: those where its own answer was not played (it raised, was late or
    illegal); ``first``: why, for the first of them ("" when none)."""

    decisions: int = 0
    fallbacks: int = 0
    first: str = ""

    def record(self, fallback: str) -> None:
        """One decision; ``fallback`` is the answer's reason ("" when the policy's own)."""
        self.decisions += 1
        if fallback:
            self.fallbacks += 1
            if not self.first:
                self.first = one_line(fallback)

    def add(self, other: FallbackTally) -> None:
        """Pool ``other`` into this tally (its first error counts only if this has none)."""
        self.decisions += other.decisions
        self.fallbacks += other.fallbacks
        self.first = self.first or other.first

    @property
    def share(self) -> float:
        return self.fallbacks / self.decisions if self.decisions else 0.0

    def as_dict(self) -> dict[str, Any]:
        return {"decisions": self.decisions, "fallbacks": self.fallbacks,
                "fallback_share": self.share, "first_fallback": self.first or None}


def one_line(text: str) -> str:
    """``text`` on one line, cut to :data:`MAX_ERROR_CHARS`."""
    flat = " ".join(text.split())
    return flat if len(flat) <= MAX_ERROR_CHARS else flat[:MAX_ERROR_CHARS - 3] + "..."


def tallies_from(figures: dict[str, Any]) -> dict[str, FallbackTally]:
    """Per-name tallies back from figures: ``figures`` maps a name to a dict with
    :meth:`FallbackTally.as_dict`'s keys (as a run's ``--json`` output carries them)."""
    return {name: FallbackTally(f["decisions"], f["fallbacks"], f["first_fallback"] or "")
            for name, f in figures.items()}


def over_threshold(tallies: dict[str, FallbackTally], max_share: float) -> str:
    """The one-line verdict on the first policy (by name) whose fallback share is above
    ``max_share``, "" when none is."""
    for name in sorted(tallies):
        t = tallies[name]
        if t.decisions and t.share > max_share:
            return (f"policy {name} fell back in {t.fallbacks} of {t.decisions} decisions "
                    f"({_above(t.share, max_share)}% > {100 * max_share:g}%); first: {t.first}")
    return ""


def _above(share: float, limit: float) -> str:
    """``share`` in percent with one decimal, or the few more it takes to read as above
    ``limit``: 3 of 292 is "1.03", not "1.0" beside a limit of 1% it is refused for."""
    for digits in range(1, 7):
        text = f"{100 * share:.{digits}f}"
        if float(text) > 100 * limit:
            return text
    return f"{100 * share:g}"
