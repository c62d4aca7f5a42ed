"""A ron on a sanma kita (抜き北) that Tenhou offers with ``t="8"`` on the nuki call: the
robbed North is won on like a discard, and it is no robbing of a kan, so it carries no chankan
(riichi.wiki's Sanma page: "A kita call can be ronned, but this does not award chankan").
A hand whose only yaku would be chankan has no win to take there."""

from __future__ import annotations

from brain.rules import rules_for
from brain.state import TableState
from protocols import events as ev
from protocols.tenhou import TenhouCodec

RIICHI = rules_for("riichi")
# 123p 567p 789s, a pair of East (our seat's and the round's wind) and one more pair: closed, no
# riichi, no pinfu (a wind pair), no tanyao; the East is the only yaku a win can bring
SHANPON_NORTH = "36,40,44,53,56,60,96,100,104,108,109,120,121"  # ready on East or North
RYANMEN_3S_6S = "36,40,44,53,56,60,96,100,104,108,109,84,89"  # 45s: ready on 3s or 6s


def _sanma_table(hai: str) -> tuple[TenhouCodec, TableState]:
    """A three-player Tenhou game (type 25: 0x10 sanma, hanchan, vs humans) with us dealing."""
    codec, state = TenhouCodec(), TableState()
    for text in ('<GO type="25" lobby="0"/>', '<UN n0="a" n1="b" n2="c" n3=""/>',
                 '<TAIKYOKU oya="0"/>',
                 f'<INIT seed="0,0,0,0,5,32" ten="350,350,350,0" oya="0" hai="{hai}"/>',
                 "<U/>"):
        for e in codec.feed(text):
            state.apply(e)
    return codec, state


def _offer(codec: TenhouCodec, state: TableState, tag: str) -> ev.DecisionRequest:
    *table, request = codec.feed(tag)
    for e in table:
        state.apply(e)
    assert isinstance(request, ev.DecisionRequest) and request.kind == "rob_kan"
    return request


def test_a_kita_ron_is_valued_without_chankan() -> None:
    codec, state = _sanma_table(SHANPON_NORTH)
    # the next seat sets a North aside (nuki: m = id << 8 | 0x20) and Tenhou offers it to us
    request = _offer(codec, state, f'<N who="1" m="{122 << 8 | 0x20}" t="8"/>')
    assert state.seats[1].melds[-1].kind == "nuki" and request.tile == 30
    assert not any(isinstance(a, ev.Win) for a in RIICHI.legal_actions(state, request))
    # a riichi hand may take it: riichi, and no chankan among its yaku
    state.me.riichi = True
    score = RIICHI.win_score(state, 30, 1, robbing_kan=False)
    assert ev.Win() in RIICHI.legal_actions(state, request) and score is not None
    assert [name for name, _ in score.items] == ["Riichi"]


def test_robbing_an_added_kan_still_counts_chankan() -> None:
    """The same kind of hand robs a real added kan: chankan, its one yaku."""
    codec, state = _sanma_table(RYANMEN_3S_6S)
    state.apply(ev.MeldCalled(1, "pon", (20, 20, 20), called=20, from_seat=2))  # 3s
    code = (3 * 20 + 0) << 9 | 0x10 | 3 << 5 | 1  # the pon of 3s grows with its fourth, id 83
    request = _offer(codec, state, f'<N who="1" m="{code}" t="8"/>')
    assert request.tile == 20
    assert ev.Win() in RIICHI.legal_actions(state, request)
