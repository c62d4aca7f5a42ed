"""Platforms that send no value for a win: our client logs what our own rules make of it,
marked as ours, and replay shows that value (NTPU: every seat's win; mjai: our own wins)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from adapter.platforms.mjai import MjaiBot, MjaiSettings
from adapter.platforms.ntpu import NtpuBot, NtpuSettings
from protocols import events as ev
from protocols import tiles as T
from protocols.mjai import MjaiCodec
from replay import replayer
from replay.formats import mjai_log, ntpu_log
from replay.log import EventFrame, read_log
from tests.in_process import mjbot_here
from tests.narrowing import searched
from tests.shared_data import MJAI_GAME

# We are NTPU seat 1, the dealer: 1-9s, EEE SS WW and 9p (id 290).
OUR_DEAL = "/initCard 310 320 330 340 350 360 370 380 390 410 411 412 420 421 430 431 290"
HEAD = ["/start MJ 1 me", "/initGame east east 1 1 0", OUR_DEAL, "/throw 1 290"]
# A round of discards, then we draw and throw 9p: seat 2 wins on it, concealed, 123 456
# 789m 123 456p 99p: 門清 1 + 一條龍 4 (no 人胡: it has drawn and thrown); we, the dealer,
# pay 1000 + 500 * (5 + 1)
RON = ["/start MJ 1 me", "/initGame east east 1 1 0", OUR_DEAL, "/throw 1 431",
       "/throw 2 440", "/throw 3 441", "/throw 4 442", "/mo 292", "/throw 1 290",
       "/hu 2 290 110 120 130 140 150 160 170 180 190 210 220 230 240 250 260 291",
       "/exit", "/close"]
# Seat 2 makes a concealed kong (the others see no tile of it), then wins on its
# replacement draw: its hand is not known
HIDDEN_KONG = [*HEAD, "/gong 2 0",
               "/hu 2 251 110 120 130 140 150 160 170 180 190 210 220 230 250", "/exit",
               "/close"]


def _play_ntpu(lines: list[str], log_dir: Path) -> Path:
    bot = NtpuBot(NtpuSettings(policy="greedy", log_dir=str(log_dir)))
    for line in lines:
        bot.handle(line)
    bot.close()
    assert bot.summary.errors == []
    (path,) = sorted(log_dir.rglob("*.msgpack"))
    return path


def _wins(events: list[object]) -> list[ev.RoundWon]:
    return [e for e in events if isinstance(e, ev.RoundWon)]


def test_an_ntpu_client_logs_and_replays_another_seats_win_valued_by_our_rules(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _play_ntpu(RON, tmp_path)
    logged = [f.event for f in read_log(path).frames if isinstance(f, EventFrame)]
    # the logged event is the codec's (so --reparse stays identical); the value is a notice
    assert [w.value for w in _wins(logged)] == [0]
    notices = [e.text for e in logged if isinstance(e, ev.PlatformNotice)]
    assert any(n.startswith("seat 1's win by mjbot's rules: 6 tai, 莊家(1)") and "一條龍(4)" in n
               and "[-4000, 4000, 0, 0]" in n and "not sent by the server" in n
               for n in notices), notices
    (win,) = _wins(replayer.load(path).events)
    assert (win.winner, win.from_seat, win.value, win.deltas) == (1, 0, 6, (-4000, 4000, 0, 0))
    assert "門清(1)" in win.yaku and "一條龍(4)" in win.yaku
    assert win.detail == ntpu_log.OTHERS_DETAIL
    text = mjbot_here(capsys, "replay", str(path))
    assert text.returncode == 0, text.stderr
    assert re.search(r"WIN +seat 1 ron from seat 0 on 9p value 6 .*valued by mjbot's rules",
                     text.stdout), text.stdout
    assert "deltas  [-4000, 4000, 0, 0]" in text.stdout
    reparse = mjbot_here(capsys, "replay", str(path), "--reparse", "--json")
    assert '"identical": true' in reparse.stdout
    # a command log of the same lines imports with the same value
    (imported,) = _wins(ntpu_log.loads("\n".join(RON)).events)
    assert imported == win


def test_another_seats_win_with_a_hidden_concealed_kong_says_what_is_missing(
        tmp_path: Path) -> None:
    path = _play_ntpu(HIDDEN_KONG, tmp_path)
    logged = [f.event for f in read_log(path).frames if isinstance(f, EventFrame)]
    notices = [e.text for e in logged if isinstance(e, ev.PlatformNotice)]
    assert any(n.startswith("seat 1's win could not be valued: seat 1 has a concealed kong "
                            "whose tiles the server never showed ('/gong 2 0')")
               for n in notices), notices
    (win,) = _wins(replayer.load(path).events)
    assert win.value == 0 and win.deltas == (0, 0, 0, 0) and win.from_seat is None
    assert win.detail.startswith("not valued: seat 1 has a concealed kong")


def _play_mjai_seat(seat: int, log_dir: Path) -> Path:
    """The shared mjai game as the server shows it to ``seat`` (the others' tiles hidden),
    one event per line, through our client with a game log."""
    bot = MjaiBot(MjaiSettings(policy="tsumogiri", log_dir=str(log_dir), seat=seat))
    for line in MJAI_GAME.read_text().splitlines():
        m = json.loads(line)
        if m["type"] == "start_game":
            m["id"] = seat
        elif m["type"] == "start_kyoku":
            m["tehais"] = [h if i == seat else ["?"] * 13 for i, h in enumerate(m["tehais"])]
        elif m["type"] == "tsumo" and m["actor"] != seat:
            m["pai"] = "?"
        bot.handle(json.dumps(m))
    bot.close()
    assert bot.summary.errors == []
    (path,) = sorted(log_dir.rglob("*.msgpack"))
    return path


def test_an_mjai_client_logs_and_replays_its_own_wins_valued_by_our_rules(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """mjai.app / Mortal send a hora's deltas, not its value: our client notes the han our
    riichi rules give (marked as ours), and replay shows it; on this real game our payments
    are mjai's own, and the values are those the mjai importer gives (it sees every hand)."""
    path = _play_mjai_seat(1, tmp_path)
    logged = [f.event for f in read_log(path).frames if isinstance(f, EventFrame)]
    notices = [e.text for e in logged if isinstance(e, ev.PlatformNotice)]
    ours = [w for w in _wins(logged) if w.winner == 1]
    assert len(ours) == 4 and all(w.value == 0 for w in ours)
    valued = [n for n in notices if n.startswith("our win by mjbot's rules: ")]
    assert len(valued) == 4
    for note, win in zip(valued, ours, strict=True):
        assert f"deltas {list(win.deltas)} (computed by mjbot, not sent by mjai" in note
    imported = [w for w in _wins(mjai_log.loads(MJAI_GAME.read_text()).events)
                if w.winner == 1]
    shown = [w for w in _wins(replayer.load(path).events) if w.winner == 1]
    assert [(w.value, w.yaku, w.deltas, sorted(w.hand)) for w in shown] == \
        [(w.value, w.yaku, w.deltas, sorted(w.hand)) for w in imported]
    assert all(w.detail.endswith(mjai_log.OWN_DETAIL) for w in shown)
    text = mjbot_here(capsys, "replay", str(path))
    assert text.returncode == 0, text.stderr
    assert re.search(r"WIN +seat 1 ron from seat 0 on 1p value 5 .*Riichi\(1\).*"
                     r"valued by mjbot's rules", text.stdout), text.stdout
    reparse = mjbot_here(capsys, "replay", str(path), "--reparse", "--json")
    assert '"identical": true' in reparse.stdout


def test_a_hora_that_carries_its_value_keeps_it() -> None:
    """The original mjai server writes ``fan``, ``fu`` and ``yakus``: taken as sent, so
    nothing of ours replaces it (any seat's win)."""
    codec = MjaiCodec(0)
    codec.feed({"type": "start_game", "id": 0})
    (won,) = codec.feed({"type": "hora", "actor": 2, "target": 0, "pai": "5p", "fu": 40,
                         "fan": 3, "yakus": [["reach", 1], ["dora", 2]],
                         "uradora_markers": ["E"], "deltas": [-5200, 0, 5200, 0]})
    assert won == ev.RoundWon(2, 0, (), T.parse_mpsz("5p")[0], 3, (-5200, 0, 5200, 0),
                              ("reach(1)", "dora(2)"), (T.EAST,), detail="40符")
    assert mjai_log.value_own_wins([ev.GameStarted("riichi", 2), won])[1] == won


_VALUED = re.compile(r"(?:our win|seat (\d)'s win) by mjbot's rules: (\d+) tai(?:, ([^;]*))?"
                     r"(?:; deltas \[([-\d, ]*)\])?")


def test_every_ntpu_clients_value_of_every_win_is_the_servers(tmp_path: Path) -> None:
    """Each of four real `mjbot ntpu` clients values every win of a match, its own and the
    others', from what the server told it; the match's server (our local table) values the
    same wins from the whole table. Each client's tai, items and payments are the server's,
    hand by hand, dealer wins and wins on a discard and by self-draw included (seed 3:
    eight hands, six won, three of them by the dealer)."""
    from adapter.fakes.ntpu_server import run_match

    run_match(8, ["rulebased", "rulebased", "greedy", "greedy"], seed=3, transport="stdio",
              log_dir=str(tmp_path), client_args=["--log-dir", str(tmp_path)])
    (match,) = (tmp_path / "ntpu-server").rglob("*.mjlog.msgpack")
    served = [e for e in read_log(match).events() if isinstance(e, ev.RoundWon | ev.RoundDrawn)]
    assert sum(isinstance(e, ev.RoundWon) for e in served) == 6
    assert {e.winner for e in served if isinstance(e, ev.RoundWon)} >= {0, 1, 2}
    compared = 0
    for path in (tmp_path / "ntpu").rglob("*.mjlog.msgpack"):  # one per client and hand
        hand = int(searched(r"-g(\d+)-", path.name).group(1))
        won = served[hand - 1]
        log = read_log(path)
        notices = [f.event.text for f in log.frames if isinstance(f, EventFrame)
                   and isinstance(f.event, ev.PlatformNotice) and "by mjbot's rules" in
                   f.event.text]
        if not isinstance(won, ev.RoundWon):
            assert notices == [], (path.name, notices)
            continue
        (text,) = notices
        found = _VALUED.fullmatch(text.split(" (computed by")[0])
        assert found is not None, text
        seat, tai, items, deltas = found.groups()
        ours = seat is None
        assert log.header is not None
        assert (log.header.seat if ours else int(seat)) == won.winner, (path.name, text)
        assert int(tai) == won.value, (path.name, text, won)
        assert (items or "").split() == list(won.yaku), (path.name, text, won)
        if not ours:
            assert tuple(int(d) for d in deltas.split(",")) == won.deltas, (path.name, text)
        compared += 1
    assert compared == 6 * 4
