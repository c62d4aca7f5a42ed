"""Every tai of rules/taiwan16.md, with the overlap choices documented in brain.rules.taiwan16."""

import pytest

from brain.rules import rules_for
from brain.rules.taiwan16 import best_tai
from tests.rules_helpers import ctx, meld

TW = rules_for("taiwan16")
PLAIN = "123m456m789p123s456s99p"  # concealed, no honours, pair wait on 9p


def items(c):
    sheet = best_tai(c)
    assert sheet is not None, "not a winning hand"
    return dict(sheet.items) if len({n for n, _ in sheet.items}) == len(sheet.items) else {
        n: sum(v for m, v in sheet.items if m == n) for n, _ in sheet.items}


def open_chi(mpsz="123m", frm=0):
    return meld("chi", mpsz, from_seat=frm)


# (case id, context kwargs, expected tai, names that must be absent)
CASES = [
    ("莊家", dict(concealed=PLAIN, win="9p", seat=0, dealer=0, from_seat=2), {"莊家": 1}, ()),
    ("門清", dict(concealed=PLAIN, win="9p", seat=1, from_seat=2), {"門清": 1}, ("自摸",)),
    ("自摸", dict(concealed="456m789p123s456s99p", win="9p", seat=1, melds=[open_chi()]),
     {"自摸": 1}, ("門清", "門清自摸")),
    ("斷么九", dict(concealed="234m456m678p234s456s88p", win="8p", seat=1, from_seat=2),
     {"斷么九": 1}, ()),
    ("海底撈月", dict(concealed="456m789p123s456s99p", win="9p", seat=1, melds=[open_chi()],
                      last_tile=True), {"海底撈月": 1}, ()),
    ("門風刻", dict(concealed="123m456m789p123s222z99p", win="9p", seat=1, from_seat=2),
     {"門風刻": 1}, ()),
    ("三元牌", dict(concealed="123m456m789p123s555z99p", win="9p", seat=1, from_seat=2),
     {"三元牌": 1}, ()),
    ("雙龍抱", dict(concealed="123m123m789p123s456s99p", win="9p", seat=1, from_seat=2),
     {"雙龍抱": 1}, ("雙雙龍抱",)),
    ("槓上開花", dict(concealed="456m789p123s456s99p", win="9p", seat=1, melds=[open_chi()],
                      after_kan=True), {"槓上開花": 1}, ()),
    ("眼牌", dict(concealed=PLAIN, win="9p", seat=1, from_seat=2, declared_eye=True),
     {"眼牌": 1}, ()),
    ("搶槓", dict(concealed=PLAIN, win="9p", seat=1, from_seat=2, robbing_kan=True),
     {"搶槓": 1}, ()),
    ("全求", dict(concealed="99p", win="9p", seat=1, from_seat=3, melds=[
        open_chi("123m"), meld("pon", "555p", 2), open_chi("789s"), meld("pon", "222s", 3),
        open_chi("345m")]), {"全求": 2}, ("門清",)),
    ("平胡", dict(concealed=PLAIN, win="6s", seat=1, from_seat=2), {"平胡": 2}, ()),
    ("混帶么", dict(concealed="123m789m123p999s111z99p", win="9p", seat=1, from_seat=2),
     {"混帶么": 2}, ("純帶么",)),
    ("三色同順", dict(concealed="123m123p123s456s789p99m", win="9m", seat=1, from_seat=2),
     {"三色同順": 4}, ()),
    ("三色同順 open", dict(concealed="123p123s456s789p99m", win="9m", seat=1, from_seat=2,
                          melds=[open_chi("123m")]), {"三色同順": 2}, ()),
    ("一條龍", dict(concealed="123m456m789m234p567s99s", win="9s", seat=1, from_seat=2),
     {"一條龍": 4}, ()),
    ("一條龍 open", dict(concealed="456m789m234p567s99s", win="9s", seat=1, from_seat=2,
                        melds=[open_chi("123m")]), {"一條龍": 2}, ()),
    ("雙雙龍抱", dict(concealed="123m123m456p456p789s99s", win="9s", seat=1, from_seat=2),
     {"雙雙龍抱": 2}, ("雙龍抱",)),
    ("三暗刻", dict(concealed="111m333p555s234s678s99m", win="9m", seat=1, from_seat=2),
     {"三暗刻": 2}, ("四暗刻",)),
    ("三色同刻", dict(concealed="345m678p99s", win="9s", seat=1, from_seat=2, melds=[
        meld("pon", "222m", 0), meld("pon", "222p", 2), meld("pon", "222s", 3)]),
     {"三色同刻": 2}, ()),
    ("門清自摸", dict(concealed=PLAIN, win="9p", seat=1), {"門清自摸": 3}, ("門清", "自摸")),
    ("碰碰胡", dict(concealed="444p666s888s99m", win="9m", seat=1, from_seat=2, melds=[
        meld("pon", "222m", 0), meld("pon", "333m", 3)]), {"碰碰胡": 4}, ("混老頭",)),
    ("混一色", dict(concealed="123m456m789m111z333z22z", win="2z", seat=1, from_seat=2),
     {"混一色": 4}, ("清一色",)),
    ("純帶么", dict(concealed="123m789m123p999s111s99p", win="9p", seat=1, from_seat=2),
     {"純帶么": 4}, ("混帶么",)),
    ("混老頭", dict(concealed="111m999m111p999s111z99s", win="9s", seat=1, from_seat=2),
     {"混老頭": 4}, ("碰碰胡", "混帶么")),
    ("小三元", dict(concealed="123m456m789p555z666z77z", win="7z", seat=1, from_seat=2),
     {"小三元": 4}, ("三元牌", "大三元")),
    ("四暗刻", dict(concealed="111m333p555s777s234m99p", win="9p", seat=1, from_seat=2),
     {"四暗刻": 6}, ("三暗刻",)),
    ("四槓子", dict(concealed="234m99p", win="9p", seat=1, from_seat=2, melds=[
        meld("closed_kan", "1111m"), meld("open_kan", "3333p", 0),
        meld("open_kan", "5555s", 2), meld("added_kan", "7777s", 3)]), {"四槓子": 6}, ()),
    ("大三元", dict(concealed="123m456m555z666z777z99p", win="9p", seat=1, from_seat=2),
     {"大三元": 8}, ("三元牌", "小三元")),
    ("小四喜", dict(concealed="111z222z333z123m456m44z", win="4z", seat=1, from_seat=2),
     {"小四喜": 8}, ("門風刻", "大四喜")),
    ("清一色", dict(concealed="123m345m567m789m111m99m", win="9m", seat=1, from_seat=2),
     {"清一色": 8}, ("混一色",)),
    ("字一色", dict(concealed="111z222z333z555z666z77z", win="7z", seat=1, from_seat=2),
     {"字一色": 8}, ("混一色", "碰碰胡", "混老頭")),
    ("五暗刻", dict(concealed="111m333m555p777p999s22z", win="2z", seat=1, from_seat=2),
     {"五暗刻": 8}, ("四暗刻", "三暗刻")),
    ("清老頭", dict(concealed="111m999m111p999p111s99s", win="9s", seat=1, from_seat=2),
     {"清老頭": 8}, ("混老頭", "碰碰胡", "純帶么")),
    ("大四喜", dict(concealed="111z222z333z444z123m99p", win="9p", seat=1, from_seat=2),
     {"大四喜": 16}, ("小四喜", "門風刻")),
    ("天胡", dict(concealed=PLAIN, win="9p", seat=0, dealer=0, first_turn=True),
     {"天胡": 16}, ("門清自摸", "地胡")),
    ("地胡", dict(concealed=PLAIN, win="9p", seat=1, first_turn=True),
     {"地胡": 16}, ("門清自摸", "天胡")),
    ("人胡", dict(concealed=PLAIN, win="9p", seat=1, from_seat=0, first_turn=True),
     {"人胡": 16}, ()),
]


