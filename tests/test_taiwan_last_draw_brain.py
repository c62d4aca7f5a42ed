"""The brain's models of Taiwan's last draw agree with the table (tests/test_referee_last_draw.py):
the hand ends right after the draw that empties the live wall (the 16-tile reserve aside), so
the drawer may only win by it and nobody wins on a discard after it. Riichi's last drawer still
discards and may be won on (houtei), and its playouts still say so."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from adapter.platforms.ntpu import NtpuBot, NtpuSettings
from brain.brain import Brain
from brain.policies.mc.config import McConfig
from brain.policies.mc.playout import (
    DEAL_IN,
    DRAW,
    OPP_RON,
    OPP_TSUMO,
    OUR_RON,
    OUR_TSUMO,
    Playouts,
)
from brain.policies.mc.policy import params
from brain.policies.mc.root import build_table, candidates, discard_bias
from brain.policies.mc.values import OurWins
from brain.rules import rules_for
from brain.state import TableState
from protocols import events as ev
from protocols import tiles as T
from replay.log import DecisionFrame, read_log
from tests.mc_helpers import FixedOpponents, turn_state
from tests.ntpu_helpers import BotClient, serve
from tests.test_nycu_lab_referee import TsumogiriBot, _last_tile_wall

ON_DISCARD = (OUR_RON, DEAL_IN, OPP_RON)
# ready on 5s/8s, the drawn 1z thrown: 16 tiles in Taiwan, 13 in riichi
HANDS = {"taiwan16": "111m222m333p444p55s67s", "riichi": "111m222m333p55s67s"}


def _playouts(variant: str, left: int, n: int = 400) -> tuple[np.ndarray, np.ndarray, int]:
    """Every candidate's playouts from our turn with ``left`` live draws after our discard,
    against three opponents likely ready on many kinds: (outcome, draws made, rows' tiles in
    our hand at the end) per row."""
    # RoundStarted's wall counts the draws left; our own draw takes one
    state = turn_state(HANDS[variant], "1z", variant, wall=left + 1)
    assert state.wall_remaining == left
    request = ev.DecisionRequest("turn")
    legal = rules_for(variant).legal_actions(state, request)
    starts = [c.start for c in candidates(state, request, legal) if c.start is not None]
    models = FixedOpponents((0.9, 0.9, 0.9), {k: 0.3 for k in range(34)}, 3000.0)
    table = build_table(state, models.estimate(state))
    engine = Playouts(table, OurWins(state), params(McConfig()), discard_bias(state))
    res = engine.run(starts, n, np.random.default_rng(7), check=True)
    draws = res.trace["all_drawn"].sum(axis=1)
    return res.outcome.ravel(), draws, int(table.walls[0])


@pytest.mark.parametrize("left", [1, 2, 3, 4])
def test_taiwan_playouts_book_no_win_on_a_discard_after_the_last_draw(left: int) -> None:
    outcome, draws, wall = _playouts("taiwan16", left)
    assert wall == left
    last = draws == wall  # the row went as far as the last draw
    assert last.any()
    assert not (last & np.isin(outcome, ON_DISCARD)).any()
    # after the last draw a row ends at once: a self-draw, or an exhaustive draw
    assert set(np.unique(outcome[last])) <= {DRAW, OUR_TSUMO, OPP_TSUMO}
    # the seats still win on discards made before it
    if left > 1:
        assert np.isin(outcome, ON_DISCARD).any()


def test_taiwan_last_drawer_never_discards_in_a_playout() -> None:
    """We draw the last tile (three opponents' draws first): a row that does not win by it
    keeps the drawn tile, 17 tiles in hand, and the hand is drawn."""
    state = turn_state(HANDS["taiwan16"], "1z", "taiwan16", wall=5)
    request = ev.DecisionRequest("turn")
    legal = rules_for("taiwan16").legal_actions(state, request)
    starts = [c.start for c in candidates(state, request, legal) if c.start is not None]
    table = build_table(state, FixedOpponents().estimate(state))
    engine = Playouts(table, OurWins(state), params(McConfig()), discard_bias(state))
    res = engine.run(starts, 200, np.random.default_rng(3), check=True)
    outcome = res.outcome.ravel()
    last = res.trace["all_drawn"].sum(axis=1) == 4  # the rows that came to our last draw
    assert last.mean() > 0.5
    assert set(np.unique(outcome[last])) <= {DRAW, OUR_TSUMO}
    drawn = last & (outcome == DRAW)
    assert drawn.any()
    assert (res.trace["hand"][drawn].sum(axis=1) == 17).all()


@pytest.mark.parametrize("left", [1, 4])
def test_riichi_playouts_still_win_on_the_last_discard(left: int) -> None:
    """Houtei: riichi's last drawer discards, and that discard may be won on (by us at
    ``left`` 1, an opponent's last discard; by an opponent at 4, ours)."""
    outcome, draws, wall = _playouts("riichi", left)
    last = draws == wall
    assert (last & np.isin(outcome, ON_DISCARD)).any()


# ---------------------------------------------------------------------- legal actions


def _turn_after(variant: str, draw: str, left: int = 0) -> TableState:
    """Our turn on a draw that leaves ``left`` live draws (0: the last draw)."""
    state = turn_state(HANDS[variant], draw, variant, wall=left + 1)
    assert state.wall_remaining == left
    return state


@pytest.mark.parametrize("draw,expected", [("5s", [ev.Win(), ev.Pass()]), ("1z", [ev.Pass()])])
def test_taiwan_last_drawer_may_only_win_or_pass(draw: str, expected: list[object]) -> None:
    """As the table asks it (adapter/local/referee.py ``_last_draw``, the NTPU ``/ask hu``):
    a discard was offered, and chosen, though no table takes one there."""
    state = _turn_after("taiwan16", draw)
    rules = rules_for("taiwan16")
    for request in (ev.DecisionRequest("turn"),
                    ev.DecisionRequest("turn", offered=frozenset({"win"}))):
        assert rules.legal_actions(state, request) == expected
    brain = Brain("taiwan16", "mc", limit=1.0)
    try:
        assert brain.decide(state, ev.DecisionRequest("turn")).action == expected[0]
    finally:
        brain.close()


def test_taiwan_turns_before_the_last_draw_and_riichi_houtei_still_discard() -> None:
    rules = rules_for("taiwan16")
    turn = ev.DecisionRequest("turn")
    legal = rules.legal_actions(_turn_after("taiwan16", "1z", left=1), turn)
    assert ev.Discard(T.parse_mpsz("1z")[0]) in legal and ev.Pass() not in legal
    # riichi's last drawer discards (and may be won on: houtei)
    legal = rules_for("riichi").legal_actions(_turn_after("riichi", "1z"), turn)
    assert ev.Discard(T.parse_mpsz("1z")[0]) in legal and ev.Pass() not in legal


def test_a_platform_that_asks_a_discard_after_our_last_draw_gets_one() -> None:
    """A server whose wall count differs from ours (``/ask throw`` where we count none left)
    is the table: we discard rather than answer a throw with a pass."""
    state = _turn_after("taiwan16", "1z")
    legal = rules_for("taiwan16").legal_actions(
        state, ev.DecisionRequest("turn", offered=frozenset({"discard"})))
    assert ev.Discard(T.parse_mpsz("1z")[0]) in legal and ev.Pass() not in legal


# ---------------------------------------------------------------------- the NTPU client


class _LoggedBot(BotClient):
    """Our NTPU client with its game log written to ``log_dir``."""

    def __init__(self, policy: str, log_dir: Path) -> None:
        super().__init__(policy)
        self.bot = NtpuBot(NtpuSettings(policy=policy, budget=0.5, log_dir=str(log_dir)))


@pytest.mark.parametrize("policy", ["rulebased", "mc"])
def test_our_ntpu_client_asked_hu_on_the_last_draw_weighs_only_the_win(
        tmp_path: Path, policy: str) -> None:
    """The fake server asks the last drawer ``/ask hu`` and nothing else (the lab referee):
    our client wins, and its log's decision there offers the win or a pass, not the discards
    the server would never take (mc searched them)."""
    clients: list[BotClient] = [TsumogiriBot() for _ in range(3)]
    ours = _LoggedBot(policy, tmp_path / "client")
    result = serve([*clients, ours], hands=1, log_dir=tmp_path / "server",
                   walls=[_last_tile_wall()])
    assert result.stats[3].illegal == 0, result.stats[3].problems
    assert ours.sent[-1].startswith("/hu"), ours.sent[-3:]
    (path,) = (tmp_path / "client").rglob("*.mjlog*")
    decisions = [f for f in read_log(path).frames if isinstance(f, DecisionFrame)]
    last = decisions[-1]
    assert last.request.kind == "turn" and last.request.offered == frozenset({"win"})
    assert list(last.legal) == [ev.Win(), ev.Pass()]
    assert last.action == ev.Win()
