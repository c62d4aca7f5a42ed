"""The ``owari`` the fake Tenhou server writes at a game's end, as real Tenhou writes it (the
captures in ../shared/data/tenhou): ``owari="s0,p0,s1,p1,..."``, final scores in hundreds and
game points (``owari="121,-38.0,383,48.0,138,-26.0,358,16.0"``). Clients read it, so a fake that
rounds or orders it differently measures the wrong thing. A win's values (``ten``, ``yaku``)
and the game points are in protocols/tenhou_values.py, which a tenhou.net/6 export shares.
"""

from __future__ import annotations

from protocols.tenhou_values import game_points


def owari(scores: list[int], ranks: list[int], seat: int) -> str:
    """The ``owari`` value as ``seat`` is told it (seats relative to it)."""
    points = game_points(scores, ranks)
    out: list[str] = []
    for r in range(4):
        s = (seat + r) % 4
        out += [str(scores[s] // 100), f"{points[s]:.1f}"]
    return ",".join(out)
