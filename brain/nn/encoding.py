"""One seat's view (a :class:`~brain.state.TableState` and the request it answers) as planes
over the 34 tile kinds: the network's input.

Seed 001's layout is the start (own hand as four binary planes, each seat's melds, discards in
order with hand/draw marks, all visible tiles, riichi flags, dora, scores, winds); the seats are
*relative* (0 = the decider, 1 = the next seat, 2 = across, 3 = the previous seat) so that one
network serves every seat. Scalars (scores, wall, flags) are planes holding one value over the
34 kinds. Added beyond the seed, because a small network cannot cheaply learn them: the
shanten number after each discard and the unseen count of its useful tiles (the greedy
player's whole knowledge), the offered tile of a claim, the variant and MCR/Taiwan's flowers and
private walls. One encoder serves every variant; planes a variant has no use for stay zero.

The encoding is a function of the state alone, so it is the same in play and in training: a
dataset row is turned back into its state with ``replay.dataset.snapshot.restore``.

:data:`ENCODING_VERSION` is stored with the weights; bump it whenever a plane changes meaning or
order (weights trained on another version are refused, never misread). Encoding
:data:`MCR_PLAN_ENCODING` (2) is version 1's planes followed by MCR's plan planes
(brain/nn/mcr_planes.py: 8-fan plan distances, wait fans, the plan each call serves); it is a
second encoding rather than a replacement so that weights trained on version 1 (riichi, Taiwan,
and MCR's generation 1) keep loading unchanged: a network is encoded with the version its
weights record (:func:`encode`'s ``version``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from brain.rules.variant import VARIANT_NAMES, variant_of
from brain.shanten import discard_table, shanten, useful_tiles
from brain.state import TableState
from protocols import tiles as T

ENCODING_VERSION = 1  # the base planes, every variant
MCR_PLAN_ENCODING = 2  # the base planes + MCR's plan planes (zero for other variants)
KINDS = 34
RECENT = 6  # most recent discards of each seat kept in order
VARIANTS: tuple[str, ...] = VARIANT_NAMES  # the order of the one-hot variant planes
REQUESTS: tuple[str, ...] = ("turn", "claim", "rob_kan")


def _plane_names() -> tuple[str, ...]:
    names = [f"hand_ge{n}" for n in range(1, 5)]
    names += ["hand_red", "last_draw", "discard_best", "discard_shanten", "discard_ukeire",
              "useful", "shanten"]
    for r in range(4):
        names += [f"meld{r}_ge{n}" for n in range(1, 5)]
        names += [f"river{r}_count"]
        names += [f"river{r}_recent{j}" for j in range(RECENT)]
        names += [f"river{r}_tedashi{j}" for j in range(RECENT)]
        names += [f"river{r}_riichi_tile", f"river{r}_safe"]
    names += [f"visible_ge{n}" for n in range(1, 5)]
    names += ["dora", "dora_indicator", "round_wind", "seat_wind", "request_tile"]
    names += [f"riichi{r}" for r in range(4)]
    names += [f"score{r}" for r in range(4)]
    names += [f"dealer{r}" for r in range(4)]
    names += [f"request_{k}" for k in REQUESTS]
    names += [f"request_from{r}" for r in range(4)]
    names += ["honba", "sticks", "wall", "turn", "concealed", "furiten"]
    names += [f"variant_{v}" for v in VARIANTS]
    names += [f"flowers{r}" for r in range(4)]
    names += [f"seat_wall{r}" for r in range(4)]
    return tuple(names)


PLANES: tuple[str, ...] = _plane_names()
PLANE: dict[str, int] = {name: i for i, name in enumerate(PLANES)}
NUM_PLANES = len(PLANES)  # of version 1


def planes_of(version: int) -> tuple[str, ...]:
    """The plane names of an encoding version; ValueError for one this code does not know."""
    if version == ENCODING_VERSION:
        return PLANES
    if version == MCR_PLAN_ENCODING:
        from brain.nn import mcr_planes

        return PLANES + mcr_planes.PLANES
    raise ValueError(f"nn: unknown encoding version {version!r} (this code encodes "
                     f"{ENCODING_VERSION} and {MCR_PLAN_ENCODING})")


def num_planes(version: int = ENCODING_VERSION) -> int:
    return len(planes_of(version))


def encoding_for(variant: str) -> int:
    """The encoding new weights of ``variant`` are trained on: a variant whose policies plan
    toward a fan floor (MCR) gets its planner's planes."""
    return MCR_PLAN_ENCODING if variant_of(variant).plan_planes else ENCODING_VERSION

_RED_KINDS = {T.RED_5M: 4, T.RED_5P: 13, T.RED_5S: 22}


