"""Shanten: equal to the `mahjong` library on random 13/14-tile hands, to exhaustive search on
small hands and on 16/17-tile hands, and batched equals single."""

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from mahjong.shanten import Shanten

from adapter.bench.shanten import random_hand_array, random_hands
from brain import shanten_tables
from brain.shanten import (
    HandError,
    discard_table,
    regular_shanten,
    seven_pairs_shanten,
    shanten,
    shanten_after_discards,
    shanten_batch,
    thirteen_orphans_shanten,
    useful_tiles,
    waits,
)
from protocols.tiles import counts34, parse_mpsz
from tests.shanten_oracle import brute_regular_shanten, dp_distance, exhaustive_distance


def c(mpsz):
    return counts34(parse_mpsz(mpsz))


@st.composite
def hands(draw, sizes):
    size = draw(st.sampled_from(sizes))
    wall = [k for k in range(34) for _ in range(4)]
    picks = draw(st.permutations(wall))[:size]
    return counts34(picks)


def test_equals_mahjong_library_on_random_hands():
    sample = random_hands(12_000, (13, 14), seed=20261121)
    mismatches = [h for h in sample if shanten(h) != Shanten.calculate_shanten(h)]
    assert mismatches == []
    regular = [h for h in sample[:3000]
               if regular_shanten(h) != Shanten.calculate_shanten_for_regular_hand(h)]
    assert regular == []


def test_equals_mahjong_library_on_small_hands():
    sample = random_hands(3000, (1, 2, 4, 5, 7, 8, 10, 11), seed=7)
    assert [h for h in sample if regular_shanten(h) != Shanten.calculate_shanten(h)] == []


@settings(max_examples=150, deadline=None)
@given(hands((1, 2, 4, 5)))
def test_equals_exhaustive_search_on_small_hands(counts):
    groups = sum(counts) // 3
    assert regular_shanten(counts) == exhaustive_distance(counts, groups) - 1


@settings(max_examples=300, deadline=None)
@given(hands((16, 17)))
def test_equals_brute_force_on_16_17_tile_hands(counts):
    assert shanten(counts) == brute_regular_shanten(counts)


@settings(max_examples=60, deadline=None)
@given(hands((13, 14)))
def test_equals_brute_force_on_13_14_tile_hands(counts):
    expected = min(brute_regular_shanten(counts), seven_pairs_shanten(counts),
                   thirteen_orphans_shanten(counts))
    assert shanten(counts) == expected


def test_oracles_agree_with_each_other():
    for h in random_hands(12, (7, 8), seed=3):
        k = sum(h) // 3
        assert dp_distance(h, k) == exhaustive_distance(h, k)


@pytest.mark.parametrize(("hand", "expected"), [
    ("123m456p789s11222z", -1),
    ("123m456p789s1122z", 0),
    ("19m19p19s1234567z", 0),       # thirteen orphans, 13-sided
    ("19m19p19s12345677z", -1),
    ("1122m3344p5566s7z", 0),       # seven pairs
    ("11223344m556677p", -1),
    ("1111m", 1),                   # no fifth 1m: a 4-tile hand needs a new pair and group
    ("1111m234p567s789s", 1),       # waiting on a fifth 1m is not ready
    ("1112345678999m", 0),          # nine gates
    ("123m456m789m123p456p11s", -1),  # 17 tiles, 5 groups + pair
    ("123m456m789m123p456p1s", 0),    # 16 tiles
    ("1m", 0),
    ("11m", -1),
])
def test_known_hands(hand, expected):
    assert shanten(c(hand)) == expected


def test_seven_pairs_and_orphans_only_for_13_14_tiles():
    eight_pairs = c("11223344m55667p")  # 16 tiles = 5 groups + pair: no seven-pairs shortcut
    assert shanten(eight_pairs) == regular_shanten(eight_pairs)
    arr = np.array([eight_pairs], np.uint8)
    assert shanten_batch(arr).tolist() == [regular_shanten(eight_pairs)]


