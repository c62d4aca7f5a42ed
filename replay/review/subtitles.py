"""The commentary placed on the viewer's steps: each sentence shown on the step that draws
the move it explains (seed 004's web replay had the same subtitles)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from replay.replayer import Replay
from replay.review.commentary import commentary
from replay.review.evaluators import Evaluator


def subtitles(replays: list[Replay], event_steps: list[tuple[int, int] | None],
              ranker: Evaluator, k: int = 3,
              progress: Callable[[int, int], None] | None = None) -> list[dict[str, Any]]:
    """Per decision of every replay (one per seat shown): its hand and step in the viewer's
    timeline, the sentence, the prediction and whether the move was in it. ``progress``:
    called after each decision (as :func:`commentary`'s); what it raises ends the build."""
    out: list[dict[str, Any]] = []
    for rep in replays:
        for row in commentary(rep, ranker, k, progress):
            index = row["event_index"]
            place = event_steps[index] if index < len(event_steps) else None
            if place is None:
                continue
            out.append({"hand": place[0], "step": place[1], "seat": row["seat"],
                        "sentence": row["sentence"], "played": row["played"],
                        "predicted": row["predicted"], "hit": row["hit"],
                        "factor": row["factor"]})
    out.sort(key=lambda r: (r["hand"], r["step"], r["seat"]))
    return out
