"""An mjai server's ``ryukyoku`` as our client reads it: the draw's reason in our words and
the tenpai seats it names, so that replay of our own mjai game logs shows who was ready (it
showed ``tenpai []`` at every exhaustive draw, while the deltas paid the ready seats)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from protocols import events as ev
from protocols.mjai import MjaiCodec

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
def test_a_ryukyoku_reads_as_the_draw_it_names(message: dict[str, object], reason: str,
                                               tenpai: tuple[int, ...]) -> None:
    (drawn,) = MjaiCodec().feed(dict(message))
    assert drawn == ev.RoundDrawn(reason, tuple(message.get("deltas", ())), tenpai)  # type: ignore[arg-type]


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
