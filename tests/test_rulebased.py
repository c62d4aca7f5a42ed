"""Rule-based choices that the rules allow but that lose value."""

from brain.policies import get_policy
from brain.state import TableState
from protocols import events as ev
from protocols import tiles as T


def _mcr_claim_state(own_wall: int) -> TableState:
    state = TableState("mcr", 2)
    state.apply(ev.GameStarted("mcr", 2))
    state.apply(ev.RoundStarted(round_wind=0, dealer=0, hand=tuple(T.parse_mpsz(
        "124m456p789s5551z"))))
    assert state.seat_walls is not None
    state.seat_walls[2] = own_wall
    state.apply(ev.TileDrawn(0, None))
    state.apply(ev.TileDiscarded(0, T.parse_mpsz("5z")[0]))
    return state


def test_mcr_no_open_kong_when_its_replacement_would_come_from_an_empty_wall():
    # The judge accepts the GANG (seat 1's wall has tiles) but the replacement draw is due
    # from our empty wall: the hand ends drawn at once, where passing could still win.
    white = T.parse_mpsz("5z")[0]
    kan = ev.Kan("open_kan", (white,) * 3)
    request = ev.DecisionRequest("claim", tile=white, from_seat=0)
    policy = get_policy("rulebased")
    assert policy.decide(_mcr_claim_state(5), request, [ev.Pass(), kan]).action == kan
    assert policy.decide(_mcr_claim_state(0), request, [ev.Pass(), kan]).action == ev.Pass()
