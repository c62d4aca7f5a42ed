"""Physical tile ids at the fake platform servers (NTPU's 3-digit ids, Tenhou's 0..135)."""

from __future__ import annotations

from collections.abc import Callable

from protocols import tiles as T


def take_ids(held: list[int], named: list[int], tiles: list[int],
             tile_of: Callable[[int], int]) -> list[int]:
    """Remove one id per tile of ``tiles`` from ``held`` and return them: the ids the seat's
    reply ``named`` where they fit (so the server moves the very copies the client chose),
    else any it holds. ``tile_of`` maps an id to the tile ``tiles`` are written in."""
    taken = T.choose_ids(held, tiles, tile_of, named)
    for tile_id in taken:
        held.remove(tile_id)
    return taken
