"""Tile conversions: exact both ways for every notation the project speaks."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from protocols import tiles as T

ALL_KINDS = range(34)
ALL_TILES = range(45)
NON_FLOWER = range(37)


def test_mpsz_parse_examples():
    assert T.parse_mpsz("123m406p789s1177z") == [0, 1, 2, 12, T.RED_5P, 14, 24, 25, 26, 27, 27,
                                                  33, 33]
    assert T.parse_mpsz("5z6z7z") == [T.WHITE, T.GREEN, T.RED]
    assert T.parse_mpsz("0m0p0s") == [T.RED_5M, T.RED_5P, T.RED_5S]
    assert T.parse_mpsz("18f") == [37, 44]
    assert T.parse_mpsz(" 12m 3p ") == [0, 1, 11]


@pytest.mark.parametrize("bad", ["", "12", "m", "8z", "0z", "9f", "12x", "1m2", "1m!"])
def test_mpsz_rejects(bad):
    if bad == "":
        assert T.parse_mpsz(bad) == []
        return
    with pytest.raises(T.TileError) as err:
        T.parse_mpsz(bad)
    assert bad in str(err.value)


@given(st.lists(st.sampled_from(ALL_TILES), max_size=20))
def test_mpsz_round_trip(tiles):
    assert T.parse_mpsz(T.to_mpsz(tiles, sort=False)) == tiles
    assert T.parse_mpsz(T.to_mpsz(tiles)) == sorted(tiles, key=T.sort_key)


def test_botzone_dragons_and_winds():
    assert T.from_botzone("J1") == T.RED
    assert T.from_botzone("J2") == T.GREEN
    assert T.from_botzone("J3") == T.WHITE
    assert [T.from_botzone(f"F{i}") for i in range(1, 5)] == list(T.WINDS)
    assert T.from_botzone("W1") == 0 and T.from_botzone("B1") == 9 and T.from_botzone("T9") == 26
    assert T.from_botzone("H1") == 37
    assert T.to_botzone(T.RED_5P) == "B5"  # Botzone has no red fives


@pytest.mark.parametrize("t", [*ALL_KINDS, *range(37, 45)])
def test_botzone_round_trip(t):
    assert T.from_botzone(T.to_botzone(t)) == t


@pytest.mark.parametrize("bad", ["W0", "J4", "F5", "X1", "W", "W10", "H9", "", 5])
def test_botzone_rejects(bad):
    with pytest.raises(T.TileError):
        T.from_botzone(bad)


def test_tenhou_red_ids():
    assert T.from_tenhou_id(16) == T.RED_5M
    assert T.from_tenhou_id(52) == T.RED_5P
    assert T.from_tenhou_id(88) == T.RED_5S
    assert T.from_tenhou_id(17) == 4
    assert T.from_tenhou_id(16, red_fives=False) == 4
    assert T.tenhou_ids(4) == (17, 18, 19)
    assert T.tenhou_ids(4, red_fives=False) == (16, 17, 18, 19)
    assert T.tenhou_ids(T.RED_5S) == (88,)


@pytest.mark.parametrize("red", [True, False])
def test_tenhou_ids_round_trip(red):
    seen = []
    for tile_id in range(136):
        t = T.from_tenhou_id(tile_id, red_fives=red)
        assert tile_id in T.tenhou_ids(t, red_fives=red)
        seen.append(t)
    # every physical id used exactly once over all tiles
    ids = sorted(i for t in set(seen) for i in T.tenhou_ids(t, red_fives=red))
    assert ids == list(range(136))


@pytest.mark.parametrize("bad", [-1, 136, "5", True, None])
def test_tenhou_id_rejects(bad):
    with pytest.raises(T.TileError):
        T.from_tenhou_id(bad)


@pytest.mark.parametrize("t", NON_FLOWER)
def test_tenhou6_round_trip(t):
    assert T.from_tenhou6(T.to_tenhou6(t)) == t


def test_tenhou6_codes():
    assert T.to_tenhou6(0) == 11 and T.to_tenhou6(26) == 39 and T.to_tenhou6(27) == 41
    assert T.to_tenhou6(T.WHITE) == 45 and T.to_tenhou6(T.RED) == 47
    assert T.to_tenhou6(T.RED_5M) == 51 and T.to_tenhou6(T.RED_5S) == 53
    for bad in (10, 20, 48, 60, 54, 0):
        with pytest.raises(T.TileError):
            T.from_tenhou6(bad)


@pytest.mark.parametrize("t", NON_FLOWER)
def test_mjai_round_trip(t):
    assert T.from_mjai(T.to_mjai(t)) == t


def test_mjai_names():
    assert T.to_mjai(T.RED_5M) == "5mr"
    assert [T.to_mjai(t) for t in range(27, 34)] == ["E", "S", "W", "N", "P", "F", "C"]
    assert T.from_mjai("?") is None and T.to_mjai(None) == "?"
    for bad in ("5mrr", "0m", "4mr", "X", "", "1z"):
        with pytest.raises(T.TileError):
            T.from_mjai(bad)


def test_ntpu_default_order():
    nt = T.NtpuTiles()
    assert nt.parse("121") == 1  # 2m, copy 1
    assert nt.to_tile(411) == T.EAST
    assert nt.to_tile(452) == T.RED  # R=5 is red by default
    assert nt.to_tile(463) == T.GREEN
    assert nt.to_tile(470) == T.WHITE
    assert nt.copy_of(463) == 3


@pytest.mark.parametrize("order", ["ESWNCFP", "ESWNPFC", (27, 28, 29, 30, 31, 32, 33)])
@pytest.mark.parametrize("suits", ["mps", "psm"])
def test_ntpu_round_trip(order, suits):
    nt = T.NtpuTiles(order, suits)
    for t in ALL_KINDS:
        for copy in range(4):
            i = nt.to_id(t, copy)
            assert nt.to_tile(i) == t and nt.copy_of(i) == copy
    assert nt.to_tile(nt.to_id(T.RED_5P)) == 13


@pytest.mark.parametrize("bad", [100, 194, 104, 480, 500, 11, "12", 141.0])
def test_ntpu_rejects(bad):
    with pytest.raises(T.TileError):
        T.NtpuTiles().to_tile(bad)


def test_ntpu_bad_orders():
    with pytest.raises(T.TileError):
        T.NtpuTiles("ESWNCF")
    with pytest.raises(T.TileError):
        T.NtpuTiles(suit_order="mpp")


def test_helpers():
    assert T.kind(T.RED_5S) == 22 and T.is_red(T.RED_5S) and not T.is_red(22)
    assert T.dora_from_indicator(8) == 0 and T.dora_from_indicator(T.NORTH) == T.EAST
    assert T.dora_from_indicator(T.RED) == T.WHITE and T.dora_from_indicator(T.RED_5P) == 14
    assert T.is_terminal(17) and not T.is_terminal(27) and T.is_honour(33)
    assert T.counts34([0, 0, T.RED_5M, 40])[4] == 1
