"""One canonical order of actions, for every tie a policy or the legal set must break.

A choice among equally scored actions must not follow the order in which the hand's tiles or
the legal actions happened to arrive: a resumed game receives the same hand in another order
than the uninterrupted one, and must still play the same moves. So every tie is broken by
:func:`action_key`, which looks only at what an action is: its type, its kong kind, the riichi
flag, and its tiles by kind (a red five just before the plain fives).
"""

from __future__ import annotations

from collections.abc import Iterable
from itertools import repeat
from operator import is_
from typing import Any

from protocols import events as ev
from protocols import tiles as T

_TYPE_RANK = {t: i for i, t in enumerate(ev.ACTION_TYPES)}


def action_tiles(action: Any) -> tuple[int, ...]:
    """The tiles an action names, in canonical order (a discard: its one tile)."""
    if isinstance(action, ev.Discard):
        return (action.tile,)
    return tuple(sorted(getattr(action, "tiles", ()), key=T.sort_key))


# action -> its key. Actions are frozen value objects (equal actions have equal fields, hence
# equal keys) and there are only a few hundred distinct ones, so the cache stays small; every
# legal set is sorted by these keys, and policies break their ties with them.
_KEYS: dict[Any, tuple[Any, ...]] = {}
_KEYS_MAX = 20_000


def action_key(action: Any) -> tuple[Any, ...]:
    """A total order on actions that depends on nothing but the action itself: lower tile
    kinds first, then the type, the kong kind and the riichi flag."""
    if type(action) is ev.Discard:  # most of every legal set: by table, without hashing
        tile = action.tile
        if type(tile) is int and 0 <= tile <= T.FLOWER_LAST:
            return (_RIICHI_KEYS if action.riichi else _DISCARD_KEYS)[tile]
    try:
        return _KEYS[action]
    except KeyError:
        pass
    except TypeError:  # an unhashable stand-in (e.g. tiles in a list): compute every time
        return _action_key(action)
    key = _KEYS[action] = _action_key(action)
    if len(_KEYS) > _KEYS_MAX:
        _KEYS.clear()
    return key


def _action_key(action: Any) -> tuple[Any, ...]:
    tiles = tuple(T.sort_key(t) for t in action_tiles(action))
    return (tiles, _TYPE_RANK.get(type(action), len(_TYPE_RANK)), getattr(action, "kind", ""),
            bool(getattr(action, "riichi", False)))


_DISCARD_KEYS = [_action_key(ev.Discard(t)) for t in range(T.FLOWER_LAST + 1)]
_RIICHI_KEYS = [_action_key(ev.Discard(t, riichi=True)) for t in range(T.FLOWER_LAST + 1)]


def canonical(actions: Iterable[Any]) -> list[Any]:
    """``actions`` sorted by :func:`action_key`."""
    return sorted(actions, key=action_key)


def is_listed(action: Any, actions: list[Any] | tuple[Any, ...]) -> bool:
    """``action in actions``, looking for the very object first: a policy answers with one of
    the legal set's own actions, and comparing dataclasses field by field on the way to it
    costs more than the rest of a cheap decision."""
    return any(map(is_, actions, repeat(action))) or action in actions