@pytest.mark.parametrize(("kwargs", "expected", "absent"), [c[1:] for c in CASES],
                         ids=[c[0] for c in CASES])
def test_tai(kwargs, expected, absent):
    got = items(ctx(**kwargs))
    for name, tai in expected.items():
        assert got.get(name) == tai, f"{name}: expected {tai}, got {got}"
    for name in absent:
        assert name not in got, f"{name} should be replaced, got {got}"


def test_every_tai_of_the_table_has_a_case():
    table = {"莊家", "門清", "自摸", "斷么九", "海底撈月", "門風刻", "三元牌", "雙龍抱", "槓上開花",
             "眼牌", "搶槓", "全求", "平胡", "混帶么", "三色同順", "一條龍", "雙雙龍抱", "三暗刻",
             "三色同刻", "門清自摸", "碰碰胡", "混一色", "純帶么", "混老頭", "小三元", "四暗刻",
             "四槓子", "大三元", "小四喜", "清一色", "字一色", "五暗刻", "清老頭", "大四喜", "天胡",
             "地胡", "人胡"}
    assert table <= {name for _, _, expected, _ in CASES for name in expected}


def test_pung_completed_by_a_discard_is_not_concealed():
    got = items(ctx("111m333p555s234s678s99m", "5s", seat=1, from_seat=2))
    assert "三暗刻" not in got
    assert "三暗刻" in items(ctx("111m333p555s234s678s99m", "5s", seat=1))  # self-drawn


