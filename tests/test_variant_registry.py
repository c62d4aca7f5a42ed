"""The Variant registry (brain/rules/variant.py): its facts agree with the rules modules and the
built-in table's walls, and a name it does not know gets a clear error, never a default."""

from __future__ import annotations

import pytest

from adapter.local.walls import tile_set
from brain.rules import rules_for, variant_of
from brain.rules.variant import VARIANT_NAMES, VARIANTS
from brain.state import TableState
from protocols import tiles as T


@pytest.mark.parametrize("name", VARIANT_NAMES)
def test_each_variant_agrees_with_its_rules_module(name: str) -> None:
    spec = variant_of(name)
    rules = spec.rules
    assert rules is rules_for(name)
    assert (rules.name, rules.hand_size, rules.red_fives) == (name, spec.hand_size,
                                                              spec.red_fives)
    assert rules.allows_riichi == spec.has_riichi
    assert rules.allows_seven_pairs == (not spec.regular_shapes_only)
    # the value a win must reach: MCR's fan floor, or riichi's one yaku
    assert rules.min_value == (1 if spec.needs_yaku else spec.min_fan)


@pytest.mark.parametrize("name", VARIANT_NAMES)
def test_the_walls_hold_the_variants_tiles(name: str) -> None:
    spec = variant_of(name)
    tiles = tile_set(name)
    assert len(tiles) == 4 * spec.tile_kinds
    assert {T.kind(t) for t in tiles} == set(range(spec.tile_kinds))
    assert any(T.is_red(t) for t in tiles) == spec.red_fives


def test_a_state_starts_with_its_variants_live_wall() -> None:
    assert [TableState(name).wall_remaining for name in VARIANT_NAMES] == [
        VARIANTS[name].live_wall for name in VARIANT_NAMES]
    assert TableState("mcr").spec is VARIANTS["mcr"]


@pytest.mark.parametrize("name", ["", "Riichi", "sanma", "taiwan"])
def test_an_unknown_name_is_a_clear_error(name: str) -> None:
    with pytest.raises(ValueError, match=f"unknown variant {name!r}: riichi, mcr, taiwan16 or "
                                         "mass"):
        variant_of(name)
    with pytest.raises(ValueError, match="unknown variant"):
        TableState(name)
    with pytest.raises(ValueError, match="unknown variant"):
        tile_set(name)


def test_a_variant_is_frozen() -> None:
    import dataclasses

    with pytest.raises(dataclasses.FrozenInstanceError):
        variant_of("riichi").hand_size = 14  # type: ignore[misc]  # refused, as it must be
