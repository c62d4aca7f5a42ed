"""The dataset schema: every array of a shard, its dtype and per-row shape, and the codes used
inside them. One place, so that the writer, the loader, the README and the tests agree.

Bump :data:`SCHEMA_VERSION` whenever a field changes meaning, shape or dtype; the loader
refuses a shard of another version rather than misreading it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from protocols import events as ev

SCHEMA_VERSION = 1

# Bounds of the padded arrays (README: why each is enough for every variant).
HAND_WIDTH = 18  # concealed tiles (Taiwan: 16 + the draw = 17)
MAX_MELDS = 5  # per seat (Taiwan: 5 groups)
MELD_WIDTH = 7  # kind, four tiles, called tile, from seat
MAX_RIVER = 40  # discards per seat in one hand
MAX_FLOWERS = 8
MAX_DORA = 5  # riichi: the indicator and four kan dora
MAX_LEGAL = 48  # legal actions of one request
ACTION_WIDTH = 5  # code, four tiles
MAX_WINS = 3  # wins in one hand (riichi double ron: 2)
KINDS = 34
PAD = -1

REQUEST_KINDS: tuple[str, ...] = ("turn", "claim", "rob_kan")
MELD_KINDS: tuple[str, ...] = ev.MELD_KINDS
ACTION_CODES: tuple[str, ...] = (
    "discard", "riichi", "chi", "pon", "open_kan", "closed_kan", "added_kan", "win", "pass",
    "abortive_draw", "nuki",
)
# How a hand ended; a reason the table or an import gives that is not listed reads "other".
END_REASONS: tuple[str, ...] = (
    "win", "exhaustive", "nine_terminals", "four_riichi", "four_kans", "four_winds",
    "triple_ron", "illegal_action", "false_win", "nagashi", "other",
)

# v_river_flags bits
RIVER_TSUMOGIRI, RIVER_TSUMOGIRI_UNKNOWN, RIVER_RIICHI, RIVER_CLAIMED = 1, 2, 4, 8
# v_seat_flags bits
SEAT_RIICHI, SEAT_RIICHI_PENDING, SEAT_DOUBLE_RIICHI, SEAT_IPPATSU = 1, 2, 4, 8
# v_flags bits (the deciding seat's own state)
FLAG_CALLS_MADE, FLAG_TEMPORARY_FURITEN, FLAG_RIICHI_FURITEN, FLAG_MISSED_WIN = 1, 2, 4, 8
FLAG_LAST_DRAW_REPLACEMENT, FLAG_CALLED_THIS_TURN, FLAG_ROUND_ACTIVE = 16, 32, 64
# v_table columns
TABLE_COLUMNS: tuple[str, ...] = (
    "round_wind", "round_number", "dealer", "honba", "sticks", "wall_remaining", "turn", "kans",
    "current", "last_discard_seat", "last_discard_tile", "last_added_kan_seat",
    "last_added_kan_tile",
)
# h_round columns
ROUND_COLUMNS: tuple[str, ...] = ("round_wind", "round_number", "dealer", "honba", "sticks")


@dataclass(frozen=True)
class Field:
    """One array of a shard: ``shape`` is per row (a decision, or a hand for ``h_`` fields)."""

    name: str
    dtype: str
    shape: tuple[int, ...]
    doc: str
    fill: int = 0  # the value of padding and of what is not set

    def empty(self, rows: int) -> np.ndarray:
        return np.full((rows, *self.shape), self.fill, dtype=self.dtype)


# Fields whose unset entries read -1 (tiles, seats, indices); the others read 0.
_PADDED = frozenset({
    "request_tile", "request_from", "legal", "action", "action_index", "v_hand", "v_last_draw",
    "v_melds", "v_river", "v_flowers", "v_dora", "v_seat_walls", "t_hand", "h_wins",
    "h_final_ranks",
})


def _f(name: str, dtype: str, shape: tuple[int, ...], doc: str, fill: int | None = None
       ) -> Field:
    return Field(name, dtype, shape, doc,
                 fill if fill is not None else PAD if name in _PADDED else 0)


DECISION_FIELDS: tuple[Field, ...] = (
    _f("hand_index", "int32", (), "row of this decision's hand in the shard's h_ arrays"),
    _f("seat", "int8", (), "the deciding seat (absolute, 0..3)"),
    _f("request", "int8", (), "REQUEST_KINDS index: turn, claim, rob_kan"),
    _f("request_tile", "int8", (), "the discard / kan tile offered (claim, rob_kan), else -1"),
    _f("request_from", "int8", (), "who played it, else -1"),
    _f("policy", "int8", (), "index into meta.policies of the seat's player"),
    _f("fallback", "uint8", (), "1 when the brain's fallback answered, not the policy"),
    _f("legal", "int8", (MAX_LEGAL, ACTION_WIDTH), "legal actions (ACTION_CODES, tiles), -1 pad"),
    _f("legal_count", "int8", (), "number of legal actions"),
    _f("action", "int8", (ACTION_WIDTH,), "the action answered"),
    _f("action_index", "int8", (), "its row in legal, -1 when it was illegal"),
    # the deciding seat's own view
    _f("v_hand", "int8", (HAND_WIDTH,), "own concealed tiles in the order held, -1 pad"),
    _f("v_last_draw", "int8", (), "own drawn tile not yet discarded, else -1"),
    _f("v_melds", "int8", (4, MAX_MELDS, MELD_WIDTH),
       "per seat: kind (MELD_KINDS), tiles x4 (-1: hidden or none), called, from seat"),
    _f("v_river", "int8", (4, MAX_RIVER), "per seat: discards in order, -1 pad"),
    _f("v_river_flags", "uint8", (4, MAX_RIVER), "RIVER_* bits"),
    _f("v_river_turn", "uint8", (4, MAX_RIVER),
       "hand-wide discard number of each discard (0 = the hand's first), 255 pad", fill=255),
    _f("v_river_len", "uint8", (4,), "discards per seat"),
    _f("v_flowers", "int8", (4, MAX_FLOWERS), "flowers per seat, -1 pad"),
    _f("v_seat_flags", "uint8", (4,), "SEAT_* bits"),
    _f("v_seat_draws", "uint8", (4,), "draws per seat this hand"),
    _f("v_passed", "int64", (4,), "bit k: kind k discarded since that seat's riichi"),
    _f("v_scores", "int32", (4,), "scores as the seat sees them (riichi sticks paid)"),
    _f("v_dora", "int8", (MAX_DORA,), "dora indicators, -1 pad"),
    _f("v_visible", "uint8", (KINDS,), "copies of each kind this seat has seen"),
    _f("v_table", "int16", (len(TABLE_COLUMNS),), "TABLE_COLUMNS"),
    _f("v_flags", "uint8", (), "FLAG_* bits"),
    _f("v_seat_walls", "int8", (4,), "MCR: draws left in each seat's wall, else -1"),
    # the hidden truth: what only the referee knows, for every seat (own row included)
    _f("t_hand", "int8", (4, HAND_WIDTH), "each seat's concealed tiles in the order held, -1 pad"),
    _f("t_shanten", "int8", (4,), "each seat's shanten (variant forms) on its concealed tiles"),
    _f("t_tenpai", "uint8", (4,), "1: a 3k+1 hand that some kind completes"),
    _f("t_furiten", "uint8", (4,), "riichi: 1 when that seat may not win on a discard"),
    _f("t_waits", "uint8", (4, KINDS), "1 for each kind that completes that seat's hand"),
    _f("t_value", "int16", (4, KINDS),
       "han/fan/tai of the win on that wait (others: ron off the decider; own row: self-draw);"
       " -1 when it is no legal win, 0 on kinds that are no wait"),
    _f("t_points", "int32", (4, KINDS),
       "points of that win paid by the decider (own row: gained by the self-draw)"),
    _f("t_wall", "uint8", (KINDS,),
       "copies of each kind in no hand, meld, river or shown indicator: in the walls"),
)

HAND_FIELDS: tuple[Field, ...] = (
    _f("h_game", "int32", (), "game number in the dataset"),
    _f("h_number", "int16", (), "hand number inside its game"),
    _f("h_seed", "int64", (), "wall seed (self-play), -1 for imports"),
    _f("h_round", "int16", (len(ROUND_COLUMNS),), "ROUND_COLUMNS"),
    _f("h_players", "int8", (4,), "meta.policies index of each seat's player"),
    _f("h_scores_before", "int32", (4,), "scores at the start of the hand"),
    _f("h_deltas", "int32", (4,), "score change of the hand (riichi sticks included)"),
    _f("h_reason", "int8", (), "END_REASONS index"),
    _f("h_wins", "int32", (MAX_WINS, 3), "(winner, from seat or -1 self-draw, value), -1 pad"),
    _f("h_final_scores", "int32", (4,), "the game's final scores"),
    _f("h_final_ranks", "int8", (4,), "riichi placement 1..4, else -1"),
)

FIELDS: dict[str, Field] = {f.name: f for f in (*DECISION_FIELDS, *HAND_FIELDS)}


class DatasetError(ValueError):
    """A dataset or shard cannot be read or written as the schema says; names the file."""


def action_code(action: ev.Action) -> list[int]:
    """An action as ACTION_WIDTH ints: its ACTION_CODES index and up to four tiles."""
    tiles: tuple[int, ...]
    if isinstance(action, ev.Discard):
        code, tiles = ("riichi" if action.riichi else "discard"), (action.tile,)
    elif isinstance(action, ev.Kan):
        code, tiles = action.kind, tuple(action.tiles)
    elif isinstance(action, ev.Chi | ev.Pon):
        code, tiles = ev.action_kind(action), tuple(action.tiles)
    else:
        code, tiles = ev.action_kind(action), ()
    out = [ACTION_CODES.index(code), *tiles]
    return out + [PAD] * (ACTION_WIDTH - len(out))


def decode_action(row: np.ndarray | list[int]) -> ev.Action:
    """The inverse of :func:`action_code`."""
    code = ACTION_CODES[int(row[0])]
    tiles = tuple(int(t) for t in row[1:] if t != PAD)
    if code in ("discard", "riichi"):
        return ev.Discard(tiles[0], riichi=code == "riichi")
    if code == "chi":
        return ev.Chi(tiles)
    if code == "pon":
        return ev.Pon(tiles)
    if code in ("open_kan", "closed_kan", "added_kan"):
        return ev.Kan(code, tiles)
    plain: dict[str, type[ev.Win | ev.Pass | ev.AbortiveDraw | ev.Nuki]] = {
        "win": ev.Win, "pass": ev.Pass, "abortive_draw": ev.AbortiveDraw, "nuki": ev.Nuki}
    return plain[code]()


def end_reason(reason: str) -> int:
    return END_REASONS.index(reason if reason in END_REASONS else "other")
