"""Policies by name: every name here can be used by the arena, the adapters and the replayer."""

from __future__ import annotations

from collections.abc import Callable

from brain.policies.base import Decision, Policy
from brain.policies.baselines import GreedyPolicy, TsumogiriPolicy
from brain.policies.mc import create as create_mc
from brain.policies.rulebased import RuleBasedPolicy


def create_nn() -> Policy:
    """The ``nn`` policy, imported on use: the Botzone bundle carries no network code."""
    from brain.policies.nn import NnPolicy

    return NnPolicy()


POLICIES: dict[str, Callable[[], Policy]] = {
    "tsumogiri": TsumogiriPolicy,
    "greedy": GreedyPolicy,
    "rulebased": RuleBasedPolicy,
    "mc": create_mc,
    "nn": create_nn,
}


def get_policy(name: str) -> Policy:
    """A fresh policy by name; ValueError naming the known ones otherwise."""
    try:
        return POLICIES[name]()
    except KeyError:
        raise ValueError(f"unknown policy {name!r} (known: {', '.join(sorted(POLICIES))})")\
            from None


__all__ = ["POLICIES", "Decision", "Policy", "get_policy"]
