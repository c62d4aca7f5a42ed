"""An outside Botzone bot at the local table: a ``HU`` it should not have answered is named as
Botzone's judge rules it (a false HU on another seat's discard or added kong is WH; one where
only ``PASS`` goes, after the deal, a draw, its own discard or a ``GANG``, is WA), counted,
and the table goes on with safe play. A real bot program, kept running, in one MCR match."""

from __future__ import annotations

import re
import sys
import textwrap
from pathlib import Path

from structlog.testing import capture_logs

from adapter.local.game import GameConfig, play_game
from adapter.local.seat import seat_for

# Plays what it draws and answers HU to every line of the table's events (others' discards,
# its own, draws): a false win where one may win, an answer where only PASS goes elsewhere.
HU_EVERYWHERE = textwrap.dedent("""
    import sys
    MARKER = ">>>BOTZONE_REQUEST_KEEP_RUNNING<<<"
    def answer(request):
        parts = request.split()
        if parts[0] == "2":
            return "PLAY " + parts[1]
        return "HU" if parts[0] == "3" else "PASS"
    n = int(sys.stdin.readline())
    requests = [sys.stdin.readline().strip() for _ in range(2 * n - 1)][::2]
    print(answer(requests[-1]))
    print(MARKER, flush=True)
    for line in sys.stdin:
        if line.strip():
            print(answer(line.strip()))
            print(MARKER, flush=True)
""")


def test_a_false_hu_is_wh_where_one_may_win_and_wa_where_only_pass_goes(
        tmp_path: Path) -> None:
    bot = tmp_path / "bot.py"
    bot.write_text(HU_EVERYWHERE)
    players = [seat_for("mcr", 0, f"botzone-keep:{sys.executable} {bot}", 6.0)] + \
        [seat_for("mcr", s, "rulebased") for s in (1, 2, 3)]
    try:
        with capture_logs() as logs:
            result = play_game(GameConfig("mcr"), players, 11, 0)
    finally:
        for player in players:
            player.close()
    faults = [entry["detail"] for entry in logs if entry["event"] == "outside program fault"]
    report = players[0].report
    # the hand was played to its end, every refused answer replaced by a legal move
    assert len(result.hands) == 1 and result.illegal == []
    assert report.illegal == len(faults) > 0
    verdicts: dict[tuple[str, str, str], int] = {}
    for fault in faults:
        found = re.fullmatch(r"(?:a false HU|answered 'HU') to '3 (\d) (\w+)[^']*'.*"
                             r"\((W[AH]) on Botzone\)", fault) or \
            re.fullmatch(r"win is not legal on a (claim|rob_kan) request \((W[AH]) on Botzone\)",
                         fault)
        assert found is not None, fault
        key = (found[1], found[2], found[3]) if found.lastindex == 3 else \
            ("asked", found[1], found[2])
        verdicts[key] = verdicts.get(key, 0) + 1
    # a HU on another seat's discard or added kong: a false win, WH, whether or not the
    # seat was asked (it was, where it could claim the tile otherwise)
    for (seat, verb, verdict) in verdicts:
        if seat == "asked" or (seat != "0" and verb in ("PLAY", "PENG", "CHI", "BUGANG")):
            assert verdict == "WH", (seat, verb, verdict)
        else:  # its own discard, another's draw: only PASS goes there
            assert verdict == "WA", (seat, verb, verdict)
    assert {("0", "PLAY", "WA"), ("1", "DRAW", "WA"), ("1", "PLAY", "WH"),
            ("asked", "claim", "WH")} <= set(verdicts), verdicts
