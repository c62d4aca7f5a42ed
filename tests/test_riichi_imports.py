"""The riichi player runs where the MCR and tooling libraries are not: mjai.app's image has no
MahjongGB (the riichi bot never calls it), structlog or msgpack (it logs through the standard
library and writes no game log there). Each test plays the riichi path in a subprocess
whose import system refuses the named modules, as an image without them would, and says
which of them were asked for."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

from tests.test_mjai_app_harness import _check, _requests

PLAYER = r'''
import importlib.abc, io, json, sys

BLOCKED = set(sys.argv[1].split(","))
asked = []

class Refuse(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in BLOCKED:
            asked.append(name)
            raise ModuleNotFoundError(f"No module named {name!r} (refused)")
        return None

sys.meta_path.insert(0, Refuse())
from adapter.platforms.mjai import MjaiBot, MjaiSettings, run_stdio

out = io.StringIO()
bot = MjaiBot(MjaiSettings(seat=int(sys.argv[2]), write_log=False))
run_stdio(bot, io.StringIO(sys.stdin.read()), out)
print(json.dumps({"answers": out.getvalue().splitlines(), "asked": asked}))
'''


def play_without(blocked: list[str], seat: int, requests: list[list[dict[str, Any]]],
                 raw_after: dict[int, str] | None = None) -> tuple[dict[str, Any], str]:
    """The requests through the riichi player with ``blocked`` refused (``raw_after``: a
    line sent after request N); its last stdout line (the answers, and the blocked modules
    it asked for) and its stderr."""
    lines = [json.dumps(r, separators=(",", ":")) for r in requests]
    for index, raw in sorted((raw_after or {}).items(), reverse=True):
        lines.insert(index + 1, raw)
    text = "".join(line + "\n" for line in lines)
    done = subprocess.run([sys.executable, "-c", PLAYER, ",".join(blocked), str(seat)],
                          input=text, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.splitlines()[-1]), done.stderr


def test_the_riichi_player_never_imports_mahjonggb() -> None:
    """brain.policies (every policy) imported the MCR planner and fan calculator, and with them
    MahjongGB at module level: a riichi bot could not start without it. Now a whole recorded
    game is played, every answer legal, and MahjongGB is never asked for."""
    seat = 3
    requests = _requests(seat)
    result, stderr = play_without(["MahjongGB"], seat, requests)
    assert result["asked"] == [], result["asked"]
    kinds = _check(seat, requests, result["answers"])
    assert kinds.get("dahai", 0) > 20 and "Traceback" not in stderr, (kinds, stderr[-2000:])


def test_the_riichi_player_plays_and_logs_without_structlog_or_msgpack() -> None:
    """adapter/session.py, the mjai session and the thinker imported structlog, and
    replay/log.py msgpack, at module level: without them the riichi player could not start.
    Now it plays the game, its log lines going through the standard library (an unreadable
    line is told on stderr as one plain line and answered none), msgpack never asked for."""
    seat = 0
    requests = _requests(seat)
    result, stderr = play_without(["MahjongGB", "structlog", "msgpack"], seat, requests,
                                  raw_after={0: "{not json"})
    answers = result["answers"]
    assert json.loads(answers.pop(1)) == {"type": "none"}
    kinds = _check(seat, requests, answers)
    assert kinds.get("dahai", 0) > 20, kinds
    assert set(result["asked"]) == {"structlog"}, result["asked"]  # tried, and done without
    said = [line for line in stderr.splitlines() if line.startswith("mjai: bad input ")]
    assert len(said) == 1 and 'error="not JSON' in said[0], stderr[-2000:]
    assert "Traceback" not in stderr, stderr[-2000:]
