"""The ``mc`` policy: seed 002's Monte Carlo simulation with opponent models (see policy.py).

Importing this package costs nothing: :func:`create` loads the policy (numpy, the opponent
models' code) when one is built, so a Botzone one-shot turn with another policy pays nothing.
"""

from __future__ import annotations

from typing import Any


def create() -> Any:
    """A fresh ``mc`` policy configured from the environment (see config.py)."""
    from brain.policies.mc.policy import McPolicy

    return McPolicy()