def encode(state: TableState, request: Any, version: int = ENCODING_VERSION) -> np.ndarray:
    """``(num_planes(version), 34)`` float32 planes of what ``state``'s seat knows as it
    answers ``request`` (a :class:`~protocols.events.DecisionRequest`, or any object with
    ``kind``, ``tile`` and ``from_seat``)."""
    x = np.zeros((num_planes(version), KINDS), dtype=np.float32)
    P = PLANE
    me = state.seat
    counts = state.counts()
    for k, n in enumerate(counts):
        if n:
            x[P["hand_ge1"]:P["hand_ge1"] + min(n, 4), k] = 1.0
    for t in state.hand:
        if t in _RED_KINDS:
            x[P["hand_red"], _RED_KINDS[t]] = 1.0
    if state.last_draw is not None and T.kind(state.last_draw) < KINDS:
        x[P["last_draw"], T.kind(state.last_draw)] = 1.0
    table = _shanten_planes(x, counts, state.unseen_counts())

    for r in range(4):
        seat = state.seats[(me + r) % 4]
        meld_counts = [0] * KINDS
        for m in seat.melds:
            for t in m.tiles:
                k = T.kind(t)
                if k < KINDS:
                    meld_counts[k] += 1
        base = P[f"meld{r}_ge1"]
        for k, n in enumerate(meld_counts):
            if n:
                x[base:base + min(n, 4), k] = 1.0
        river = seat.river
        count_row = P[f"river{r}_count"]
        safe_row = P[f"river{r}_safe"]
        for tile in river:
            k = T.kind(tile.tile)
            if k < KINDS:
                x[count_row, k] += 0.25
                x[safe_row, k] = 1.0
                if tile.riichi:
                    x[P[f"river{r}_riichi_tile"], k] = 1.0
        for k in seat.passed_since_riichi:
            if k < KINDS:
                x[safe_row, k] = 1.0
        for j, tile in enumerate(reversed(river[-RECENT:])):
            k = T.kind(tile.tile)
            if k < KINDS:
                x[P[f"river{r}_recent{j}"], k] = 1.0
                if tile.tsumogiri is False:
                    x[P[f"river{r}_tedashi{j}"], k] = 1.0
        _fill(x, f"riichi{r}", 1.0 if seat.riichi or seat.riichi_pending else 0.0)
        score = state.scores[(me + r) % 4] if len(state.scores) == 4 else 0
        _fill(x, f"score{r}", (score - 25000) / 25000.0)
        _fill(x, f"dealer{r}", 1.0 if state.dealer == (me + r) % 4 else 0.0)
        _fill(x, f"flowers{r}", len(seat.flowers) / 8.0)
        if state.seat_walls is not None:
            _fill(x, f"seat_wall{r}", state.seat_walls[(me + r) % 4] / 21.0)

    for k, n in enumerate(state.visible):
        if n:
            x[P["visible_ge1"]:P["visible_ge1"] + min(n, 4), k] = 1.0
    if state.spec.has_dora:
        for ind in state.dora_indicators:
            if T.kind(ind) < KINDS:
                x[P["dora_indicator"], T.kind(ind)] = 1.0
                x[P["dora"], T.dora_from_indicator(ind)] += 0.25
    x[P["round_wind"], state.round_wind_kind] = 1.0
    x[P["seat_wind"], state.seat_wind()] = 1.0
    kind = getattr(request, "kind", "turn")
    if kind in REQUESTS:
        _fill(x, f"request_{kind}", 1.0)
    asked = getattr(request, "tile", None)
    if asked is not None and T.kind(asked) < KINDS:
        x[P["request_tile"], T.kind(asked)] = 1.0
    source = getattr(request, "from_seat", None)
    if source is not None:
        _fill(x, f"request_from{(source - me) % 4}", 1.0)
    _fill(x, "honba", min(state.honba, 10) / 10.0)
    _fill(x, "sticks", min(state.sticks, 8) / 4.0)
    _fill(x, "wall", state.wall_remaining / state.spec.live_wall)
    _fill(x, "turn", min(state.turn, 120) / 80.0)
    _fill(x, "concealed", 1.0 if state.is_concealed() else 0.0)
    _fill(x, "furiten", 1.0 if state.temporary_furiten or state.riichi_furiten else 0.0)
    if state.variant in VARIANTS:
        _fill(x, f"variant_{state.variant}", 1.0)
    if version == MCR_PLAN_ENCODING and variant_of(state.variant).plan_planes:
        from brain.nn import mcr_planes

        mcr_planes.fill(x, NUM_PLANES, state, request, table)
    return x


def _fill(x: np.ndarray, name: str, value: float) -> None:
    if value:
        x[PLANE[name]] = value


def _shanten_planes(x: np.ndarray, counts: list[int], unseen: list[int]
                    ) -> dict[int, tuple[int, frozenset[int] | None]] | None:
    """The greedy player's view: for a hand that must discard, each held kind's shanten after
    discarding it (as (s + 1) / 8), the best ones marked, with the unseen copies of their
    useful tiles; for a hand that waits for a tile, the kinds that lower its shanten. Returns
    the discard table of a hand that must discard (None otherwise): MCR's planes reuse it."""
    P = PLANE
    tiles = sum(counts)
    if tiles == 0:
        return None
    if tiles % 3 == 2:
        table = discard_table(counts, slack=0)
        best = min(v for v, _ in table.values())
        for k, (value, useful) in table.items():
            x[P["discard_shanten"], k] = (value + 1) / 8.0
            if value == best:
                x[P["discard_best"], k] = 1.0
                x[P["discard_ukeire"], k] = sum(unseen[u] for u in useful or ()) / 34.0
        _fill(x, "shanten", (best + 1) / 8.0)
        return table
    if tiles % 3 == 1:
        now = shanten(counts)
        for k in useful_tiles(counts, now):
            x[P["useful"], k] = 1.0
        _fill(x, "shanten", (now + 1) / 8.0)
    return None
