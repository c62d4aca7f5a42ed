"""What the code outside ``brain/rules/`` may ask of a variant, as one frozen object per variant.

The name ("riichi", "mcr", "taiwan16", "mass") stays the wire and log name (events, CLI options,
game logs); everything else looks the :class:`Variant` up once where the name enters
(``variant_of(name)``) and asks it questions, so a new variant touches ``brain/rules/`` and the
registry below, nothing else. Every field answers a question some caller actually asks.
This module imports nothing of the brain, so ``brain.state`` can use it without a cycle.
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib import import_module
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from brain.rules.base import Rules


@dataclass(frozen=True)
class Variant:
    """One variant's facts. Table rules first, then the tuning numbers of policies, tools and
    benchmarks (a typical win's size and the like), which are per variant for the same reason."""

    name: str  # the wire / log name
    rules_module: str  # the module whose ``RULES`` implements brain.rules.base.Rules
    # ---- the tiles and the wall
    hand_size: int  # tiles dealt to each seat (the dealer's extra one not counted)
    tile_kinds: int  # kinds in the set: 34, or 27 where there are no honours (mass)
    # live-wall draws left right after the deal, as the state first assumes (the dealer's extra
    # tile included in the deal where the variant deals it): riichi 136 - 52 - 14 dead wall;
    # MCR (Botzone) 4 private walls of 34 - 13; Taiwan 136 - 64 - 1 (dealer's 17th) - 16 tiles
    # left when the hand is drawn; mass 108 - 53
    live_wall: int
    red_fives: bool  # one five of each suit is red (a dora)
    private_walls: bool  # Botzone MCR: each seat deals and draws from its own 34-tile wall
    dead_wall: int  # tiles kept off the live wall (riichi: 4 replacements + indicators)
    wall_reserve: int  # live tiles left undrawn when the hand is drawn (Taiwan's 16)
    # the hand ends right after the draw that empties the live wall: that drawer may only win
    # by it and never discards, so no win on a discard after the last draw (Taiwan, as at the
    # NYCU lab referee); else the last drawer discards and may be won on (riichi's houtei)
    last_draw_ends: bool
    # ---- the table's rules
    has_riichi: bool  # riichi declarations, sticks, furiten, the riichi abortive draws
    has_dora: bool  # dora indicators, kan dora and ura dora
    multi_ron: bool  # several seats may win one discard (else head bump: the first one)
    noten_payments: bool  # an exhaustive draw pays the ready seats
    dealer_repeats: bool  # the dealer keeps the deal on draws (riichi renchan)
    ranked: bool  # a game ends in placements (ranks, uma) rather than a score sum
    start_score: int  # each seat's score at the start of a game
    one_hand_game: bool  # a game is one hand, dealer 0, random round wind (Botzone MCR)
    botzone_penalties: bool  # an illegal answer costs the Botzone -30 / +10 and ends the match
    min_fan: int  # a fan floor the policies plan toward (MCR's 8)
    needs_yaku: bool  # a win needs a yaku (riichi): an open hand must keep one
    regular_shapes_only: bool  # winning shapes are 5 groups and a pair only (no seven pairs)
    value_honours: bool  # pungs of value honours, round wind included, score on their own
    dealer_surcharge: bool  # a dealer pays more when dealing in (Taiwan): the payer matters
    all_pay_base: bool  # on a discard win every other seat pays a base too (MCR's 8)
    dealer_pays_double: bool  # a self-draw: the dealer pays half, the others a quarter each
    tsumo_share: float  # of a deal-in's value, what one payer pays on a self-draw
    hidden_closed_kans: bool  # the platform does not show a concealed kong's tiles
    game_rules: tuple[tuple[str, object], ...]  # GameStarted.rules of a local game, fixed part
    # ---- words
    value_unit: str  # what a win's value counts: han, fan or tai
    score_unit: str  # what a hand's score change counts in the arena table
    # ---- tuning: policies (mc, nn) and the opponent models
    typical_win: float  # a typical win of ours, the scale of the mc playouts' fold rule
    dealer_factor: float  # how much more a dealer's typical win is worth
    fold_floor: float  # the least an mc fold is taken to cost
    call_gate: tuple[float, float]  # mc's call gate (z, margin as a share of a typical win)
    value_scale: float  # nn value head: score changes are divided by this
    eval_hands: int  # hands per policy mix when the opponent models are evaluated
    quiet_tenpai: bool  # ready hands show little (no riichi, few calls): a harder tenpai head
    plan_planes: bool  # nn: its network reads the fan-floor planner's planes (encoding 2)
    # ---- benchmarks
    bench_units: int  # arena wall sets in `mjbot bench arena` (~25-35 hands each)
    bench_flat_value: float  # `mjbot bench mc`: the flat win value its playouts compare

    @property
    def rules(self) -> Rules:
        """The rules object (imported on first use: the rules libraries are heavy)."""
        rules: Rules = import_module(self.rules_module).RULES
        return rules


RIICHI = Variant(
    name="riichi", rules_module="brain.rules.riichi",
    hand_size=13, tile_kinds=34, live_wall=70, red_fives=True,
    private_walls=False, dead_wall=14, wall_reserve=0, last_draw_ends=False,
    has_riichi=True, has_dora=True, multi_ron=True, noten_payments=True, dealer_repeats=True,
    ranked=True, start_score=25000, one_hand_game=False, botzone_penalties=False,
    min_fan=0, needs_yaku=True, regular_shapes_only=False, value_honours=True,
    dealer_surcharge=False, all_pay_base=False, dealer_pays_double=True, tsumo_share=1 / 3,
    hidden_closed_kans=False, game_rules=(("red_fives", True), ("double_ron", True)),
    value_unit="han", score_unit="points",
    typical_win=6000.0, dealer_factor=1.5, fold_floor=100.0, call_gate=(2.0, 0.05),
    value_scale=10_000.0, eval_hands=300, quiet_tenpai=False, plan_planes=False,
    bench_units=6, bench_flat_value=5000.0)

MCR = Variant(
    name="mcr", rules_module="brain.rules.mcr",
    hand_size=13, tile_kinds=34, live_wall=84, red_fives=False,
    private_walls=True, dead_wall=0, wall_reserve=0, last_draw_ends=False,
    has_riichi=False, has_dora=False, multi_ron=False, noten_payments=False,
    dealer_repeats=False, ranked=False, start_score=0, one_hand_game=True,
    botzone_penalties=True,
    min_fan=8, needs_yaku=False, regular_shapes_only=False, value_honours=True,
    dealer_surcharge=False, all_pay_base=True, dealer_pays_double=False, tsumo_share=1.0,
    hidden_closed_kans=True, game_rules=(("duplicate_walls", True), ("min_fan", 8)),
    value_unit="fan", score_unit="points",
    typical_win=40.0, dealer_factor=1.0, fold_floor=1.0, call_gate=(0.0, 0.0),
    value_scale=100.0, eval_hands=200, quiet_tenpai=True, plan_planes=True,
    bench_units=24, bench_flat_value=20.0)

TAIWAN16 = Variant(
    name="taiwan16", rules_module="brain.rules.taiwan16",
    hand_size=16, tile_kinds=34, live_wall=55, red_fives=False,
    private_walls=False, dead_wall=0, wall_reserve=16, last_draw_ends=True,
    has_riichi=False, has_dora=False, multi_ron=False, noten_payments=False,
    dealer_repeats=False, ranked=False, start_score=0, one_hand_game=False,
    botzone_penalties=False,
    min_fan=0, needs_yaku=False, regular_shapes_only=True, value_honours=False,
    dealer_surcharge=True, all_pay_base=False, dealer_pays_double=False, tsumo_share=1.0,
    hidden_closed_kans=True, game_rules=(),
    value_unit="tai", score_unit="points",
    typical_win=3000.0, dealer_factor=1.0, fold_floor=50.0, call_gate=(0.0, 0.0),
    value_scale=5_000.0, eval_hands=300, quiet_tenpai=False, plan_planes=False,
    bench_units=6, bench_flat_value=2500.0)

MASS = Variant(
    name="mass", rules_module="brain.rules.mass",
    hand_size=13, tile_kinds=27, live_wall=55, red_fives=False,
    private_walls=False, dead_wall=0, wall_reserve=0, last_draw_ends=False,
    has_riichi=False, has_dora=False, multi_ron=False, noten_payments=False,
    dealer_repeats=False, ranked=False, start_score=0, one_hand_game=False,
    botzone_penalties=False,
    min_fan=0, needs_yaku=False, regular_shapes_only=False, value_honours=False,
    dealer_surcharge=False, all_pay_base=False, dealer_pays_double=False, tsumo_share=1.0,
    hidden_closed_kans=False, game_rules=(),
    value_unit="fan", score_unit="fan",
    typical_win=30.0, dealer_factor=1.0, fold_floor=1.0, call_gate=(0.0, 0.0),
    value_scale=100.0, eval_hands=300, quiet_tenpai=False, plan_planes=False,
    bench_units=8, bench_flat_value=10.0)

# The registry: the one place a variant is listed. The order is the CLI's and the nn encoding's
# one-hot planes (trained weights depend on it): append a new variant, never reorder.
VARIANTS: dict[str, Variant] = {v.name: v for v in (RIICHI, MCR, TAIWAN16, MASS)}
VARIANT_NAMES: tuple[str, ...] = tuple(VARIANTS)


def variant_of(name: str) -> Variant:
    """The variant of a wire / log name; a clear ValueError for any other string."""
    found = VARIANTS.get(name)
    if found is None:
        raise ValueError(f"unknown variant {name!r}: riichi, mcr, taiwan16 or mass")
    return found
