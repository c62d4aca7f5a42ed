"""An mjai server's ``ryukyoku`` as our client reads it: the draw's reason in our words and
the tenpai seats it names, so that replay of our own mjai game logs shows who was ready (it
showed ``tenpai []`` at every exhaustive draw, while the deltas paid the ready seats)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from protocols import events as ev
from protocols.mjai import MjaiCodec
from replay import formats
from replay.formats.mjai_log import draws_read_again
from replay.log import EventFrame, RxFrame
from replay.timeline import build

ROOT = Path(__file__).resolve().parent.parent
FLAGS = {"type": "ryukyoku", "reason": "fanpai", "tenpais": [True, False, True, False],
         "deltas": [1500, -1500, 1500, -1500]}
HANDS = {"type": "ryukyoku", "reason": "fanpai",
         "tehais": [["?"] * 13, ["1m", "2m", "3m", "4p", "5p", "6p", "7s", "8s", "9s", "E",
                                 "E", "E", "N"], ["?"] * 13, ["?"] * 13],
         "deltas": [-1000, 3000, -1000, -1000]}


@pytest.mark.parametrize(("message", "reason", "tenpai"), [
    (FLAGS, "exhaustive", (0, 2)),
    (HANDS, "exhaustive", (1,)),
    ({"type": "ryukyoku", "deltas": [0, 0, 0, 0]}, "exhaustive", ()),  # Mortal: no names
    ({"type": "ryukyoku", "reason": "kyushukyuhai"}, "nine_terminals", ()),
    ({"type": "ryukyoku", "reason": "suufonrenda"}, "four_winds", ()),
    ({"type": "ryukyoku", "reason": "nagashimangan", "deltas": [12000, -4000, -4000, -4000]},
     "nagashi", ()),
    ({"type": "ryukyoku", "reason": "somethingnew"}, "somethingnew", ()),
])
def test_a_ryukyoku_reads_as_the_draw_it_names(message: dict[str, Any], reason: str,
                                               tenpai: tuple[int, ...]) -> None:
    (drawn,) = MjaiCodec().feed(dict(message))
    assert drawn == ev.RoundDrawn(reason, tuple(message.get("deltas", ())), tenpai)


def test_replay_of_our_mjai_seats_logs_names_the_ready_seats_the_deltas_pay(
        tmp_path: Path) -> None:
    """`mjbot mjai` as an outside seat of the local table (whose mjai events name the tenpai
    seats, as the original server does); each of its game logs, replayed, shows at every
    exhaustive draw the seats the payments went to. Seed 7's four hands hold such draws."""
    seat = (f"mjai:{sys.executable} -m adapter.cli --log-level warning mjai "
            f"--log-dir {tmp_path / 'seat'}")
    run = subprocess.run([sys.executable, "-m", "adapter.cli", "arena", "--variant", "riichi",
                          "--policies", f"{seat},rulebased,rulebased,rulebased", "--hands", "4",
                          "--seed", "7", "--no-log"], cwd=ROOT, capture_output=True, text=True,
                         timeout=300)
    assert run.returncode == 0, run.stderr[-2000:]
    draws = 0
    for path in sorted((tmp_path / "seat").rglob("*.mjlog.msgpack")):
        out = subprocess.run([sys.executable, "-m", "adapter.cli", "replay", "--json",
                              str(path)], cwd=ROOT, capture_output=True, text=True,
                             timeout=120)
        assert out.returncode == 0, out.stderr[-2000:]
        for hand in json.loads(out.stdout)["summary"]["hands"]:
            for result in hand["results"]:
                if result["type"] != "draw" or result.get("reason") != "exhaustive" \
                        or not any(result["deltas"]):
                    continue
                draws += 1
                paid = [s for s, d in enumerate(result["deltas"]) if d > 0]
                assert result["tenpai"] == paid, (path.name, hand["round"], result)
    assert draws >= 2


