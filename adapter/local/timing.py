"""How long our own seats took per decision: what a time budget actually bought.

A policy under ``--budget`` may stop early (mc's switch plays its fast move at once), search to
its share of the budget, or run late and be replaced by its fallback (the tally counts that).
The figures here say which: the decisions timed, their mean and 99th-percentile seconds and
decisions per second of thinking, pooled per policy over units like the fallback tally.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any


@dataclass
class DecisionTimes:
    """Seconds per decision the brain was asked for (a forced single legal action is not
    one, as in :class:`~brain.tally.FallbackTally`)."""

    seconds: list[float] = field(default_factory=list)

    def record(self, elapsed: float) -> None:
        self.seconds.append(max(0.0, elapsed))

    def add(self, other: DecisionTimes) -> None:
        self.seconds.extend(other.seconds)

    def as_dict(self) -> dict[str, Any]:
        """``timed_decisions``, ``mean_s``, ``p99_s``, ``max_s`` and ``decisions_per_s``
        (decisions over the seconds they took; None where nothing was timed)."""
        n = len(self.seconds)
        total = sum(self.seconds)
        return {"timed_decisions": n,
                "mean_s": total / n if n else None,
                "p99_s": percentile(self.seconds, 0.99) if n else None,
                "max_s": max(self.seconds) if n else None,
                "decisions_per_s": n / total if total > 0 else None}


def percentile(values: list[float], q: float) -> float:
    """The nearest-rank ``q`` quantile (a value that occurred: no interpolation)."""
    ordered = sorted(values)
    rank = max(1, math.ceil(q * len(ordered)))
    return ordered[rank - 1]
