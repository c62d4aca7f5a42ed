"""The knobs of the ``mc`` policy, and how a user sets them without a new CLI flag everywhere.

Every adapter and the arena build policies by name, so the options travel in one environment
variable read when the policy is built: ``MJBOT_MC="playouts=200,seed=7,search=expect"``
(``mjbot arena --policies mc,...`` then plays with them, in every worker process). Unknown
keys or bad values fail at once: a typo must not silently play the defaults.
"""

from __future__ import annotations

import difflib
import os
from collections.abc import Iterable
from dataclasses import dataclass, fields, replace
from typing import Any

from brain.rules.variant import variant_of

ENV = "MJBOT_MC"
SEARCHES = ("playout", "expect")
ANCHORS = ("pass", "fast")
FAST_POLICIES = ("rulebased", "greedy", "nn")
# The call gate per variant (Variant.call_gate: z, margin as a share of a typical win), tuned
# by duplicate arena (README, "mc policy"). Riichi: without the gate mc opened half its hands on
# noise, since the playouts' ideal fold does not value a closed hand's defence.
# Taiwan: calls are the game (rulebased opens 82% of its hands) and the gate only cost; MCR:
# it cost wins and saved no deal-ins (1,000 hands each way, both within noise of even).


@dataclass(frozen=True)
class McConfig:
    """``playouts``: playouts per candidate per decision (0: as many as the time allows);
    with a number the work, and so the answer, is the same on every machine. ``seconds``:
    the most a decision may take when not fixed by ``playouts`` (0: the whole budget the
    brain gives). Constants marked *tuned* were set by self-play (README, "mc policy")."""

    playouts: int = 0
    default_playouts: int = 128  # per candidate where neither playouts nor a budget is given
    seconds: float = 2.0
    budget_share: float = 0.8  # of the brain's budget; a claim takes half of that (a chow or
    # pung on Botzone is answered together with the discard that follows it)
    batch: int = 16  # playouts per candidate between two published answers
    seed: int = 0
    search: str = "playout"  # or "expect": seed 003's recursive expectation over draws
    depth: int = 2  # expect: levels of draws
    fast: str = "rulebased"  # the move the switch plays when danger is low, the claim's
    # anchor and always a simulated candidate; "nn": the network (expert iteration's prior)
    alpha: float = 0.2  # the switch: MC when sum EL(fast move) / fold value > alpha (tuned)
    always_simulate: bool = False  # ignore the switch (calls and riichi always simulate)
    attack: int = 1  # discards simulated: the best by shape (shanten, then useful tiles) ...
    defend: int = 2  # ... and the safest by the models' expected loss; 0 and 0: every one
    wpet_scale: float = 2.0  # opponents reach tenpai this much faster than closed greedy
    # hands do (they call); tuned
    wait_scale: float = 0.5  # a ready opponent's waits beyond the first: P(kind) times this
    fold_ready: float = 0.03  # per draw: a ready opponent facing a riichi folds (tuned)
    fold_unready: float = 0.1  # per draw: an unready opponent facing a riichi folds (tuned)
    kappa: float = 1.0  # our playout fold: fold when EL(discard) > kappa * P(win) * value
    call_z: float | None = None  # on a claim, an answer other than the anchor is played
    call_margin: float | None = None  # only when it beats the anchor by call_z standard
    # errors of the paired difference plus this share of a typical win (None: Variant.call_gate)
    call_anchor: str = "fast"  # on a claim, the answer others must beat by the gate: the
    # pass, or "fast": the fast move's own answer (its call, or its pass)
    turn_z: float = 0.0  # on our turn, a discard other than the fast move is played only
    turn_margin: float = 0.0  # when its Score beats the fast move's by turn_z standard errors
    # of the paired difference plus this share of a typical win (0 and 0: the best Score;
    # search=playout only, the expectation search measures no spread)
    placement: float = 1.0  # riichi, last hand: weight of the placement bonus (uma)
    plan: bool = True  # MCR: playouts steer by each candidate's nearest 8-fan plan
    plan_strict: bool = False  # ... and keep to it at the cost of shanten (a flush throws
    # its other suits first, a chow plan never lets go of the last tile of one of its kinds)
    playout_calls: bool = False  # we chow and pung in the playouts where that lowers our
    # shanten (MCR and Taiwan; riichi's open hands need a yaku the playouts do not track)
    exact_ready: bool = True  # MCR: our playout hand waits only on what the fan calculator
    # pays, and goes ready by the discard whose paid waits are most alive
    exact_step: bool = False  # MCR: ... and goes one step short by the discard with the most
    # unseen draws that reach a paid ready hand
    models: str = ""  # a directory of opponents_VARIANT.npz (default: the shipped ones)

    def __post_init__(self) -> None:
        if self.search not in SEARCHES:
            raise ValueError(f"mc: search must be one of {', '.join(SEARCHES)}")
        if self.call_anchor not in ANCHORS:
            raise ValueError(f"mc: call_anchor must be one of {', '.join(ANCHORS)}")
        if self.fast not in FAST_POLICIES:
            raise ValueError(f"mc: fast must be one of {', '.join(FAST_POLICIES)}")
        rules = (  # (the value is fine, key, the rule): a refusal names the key that broke it
            (self.playouts >= 0, "playouts", ">= 0 (0: the default or the clock)"),
            (self.default_playouts >= 1, "default_playouts", ">= 1"),
            (self.batch >= 1, "batch", ">= 1"),
            (self.attack >= 0, "attack", ">= 0"),
            (self.defend >= 0, "defend", ">= 0"),
            (1 <= self.depth <= 3, "depth", "1, 2 or 3"),
            (0 < self.budget_share <= 1, "budget_share", "in (0, 1]"),
            ((self.call_z or 0) >= 0, "call_z", ">= 0"),
            ((self.call_margin or 0) >= 0, "call_margin", ">= 0"),
            (self.turn_z >= 0, "turn_z", ">= 0"),
            (self.turn_margin >= 0, "turn_margin", ">= 0"),
        )
        for fine, key, rule in rules:
            if not fine:
                raise ValueError(f"mc: {key} must be {rule}, got {getattr(self, key)!r}")

    def call_gate(self, variant: str) -> tuple[float, float]:
        """(z, margin share) an answer must clear over the claim's anchor in ``variant``."""
        z, margin = variant_of(variant).call_gate
        return (z if self.call_z is None else self.call_z,
                margin if self.call_margin is None else self.call_margin)

    @property
    def turn_gate(self) -> bool:
        """Whether a turn's search must clear a gate over the fast move (else the best
        Score plays, as the paper has it)."""
        return self.turn_z > 0 or self.turn_margin > 0

    def playouts_for(self, budget: float | None) -> int:
        """Playouts per candidate: fixed, else none (the clock decides) where there is a
        budget, else the default (the local table gives no budget)."""
        if self.playouts:
            return self.playouts
        return 0 if budget is not None else self.default_playouts

    def time_for(self, budget: float | None, claim: bool) -> float | None:
        """Seconds this decision may search (None: no clock, the playouts decide)."""
        if self.playouts or budget is None:
            return None
        share = self.budget_share * (0.5 if claim else 1.0)
        t = budget * share
        return min(t, self.seconds) if self.seconds > 0 else t


