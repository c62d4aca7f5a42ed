"""The values Tenhou writes for a win and a game's end, from the referee's results (the
``mahjong`` library's yaku names and score line): what the fake Tenhou server sends its clients
and what a tenhou.net/6 export of our own games writes, so that both read as Tenhou's own.

- ``AGARI ten="fu,points,limit"``: the hand's value without honba and sticks; limit 1 mangan,
  2 haneman, 3 baiman, 4 sanbaiman, 5 yakuman, else 0 (``ten="20,8000,1"``).
- ``AGARI yaku``: (id, han) pairs, dora (52) then red fives (54) then ura dora (53); a riichi
  win always lists ura dora, with 0 when none hit (``yaku="1,1,54,1,53,0"``); a yakuman hand has
  ``yakuman="39"`` and no ``yaku``.
- game points: the score rounded to thousands (five down, six up), less the 30000 returned,
  plus the uma (+20 +10 -10 -20); the top takes what the others lose, so the oka (4 x 5000)
  goes to it and the points sum to zero.
"""

from __future__ import annotations

from protocols import events as ev

UMA = (20, 10, -10, -20)
RETURN_POINTS = 30000
_LIMITS = (("yakuman", 5), ("sanbaiman", 4), ("baiman", 3), ("haneman", 2), ("mangan", 1))
DORA, URA_DORA, AKA_DORA = 52, 53, 54
YAKU_INDEX = {
    "Menzen Tsumo": 0, "Riichi": 1, "Ippatsu": 2, "Chankan": 3, "Rinshan Kaihou": 4,
    "Haitei Raoyue": 5, "Houtei Raoyui": 6, "Pinfu": 7, "Tanyao": 8, "Iipeiko": 9,
    "Yakuhai (seat wind east)": 10, "Yakuhai (seat wind south)": 11,
    "Yakuhai (seat wind west)": 12, "Yakuhai (seat wind north)": 13,
    "Yakuhai (round wind east)": 14, "Yakuhai (round wind south)": 15,
    "Yakuhai (round wind west)": 16, "Yakuhai (round wind north)": 17,
    "Yakuhai (haku)": 18, "Yakuhai (hatsu)": 19, "Yakuhai (chun)": 20, "Double Riichi": 21,
    "Chiitoitsu": 22, "Chantai": 23, "Ittsu": 24, "Sanshoku Doujun": 25,
    "Sanshoku Doukou": 26, "San Kantsu": 27, "Toitoi": 28, "San Ankou": 29,
    "Shou Sangen": 30, "Honroutou": 31, "Ryanpeikou": 32, "Junchan": 33, "Honitsu": 34,
    "Chinitsu": 35, "Renhou": 36, "Tenhou": 37, "Chiihou": 38, "Daisangen": 39,
    "Suu Ankou": 40, "Suu Ankou Tanki": 41, "Tsuu Iisou": 42, "Ryuuiisou": 43,
    "Chinroutou": 44, "Chuuren Poutou": 45, "Daburu Chuuren Poutou": 46, "Kokushi Musou": 47,
    "Kokushi Musou Juusanmen Matchi": 48, "Dai Suushii": 49, "Shousuushii": 50,
    "Suu Kantsu": 51, "Dora": DORA, "Ura Dora": URA_DORA, "Aka Dora": AKA_DORA,
}


def limit_class(detail: str) -> int:
    """The third field of ``ten`` from the referee's score line (e.g. "30符 haneman")."""
    text = detail.lower()
    return next((value for word, value in _LIMITS if word in text), 0)


def fu_of(detail: str) -> int:
    return int(detail.split("符")[0]) if "符" in detail else 0


def hand_points(won: ev.RoundWon, honba: int) -> int:
    """What the hand is worth, as ``ten`` gives it: paid by the others, less the ``honba``
    they paid with it (none to a double ron's second winner). On a discard with pao the
    liable seat pays half of it beside the discarder (Tenhou's 折半)."""
    if won.from_seat is None:
        payers = {s for s in range(len(won.deltas)) if s != won.winner}
    else:
        payers = {won.from_seat, *(() if won.pao_seat is None else (won.pao_seat,))}
    return -sum(won.deltas[s] for s in payers) - 300 * honba


def yaku_attrs(items: tuple[str, ...], riichi: bool) -> dict[str, str]:
    """``yaku`` / ``yakuman`` from the referee's "name(han)" items."""
    pairs: list[tuple[int, int]] = []
    yakuman: list[int] = []
    dora = {DORA: 0, AKA_DORA: 0, URA_DORA: 0}
    for text in items:
        name, _, value = text.rpartition("(")
        index, han = YAKU_INDEX.get(name), int(value.rstrip(")") or 0)
        if index is None:
            continue
        if index in dora:
            dora[index] += han
        elif han >= 13:
            yakuman.append(index)
        elif han > 0:
            pairs.append((index, han))
    if yakuman:
        return {"yakuman": ",".join(map(str, yakuman))}
    pairs += [(i, dora[i]) for i in (DORA, AKA_DORA, URA_DORA) if dora[i] or
              (i == URA_DORA and riichi)]
    return {"yaku": ",".join(f"{i},{han}" for i, han in pairs)}


def _thousands(score: int) -> int:
    """A score in thousands, five down six up: 35500 -> 35, 35600 -> 36."""
    return (score // 100 + 4) // 10


def placement(scores: list[int]) -> list[int]:
    """Rank 1..4 of each seat, ties to the seat nearer the first dealer (seat 0), as on
    Tenhou."""
    order = sorted(range(4), key=lambda s: (-scores[s], s))
    return [order.index(seat) + 1 for seat in range(4)]


def game_points(scores: list[int], ranks: list[int]) -> list[float]:
    """Each seat's game points (see the module's docstring); ``ranks`` 1..4 per seat."""
    points = [0.0] * 4
    top = ranks.index(1)
    for seat in range(4):
        if seat != top:
            points[seat] = float(_thousands(scores[seat]) - RETURN_POINTS // 1000
                                 + UMA[ranks[seat] - 1])
    points[top] = 0.0 - sum(points)
    return points
