"""English names for the yaku, fans and tai the logs carry, so that the viewer can show them
beside the name the log holds (Tenhou's Japanese, MahjongGB's and the Botzone judge's Chinese,
our Taiwan rules' traditional Chinese, the `mahjong` library's romaji).

A log's item is ``NAME(VALUE)`` (the local table, mjai imports), ``NAME(1飜)`` /
``NAME(役満)`` (Tenhou, tenhou.net/6), ``NAME×COUNT=VALUE`` or ``NAME=VALUE`` (Botzone) or the
bare name: the name is what is left once that value is taken off the end. Names are looked
up in the game's variant's table first (平和 is Pinfu in riichi, All Chows in MCR), then in
the others.
"""

from __future__ import annotations

import re

# Tenhou's yaku (protocols/tenhou.py YAKU, in Tenhou's order) and the few other names
# tenhou.net/6 logs use
RIICHI_JAPANESE = {
    "門前清自摸和": "Fully Concealed Tsumo", "立直": "Riichi", "一発": "One Shot (Ippatsu)",
    "槍槓": "Robbing a Kan", "嶺上開花": "After a Kan (Rinshan)",
    "海底摸月": "Last Tile Draw (Haitei)", "河底撈魚": "Last Discard (Houtei)",
    "平和": "All Sequences (Pinfu)", "断幺九": "All Simples", "一盃口": "Pure Double Sequence",
    "自風 東": "Seat Wind East", "自風 南": "Seat Wind South", "自風 西": "Seat Wind West",
    "自風 北": "Seat Wind North", "場風 東": "Round Wind East", "場風 南": "Round Wind South",
    "場風 西": "Round Wind West", "場風 北": "Round Wind North",
    "役牌 白": "White Dragon", "役牌 發": "Green Dragon", "役牌 中": "Red Dragon",
    "両立直": "Double Riichi", "七対子": "Seven Pairs", "混全帯幺九": "Half Outside Hand",
    "一気通貫": "Pure Straight", "三色同順": "Mixed Triple Sequence",
    "三色同刻": "Triple Triplets", "三槓子": "Three Kans", "対々和": "All Triplets",
    "三暗刻": "Three Concealed Triplets", "小三元": "Little Three Dragons",
    "混老頭": "All Terminals and Honours", "二盃口": "Twice Pure Double Sequence",
    "純全帯幺九": "Fully Outside Hand", "混一色": "Half Flush", "清一色": "Full Flush",
    "人和": "Blessing of Man", "天和": "Blessing of Heaven", "地和": "Blessing of Earth",
    "大三元": "Big Three Dragons", "四暗刻": "Four Concealed Triplets",
    "四暗刻単騎": "Four Concealed Triplets, Single Wait", "字一色": "All Honours",
    "緑一色": "All Green", "清老頭": "All Terminals", "九蓮宝燈": "Nine Gates",
    "純正九蓮宝燈": "True Nine Gates", "国士無双": "Thirteen Orphans",
    "国士無双１３面": "Thirteen Orphans, 13-sided Wait", "大四喜": "Big Four Winds",
    "小四喜": "Little Four Winds", "四槓子": "Four Kans", "ドラ": "Dora",
    "裏ドラ": "Ura Dora", "赤ドラ": "Red Fives (Aka Dora)", "流し満貫": "Nagashi Mangan",
}

