"""The internal event stream: what happened at the table, what the platform asks, what we answer.

Every codec turns its platform's messages into these types and nothing else, so the brain, the
game log and the replayer know one vocabulary. All are immutable, slotted dataclasses. Seats are
absolute 0..3 in turn order (seat + 1 plays next); the bot's own seat comes in ``GameStarted``.
Tiles are the ints of :mod:`protocols.tiles`.

The field names are a contract (tests, tools and logs rely on them): add fields, rename none.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from protocols.tiles import Tile

Variant = Literal["riichi", "mcr", "taiwan16", "mass"]
VARIANTS: tuple[str, ...] = ("riichi", "mcr", "taiwan16", "mass")

MeldKind = Literal["chi", "pon", "open_kan", "added_kan", "closed_kan", "nuki"]
MELD_KINDS: tuple[str, ...] = ("chi", "pon", "open_kan", "added_kan", "closed_kan", "nuki")
KAN_KINDS: tuple[str, ...] = ("open_kan", "added_kan", "closed_kan")

RequestKind = Literal["turn", "claim", "rob_kan", "ack"]
REQUEST_KINDS: tuple[str, ...] = ("turn", "claim", "rob_kan", "ack")

# Action kind names, as used in DecisionRequest.offered and by Action.kind.
ACTION_KINDS: tuple[str, ...] = (
    "discard", "riichi", "chi", "pon", "kan", "win", "pass", "abortive_draw", "nuki",
)

_frozen = {"frozen": True, "slots": True}


# --------------------------------------------------------------------------- events


@dataclass(**_frozen)
class GameStarted:
    variant: str
    seat: int
    names: tuple[str, ...] = ("", "", "", "")
    rules: dict[str, Any] = field(default_factory=dict, hash=False)


@dataclass(**_frozen)
class RoundStarted:
    """A hand begins. ``hand`` is this seat's concealed starting tiles (13, 16, or the dealer's
    14/17 where the platform deals them at once). ``round_number`` counts hands inside the wind
    (0 = East 1); ``wall_remaining`` is the live wall after the deal where the platform says it.
    ``hands``: all four starting hands, only in full-information records (game-log imports, the
    local referee's own log); a live platform leaves it empty."""

    round_wind: int
    dealer: int
    honba: int = 0
    sticks: int = 0
    scores: tuple[int, ...] = (0, 0, 0, 0)
    dora_indicators: tuple[Tile, ...] = ()
    hand: tuple[Tile, ...] = ()
    round_number: int = 0
    wall_remaining: int | None = None
    hands: tuple[tuple[Tile, ...], ...] = ()


@dataclass(**_frozen)
class TileDrawn:
    seat: int
    tile: Tile | None = None
    replacement: bool = False


@dataclass(**_frozen)
class TileDiscarded:
    seat: int
    tile: Tile
    tsumogiri: bool | None = None


@dataclass(**_frozen)
class MeldCalled:
    """A call. ``tiles`` are all tiles of the resulting meld (for an added kan: the four of the
    kan); ``called`` is the tile taken from another seat (the added tile for an added kan, None
    for a closed kan); ``from_seat`` who gave it (None for a closed or added kan)."""

    seat: int
    kind: str
    tiles: tuple[Tile, ...]
    called: Tile | None = None
    from_seat: int | None = None


@dataclass(**_frozen)
class RiichiDeclared:
    seat: int


@dataclass(**_frozen)
class RiichiAccepted:
    seat: int
    scores: tuple[int, ...] | None = None


@dataclass(**_frozen)
class DoraRevealed:
    indicator: Tile


@dataclass(**_frozen)
class FlowerReplaced:
    seat: int
    flower: Tile


@dataclass(**_frozen)
class RoundWon:
    """``value`` is han (riichi), fan (MCR) or tai (Taiwan); ``deltas`` the score change per seat.
    ``hand`` is the winner's concealed hand including the winning tile where known. ``yaku`` are
    the platform's own item strings (e.g. Tenhou's "立直(1飜)"), ``detail`` its score line
    (e.g. "満貫8000点"), ``pao_seat`` the seat liable for a yakuman (pao), where given."""

    winner: int
    from_seat: int | None
    hand: tuple[Tile, ...]
    win_tile: Tile
    value: int
    deltas: tuple[int, ...]
    yaku: tuple[str, ...] = ()
    ura_dora_indicators: tuple[Tile, ...] = ()
    pao_seat: int | None = None
    detail: str = ""


@dataclass(**_frozen)
class RoundDrawn:
    """``reason``: "exhaustive", "nine_terminals", "four_riichi", "four_kans", "four_winds",
    "triple_ron", "nagashi" or a platform's own word."""

    reason: str
    deltas: tuple[int, ...] = (0, 0, 0, 0)
    tenpai: tuple[int, ...] = ()


@dataclass(**_frozen)
class GameEnded:
    """``abandoned``: the game stopped without an end of its own (the platform began another
    game while this one ran, e.g. Tenhou after a resumed game); ``scores`` are then the last
    known, not final ones."""

    scores: tuple[int, ...]
    abandoned: bool = False


@dataclass(**_frozen)
class PlatformNotice:
    text: str


@dataclass(**_frozen)
class FuritenShown:
    """The platform's word on a seat's furiten (Tenhou's ``<FURITEN show=.../>``, our own
    seat's): it knows the order of play, which a reconnect's table does not give. It may come
    just before the echo of the discard that changed it; it stands until the next word."""

    seat: int
    furiten: bool


Event = (
    GameStarted | RoundStarted | TileDrawn | TileDiscarded | MeldCalled | RiichiDeclared
    | RiichiAccepted | DoraRevealed | FlowerReplaced | RoundWon | RoundDrawn | GameEnded
    | PlatformNotice | FuritenShown
)
EVENT_TYPES: tuple[type, ...] = (
    GameStarted, RoundStarted, TileDrawn, TileDiscarded, MeldCalled, RiichiDeclared,
    RiichiAccepted, DoraRevealed, FlowerReplaced, RoundWon, RoundDrawn, GameEnded, PlatformNotice,
    FuritenShown,
)


@dataclass(**_frozen)
class DecisionRequest:
    """The platform wants an answer.

    ``kind``: "turn" (after our own draw or call), "claim" (another seat's discard), "rob_kan"
    (another seat's added kan), "ack" (only an acknowledgement is possible).
    ``offered``: the action kinds the platform offers where it says so (Tenhou t-flags, NTPU
    /ask), else None. ``deadline``: monotonic seconds, or None. ``tile`` / ``from_seat``: the
    discard or kan tile being offered and who played it, where it applies.
    """

    kind: str
    offered: frozenset[str] | None = None
    deadline: float | None = None
    tile: Tile | None = None
    from_seat: int | None = None


# --------------------------------------------------------------------------- actions


@dataclass(**_frozen)
class Discard:
    tile: Tile
    riichi: bool = False


@dataclass(**_frozen)
class Chi:
    """``tiles``: the two tiles from our own hand that join the claimed discard."""

    tiles: tuple[Tile, ...]


@dataclass(**_frozen)
class Pon:
    """``tiles``: the two tiles from our own hand that join the claimed discard."""

    tiles: tuple[Tile, ...]


@dataclass(**_frozen)
class Kan:
    """``kind``: "open_kan" (``tiles``: our three matching the discard), "closed_kan" (our four),
    "added_kan" (the one tile we add to our pon)."""

    kind: str
    tiles: tuple[Tile, ...]


@dataclass(**_frozen)
class Win:
    pass


@dataclass(**_frozen)
class Pass:
    pass


@dataclass(**_frozen)
class AbortiveDraw:
    pass


@dataclass(**_frozen)
class Nuki:
    pass


Action = Discard | Chi | Pon | Kan | Win | Pass | AbortiveDraw | Nuki
ACTION_TYPES: tuple[type, ...] = (Discard, Chi, Pon, Kan, Win, Pass, AbortiveDraw, Nuki)

_ACTION_KIND = {
    Chi: "chi", Pon: "pon", Kan: "kan", Win: "win", Pass: "pass",
    AbortiveDraw: "abortive_draw", Nuki: "nuki",
}


def action_kind(action: Action) -> str:
    """The name of an action as in ``DecisionRequest.offered``: "discard", "riichi" (a discard
    that declares riichi), "chi", "pon", "kan", "win", "pass", "abortive_draw", "nuki"."""
    if isinstance(action, Discard):
        return "riichi" if action.riichi else "discard"
    return _ACTION_KIND[type(action)]