def test_after_calls_uses_fewer_groups():
    # 10 tiles = 3 groups + pair (one call made)
    assert shanten(c("123m456p789s1z")) == 0
    # 7 tiles = 2 groups + pair
    assert shanten(c("123m45p11z")) == 0


def test_useful_tiles():
    assert useful_tiles(c("123m456p789s1122z")) == {27, 28}
    assert useful_tiles(c("1112345678999m")) == set(range(9))
    assert useful_tiles(c("23m")) == {1, 2}  # 2 tiles = 0 groups + a pair
    # 14-tile hand after a draw: union over shanten-keeping discards
    assert useful_tiles(c("123m456p789s11223z")) == {27, 28}


def library_useful_tiles(counts):
    """The definition, by the `mahjong` library: draws (never a fifth copy) that lower it."""
    base = Shanten.calculate_shanten(counts)
    expected = set()
    for k in range(34):
        if counts[k] < 4:
            counts[k] += 1
            if Shanten.calculate_shanten(counts) < base:
                expected.add(k)
            counts[k] -= 1
    return expected


def test_useful_tiles_match_the_library_definition():
    for h in random_hands(300, (13,), seed=99):
        assert useful_tiles(h) == library_useful_tiles(h)


@st.composite
def pair_or_orphan_heavy_hands(draw):
    """13-tile hands near seven pairs or thirteen orphans, where the special forms decide."""
    counts = [0] * 34
    orphans = [0, 8, 9, 17, 18, 26, 27, 28, 29, 30, 31, 32, 33]
    if draw(st.booleans()):
        for k in draw(st.lists(st.integers(0, 33), min_size=3, max_size=6, unique=True)):
            counts[k] = 2
    else:
        for k in draw(st.lists(st.sampled_from(orphans), min_size=8, max_size=13, unique=True)):
            counts[k] = 1
    fill = draw(st.lists(st.integers(0, 33), min_size=13, max_size=13))
    for k in fill:
        if sum(counts) < 13 and counts[k] < 4:
            counts[k] += 1
    while sum(counts) > 13:
        counts[max(range(34), key=lambda i: counts[i])] -= 1
    while sum(counts) < 13:
        counts[counts.index(min(counts))] += 1
    return counts


@given(pair_or_orphan_heavy_hands())
@settings(max_examples=300, deadline=None)
def test_useful_tiles_on_special_form_hands_equal_brute_force(counts):
    assert useful_tiles(counts) == library_useful_tiles(counts)


def _special_leaning_hands(n: int, seed: int) -> list[list[int]]:
    """14-tile hands near seven pairs or thirteen orphans, where those forms decide."""
    rng = np.random.default_rng(seed)
    orphans = [0, 8, 9, 17, 18, 26, 27, 28, 29, 30, 31, 32, 33]
    out = []
    for i in range(n):
        counts = [0] * 34
        if i % 2:
            for k in rng.choice(34, 6, replace=False):
                counts[k] = 2
        else:
            for k in rng.choice(orphans, 11, replace=False):
                counts[k] = 1
        while sum(counts) < 14:
            k = int(rng.integers(34))
            if counts[k] < 4:
                counts[k] += 1
        out.append(counts)
    return out