class UnknownKey(ValueError):
    """A key no option has: ``key`` lets a caller that knows more syntax (a seat's own
    ``@budget=SECONDS``) say what else was meant."""

    def __init__(self, key: str, message: str) -> None:
        super().__init__(message)
        self.key = key

    def __reduce__(self) -> tuple[Any, ...]:  # pickle would call __init__(message) alone
        return type(self), (self.key, self.args[0]), self.__dict__


def parse(text: str, base: McConfig | None = None) -> McConfig:
    """``key=value`` pairs separated by commas (or semicolons) over ``base``."""
    cfg = base or McConfig()
    kinds = {f.name: f.type for f in fields(McConfig)}
    changes: dict[str, object] = {}
    for item in text.replace(";", ",").split(","):
        item = item.strip()
        if not item:
            continue
        key, sep, value = item.partition("=")
        key = key.strip().replace("-", "_")
        if not sep:
            raise ValueError(f"mc: option {item!r} is not key=value (known keys: "
                             f"{', '.join(sorted(kinds))})")
        if key not in kinds:
            raise UnknownKey(key, f"mc: unknown key {key!r} in {item!r}{_nearest(key, kinds)} "
                                  f"(known keys: {', '.join(sorted(kinds))})")
        changes[key] = _convert(key, str(kinds[key]), value.strip())
    return replace(cfg, **changes)  # type: ignore[arg-type]


def _nearest(key: str, known: Iterable[str]) -> str:
    """", did you mean 'KEY'?" for the known key nearest a mistyped one, or nothing: the
    known keys are thirty, and the one meant (``budgt``: budget_share) was lost among them."""
    close = difflib.get_close_matches(key, list(known), n=1, cutoff=0.5)
    return f", did you mean {close[0]!r}?" if close else ""


def _convert(key: str, kind: str, value: str) -> object:
    kind = kind.removesuffix(" | None")
    try:
        if kind == "int":
            return int(value)
        if kind == "float":
            return float(value)
        if kind == "bool":
            if value.lower() not in ("1", "0", "true", "false", "yes", "no"):
                raise ValueError(value)
            return value.lower() in ("1", "true", "yes")
    except ValueError:
        article = "an" if kind == "int" else "a"
        raise ValueError(f"mc: {key} needs {article} {kind}, got {value!r}") from None
    return value


def from_env() -> McConfig:
    """The configuration :data:`ENV` names (the defaults where it is unset)."""
    return parse(os.environ.get(ENV, ""))
