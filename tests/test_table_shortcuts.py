"""Shortcuts the local table takes for speed give the answers of the plain forms they replace:
``seat_views`` is ``view_event`` for each seat, ``is_listed`` is ``in``."""

from __future__ import annotations

import pytest

from brain.actions import is_listed
from protocols import events as ev
from replay.record import seat_views, view_event

EVENTS = [
    ev.GameStarted("mcr", 0, ("a", "b", "c", "d"), {"min_fan": 8}),
    ev.RoundStarted(0, 0, hand=(1, 2, 3), hands=((1, 2, 3), (4, 5, 6), (7, 8, 9), (10, 11, 12))),
    ev.TileDrawn(2, 5, False),
    ev.TileDrawn(2, None, True),
    ev.TileDrawn(3, 30, True),
    ev.TileDiscarded(1, 7, True),
    ev.MeldCalled(3, "closed_kan", (9, 9, 9, 9)),
    ev.MeldCalled(3, "pon", (9, 9, 9), 9, 1),
    ev.RiichiDeclared(0),
    ev.RiichiAccepted(0, (24000, 25000, 25000, 25000)),
    ev.DoraRevealed(12),
    ev.FlowerReplaced(2, 40),
    ev.RoundWon(1, 2, (1, 2, 3), 3, 8, (0, 8, -8, 0)),
    ev.RoundDrawn("exhaustive", (0, 0, 0, 0), (1,)),
    ev.GameEnded((0, 0, 0, 0)),
    ev.PlatformNotice("hello"),
]


@pytest.mark.parametrize("variant", ["riichi", "mcr", "taiwan16", "mass"])
def test_seat_views_are_view_event_for_each_seat(variant):
    for e in EVENTS:
        assert seat_views(e, variant) == tuple(view_event(e, s, variant) for s in range(4))


def test_is_listed_is_membership():
    legal = [ev.Pass(), ev.Discard(3), ev.Discard(3, riichi=True), ev.Chi((1, 2))]
    for action in legal:
        assert is_listed(action, legal)
    assert is_listed(ev.Discard(3), legal)  # an equal action, not the same object
    assert not is_listed(ev.Discard(4), legal)
    assert not is_listed(ev.Pon((1, 1)), legal)
    assert not is_listed(ev.Win(), ())


def test_discard_keys_by_table_equal_the_computed_keys():
    from brain.actions import _action_key, action_key

    for tile in range(45):
        for riichi in (False, True):
            action = ev.Discard(tile, riichi=riichi)
            assert action_key(action) == _action_key(action)
    # an int flag, against Discard's type on purpose: the table path reads truthiness as
    # _action_key's bool() does (the one ignore in tests/ that is no third-party stub's fault)
    odd = ev.Discard(3, riichi=1)  # type: ignore[arg-type]
    assert action_key(odd) == _action_key(ev.Discard(3, riichi=True))


def test_best_discard_is_the_first_lowest_shanten_discard():
    from adapter.bench.shanten import random_hands
    from brain.policies.rulebased import _best_discard
    from brain.shanten import shanten

    def one_by_one(counts, banned=-1):
        best = (99, counts)
        for k in range(34):
            if counts[k] and k != banned:
                trial = list(counts)
                trial[k] -= 1
                value = shanten(trial)
                if value < best[0]:
                    best = (value, trial)
        return best

    for counts in random_hands(1500, (14, 11, 8, 17), seed=8):
        banned = next(k for k in range(34) if counts[k])
        assert _best_discard(counts) == one_by_one(counts)
        assert _best_discard(counts, banned) == one_by_one(counts, banned)
    only = [0] * 34
    only[5] = 2
    assert _best_discard(only, 5) == (99, only)
