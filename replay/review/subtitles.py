"""The commentary placed on the viewer's steps: each sentence shown on the step that draws
the move it explains (seed 004's web replay had the same subtitles)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from replay.replayer import Replay
from replay.review.commentary import commentary_rows
from replay.review.evaluators import Evaluator


def subtitle_parts(replays: list[Replay], event_steps: list[tuple[int, int] | None],
                   ranker: Evaluator, k: int = 3,
                   progress: Callable[[int, int], None] | None = None,
                   damaged: Callable[[int | None, str], object] | None = None
                   ) -> Iterator[list[dict[str, Any]]]:
    """Per decision of every replay (one per seat shown): its hand and step in the viewer's
    timeline, the sentence, the prediction and whether the move was in it; a hand of one
    seat at a time (in the replays' order, not yet :func:`ordered`), each worked out as it
    is asked for: the viewer runs each part as a build of its own, so that a long game's
    commentary (1,600 hands: some 5 CPU s) gives its build slot up between hands rather than
    holding it from other viewers throughout. ``progress``: called after each decision (as
    :func:`commentary_rows`'); what it raises ends the build. ``damaged``: where given, a
    hand the table cannot follow (a damaged log's event or move) is skipped
    (:func:`commentary_rows`) and ``damaged`` called with its number in the timeline (None:
    before the first hand) and why; the rows it gave before failing are still yielded, for
    the caller to leave out."""
    def failed(index: int, reason: str) -> None:
        if damaged is not None:
            place = event_steps[index] if index < len(event_steps) else None
            damaged(None if place is None else place[0], reason)

    for rep in replays:
        part: list[dict[str, Any]] = []
        for row in commentary_rows(rep, ranker, k, progress,
                                   None if damaged is None else failed):
            index = row["event_index"]
            place = event_steps[index] if index < len(event_steps) else None
            if place is None:
                continue
            if part and part[-1]["hand"] != place[0]:
                yield part
                part = []
            part.append({"hand": place[0], "step": place[1], "seat": row["seat"],
                         "sentence": row["sentence"], "played": row["played"],
                         "predicted": row["predicted"], "hit": row["hit"],
                         "factor": row["factor"],
                         **({"no_prediction": row["no_prediction"]}
                            if "no_prediction" in row else {})})
        if part:
            yield part


def ordered(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The rows by hand, step and seat, as the page places them."""
    return sorted(rows, key=lambda r: (r["hand"], r["step"], r["seat"]))
