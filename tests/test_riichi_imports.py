"""The riichi player runs where the MCR and tooling libraries are not: mjai.app's image has no
MahjongGB (the riichi bot never calls it). Each test plays the riichi path in a subprocess
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


def play_without(blocked: list[str], seat: int, requests: list[list[dict[str, Any]]]) \
        -> tuple[dict[str, Any], str]:
    """The requests through the riichi player with ``blocked`` refused; its last stdout line
    (the answers, and the blocked modules it asked for) and its stderr."""
    text = "".join(json.dumps(r, separators=(",", ":")) + "\n" for r in requests)
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