# the `mahjong` library's yaku names (romaji), as the local table and mjai logs carry them
RIICHI_ROMAJI = {
    "Aka Dora": "Red Fives", "Chankan": "Robbing a Kan", "Chantai": "Half Outside Hand",
    "Chiihou": "Blessing of Earth", "Chiitoitsu": "Seven Pairs", "Chinitsu": "Full Flush",
    "Chinroutou": "All Terminals", "Yakuhai (chun)": "Red Dragon",
    "Chuuren Poutou": "Nine Gates", "Daburu Chuuren Poutou": "True Nine Gates",
    "Kokushi Musou Juusanmen Matchi": "Thirteen Orphans, 13-sided Wait",
    "Double Open Riichi": "Double Open Riichi", "Double Riichi": "Double Riichi",
    "Daichisei": "Big Seven Stars", "Daisangen": "Big Three Dragons",
    "Daisharin": "Big Wheels", "Dai Suushii": "Big Four Winds", "Dora": "Dora",
    "Haitei Raoyue": "Last Tile Draw", "Yakuhai (haku)": "White Dragon",
    "Yakuhai (hatsu)": "Green Dragon", "Honitsu": "Half Flush",
    "Honroutou": "All Terminals and Honours", "Houtei Raoyui": "Last Discard",
    "Iipeiko": "Pure Double Sequence", "Ippatsu": "One Shot", "Ittsu": "Pure Straight",
    "Junchan": "Fully Outside Hand", "Kokushi Musou": "Thirteen Orphans",
    "Nagashi Mangan": "Nagashi Mangan", "Open Riichi": "Open Riichi",
    "Paarenchan": "Eight Consecutive Wins", "Pinfu": "All Sequences",
    "Renhou": "Blessing of Man", "Renhou (yakuman)": "Blessing of Man (yakuman)",
    "Riichi": "Riichi", "Rinshan Kaihou": "After a Kan",
    "Yakuhai (round wind east)": "Round Wind East",
    "Yakuhai (round wind south)": "Round Wind South",
    "Yakuhai (round wind west)": "Round Wind West",
    "Yakuhai (round wind north)": "Round Wind North",
    "Ryanpeikou": "Twice Pure Double Sequence", "Ryuuiisou": "All Green",
    "San Ankou": "Three Concealed Triplets", "San Kantsu": "Three Kans",
    "Sanshoku Doujun": "Mixed Triple Sequence", "Sanshoku Doukou": "Triple Triplets",
    "Sashikomi": "Sashikomi", "Yakuhai (seat wind east)": "Seat Wind East",
    "Yakuhai (seat wind south)": "Seat Wind South",
    "Yakuhai (seat wind west)": "Seat Wind West",
    "Yakuhai (seat wind north)": "Seat Wind North", "Shou Sangen": "Little Three Dragons",
    "Shousuushii": "Little Four Winds", "Suu Ankou": "Four Concealed Triplets",
    "Suu Ankou Tanki": "Four Concealed Triplets, Single Wait", "Suu Kantsu": "Four Kans",
    "Tanyao": "All Simples", "Tenhou": "Blessing of Heaven", "Toitoi": "All Triplets",
    "Tsuu Iisou": "All Honours", "Menzen Tsumo": "Fully Concealed Tsumo",
    "Ura Dora": "Ura Dora",
}

# The 81 fans of MCR (Chinese Official rules), from 88 fan down to the flowers, with the
# English names of the official rule book
MCR_FANS = {
    "大四喜": "Big Four Winds", "大三元": "Big Three Dragons", "绿一色": "All Green",
    "九莲宝灯": "Nine Gates", "四杠": "Four Kongs", "连七对": "Seven Shifted Pairs",
    "十三幺": "Thirteen Orphans",
    "清幺九": "All Terminals", "小四喜": "Little Four Winds", "小三元": "Little Three Dragons",
    "字一色": "All Honors", "四暗刻": "Four Concealed Pungs", "一色双龙会": "Pure Terminal Chows",
    "一色四同顺": "Quadruple Chow", "一色四节高": "Four Pure Shifted Pungs",
    "一色四步高": "Four Pure Shifted Chows", "三杠": "Three Kongs",
    "混幺九": "All Terminals and Honors",
    "七对": "Seven Pairs", "七星不靠": "Greater Honors and Knitted Tiles",
    "全双刻": "All Even Pungs", "清一色": "Full Flush", "一色三同顺": "Pure Triple Chow",
    "一色三节高": "Pure Shifted Pungs", "全大": "Upper Tiles", "全中": "Middle Tiles",
    "全小": "Lower Tiles",
    "清龙": "Pure Straight", "三色双龙会": "Three-Suited Terminal Chows",
    "一色三步高": "Pure Shifted Chows", "全带五": "All Fives", "三同刻": "Triple Pung",
    "三暗刻": "Three Concealed Pungs",
    "全不靠": "Lesser Honors and Knitted Tiles", "组合龙": "Knitted Straight",
    "大于五": "Upper Four", "小于五": "Lower Four", "三风刻": "Big Three Winds",
    "花龙": "Mixed Straight", "推不倒": "Reversible Tiles", "三色三同顺": "Mixed Triple Chow",
    "三色三节高": "Mixed Shifted Pungs", "无番和": "Chicken Hand", "妙手回春": "Last Tile Draw",
    "海底捞月": "Last Tile Claim", "杠上开花": "Out with Replacement Tile",
    "抢杠和": "Robbing the Kong",
    "碰碰和": "All Pungs", "混一色": "Half Flush", "三色三步高": "Mixed Shifted Chows",
    "五门齐": "All Types", "全求人": "Melded Hand", "双暗杠": "Two Concealed Kongs",
    "双箭刻": "Two Dragon Pungs",
    "全带幺": "Outside Hand", "不求人": "Fully Concealed Hand", "双明杠": "Two Melded Kongs",
    "和绝张": "Last Tile",
    "箭刻": "Dragon Pung", "圈风刻": "Prevalent Wind", "门风刻": "Seat Wind",
    "门前清": "Concealed Hand", "平和": "All Chows", "四归一": "Tile Hog",
    "双同刻": "Double Pung", "双暗刻": "Two Concealed Pungs", "暗杠": "Concealed Kong",
    "断幺": "All Simples",
    "一般高": "Pure Double Chow", "喜相逢": "Mixed Double Chow", "连六": "Short Straight",
    "老少副": "Two Terminal Chows", "幺九刻": "Pung of Terminals or Honors",
    "明杠": "Melded Kong", "缺一门": "One Voided Suit", "无字": "No Honors",
    "边张": "Edge Wait", "嵌张": "Closed Wait", "单钓将": "Single Wait", "自摸": "Self-Drawn",
    "花牌": "Flower Tiles",
}
# names PyMahjongGB 1.4 uses beside (or instead of) the rule book's
MCR_ALIASES = {
    "独听・边张": "Edge Wait", "独听・嵌张": "Closed Wait", "独听・单钓": "Single Wait",
    "明暗杠": "Concealed and Melded Kong", "坎张": "Closed Wait",
}

