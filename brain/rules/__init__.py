"""One module per variant with the same interface (:class:`brain.rules.base.Rules`), and the
registry of :class:`brain.rules.variant.Variant` objects that names them.

``Rules``, ``WinContext`` and ``WinScore`` are re-exported on first use, so importing the
registry (``brain.state`` does) does not import ``brain.rules.base``, which imports the state.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from brain.rules.variant import VARIANT_NAMES, VARIANTS, Variant, variant_of

if TYPE_CHECKING:
    from brain.rules.base import Rules, WinContext, WinScore


def rules_for(variant: str) -> Rules:
    """The rules object of a variant name ("riichi", "mcr", "taiwan16", "mass")."""
    return variant_of(variant).rules


def __getattr__(name: str) -> Any:
    if name in ("Rules", "WinContext", "WinScore"):
        from brain.rules import base

        return getattr(base, name)
    raise AttributeError(f"module 'brain.rules' has no attribute {name!r}")


__all__ = ["VARIANTS", "VARIANT_NAMES", "Rules", "Variant", "WinContext", "WinScore",
           "rules_for", "variant_of"]
