"""`mjbot shanten`, `mjbot score`, `mjbot demo`: the hand tools."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from adapter.commands import (
    UserInputError,
    add_variant_option,
    at_least,
    log,
    mjbot_version,
    seat_number,
)
from brain.rules.variant import variant_of

if TYPE_CHECKING:  # the rules load inside the commands that use them
    from brain.rules.base import WinContext, WinScore
    from brain.rules.variant import Variant
    from brain.state import Meld


def register(sub: Any) -> None:
    s = sub.add_parser("shanten", help="shanten number and useful tiles of an mpsz hand")
    s.add_argument("hand", help="e.g. 123m406p789s1177z (3k+1 or 3k+2 tiles, k <= 5)")
    s.set_defaults(handler=cmd_shanten)

    what = ("value a winning hand in a variant: its items (han, fan or tai) and each seat's "
            "score change; HAND is the concealed tiles, the winning tile included, and the "
            "melds beside it are given with --chi, --pon, --kong and --concealed-kong")
    sc = sub.add_parser("score", help="value a winning hand in a variant", description=what)
    sc.add_argument("hand", help="concealed tiles including the winning tile, mpsz")
    add_variant_option(sc)
    sc.add_argument("--win", required=True, help="the winning tile, mpsz (e.g. 5p)")
    sc.add_argument("--ron-from", type=seat_number, default=None,
                    help="seat that discarded the winning tile (default: self-draw)")
    sc.add_argument("--seat", type=seat_number, default=0, help="the winner's seat (default 0)")
    sc.add_argument("--dealer", type=seat_number, default=None,
                    help="the dealer's seat, East (default 0, or as --seat-wind makes it)")
    for option, example, what_meld in (
            ("--chi", "345m", "a chow called from the seat before the winner"),
            ("--pon", "777z", "a pung called from the seat before the winner"),
            ("--kong", "5555p", "an exposed kong (called from the seat before the winner)"),
            ("--concealed-kong", "1111s", "a concealed kong")):
        sc.add_argument(option, action="append", default=[], metavar="TILES",
                        help=f"{what_meld}, mpsz (e.g. {example}); repeat for more")
    sc.add_argument("--round-wind", type=str.upper, choices=WIND_NAMES, default="E",
                    help="the round's (prevalent) wind: riichi and MCR count its pung "
                    "(default %(default)s)")
    sc.add_argument("--seat-wind", type=str.upper, choices=WIND_NAMES, default=None,
                    help="the winner's seat wind (it places the dealer, East; default: from "
                    "--seat and --dealer)")
    sc.add_argument("--riichi", action="store_true", help="the winner declared riichi")
    sc.add_argument("--dora", default="",
                    help="dora indicators, mpsz, at most 5")
    sc.add_argument("--flowers", type=at_least(0), default=0,
                    help="MCR: flowers the winner set aside, a fan each, not counted toward "
                    "the 8-fan floor (default 0)")
    sc.set_defaults(handler=cmd_score)

    d = sub.add_parser("demo", help="shanten and scoring of sample hands in every variant")
    d.set_defaults(handler=cmd_demo)


def cmd_shanten(args: argparse.Namespace) -> int:
    from brain.shanten import HandError, shanten, useful_tiles
    from protocols.tiles import TileError, counts34, is_flower, parse_mpsz, to_mpsz

    try:
        tiles = parse_mpsz(args.hand)
        # counts34 has no place for a flower: it was dropped, and the rest read as the hand
        flowers = [t for t in tiles if is_flower(t)]
        if flowers:
            raise UserInputError(f"{args.hand!r} holds {to_mpsz(flowers)}: flowers are set "
                                 "aside (MCR, Taiwan; riichi has none), never part of a hand: "
                                 "give it without them")
        counts = counts34(tiles)
        if max(counts) > 4:
            raise UserInputError(f"{args.hand!r} holds more than four of one tile")
        value = shanten(counts)
        useful = useful_tiles(counts)
    except (TileError, HandError) as exc:
        raise UserInputError(str(exc)) from None
    print(value)
    print(to_mpsz(sorted(useful)))
    return 0


WIND_NAMES = ("E", "S", "W", "N")
MELD_OPTIONS = (("chi", "--chi"), ("pon", "--pon"), ("open_kan", "--kong"),
                ("closed_kan", "--concealed-kong"))


def cmd_score(args: argparse.Namespace) -> int:
    from brain.rules import rules_for
    from brain.rules.base import WinContext
    from protocols import tiles as T
    from protocols.tiles import RED_5M, RED_5P, RED_5S, TileError, counts34, is_flower, parse_mpsz

    try:
        concealed = tuple(parse_mpsz(args.hand))
        win = parse_mpsz(args.win)
        dora = tuple(parse_mpsz(args.dora))
    except TileError as exc:
        raise UserInputError(str(exc)) from None
    variant = variant_of(args.variant)
    dealer = _dealer(args, variant)
    melds = _melds(args, variant)
    meld_tiles = tuple(t for m in melds for t in m.tiles)
    # parse_mpsz reads 1f-8f and 0m/0p/0s, but no rules score such a hand: riichi's raised
    # TileError (a flower) or ValueError (a second red five), the others HandError
    if any(is_flower(t) for t in concealed):
        raise UserInputError(f"{args.hand!r} holds a flower (1f-8f): flowers are set aside, "
                             "never part of a winning hand")
    if any(is_flower(t) for t in dora):
        raise UserInputError(f"--dora {args.dora}: a flower is no dora indicator")
    if max(counts34(concealed)) > 4:  # the riichi rules' ValueError, a traceback
        raise UserInputError(f"{args.hand!r} holds more than four of one tile")
    if melds and max(counts34(concealed + meld_tiles)) > 4:
        raise UserInputError(f"HAND {args.hand} and its melds hold more than four of one tile")
    if variant.red_fives and any((concealed + meld_tiles).count(red) > 1
                                 for red in (RED_5M, RED_5P, RED_5S)):
        raise UserInputError(f"{args.hand!r}{' and its melds hold' if melds else ' holds'} "
                             f"two red fives of one suit: {args.variant} has one of each")
    if not melds and len(concealed) != variant.hand_size + 1:  # every tile is in HAND
        raise UserInputError(f"{args.hand!r} is {len(concealed)} tiles: a {args.variant} win "
                             f"is {variant.hand_size + 1}, the winning tile included")
    if 3 * len(melds) > variant.hand_size - 1:  # a pair at least stays in HAND
        raise UserInputError(f"{len(melds)} melds: a {args.variant} hand holds at most "
                             f"{(variant.hand_size - 1) // 3} beside its pair")
    if melds and len(concealed) + 3 * len(melds) != variant.hand_size + 1:
        raise UserInputError(
            f"{args.hand!r} is {len(concealed)} tiles beside {len(melds)} meld(s): a "
            f"{args.variant} win is {variant.hand_size + 1} tiles, a meld (a kong too) counting "
            f"3, the winning tile in HAND, so HAND is {variant.hand_size + 1 - 3 * len(melds)} "
            "tiles here")
    if any(counts34(concealed)[variant.tile_kinds:]):
        raise UserInputError(f"{args.hand!r} holds honours: {args.variant} has none")
    if args.riichi and not variant.has_riichi:  # else ignored, as if the value counted it
        raise UserInputError(f"--riichi: {args.variant} has no riichi")
    if args.riichi and any(m.kind != "closed_kan" for m in melds):
        raise UserInputError("--riichi: a hand with a called meld (--chi, --pon, --kong) is "
                             "open, and only a closed hand declares riichi")
    if dora and not variant.has_dora:
        raise UserInputError(f"--dora: {args.variant} has no dora")
    if len(dora) > 5:  # the first indicator and four kan dora
        raise UserInputError(f"--dora {args.dora}: {len(dora)} indicators, at most 5 are shown")
    if max(counts34(concealed + meld_tiles + dora)) > 4:
        raise UserInputError(f"HAND{' and its melds' * bool(melds)} and --dora {args.dora} "
                             "hold more than four of one tile")
    rules = rules_for(args.variant)
    if args.flowers and not rules.flowers:  # only MCR's rules count them
        raise UserInputError(f"--flowers: {args.variant} has no flowers")
    if args.flowers > rules.flowers:
        raise UserInputError(f"--flowers {args.flowers}: {args.variant} has {rules.flowers} "
                             "flowers")
    if len(win) != 1 or win[0] not in concealed:
        raise UserInputError("--win must be one tile that is part of HAND")
    if args.ron_from == args.seat:
        raise UserInputError(f"--ron-from {args.ron_from} is the winner's own seat (--seat); "
                             "leave it out for a self-draw")
    ctx = WinContext(concealed=concealed, melds=melds, win_tile=win[0], seat=args.seat,
                     from_seat=args.ron_from, dealer=dealer,
                     round_wind=T.EAST + WIND_NAMES.index(args.round_wind),
                     riichi=args.riichi, dora_indicators=dora, flowers=args.flowers)
    result = rules.score(ctx)
    if result is None:
        print(f"not a winning hand under {args.variant} rules{_why_no_win(ctx, variant)}")
        return 1
    print_score(result)
    return 0


def _dealer(args: argparse.Namespace, variant: Variant) -> int:
    """The dealer's seat: --dealer, or where --seat-wind places East (the winner's seat wind
    is East for the dealer, South for the seat after); --round-wind where the variant counts
    it."""
    if args.round_wind != "E" and not variant.value_honours:
        raise UserInputError(f"--round-wind: {args.variant} counts no round wind"
                             + (" (its 門風刻 is the seat wind's: --seat-wind)"
                                if variant.tile_kinds > 27 else ""))
    if args.seat_wind is None:
        return 0 if args.dealer is None else int(args.dealer)
    if variant.tile_kinds <= 27:
        raise UserInputError(f"--seat-wind: {args.variant} has no winds; --dealer says who "
                             "deals")
    dealer = (int(args.seat) - WIND_NAMES.index(args.seat_wind)) % 4
    if args.dealer is not None and args.dealer != dealer:
        raise UserInputError(f"--seat-wind {args.seat_wind} makes seat {dealer} the dealer "
                             f"(East) with --seat {args.seat}, not --dealer {args.dealer}: "
                             "give one of them")
    return dealer


def _melds(args: argparse.Namespace, variant: Variant) -> tuple[Meld, ...]:
    """The winner's melds from --chi, --pon, --kong and --concealed-kong: each the tiles of one
    meld, checked for its shape (a called tile from the seat before the winner, which decides
    no MCR fan; riichi's liability for a big hand alone reads it)."""
    from brain.state import Meld
    from protocols import tiles as T
    from protocols.tiles import TileError, is_flower, parse_mpsz

    melds: list[Meld] = []
    giver = (args.seat - 1) % 4
    for kind, option in MELD_OPTIONS:
        for given in getattr(args, option[2:].replace("-", "_")):
            try:
                typed = parse_mpsz(given)
            except TileError as exc:
                raise UserInputError(f"{option} {given}: {exc}") from None
            # in the one order every meld of the project has (a codec's, the referee's): the
            # riichi calculator reads a chow given out of order (213m) as no chow at all
            tiles = tuple(sorted(typed, key=T.sort_key))
            if any(is_flower(t) for t in tiles):
                raise UserInputError(f"{option} {given}: a flower is set aside, never melded")
            kinds = sorted(T.kind(t) for t in tiles)
            if any(k >= variant.tile_kinds for k in kinds):
                raise UserInputError(f"{option} {given}: {args.variant} has no honours")
            size = 3 if kind in ("chi", "pon") else 4
            if kind == "chi":
                shape = (len(kinds) == 3 and kinds[0] < 27 and kinds[0] % 9 <= 6
                         and kinds == [kinds[0], kinds[0] + 1, kinds[0] + 2])
                what = "three tiles in a row of one suit (345m)"
            else:
                shape = len(kinds) == size and len(set(kinds)) == 1
                what = f"{size} of one tile"
            if not shape:
                name = {"chi": "a chow", "pon": "a pung"}.get(kind, "a kong")
                raise UserInputError(f"{option} {given}: not {name}, which is {what}")
            closed = kind == "closed_kan"
            melds.append(Meld(kind, tiles, called=None if closed else typed[0],
                              from_seat=None if closed else giver))
    return tuple(melds)


def _why_no_win(ctx: WinContext, variant: Variant) -> str:
    """Why a hand scored nothing: one the rules value but do not pay (an MCR hand under 8
    fan) says its value (the floor is the usual reason, and by how much tells the user most)."""
    from brain.shanten import shanten
    from protocols.tiles import counts34

    items = variant.rules.unpaid_items(ctx)
    if items is not None:
        listed = ", ".join(f"{name} {value}" for name, value in items)
        return (f": {sum(v for _, v in items)} {variant.value_unit} ({listed}), under the "
                f"{variant.min_fan} a win needs (flowers not counted)")
    if shanten(counts34(ctx.concealed)) > -1:
        return ""
    # a shape that wins elsewhere
    return (": a complete shape, but one these rules do not pay (no yaku, under the fan "
            "floor, or a shape they do not allow)")


def print_score(result: WinScore) -> None:
    """Value, items and deltas; a riichi value also its fu and limit (the deltas follow from
    han and fu: 3 han at 30 fu is 2000 all), fan and tai having neither."""
    items = ", ".join([f"{name} {value}" for name, value in result.items]
                      + [f"{name} {value} paid by {who} alone"
                         for name, value, who in result.payer_items])
    yakuman = (result.limit or "").endswith("yakuman")  # "yakuman", "2x yakuman": no fu
    shown = [] if result.fu is None or yakuman else [f"{result.fu} fu"]
    shown += [result.limit] if result.limit else []
    print(f"value {result.value}: {items}" + (f" ({', '.join(shown)})" if shown else ""))
    print(f"deltas {list(result.deltas)}")



DEMO_HANDS: list[tuple[str, str, str, dict[str, Any]]] = [
    ("riichi", "234m340p456789s55z", "4m", {"from_seat": 2, "riichi": True,
                                             "dora_indicators": (3,)}),
    ("mcr", "123456789m234p55s", "5s", {"from_seat": 3}),
    ("taiwan16", "123m456m789p123s456s99p", "6s", {"from_seat": 2, "seat": 1}),
    ("mass", "111333555777m99m", "9m", {}),
]


def cmd_demo(args: argparse.Namespace) -> int:
    """Shanten, useful tiles and scoring of sample hands: a quick look at every variant."""
    from brain.rules import rules_for
    from brain.rules.base import WinContext
    from brain.shanten import shanten, useful_tiles
    from protocols.tiles import counts34, parse_mpsz, to_mpsz

    print(f"mjbot {mjbot_version()}: shanten and scoring in every variant\n")
    for hand in ("123m406p789s1177z", "1112345678999m", "19m19p19s1234567z",
                 "123m456m789m123p4578p"):
        counts = counts34(parse_mpsz(hand))
        useful = to_mpsz(sorted(useful_tiles(counts)))
        print(f"shanten {hand:<22} {shanten(counts):>2}   useful {useful}")
    print()
    for variant, hand, win, given in DEMO_HANDS:
        tiles = tuple(parse_mpsz(hand))
        extra = {"seat": 0, "from_seat": None, **given}  # a copy: DEMO_HANDS stays as it is
        ctx = WinContext(concealed=tiles, melds=(), win_tile=parse_mpsz(win)[0], **extra)
        result = rules_for(variant).score(ctx)
        print(f"{variant:<9} {hand} wins on {win}:")
        if result is None:
            print("  not a win")
            continue
        print_score(result)
    log().info("demo finished")
    return 0
