"""One module per variant with the same interface (:class:`brain.rules.base.Rules`), and the
registry of :class:`brain.rules.variant.Variant` objects that names them.

The interface types live in ``brain.rules.base`` and are imported from there: this package
imports only the registry, so that ``brain.state`` can import it without importing the base
module, which imports the state.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from brain.rules.variant import VARIANT_NAMES, VARIANTS, Variant, variant_of

if TYPE_CHECKING:
    from brain.rules.base import Rules


def rules_for(variant: str) -> Rules:
    """The rules object of a variant name ("riichi", "mcr", "taiwan16", "mass")."""
    return variant_of(variant).rules


__all__ = ["VARIANTS", "VARIANT_NAMES", "Variant", "rules_for", "variant_of"]