@pytest.mark.parametrize("sizes", [(14,), (17,), (5, 8, 11), "special"])
def test_after_discards_equal_one_call_per_discard(sizes):
    sample = (_special_leaning_hands(300, seed=4) if sizes == "special"
              else random_hands(500, sizes, seed=sum(sizes)))
    for hand in sample:
        expected = {}
        for k in range(34):
            if hand[k]:
                rest = list(hand)
                rest[k] -= 1
                expected[k] = shanten(rest)
        after = shanten_after_discards(hand)
        assert after == expected and list(after) == sorted(after)
        regular = {}
        for k in expected:
            rest = list(hand)
            rest[k] -= 1
            regular[k] = regular_shanten(rest)
        assert shanten_after_discards(hand, regular_only=True) == regular
        some = set(list(expected)[::2])
        assert shanten_after_discards(hand, some) == {k: expected[k] for k in sorted(some)}
        useful = {}
        for k in expected:
            rest = list(hand)
            rest[k] -= 1
            useful[k] = useful_tiles(rest, expected[k])
        table = discard_table(hand, slack=99)
        assert table == {k: (expected[k], frozenset(useful[k])) for k in expected}
        assert list(table) == list(expected)
        best = min(expected.values())
        assert discard_table(hand, some) == {
            k: (expected[k], frozenset(useful[k]) if expected[k] == best_some else None)
            for best_some in [min(expected[k] for k in some)] for k in sorted(some)}
        assert {k: u for k, (_, u) in discard_table(hand, slack=1).items()} == {
            k: frozenset(useful[k]) if expected[k] <= best + 1 else None for k in expected}
        # the regular form alone (Taiwan): values and useful kinds by brute force
        plain = {}
        for k in regular:
            rest = list(hand)
            rest[k] -= 1
            plain[k] = frozenset(j for j in range(34) if rest[j] < 4 and regular_shanten(
                [n + (i == j) for i, n in enumerate(rest)]) < regular[k])
            assert useful_tiles(rest, regular_only=True) == plain[k]
        assert discard_table(hand, slack=99, regular_only=True) == {
            k: (regular[k], plain[k]) for k in regular}


def test_special_form_draws_agree_with_the_full_table_for_any_base():
    from brain import shanten as S

    for hand in random_hands(3000, (13,), seed=77):
        parts = S._parts(hand)
        stats = sum(p[1] for p in parts)
        every = S._special_after_draw(hand, stats)
        for base in range(shanten(hand), shanten(hand) + 3):
            expected = {j for j in range(34) if every[j] < base and hand[j] < 4}
            assert set(S._special_useful(hand, stats, base)) == expected


def test_regular_only_sees_no_seven_pairs_or_orphans():
    pairs = c("1122m3355p6688s1z")  # seven pairs ready on 1z; the regular form far off
    assert shanten(pairs) == 0 and waits(pairs) == {27}
    assert shanten(pairs, regular_only=True) == regular_shanten(pairs) > 0
    assert waits(pairs, regular_only=True) == set()
    drawn = c("1122m3355p6688s1z9m")
    assert 27 in useful_tiles(drawn) and 27 not in useful_tiles(drawn, regular_only=True)
    orphans = c("19m19p19s1234567z")
    assert waits(orphans) and not waits(orphans, regular_only=True)


def test_useful_tiles_excludes_fifth_copy():
    assert 0 not in useful_tiles(c("1111m234p567s789s"))


def test_batch_equals_single():
    arr = np.array(random_hands(3000, (1, 4, 7, 10, 13, 14, 16, 17), seed=11), np.uint8)
    assert shanten_batch(arr).tolist() == [shanten(list(row)) for row in arr.tolist()]
    arr13 = random_hand_array(2000, 13, seed=5)
    assert shanten_batch(arr13).tolist() == [shanten(row) for row in arr13.tolist()]


def test_batch_regular_only():
    arr = np.array([c("19m19p19s1234567z"), c("123m456p789s1122z")], np.uint8)
    assert shanten_batch(arr, regular_only=True).tolist() == [
        regular_shanten(row) for row in arr.tolist()]


@pytest.mark.parametrize("bad", [[0] * 33, [5] + [0] * 33, [-1] + [0] * 33, [3] + [0] * 33,
                                 [4] * 5 + [0] * 29])
def test_bad_hands_raise(bad):
    with pytest.raises(HandError):
        shanten(bad)
    if len(bad) == 34:
        with pytest.raises(HandError):
            shanten_batch(np.array([bad]))


def test_accepts_tuples_and_arrays():
    h = c("123m456p789s1122z")
    assert shanten(tuple(h)) == shanten(np.array(h, np.uint8)) == 0


