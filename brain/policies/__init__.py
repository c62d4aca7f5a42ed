"""Policies by name: every name here can be used by the arena, the adapters and the replayer."""

from __future__ import annotations

from collections.abc import Callable

from brain.policies.base import Decision, Policy
from brain.policies.baselines import GreedyPolicy, TsumogiriPolicy
from brain.policies.mc import create as create_mc
from brain.policies.rulebased import STYLE_PREFIX, STYLES, RuleBasedPolicy, Style


def create_nn(path: str = "") -> Policy:
    """The ``nn`` policy, imported on use: the Botzone bundle carries no network code.
    ``path``: a weights file to play with (``nn@FILE``) instead of the shipped ones."""
    from brain.policies.nn import NnPolicy

    return NnPolicy(path=path)


NN_FILE_PREFIX = "nn@"  # nn@FILE: the network of FILE, e.g. to seat two generations at once
MC_OPTIONS_PREFIX = "mc@"  # mc@KEY=VALUE;...: mc with these options over MJBOT_MC's, e.g. to
# seat two configurations at one table (their difference paired on the same walls)


def create_mc_with(options: str) -> Policy:
    """``mc@OPTIONS``: mc with ``options`` (``key=value`` pairs split by ``;``) over the
    configuration ``MJBOT_MC`` gives; a ValueError naming a bad key or value."""
    from brain.policies.mc.config import from_env, parse
    from brain.policies.mc.policy import McPolicy

    return McPolicy(parse(options, from_env()))


def _styled(style: Style) -> Callable[[], Policy]:
    """``style:NAME``: rulebased with that style's knobs (a new policy each call)."""
    return lambda: RuleBasedPolicy(style)


POLICIES: dict[str, Callable[[], Policy]] = {
    "tsumogiri": TsumogiriPolicy,
    "greedy": GreedyPolicy,
    "rulebased": RuleBasedPolicy,
    "mc": create_mc,
    "nn": create_nn,
    **{STYLE_PREFIX + name: _styled(style) for name, (style, _) in STYLES.items()},
}


def get_policy(name: str) -> Policy:
    """A fresh policy by name (or ``nn@FILE``, ``mc@OPTIONS``); ValueError naming the known
    ones otherwise."""
    if name.startswith(NN_FILE_PREFIX):
        return create_nn(name.removeprefix(NN_FILE_PREFIX))
    if name.startswith(MC_OPTIONS_PREFIX):
        return create_mc_with(name.removeprefix(MC_OPTIONS_PREFIX))
    try:
        return POLICIES[name]()
    except KeyError:
        raise ValueError(f"unknown policy {name!r} (known: {', '.join(sorted(POLICIES))})")\
            from None


__all__ = ["MC_OPTIONS_PREFIX", "NN_FILE_PREFIX", "POLICIES", "STYLES", "Decision", "Policy",
           "get_policy"]
