"""Seeds whose walls carry a headline figure (issue 24/26): one list for every command that
chooses something, so no selection, training set or tuning run ever plays those walls.

A wall's key is ``(seed * 1,000,003 + game) * 1,009 + hand`` (adapter/local/walls.py), so two
seeds share no wall; a seed listed here is spent on its figure, and anything that chooses
between players or weights on it would make that figure in-sample again.
"""

from __future__ import annotations

from collections.abc import Collection

HEADLINE_SEEDS: dict[int, str] = {
    24: "the riichi nn headline (brain/data/nn_models.md)",
    31: "the league table (mjbot league)",
    47: "the riichi nn generation-4 headline against rulebased (brain/data/nn_models.md)",
    48: "riichi nn generation 4 against each league style (README)",
    49: "riichi nn generation 4 against the PyPI mjai RulebaseBot (README)",
    52: "riichi nn generation 4 against style:closed and style:value, 32,000 hands (README)",
    55: "riichi nn generation 4 against style:value, 64,000 hands (README)",
    57: "riichi nn generation 3 against generation 4 at one table (brain/data/nn_models.md)",
    58: "riichi nn generations 3 and 4 against rulebased, 64,000 hands (README)",
    59: "riichi nn generations 3 and 4 against each league style (README)",
    60: "riichi nn generation 3 against style:value, 192,000 hands (README)",
}


class ReservedSeedError(ValueError):
    """A selection or training run asked for a headline seed."""


def refuse_headline_seed(seed: int, what: str) -> None:
    """Raise :class:`ReservedSeedError` (one line, naming the figure) if ``seed`` is reserved."""
    if seed in HEADLINE_SEEDS:
        raise ReservedSeedError(f"{what} {seed} is a headline seed ({HEADLINE_SEEDS[seed]}): "
                                f"choose one not in {sorted(HEADLINE_SEEDS)}")


def free_seed(seed: int, taken: Collection[int] = ()) -> int:
    """``seed``, or the first of ``seed + 10,000 k`` that is neither a headline seed nor in
    ``taken`` (so a derived seed never lands on a reserved wall set)."""
    while seed in HEADLINE_SEEDS or seed in taken:
        seed += 10_000
    return seed
