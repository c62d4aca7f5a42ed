"""Dataset truth at Taiwan's last draw: the draw that leaves the 16-tile reserve ends the hand
after the drawer's Win or Pass (``Variant.last_draw_ends``, the referee's ``_last_draw``), so
no seat can win on a discard there; the truth rows of the other seats said they could."""

from __future__ import annotations

import numpy as np

from adapter.commands import four_policies
from adapter.local.arena import ArenaConfig
from adapter.local.selfplay import SelfPlayConfig, play_selfplay_unit
from replay.dataset import schema as S
from replay.dataset.truth import NO_WIN

DISCARD = S.ACTION_CODES.index("discard")
TURN = S.REQUEST_KINDS.index("turn")
# A recorded self-play unit one of whose hands reaches its last draw with a winning tile for
# the drawer (the referee asks it Win or Pass) while another seat is ready: found by search.
UNIT = 12


def test_no_seat_is_priced_a_win_on_a_discard_after_the_last_draw() -> None:
    arena = ArenaConfig("taiwan16", four_policies("rulebased,greedy,rulebased,greedy"), 400,
                        0, 1, None, "east")
    data = play_selfplay_unit(SelfPlayConfig(arena, "-"), UNIT)
    assert not data.errors
    last_draws = priced_before = 0
    for block in data.games:
        a = block.arrays
        for i in range(len(a["seat"])):
            codes = a["legal"][i, :a["legal_count"][i], 0]
            decider = a["seat"][i]
            ready = [s for s in range(4) if s != decider and a["t_tenpai"][i, s]]
            if a["request"][i] != TURN or not ready:
                continue
            waits = a["t_waits"][i] > 0
            if DISCARD in codes:  # a discard follows: a win on it is priced as before
                priced_before += any((a["t_value"][i, s][waits[s]] >= 0).any() for s in ready)
                continue
            # the last draw: the referee asks Win or Pass only, and the hand ends after it
            assert sorted(S.ACTION_CODES[c] for c in codes) == ["pass", "win"]
            last_draws += 1
            for s in ready:
                assert waits[s].any()  # the waits are still the truth of the hand
                assert (a["t_value"][i, s][waits[s]] == NO_WIN).all(), (i, s)
                assert (a["t_points"][i, s][waits[s]] == 0).all(), (i, s)
            # the drawer's own row: its 17 tiles wait on nothing; its win is its draw's
            assert not a["t_tenpai"][i, decider]
            assert np.all(a["t_value"][i, decider] == 0)
    assert last_draws >= 1 and priced_before > 0
