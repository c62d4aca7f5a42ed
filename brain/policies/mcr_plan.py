"""MCR: steer toward a hand worth 8 fan, and count only the waits that reach it.

A fast hand below 8 fan cannot be declared at all, so shape alone is the wrong target. Each plan
below is a family of hands that carries 8 fan by itself, or 6 fan that a common small fan tops
up; its *distance* is a lower bound on the exchanges still needed to reach that plan (the
regular shanten, the tiles the pattern still misses, the off-suit tiles to throw). Hands that
reach 8 fan another way (small fans together, or families not listed here such as 三暗刻 or
一色三步高) are not measured, so the nearest distance is no lower bound for them. The policy
discards to keep the nearest plan near, and at ready it counts only waits the fan calculator
scores at 8 or more.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from brain.rules.base import WinContext
from brain.rules.mcr import (
    HELD_BYTE,
    KNITTED_MASKS,
    KNITTED_PATTERNS,
    MIN_FAN,
    botzone_name,
    fan_items,
    held_mask,
    kind_mask,
)
from brain.shanten import (
    regular_and_seven_pairs_shanten,
    shanten_after_discards,
    shape_distance,
    waits,
)
from brain.state import Meld, TableState
from protocols import tiles as T

# Chow patterns (three chows by their lowest kinds): 清龙 16, 花龙 8, 三色三同顺 8, 三色三步高 6.
_PURE_STRAIGHTS = [(s * 9, s * 9 + 3, s * 9 + 6) for s in range(3)]
_SUIT_ORDERS = [(0, 1, 2), (0, 2, 1), (1, 0, 2), (1, 2, 0), (2, 0, 1), (2, 1, 0)]
_MIXED_STRAIGHTS = [(a * 9, b * 9 + 3, c * 9 + 6) for a, b, c in _SUIT_ORDERS]
_MIXED_TRIPLE = [(r, 9 + r, 18 + r) for r in range(7)]
_MIXED_SHIFTED = [(a * 9 + r, b * 9 + r + 1, c * 9 + r + 2)
                  for a, b, c in _SUIT_ORDERS for r in range(6)]
CHOW_PLANS: list[tuple[str, int, tuple[int, int, int]]] = (
    [("清龙", 16, p) for p in _PURE_STRAIGHTS] + [("花龙", 8, p) for p in _MIXED_STRAIGHTS]
    + [("三色三同顺", 8, p) for p in _MIXED_TRIPLE]
    + [("三色三步高", 6, p) for p in _MIXED_SHIFTED])

SHORT_OF_EIGHT = 1  # a 6-fan plan needs a small fan on top: count it as one step further


@dataclass(frozen=True, slots=True)
class Plan:
    name: str
    fan: int
    distance: int


def _meld_kinds(melds: list[Meld]) -> list[int]:
    return [T.kind(t) for m in melds for t in m.tiles]


# A plan while it is measured: (name, fan, distance); Plan objects only for callers of plans().
_Found = tuple[str, int, int]


def plans(counts: list[int], melds: list[Meld]) -> list[Plan]:
    """Every plan still open to this hand, with its distance (lower bound on exchanges)."""
    out = _table_plans(counts, melds)
    if not melds:
        out.extend(_knitted_plans(counts))
    return [Plan(*p) for p in out]


def _shape_plans_distance(counts: list[int], melds: list[Meld], meld_kinds: list[int], shape: int,
                          best: int) -> int:
    """``best`` lowered by the chow, flush and 五门齐/混一色 plans, each family measured only
    where it could still beat it (chow and flush plans are at least ``shape``, the others at
    least one more)."""
    chow = _chow_distance(counts, melds, shape)
    if chow is not None and chow < best:
        best = chow
    if best > shape:
        for plan in _flush_plans(counts, meld_kinds, shape):
            if plan[2] < best:
                best = plan[2]
    if best > shape + 1:
        best = min(best, max(shape, _missing_types(counts, meld_kinds)) + SHORT_OF_EIGHT)
    return best


def best_distance(counts: list[int], melds: list[Meld]) -> int:
    """The distance of the nearest plan: ``min`` over :func:`plans`, measuring a family of
    plans only where it could still beat the best so far (it is called for every discard of
    every MCR turn). Every chow and flush plan is at least the hand's shape (regular shanten),
    五门齐 and 混一色 at least one more, 门前清+ exactly two more; the knitted plans ask
    MahjongGB only where their table lower bound is below the best."""
    shape, seven_pairs = regular_and_seven_pairs_shanten(counts)
    best = shape + 2 if all(m.kind == "closed_kan" for m in melds) else 99  # 门前清+
    if not melds and seven_pairs < best:
        best = seven_pairs
    if all(m.kind != "chi" for m in melds):
        best = min(best, _all_pungs_distance(counts, len(melds)) + SHORT_OF_EIGHT)
    if best > shape:
        best = _shape_plans_distance(counts, melds, _meld_kinds(melds), shape, best)
    if not melds:
        for plan in _knitted_plans(counts, below=best):
            best = min(best, plan[2])
    return best


def best_distances_after_discards(counts: list[int], melds: list[Meld]) -> dict[int, int]:
    """Kind -> :func:`best_distance` of the hand less one tile of that kind, for every kind
    held (a hand that has just drawn): what every discard shares is counted once - the shapes
    by one table pass, the pairs and pungs - and each discard adjusts it by the one kind it
    takes out. The families are tried in the same order, with the same bounds, as there."""
    counts = list(counts)
    concealed = all(m.kind == "closed_kan" for m in melds)
    no_chi = all(m.kind != "chi" for m in melds)
    meld_kinds = _meld_kinds(melds)
    pairs = kinds = triples = doubles = 0
    for c in counts:
        if c:
            kinds += 1
            if c >= 2:
                pairs += 1
                if c >= 3:
                    triples += 1
                else:
                    doubles += 1
    # Taking a tile out never brings a knitted hand nearer: the whole hand's cheap knitted
    # bounds are a floor under every discard's, below which knitted plans cannot matter.
    knitted_floor = 99
    if not melds and sum(counts) == 14:
        present = held_mask(counts)
        most = max((present & mask).bit_count() for mask in KNITTED_MASKS)
        honours = (present >> (8 * 27)).bit_count()
        knitted_floor = min(13 - min(14, most + honours), 9 - most - 1)
    out: dict[int, int] = {}
    for k, shape in shanten_after_discards(counts, regular_only=True).items():
        held = counts[k]
        counts[k] -= 1
        best = shape + 2 if concealed else 99  # 门前清+
        if not melds:
            left_pairs = pairs - (held == 2)
            left_kinds = kinds - (held == 1)
            seven_pairs = 6 - left_pairs + (7 - left_kinds if left_kinds < 7 else 0)
            if seven_pairs < best:
                best = seven_pairs
        if no_chi:
            pungs = _pungs_distance(triples - (held == 3),
                                    doubles + (held == 3) - (held == 2), len(melds))
            best = min(best, pungs + SHORT_OF_EIGHT)
        if best > shape:
            best = _shape_plans_distance(counts, melds, meld_kinds, shape, best)
        if not melds and knitted_floor < best:
            for plan in _knitted_plans(counts, below=best):
                best = min(best, plan[2])
        counts[k] += 1
        out[k] = best
    return out


def _table_plans(counts: list[int], melds: list[Meld]) -> list[_Found]:
    """The plans measured with the shanten tables: all but the knitted ones."""
    shape, seven_pairs = regular_and_seven_pairs_shanten(counts)
    meld_kinds = _meld_kinds(melds)
    out = _flush_plans(counts, meld_kinds, shape)
    out.extend(_chow_plans(counts, melds, shape))
    if all(m.kind != "chi" for m in melds):
        out.append(("碰碰和", 6, _all_pungs_distance(counts, len(melds)) + SHORT_OF_EIGHT))
    if not melds:
        out.append(("七对", 24, seven_pairs))
    missing_types = _missing_types(counts, meld_kinds)
    out.append(("五门齐", 6, max(shape, missing_types) + SHORT_OF_EIGHT))
    if all(m.kind == "closed_kan" for m in melds):
        out.append(("门前清+", 2, shape + 2))  # concealed hands often reach 8 by small fans
    return out


def _flush_plans(counts: list[int], meld_kinds: list[int], shape: int) -> list[_Found]:
    suits = (sum(counts[0:9]), sum(counts[9:18]), sum(counts[18:27]))
    suited = suits[0] + suits[1] + suits[2]
    honours = sum(counts[27:])
    honour_melds = any(k >= 27 for k in meld_kinds)
    out: list[_Found] = []
    for s in range(3):
        lo, hi = 9 * s, 9 * s + 9
        if any(k < 27 and not lo <= k < hi for k in meld_kinds):
            continue
        off_suit = suited - suits[s]
        out.append(("混一色", 6, max(shape, off_suit) + SHORT_OF_EIGHT))
        if not honour_melds:
            out.append(("清一色", 24, max(shape, off_suit + honours)))
    return out


# Each chow plan as a mask of its nine kinds, its shortfall below 8 fan, and its lows.
_CHOW_MASKS = [kind_mask(low + i for low in lows for i in range(3)) for _, _, lows in CHOW_PLANS]
_CHOW_SHORT = [SHORT_OF_EIGHT if fan < MIN_FAN else 0 for _, fan, _ in CHOW_PLANS]
# (concealed kinds as a mask, shape, called chows, other melds) -> the nearest chow plan: pure,
# and the held kinds change slowly (many discards keep them), so it is worth remembering.
_NEAREST_CHOW: dict[tuple[int, int, tuple[int, ...], int], _Found | None] = {}
_NEAREST_CHOW_MAX = 200_000


def _chow_plans(counts: list[int], melds: list[Meld], shape: int) -> list[_Found]:
    chow_lows = tuple(min(T.kind(t) for t in m.tiles) for m in melds if m.kind == "chi")
    others = len(melds) - len(chow_lows)
    if others > 1:
        return []  # three chows cannot fit beside two pungs / kongs
    held = held_mask(counts)  # every kind: a plan's third chow may run past 9 (see CHOW_PLANS)
    key = (held, shape, chow_lows, others)
    try:
        plan = _NEAREST_CHOW[key]
    except KeyError:
        if len(_NEAREST_CHOW) >= _NEAREST_CHOW_MAX:
            _NEAREST_CHOW.clear()
        plan = _NEAREST_CHOW[key] = _nearest_chow_plan(held, shape, chow_lows, others)
    return [] if plan is None else [plan]


def _called_fit(plan_lows: tuple[int, int, int], chow_lows: tuple[int, ...],
                others: int) -> int | None:
    """The kinds the called chows supply to a chow plan (as a mask), or None where they do
    not fit it: a plan's three chows leave room for one more set, so at most one called set
    (a chow outside the plan, or a pung or kong) may sit beside them."""
    free = list(plan_lows)
    supplied = 0
    for low in chow_lows:
        if low in free:
            free.remove(low)
            supplied |= kind_mask((low, low + 1, low + 2))
        else:
            others += 1
    return supplied if others <= 1 else None


# (called chows, other melds) -> (plan index, the kinds those chows supply) for every chow
# plan they fit, in plan order
_FITTING: dict[tuple[tuple[int, ...], int], list[tuple[int, int]]] = {}


def _fitting_plans(chow_lows: tuple[int, ...], others: int) -> list[tuple[int, int]]:
    key = (chow_lows, others)
    fitting = _FITTING.get(key)
    if fitting is None:
        fitting = _FITTING[key] = [
            (i, supplied) for i, (_, _, lows) in enumerate(CHOW_PLANS)
            if (supplied := _called_fit(lows, chow_lows, others)) is not None]
    return fitting


def _nearest_chow_plan(held: int, shape: int, chow_lows: tuple[int, ...],
                       others: int) -> _Found | None:
    """The first chow plan at the least distance (the called chows fit it, see
    :func:`_called_fit`); None when none fits. Only the nearest matters to the policy."""
    best, best_distance_ = -1, 99
    for i, supplied in _fitting_plans(chow_lows, others):
        missing = 9 - (_CHOW_MASKS[i] & (held | supplied)).bit_count()
        distance = (shape if shape >= missing - 1 else missing - 1) + _CHOW_SHORT[i]
        if distance < best_distance_:
            best, best_distance_ = i, distance
    if best < 0:
        return None
    name, fan, _ = CHOW_PLANS[best]
    return (name, fan, best_distance_)


# The chows of the plans by lowest kind (三色三步高's r = 5 plans run a third "chow" from an
# 8 on into the next kind, an honour after the bamboos: counted as the plans always were),
# and each plan as three indices into them, split by whether it falls short of 8 fan.
_CHOW_LOWS = sorted({low for _, _, lows in CHOW_PLANS for low in lows})
_CHOW_KINDS = _CHOW_LOWS[-1] + 3  # the kinds any plan looks at: 0 .. 27
_PLAN_CHOWS = [tuple(_CHOW_LOWS.index(low) for low in lows) for _, _, lows in CHOW_PLANS]
_FULL_PLANS = [c for c, short in zip(_PLAN_CHOWS, _CHOW_SHORT, strict=True) if not short]
_SHORT_PLANS = [c for c, short in zip(_PLAN_CHOWS, _CHOW_SHORT, strict=True) if short]
assert all(short == SHORT_OF_EIGHT for short in _CHOW_SHORT if short)
# kinds held (bytes of 0/1) -> the most kinds any full / any short plan holds
_CHOW_REACH: dict[bytes, tuple[int, int]] = {}
_CHOW_REACH_MAX = 200_000


def _chow_distance(counts: list[int], melds: list[Meld], shape: int) -> int | None:
    """The distance of the nearest chow plan (None when none fits): the same number as
    :func:`_chow_plans` gives, without naming the plan. A plan's distance falls as it holds
    more of its kinds, so the nearest full (8-fan) plan and the nearest short one are those
    holding the most kinds."""
    if any(m.kind == "chi" for m in melds):
        found = _chow_plans(counts, melds, shape)  # called chows restrict the plans
        return found[0][2] if found else None
    if len(melds) > 1:
        return None  # three chows cannot fit beside two pungs / kongs
    held = bytes(counts[:_CHOW_KINDS]).translate(HELD_BYTE)
    reach = _CHOW_REACH.get(held)
    if reach is None:
        g = [held[low] + held[low + 1] + held[low + 2] for low in _CHOW_LOWS]
        reach = (max(g[a] + g[b] + g[c] for a, b, c in _FULL_PLANS),
                 max(g[a] + g[b] + g[c] for a, b, c in _SHORT_PLANS))
        if len(_CHOW_REACH) >= _CHOW_REACH_MAX:
            _CHOW_REACH.clear()
        _CHOW_REACH[held] = reach
    full, short = 8 - reach[0], 8 - reach[1]  # missing kinds less one
    return min(shape if shape >= full else full,
               (shape if shape >= short else short) + SHORT_OF_EIGHT)


def _all_pungs_distance(counts: list[int], melds: int) -> int:
    """Exchanges to be ready for an all-pungs hand (pairs upgrade to pungs with one tile)."""
    triples = doubles = 0
    for c in counts:
        if c >= 3:
            triples += 1
        elif c == 2:
            doubles += 1
    return _pungs_distance(triples, doubles, melds)


def _pungs_distance(triples: int, doubles: int, melds: int) -> int:
    """:func:`_all_pungs_distance` from the kinds held three or four times and twice."""
    needed = 4 - melds
    pungs = min(triples, needed)
    pairs = doubles + max(0, triples - needed)
    missing = needed - pungs
    upgraded = min(pairs, missing)
    singles_needed = missing - upgraded
    has_pair = pairs > upgraded
    tiles_needed = upgraded + 2 * singles_needed + (0 if has_pair else 1)
    return max(0, tiles_needed - 1)


# the five tile types of 五门齐: characters, dots, bamboo, winds, dragons
_TYPE_SPANS = ((0, 9), (9, 18), (18, 27), (27, 31), (31, 34))


def _missing_types(counts: list[int], meld_kinds: list[int]) -> int:
    present = {k // 9 if k < 27 else (3 if k < 31 else 4) for k in meld_kinds}
    present.update(t for t, (lo, hi) in enumerate(_TYPE_SPANS) if any(counts[lo:hi]))
    return 5 - len(present)


def _knitted_plans(counts: list[int], below: int | None = None) -> list[_Found]:
    """全不靠 and 组合龙 by MahjongGB's shanten helpers; with ``below``, only those whose
    lower bound (:func:`knitted_bounds`) is under it: the others cannot be the nearest plan."""
    tiles = sum(counts)
    if tiles not in (13, 14):
        return []
    if tiles == 14:
        # the shanten helpers take 13 tiles; one tile more changes little: drop the last
        counts = list(counts)
        counts[max(k for k in range(34) if counts[k])] -= 1
    bounds = knitted_bounds(counts, below) if below is not None else (-1, -1)
    import MahjongGB  # here, not at the top: the riichi bot (mjai.app) runs without it

    hand: tuple[str, ...] | None = None
    out: list[_Found] = []
    for (name, fan, fn), bound in zip((("全不靠", 12, MahjongGB.HonorsAndKnittedTilesShanten),
                                       ("组合龙", 12, MahjongGB.KnittedStraightShanten)),
                                      bounds, strict=True):
        if below is not None and bound >= below:
            continue
        if hand is None:
            hand = tuple(botzone_name(k) for k in range(34) for _ in range(counts[k]))
        try:
            value, _ = fn(hand)
        except TypeError:
            continue
        out.append((name, fan, int(value)))
    return out


def knitted_bounds(counts: list[int], below: int = 99) -> tuple[int, int]:
    """Lower bounds of the 全不靠 and 组合龙 shanten of a 13-tile hand, from the tables.

    全不靠 is 14 distinct kinds of one knitted pattern plus the honours: at least one tile to
    add per kind short of 14, less one (shanten counts to ready). 组合龙 is a knitted pattern's
    nine kinds plus a set and a pair from the rest: one tile per missing pattern kind, plus the
    tables' distance of what is left to a set and a pair, less one. Each is a count of tiles
    that any winning hand of the shape must add, so it never exceeds the real shanten
    (tests/test_mcr_plan_bounds.py compares them with MahjongGB). Patterns whose missing kinds
    alone reach ``below`` are not refined: a bound at or above ``below`` only says so much."""
    present = held_mask(counts)
    honours = (present >> (8 * 27)).bit_count()
    helds = [(present & mask).bit_count() for mask in KNITTED_MASKS]
    most = max(helds)
    scattered = 13 - min(14, most + honours)
    straight = 9 - most - 1  # every pattern's missing kinds, before the rest is counted
    if straight >= below:
        return scattered, straight
    # Refine the nearest patterns first; once a pattern's missing kinds alone reach the best
    # refined bound (or ``below``), so do every later one's, and its count bounds them all.
    refined = unrefined = 99
    for held, index in sorted(((h, i) for i, h in enumerate(helds)), reverse=True):
        if 9 - held - 1 >= min(below, refined):
            unrefined = 9 - held - 1
            break
        rest = list(counts)
        for k in KNITTED_PATTERNS[index]:
            if rest[k]:
                rest[k] -= 1
        refined = min(refined, 9 - held + shape_distance(rest, 1) - 1)
    return scattered, min(refined, unrefined)


def winning_waits(state: TableState, counts: list[int], waits: set[int],
                  melds: list[Meld] | None = None) -> list[int]:
    """The kinds among ``waits`` that a win on another seat's discard scores at >= 8 fan
    (self-draw adds fan, so a discard win is the bar), for the hand ``counts`` + ``melds``
    (default: own melds; a call weighs the melds it would make)."""
    return [w for w, fan in wait_fans(state, counts, waits, melds).items() if fan >= MIN_FAN]


# (seat context, 13 tiles, draws) -> the draws that reach an 8-fan ready hand, and (seat
# context, ready 13 tiles) -> whether a wait is worth 8: a 1-shanten hand recurs turn after
# turn, and a ready hand is met twice in one turn (throw j then k, or k then j).
_ONE_STEP: dict[tuple[object, ...], tuple[int, ...]] = {}
_WINNABLE: dict[tuple[object, ...], bool] = {}
_ONE_STEP_MAX = 50_000


def one_step_draws(state: TableState, counts: list[int], draws: Iterable[int],
                   melds: list[Meld] | None = None) -> tuple[int, ...]:
    """The kinds among ``draws`` after which some discard leaves ``counts`` (13 tiles less
    three per meld, beside ``melds``: default own melds; a call weighs the melds it would
    make) ready with a wait that :func:`winning_waits` counts: exactly the exchanges that make
    the hand one step from an 8-fan win, whatever fans make up the 8 (the plans above see only
    their own families). Empty: no single exchange reaches a winnable ready hand."""
    seat = (tuple(state.melds if melds is None else melds), state.seat, state.dealer,
            state.round_wind_kind, len(state.me.flowers))
    draws = tuple(sorted(draws))
    key = (seat, bytes(counts), draws)
    found = _ONE_STEP.get(key)
    if found is None:
        found = tuple(w for w in draws if _reaches_winnable_ready(state, seat, counts, w, melds))
        if len(_ONE_STEP) >= _ONE_STEP_MAX:
            _ONE_STEP.clear()
        _ONE_STEP[key] = found
    return found


def _reaches_winnable_ready(state: TableState, seat: tuple[object, ...], counts: list[int],
                            draw: int, melds: list[Meld] | None) -> bool:
    hand = list(counts)
    hand[draw] += 1
    for k, shape in shanten_after_discards(hand).items():
        if shape != 0 or k == draw:
            continue  # throwing the drawn kind back leaves the 1-shanten hand
        hand[k] -= 1
        key = (seat, bytes(hand))
        winnable = _WINNABLE.get(key)
        if winnable is None:
            winnable = any(fan >= MIN_FAN
                           for fan in _wait_fans(state, hand, sorted(waits(hand)), melds))
            if len(_WINNABLE) >= _ONE_STEP_MAX:
                _WINNABLE.clear()
            _WINNABLE[key] = winnable
        hand[k] += 1
        if winnable:
            return True
    return False


# ---------------------------------------------------------------------- per family (nn planes)

# The plan families, in the order of the network's MCR plan planes (brain/nn/mcr_planes.py).
FAMILIES: tuple[str, ...] = ("清龙", "花龙", "三色三同顺", "三色三步高", "碰碰和", "七对",
                             "五门齐", "混一色", "清一色", "门前清+", "全不靠", "组合龙")
_CHOW_FAMILY_PLANS = [[i for i, (name, _, _) in enumerate(CHOW_PLANS) if name == family]
                      for family in FAMILIES[:4]]
KNITTED_EXACT_BELOW = 4  # knitted families ask MahjongGB only when their bound is under this
FAR = 99  # a family the hand can no longer reach (its melds rule it out)


def family_distances(counts: list[int], melds: list[Meld]) -> list[int]:
    """The nearest distance of every plan family (:data:`FAMILIES` order; :data:`FAR` where the
    melds rule it out), measured as :func:`plans` measures them. :func:`plans` keeps only
    the nearest chow plan because the policy needs only the best; the network is shown every
    family, so it can learn which of two near plans the discards and calls should serve.
    Knitted families far away report their table lower bound (see :func:`knitted_bounds`)."""
    shape, seven_pairs = regular_and_seven_pairs_shanten(counts)
    meld_kinds = _meld_kinds(melds)
    out = [FAR] * len(FAMILIES)
    chow_lows = tuple(min(T.kind(t) for t in m.tiles) for m in melds if m.kind == "chi")
    others = len(melds) - len(chow_lows)
    if others <= 1:
        held = held_mask(counts)
        fitting = dict(_fitting_plans(chow_lows, others))
        for f, indices in enumerate(_CHOW_FAMILY_PLANS):
            for i in indices:
                if i not in fitting:
                    continue
                missing = 9 - (_CHOW_MASKS[i] & (held | fitting[i])).bit_count()
                d = max(shape, missing - 1) + _CHOW_SHORT[i]
                out[f] = min(out[f], d)
    if all(m.kind != "chi" for m in melds):
        out[4] = _all_pungs_distance(counts, len(melds)) + SHORT_OF_EIGHT
    if not melds:
        out[5] = seven_pairs
    out[6] = max(shape, _missing_types(counts, meld_kinds)) + SHORT_OF_EIGHT
    for name, _, d in _flush_plans(counts, meld_kinds, shape):
        f = FAMILIES.index(name)
        out[f] = min(out[f], d)
    if all(m.kind == "closed_kan" for m in melds):
        out[9] = shape + 2
    if not melds and sum(counts) in (13, 14):
        thirteen = list(counts)
        if sum(thirteen) == 14:  # as _knitted_plans: drop the last tile
            thirteen[max(k for k in range(34) if thirteen[k])] -= 1
        bounds = knitted_bounds(thirteen, KNITTED_EXACT_BELOW)
        exact = {name: d for name, _, d in _knitted_plans(counts, below=KNITTED_EXACT_BELOW)}
        out[10] = exact.get("全不靠", bounds[0])
        out[11] = exact.get("组合龙", bounds[1])
    return out


def wait_fans(state: TableState, counts: list[int], waits: Iterable[int],
              melds: list[Meld] | None = None) -> dict[int, int]:
    """Wait kind -> the fan a win on another seat's discard scores (flowers not counted: they
    do not count towards the 8), for the ready hand ``counts`` + ``melds`` (default own
    melds); kinds that make no winning hand are left out."""
    ordered = sorted(waits)
    return {w: fan for w, fan in zip(ordered, _wait_fans(state, counts, ordered, melds),
                                     strict=True) if fan >= 0}


def _wait_fans(state: TableState, counts: list[int], waits: list[int],
               melds: list[Meld] | None = None) -> Iterator[int]:
    """:func:`wait_fans`, lazily and in ``waits`` order; a wait that makes no winning hand
    stops nothing but gives no fan (-1), so a caller may stop at the first good one."""
    concealed = tuple(k for k in range(34) for _ in range(counts[k]))
    held = tuple(state.melds if melds is None else melds)
    seat, flowers = state.seat, len(state.me.flowers)
    for w in waits:
        items = fan_items(WinContext(
            concealed=(*concealed, w), melds=held, win_tile=w, seat=seat,
            from_seat=(seat + 1) % 4, dealer=state.dealer, round_wind=state.round_wind_kind,
            flowers=flowers))
        yield -1 if items is None else sum(v for _, v in items) - flowers


def plan_kinds(counts: list[int], melds: list[Meld]) -> tuple[frozenset[int], frozenset[int]]:
    """(kinds to keep, kinds to throw first) for the nearest plan of the table families (a
    chow plan keeps its nine kinds, a flush throws the other suits, all pungs keeps the pairs;
    the closed and five-types plans say nothing): what a one-player playout needs to steer by,
    where it cannot afford the planner at every draw. Ties go to the plan worth more fan."""
    _, keep, throw = nearest_plan(counts, melds)
    return keep, throw


def plan_calls(counts: list[int], melds: list[Meld]) -> tuple[frozenset[int], frozenset[int]]:
    """(kinds a pung may take, kinds a chow may take) that keep to the nearest plan: a flush
    calls in its suit and honours, a chow plan chows its own chows and pungs outside them,
    all pungs pungs anything; seven pairs and the closed plans call nothing (a call ends
    them)."""
    name, keep, throw = nearest_plan(counts, melds)
    every = frozenset(range(34))
    if name in ("混一色", "清一色"):
        return every - throw, every - throw
    if name in {plan for plan, _, _ in CHOW_PLANS}:
        return every - keep, keep
    if name == "碰碰和":
        return every, frozenset()
    return frozenset(), frozenset()


def nearest_plan(counts: list[int], melds: list[Meld]
                 ) -> tuple[str, frozenset[int], frozenset[int]]:
    """(name, kinds to keep, kinds to throw) of the nearest plan (:func:`plan_kinds`)."""
    found = _table_plans(counts, melds)
    if not found:
        return "", frozenset(), frozenset()
    name, _, _ = min(found, key=lambda p: (p[2], -p[1]))
    if name in ("混一色", "清一色"):
        suit = _flush_suit(counts, melds)
        off = {k for k in range(27) if k // 9 != suit}
        if name == "清一色":
            off |= set(range(27, 34))
        return name, frozenset(), frozenset(off)
    if name in {plan for plan, _, _ in CHOW_PLANS}:
        lows = _chow_plan_lows(counts, melds, name)
        keep = {low + i for low in lows for i in range(3)}
        return name, frozenset(keep), frozenset()
    if name in ("碰碰和", "七对"):
        return name, frozenset(k for k in range(34) if counts[k] >= 2), frozenset()
    return name, frozenset(), frozenset()


def _flush_suit(counts: list[int], melds: list[Meld]) -> int:
    """The suit a flush plan keeps: the one the called sets are in, else the one held most."""
    for k in _meld_kinds(melds):
        if k < 27:
            return k // 9
    return max(range(3), key=lambda s: (sum(counts[9 * s:9 * s + 9]), -s))


def _chow_plan_lows(counts: list[int], melds: list[Meld], name: str) -> tuple[int, int, int]:
    """The chows of the named plan that hold most of the hand's kinds (a called chow among
    them where there is one)."""
    chow_lows = tuple(min(T.kind(t) for t in m.tiles) for m in melds if m.kind == "chi")
    held = held_mask(counts)
    fits = dict(_fitting_plans(chow_lows, len(melds) - len(chow_lows)))
    fitting = [(i, lows, fits[i]) for i, (plan, _, lows) in enumerate(CHOW_PLANS)
               if plan == name and i in fits]
    if not fitting:
        fitting = [(i, lows, 0) for i, (plan, _, lows) in enumerate(CHOW_PLANS) if plan == name]
    _, lows, _ = max(fitting, key=lambda f: ((_CHOW_MASKS[f[0]] & (held | f[2])).bit_count(),
                                             -f[0]))
    return lows
