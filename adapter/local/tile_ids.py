"""Physical tile ids at the fake platform servers (NTPU's 3-digit ids, Tenhou's 0..135)."""

from __future__ import annotations

from collections.abc import Callable


def take_ids(held: list[int], named: list[int], tiles: list[int],
             tile_of: Callable[[int], int]) -> list[int]:
    """Remove one id per tile of ``tiles`` from ``held`` and return them: the ids the seat's
    reply ``named`` where they fit (so the server moves the very copies the client chose),
    else any it holds. ``tile_of`` maps an id to the tile ``tiles`` are written in."""
    named = list(named)
    out = []
    for tile in tiles:
        pick = next((i for i in named if tile_of(i) == tile and i in held), None)
        if pick is None:
            pick = next(i for i in held if tile_of(i) == tile)
        held.remove(pick)
        if pick in named:
            named.remove(pick)
        out.append(pick)
    return out