# Taiwan 16-tile tai (brain/rules/taiwan16.py, NYCU and NTPU logs)
TAIWAN_TAI = {
    "莊家": "Dealer", "門清自摸": "Concealed Self-Draw", "門清": "Concealed Hand",
    "自摸": "Self-Draw", "斷么九": "All Simples", "海底撈月": "Last Tile Draw",
    "門風刻": "Seat Wind Pung", "大三元": "Big Three Dragons", "小三元": "Little Three Dragons",
    "三元牌": "Dragon Pung", "雙雙龍抱": "Two Pure Double Chows", "雙龍抱": "Pure Double Chow",
    "槓上開花": "Win on a Kong Replacement", "眼牌": "Declared Pair", "搶槓": "Robbing the Kong",
    "全求": "Melded Hand", "平胡": "All Chows", "三色同順": "Mixed Triple Chow",
    "一條龍": "Pure Straight", "五暗刻": "Five Concealed Pungs",
    "四暗刻": "Four Concealed Pungs", "三暗刻": "Three Concealed Pungs",
    "三色同刻": "Triple Pung", "四槓子": "Four Kongs", "字一色": "All Honours",
    "清老頭": "All Terminals", "混老頭": "All Terminals and Honours", "碰碰胡": "All Pungs",
    "純帶么": "Pure Outside Hand", "混帶么": "Mixed Outside Hand", "清一色": "Full Flush",
    "混一色": "Half Flush", "大四喜": "Big Four Winds", "小四喜": "Little Four Winds",
    "天胡": "Heavenly Hand", "地胡": "Earthly Hand", "人胡": "Human Hand",
    "圈風刻": "Round Wind Pung", "花牌": "Flower",
}

TABLES = {
    "riichi": ({**RIICHI_JAPANESE, **RIICHI_ROMAJI},),
    "mcr": ({**MCR_FANS, **MCR_ALIASES},),
    "taiwan16": (TAIWAN_TAI,),
}
# a value at the end of an item: (1), (2飜), (役満), ×2=4, =6
_VALUE = re.compile(r"\s*(?:[(（](?:\d[^()（）]*|役満)[)）]|(?:×\d+)?=-?\d+)\s*$")


def item_name(item: str) -> str:
    """The name in one of a log's yaku items (``断幺九(1飜)`` -> ``断幺九``, ``Yakuhai
    (chun)(1)`` -> ``Yakuhai (chun)``)."""
    return _VALUE.sub("", item).strip()


def english(item: str, variant: str | None = None) -> str | None:
    """The English name of a log's yaku / fan / tai item, or None if unknown or the name
    is already that."""
    name = item_name(item)
    order = [variant] if variant in TABLES else []
    order += [v for v in TABLES if v != variant]
    for v in order:
        for table in TABLES[v]:
            found = table.get(name)
            if found is not None:
                return None if found == name else found
    return None
