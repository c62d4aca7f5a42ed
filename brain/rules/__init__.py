"""One module per variant with the same interface (:class:`brain.rules.base.Rules`)."""

from __future__ import annotations

from brain.rules.base import Rules, WinContext, WinScore


def rules_for(variant: str) -> Rules:
    """The rules object of a variant name ("riichi", "mcr", "taiwan16", "mass")."""
    RULES: Rules  # each branch imports its own subclass's instance under this name
    if variant == "riichi":
        from brain.rules.riichi import RULES
    elif variant == "mcr":
        from brain.rules.mcr import RULES
    elif variant == "taiwan16":
        from brain.rules.taiwan16 import RULES
    elif variant == "mass":
        from brain.rules.mass import RULES
    else:
        raise ValueError(f"unknown variant {variant!r}: riichi, mcr, taiwan16 or mass")
    return RULES


__all__ = ["Rules", "WinContext", "WinScore", "rules_for"]