def test_shipped_tables_equal_a_fresh_build():
    shipped = shanten_tables._read(shanten_tables.SHIPPED)
    assert shipped is not None, "brain/data/shanten_tables.npz missing or corrupt"
    assert shanten_tables.digest(shipped) == shanten_tables.digest(shanten_tables.build_tables())


def test_the_part_statistics_built_at_load_count_each_pattern():
    """Pairs, kinds, orphan kinds, orphan pairs and tiles of every part pattern, read back from
    the packed statistics, against a count of the pattern's own digits."""
    t = shanten_tables
    rng = np.random.default_rng(3)
    for length, orphans in ((9, (0, 8)), (7, tuple(range(7)))):
        stats = t.part_stats(length, orphans)
        assert stats.shape == (5**length,)
        for code in [0, 5**length - 1, *rng.integers(0, 5**length, 400)]:
            digits = [(int(code) // 5**j) % 5 for j in range(length)]
            got = [(int(stats[code]) >> shift) & t.STAT_MASK for shift in (
                t.PAIRS_SHIFT, t.KINDS_SHIFT, t.ORPHAN_KINDS_SHIFT, t.ORPHAN_PAIRS_SHIFT,
                t.TILES_SHIFT)]
            assert got == [sum(d >= 2 for d in digits), sum(d >= 1 for d in digits),
                           sum(digits[j] >= 1 for j in orphans),
                           sum(digits[j] >= 2 for j in orphans), sum(digits)], digits


def test_a_parts_statistics_counted_from_its_digits_equal_the_batch_tables():
    """The single-call path counts a part's packed statistics from its digits; the batch reads
    them from :func:`part_stats`' table: every honour pattern, and 20,000 suit patterns
    (seeded) with the first and the last, agree."""
    from brain.shanten import _HONOUR_ORPHANS, _SUIT_ORPHANS, _part_stats

    rng = np.random.default_rng(8)
    for length, orphans, codes in (
            (7, _HONOUR_ORPHANS, range(5**7)),
            (9, _SUIT_ORPHANS, [0, 5**9 - 1, *rng.integers(0, 5**9, 20_000).tolist()])):
        table = shanten_tables.part_stats(length, orphans)
        for code in codes:
            key = bytes((code // 5**j) % 5 for j in range(length))
            assert _part_stats(key, orphans) == int(table[code]), list(key)


def test_a_process_that_never_batches_holds_no_batch_tables():
    """Every pattern's packed statistics (16 MB for the suits) and int32 copies of the ids
    (8 MB) were built at import, which every one-shot Botzone turn pays; only the batch reads
    them. A fresh process that imports the module and measures a hand allocates less than
    the statistics alone (6 MB here, the shipped tables read); its first batch builds them
    (33 MB: the measure sees them)."""
    code = ("import tracemalloc\nimport numpy as np\n"
            "from protocols.tiles import counts34, parse_mpsz\n"
            "tracemalloc.start()  # from here: the module's own, not numpy's import\n"
            "from brain.shanten import shanten, shanten_batch\n"
            "hand = counts34(parse_mpsz('123m456p789s1122z'))\n"
            "assert shanten(hand) == 0\n"
            "print(tracemalloc.get_traced_memory()[1])\n"
            "assert shanten_batch(np.array([hand]))[0] == 0\n"
            "print(tracemalloc.get_traced_memory()[1])\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       timeout=120, cwd=Path(__file__).resolve().parent.parent)
    assert r.returncode == 0, r.stderr
    single, batched = map(int, r.stdout.split())
    statistics = 5**9 * 8  # the suits' int64 table
    assert single < statistics < batched, (single, batched)


def test_corrupt_table_file_is_rejected(tmp_path):
    bad = tmp_path / "t.npz"
    bad.write_bytes(b"not a zip")
    assert shanten_tables._read(bad) is None
    np.savez(bad, version=np.array([999]))
    assert shanten_tables._read(bad) is None
