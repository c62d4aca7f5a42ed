"""The league's styles (brain/policies/rulebased.py ``STYLES``) play measurably as described.

Each style is rulebased with a few knobs turned; these short duplicate arenas (every seating of
four policies on the same walls, so each policy plays every hand) check the direction each
knob should push: how often a style calls, declares riichi and deals in.
"""

from __future__ import annotations

from typing import Any

import pytest

from adapter.commands import UserInputError, require_policy
from adapter.local.arena import ArenaConfig, run_arena, summarize
from brain.policies import POLICIES, STYLES, get_policy
from brain.policies.rulebased import DEFAULT_STYLE, RuleBasedPolicy, Style


def _figures(variant: str, policies: tuple[str, str, str, str], hands: int,
             seed: int = 5) -> dict[str, Any]:
    config = ArenaConfig(variant, policies, hands, seed, 1, None)
    summary = summarize(config, run_arena(config), 1.0)
    assert summary["referee_errors"] == 0
    assert summary["illegal_actions"] == 0
    for name, p in summary["policies"].items():
        assert p["fallbacks"] == 0, (name, p["first_fallback"])
    return summary["policies"]


def test_every_style_is_a_policy_name_and_rulebased_keeps_the_default_knobs():
    assert RuleBasedPolicy().style == DEFAULT_STYLE == Style()
    for name, (style, doc) in STYLES.items():
        policy = get_policy(f"style:{name}")
        assert isinstance(policy, RuleBasedPolicy)
        assert policy.name == style.name == f"style:{name}"
        assert policy.style != DEFAULT_STYLE and doc
        require_policy(f"style:{name}")  # accepted wherever a policy name is
        assert f"style:{name}" in POLICIES
    with pytest.raises(UserInputError, match="unknown policy 'style:nope'"):
        require_policy("style:nope")


def test_riichi_styles_call_fold_and_declare_as_described():
    # three wall sets (336 hands on these walls; 400 asked for four, 475 hands): every rate
    # below keeps its margin (the defensive deal-in rate 7.4% against rulebased's 9.5%)
    p = _figures("riichi", ("style:open", "rulebased", "style:closed", "style:defensive"), 300)
    assert p["rulebased"]["hands"] >= 300
    # calls: open > rulebased > closed, which calls only to win (never a chi/pon/kong)
    assert p["style:open"]["call_rate"] > 2 * p["rulebased"]["call_rate"]
    assert p["rulebased"]["call_rate"] > 0.05
    assert p["style:closed"]["call_rate"] == 0.0
    # riichi: closed declares at least as often as rulebased, open (rarely closed) far less
    assert p["style:closed"]["riichi_rate"] >= p["rulebased"]["riichi_rate"]
    assert p["style:open"]["riichi_rate"] < p["rulebased"]["riichi_rate"]
    # folding early: fewer deal-ins than the open style and than rulebased
    assert p["style:defensive"]["deal_in_rate"] < p["style:open"]["deal_in_rate"]
    assert p["style:defensive"]["deal_in_rate"] < p["rulebased"]["deal_in_rate"]


def test_value_style_calls_less_and_wins_bigger_hands_in_riichi():
    p = _figures("riichi", ("style:value", "rulebased", "style:closed", "style:defensive"), 400)
    assert 0 < p["style:value"]["call_rate"] < p["rulebased"]["call_rate"]
    assert p["style:value"]["avg_win_value"] > p["rulebased"]["avg_win_value"]


def test_styles_play_mcr():
    """No riichi and no folding in MCR: open calls past the 8-fan plan, closed never calls."""
    # 50 asked: three wall sets of 24 one-hand games (72 hands; 100 was five, 120 hands):
    # open calls in ~94% of them, rulebased in ~75%
    p = _figures("mcr", ("style:open", "rulebased", "style:closed", "style:defensive"), 50)
    assert p["style:closed"]["call_rate"] == 0.0 < p["rulebased"]["call_rate"]
    assert p["style:open"]["call_rate"] > p["rulebased"]["call_rate"]
    assert all(x["riichi_rate"] == 0.0 for x in p.values())


# Taiwan: one wall set (24 seatings of four-hand games, 96 hands), where value calls in ~23%
# of the hands and rulebased in ~85%; mass's value calls so rarely that it needs two (192)
PLAIN_HANDS = {"taiwan16": 96, "mass": 100}


@pytest.mark.parametrize("variant", ["taiwan16", "mass"])
def test_styles_play_the_plain_variants(variant):
    """Taiwan and mass: rulebased already calls whenever shanten drops; value calls only for a
    value-honour pung or a one-suit plan, closed never."""
    p = _figures(variant, ("style:open", "rulebased", "style:closed", "style:value"),
                 PLAIN_HANDS[variant])
    assert p["style:closed"]["call_rate"] == 0.0 < p["style:value"]["call_rate"]
    assert p["style:value"]["call_rate"] < p["rulebased"]["call_rate"]
    assert all(x["riichi_rate"] == 0.0 for x in p.values())