@pytest.mark.parametrize("bad", [
    {"tenpais": [True, False, True, False, True]},  # a fifth seat
    {"tenpais": [True, False]},
    {"tenpais": ["yes", "no", "yes", "no"]},
    {"tehais": [["1m"], ["?"], ["1m"], ["?"], ["1m"]]},
    {"tehais": [["1m"], "?", None, 5]},
    {"tenpais": [1, 0, 1, 0, 1], "tehais": [[7], ["?"], ["?"], ["?"]]},
])
def test_tenpai_fields_of_another_shape_name_no_seat(bad: dict[str, object]) -> None:
    """A server's ``tenpais`` / ``tehais`` that is not one entry per seat of four names no
    ready seat (a fifth flag read as 'seat 4 tenpai'), and no traceback: the live codec
    keeps the draw with none named, the log reader finds the ready seats from the hands."""
    (drawn,) = MjaiCodec().feed({"type": "ryukyoku", "reason": "fanpai",
                                 "deltas": [1500, -1500, 1500, -1500], **bad})
    assert drawn == ev.RoundDrawn("exhaustive", (1500, -1500, 1500, -1500), ())
    from replay.formats import mjai_log, tenhou6

    record = tenhou6.loads((ROOT / "adapter" / "real_games" / "tenhou" /
                            "convlog_tenhou6_json" / "ryukyoku.json").read_text())
    lines = [json.loads(x) for x in mjai_log.dumps(record).splitlines()]
    text = "\n".join(json.dumps({**{k: v for k, v in x.items() if k not in ("tenpais",
                                                                          "tehais")}, **bad}
                                if x["type"] == "ryukyoku" else x) for x in lines)
    tenpai = next(e.tenpai for e in mjai_log.loads(text).events
                  if isinstance(e, ev.RoundDrawn))
    assert tenpai == (0, 1)  # the hands' truth, as in tests/test_replay_imports.py


OLD_LOG = ROOT / "tests" / "data" / "upgrade" / "mjai_client_63b119a.mjlog.msgpack"


def test_an_older_mjbots_mjai_log_shows_the_ready_seats_its_draw_paid() -> None:
    """A game log our mjai client wrote before 7117cba holds its draws as that codec made
    them, with no tenpai seat (tests/data/upgrade/SOURCES.md: made by 63b119a). Replay and
    the viewer read the draw again from the raw ``ryukyoku`` the log keeps: after an upgrade
    the old logs show who was ready, as the deltas pay, not 'tenpai []'."""
    out = subprocess.run([sys.executable, "-m", "adapter.cli", "replay", "--json",
                          str(OLD_LOG)], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    (hand,) = json.loads(out.stdout)["summary"]["hands"]
    assert hand["results"] == [{"type": "draw", "reason": "exhaustive",
                                "deltas": [3000, -1000, -1000, -1000], "tenpai": [0]}]
    (shown,) = build(formats.read(OLD_LOG.read_bytes(), OLD_LOG)).hands
    assert shown["result"]["tenpai"] == [0]


def test_an_older_mjbots_raw_draw_reason_reads_in_our_words() -> None:
    """The older codec kept the server's word (``kyushukyuhai``) as the reason; read again
    from the raw message it is ours, and a draw logged as today's codec reads it is kept."""
    raw = json.dumps([{"type": "dahai", "actor": 1, "pai": "E", "tsumogiri": False},
                      {"type": "ryukyoku", "reason": "kyushukyuhai",
                       "deltas": [0, 0, 0, 0]}])
    notice = ev.PlatformNotice("a notice between the message and its draw")
    old = ev.RoundDrawn("kyushukyuhai", (0, 0, 0, 0))
    frames = [RxFrame(0.0, raw), EventFrame(0.0, notice), EventFrame(0.0, old)]
    assert draws_read_again(frames) == [
        frames[0], frames[1], EventFrame(0.0, ev.RoundDrawn("nine_terminals", (0, 0, 0, 0)))]
    today = [*frames[:2], EventFrame(0.0, ev.RoundDrawn("nine_terminals", (0, 0, 0, 0)))]
    assert draws_read_again(today) == today