def test_ping_hu_needs_a_two_sided_wait():
    assert "平胡" not in items(ctx(PLAIN, "7p", seat=1, from_seat=2))  # 789p edge wait on 7p
    assert "平胡" not in items(ctx(PLAIN, "6s", seat=1))  # self-draw


def test_best_reading_is_chosen():
    # 111222333m can be three pungs or three chows: the pungs read gives 三暗刻 + more.
    got = items(ctx("111222333m456p789s55s", "5s", seat=1, from_seat=2))
    assert got.get("三暗刻") == 2


def test_payments():
    s = TW.score(ctx(PLAIN, "9p", seat=1, dealer=0, from_seat=2))
    assert s is not None, "not a winning hand"
    tai = s.value
    assert s.deltas == (0, 1000 + 500 * tai, -(1000 + 500 * tai), 0)
    selfdraw = TW.score(ctx(PLAIN, "9p", seat=1, dealer=0))
    assert selfdraw is not None, "not a winning hand"
    t = selfdraw.value
    assert selfdraw.deltas[0] == -(1000 + 500 * (t + 1))  # the dealer pays one more tai
    assert selfdraw.deltas[2] == -(1000 + 500 * t)
    assert sum(selfdraw.deltas) == 0
    dealer_wins = TW.score(ctx(PLAIN, "9p", seat=0, dealer=0, from_seat=3))
    assert dealer_wins is not None, "not a winning hand"
    assert dict(dealer_wins.items)["莊家"] == 1


def test_a_win_on_the_dealers_discard_counts_the_dealers_tai():
    """The dealer who discards the winning tile pays one tai more (rules/taiwan16.md: 莊家,
    "dealer wins, or pays"). It was paid but not counted: a 0-tai win showed "value 0" with
    1500-point deltas. Now 莊家(1) is in the win's tai, and 1000 + 500 per tai adds up."""
    hand = "456m789p123s456s11z"  # a called chow, a wind pair wait: no tai of its own
    open_hand = dict(melds=[open_chi("123m", frm=0)], seat=1, dealer=0)
    others = TW.score(ctx(hand, "1z", from_seat=3, **open_hand))
    assert others is not None and (others.value, others.items) == (0, ())
    assert others.deltas == (0, 1000, 0, -1000)
    won = TW.score(ctx(hand, "1z", from_seat=0, **open_hand))
    assert won is not None and (won.value, won.items) == (1, (("莊家", 1),))
    assert won.deltas == (-1500, 1500, 0, 0)  # 1000 + 500 per tai, the tai shown
    # a self-draw: the dealer's extra tai is in its own payment only, the others pay the value
    drawn = TW.score(ctx(hand, "1z", **open_hand))
    assert drawn is not None and "莊家" not in dict(drawn.items)
    assert drawn.deltas[0] == -(1000 + 500 * (drawn.value + 1))
    assert drawn.deltas[2] == drawn.deltas[3] == -(1000 + 500 * drawn.value)


def test_not_a_win():
    assert TW.score(ctx("123m456m789p123s456s19p", "9p", seat=1, from_seat=2)) is None
