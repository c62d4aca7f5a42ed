"""What the table looked like at one decision: the hand, its shanten and waits, and who was
dangerous (a declared riichi, or a seat the opponent models think ready).

The review's costly decisions and the commentary's sentences both read these facts, so a
sentence never says something the numbers do not.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from brain.policies import defence
from brain.policies.evaluation import DiscardInfo, analyse_discards
from brain.policies.mc.models import MissingModels, load_models
from brain.state import TableState
from protocols import tiles as T

READY = 0.5  # P(ready) from which a seat without a declaration counts as dangerous


@dataclass(frozen=True)
class Threat:
    """A dangerous opponent: ``tenpai`` the models' P(ready) (1.0 for a riichi when no model
    is at hand), ``riichi`` whether it declared."""

    seat: int
    riichi: bool
    tenpai: float


class Opponents:
    """The opponent models' view of one state (None where the variant has no weights)."""

    def __init__(self, state: TableState, estimate: Any = None) -> None:
        """``estimate``: the models' estimate of ``state`` where the caller has it (the
        commentary's lookahead.Lookahead); else worked out here."""
        self.state = state
        self.estimate: Any = estimate
        if estimate is not None:
            return
        try:
            self.estimate = load_models(state.variant).estimate(state)
        except MissingModels:
            self.estimate = None

    def tenpai(self, seat: int) -> float | None:
        if self.estimate is None:
            return None
        seats = [int(s) for s in self.estimate.seats]
        return float(self.estimate.tenpai[seats.index(seat)]) if seat in seats else None

    def deal_in(self, kind: int) -> float:
        """P(discarding ``kind`` deals in to someone): 1 - prod_p (1 - P(ready) P(k wins))."""
        if self.estimate is None:
            return 0.0
        lp = np.asarray(self.estimate.tenpai)[:, None] * np.asarray(self.estimate.wait)
        return float(1.0 - np.prod(1.0 - lp[:, kind]))

    def threats(self) -> list[Threat]:
        """Declared riichi first, then seats the models think ready (P >= READY)."""
        out = []
        for s, view in enumerate(self.state.seats):
            if s == self.state.seat:
                continue
            declared = view.riichi or view.riichi_pending
            p = self.tenpai(s)
            if declared or (p is not None and p >= READY) or s in defence.threats(self.state):
                out.append(Threat(s, declared, p if p is not None else 1.0))
        return sorted(out, key=lambda t: (not t.riichi, -t.tenpai, t.seat))


def hand_text(state: TableState) -> str:
    """The concealed hand in mpsz, then each meld in brackets."""
    text = T.to_mpsz(sorted(state.hand, key=T.sort_key))
    for m in state.melds:
        text += f" [{m.kind} {T.to_mpsz(m.tiles) if m.tiles else '?'}]"
    return text


def kinds_text(kinds: Any) -> str:
    """Tile kinds as names, in table order ("3p 6p")."""
    return " ".join(T.tile_name(k) for k in sorted(kinds))


def discard_infos(state: TableState) -> dict[int, DiscardInfo]:
    """Every discard's shanten and useful tiles (useful counted for all, not only the best)."""
    return analyse_discards(state, slack=8)


def shape(state: TableState) -> dict[str, Any]:
    """Shanten, useful tiles and waits: after the best discard on our turn (14 tiles), of the
    hand as it is otherwise."""
    if sum(state.counts()) % 3 == 2:
        info = discard_infos(state)
        best = min(info.values(), key=lambda d: (d.shanten, -d.useful, d.kind))
        ready_after = {T.tile_name(k): kinds_text(d.useful_kinds)
                       for k, d in sorted(info.items()) if d.shanten == 0 and d.useful_kinds}
        return {"shanten": best.shanten, "best_discard": T.tile_name(best.kind),
                "useful": best.useful, "useful_tiles": kinds_text(best.useful_kinds),
                "ready_after": ready_after}
    sh = state.hand_shanten()
    waits = state.waits()
    return {"shanten": sh, "waits": kinds_text(waits),
            "waits_left": sum(state.unseen(k) for k in waits)}


def describe(state: TableState, opponents: Opponents | None = None) -> dict[str, Any]:
    """The situation as plain data (the review's JSON and HTML show it)."""
    opponents = opponents or Opponents(state)
    threats = opponents.threats()
    return {
        "hand": hand_text(state), **shape(state),
        "wall": state.wall_remaining,
        "dangerous": [{"seat": t.seat, "riichi": t.riichi, "p_ready": round(t.tenpai, 3)}
                      for t in threats],
    }
