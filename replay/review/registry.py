"""Which evaluator a name means: the policies a review accepts, the predictors the commentary
and the measure accept (those and seed 004's), and the evaluator of each. Apart from
:mod:`evaluators` because :mod:`seed004` builds on its ranking types and is one of the names.
"""

from __future__ import annotations

from brain.policies import NN_FILE_PREFIX, POLICIES
from replay.review.evaluators import NEURAL, Evaluator, McEvaluator, RankingEvaluator
from replay.review.seed004 import Seed004Evaluator


def policies() -> list[str]:
    """The policy names a review accepts: every registered policy (``mc`` values moves by
    playouts, the others rank them by their own preferences)."""
    return sorted(POLICIES)


def predictors() -> list[str]:
    """What can rank moves for the commentary and the measure: the policies, and seed 004's
    player's-view prediction."""
    return sorted({*policies(), "seed004"})


def evaluator_for(name: str, playouts: int = 512, seed: int = 0,
                  models: str = "") -> Evaluator:
    """The evaluator of a policy name (or ``seed004``, a predictor; ``nn@FILE``, the network
    a user just trained, as the arena seats it); ValueError (one line) for an unknown name
    or ``nn`` before a neural policy exists."""
    if name == "seed004":
        return Seed004Evaluator()
    if name == NEURAL and NEURAL not in POLICIES:
        raise ValueError("no neural policy is registered yet (the nn policy is its own "
                         "issue); review with --policy mc or --policy rulebased")
    if name == "mc":
        return McEvaluator(playouts, seed, models)
    base = name.partition("@")[0]
    if name != base and base == "seed004":  # a predictor only: review refuses it by name
        raise ValueError(f"{name!r}: the commentary takes 'seed004' by its name alone, with no "
                         "@options")
    if name != base and not name.startswith(NN_FILE_PREFIX) and base in POLICIES:
        # `mjbot replay --policy mc@playouts=64` seats it so: here it read as a policy
        # unknown, beside a list that names mc
        raise ValueError(f"{name!r}: review and the commentary take {base!r} by its name "
                         f"alone, with no @options (mc's playouts and seed: mjbot review's "
                         f"--playouts and --seed)")
    if name not in POLICIES and not name.startswith(NN_FILE_PREFIX):
        raise ValueError(f"unknown policy {name!r} (review knows: {', '.join(policies())}; "
                         "the commentary's --predictor also takes seed004)")
    return RankingEvaluator(name)
