"""What the mjai.app upload's ``bot.py`` runs: ``python -u bot.py SEAT``, the mjai.app stdin
form (adapter/platforms/mjai.py) with the seat as the only argument and no game log (the
container, and anything written in it, is removed after the game; stderr is the harness's log).

It must run in mjai.app's image (Python 3.10, numpy; no structlog, msgpack or MahjongGB):
log lines go through the standard library (adapter/logging_setup.py)."""

from __future__ import annotations

import sys

from adapter.logging_setup import configure_plain_logging
from adapter.platforms.mjai import MjaiBot, MjaiSettings, run_stdio


def main(argv: list[str], policy: str = "rulebased") -> int:
    """``argv``: the seat mjai.app passes (0..3). Anything else is one line on stderr and
    exit 2, before a line of the game is read."""
    if len(argv) != 1 or argv[0] not in ("0", "1", "2", "3"):
        print(f"mjbot: bot.py takes our seat (0..3) as its only argument, got {argv!r}",
              file=sys.stderr)
        return 2
    configure_plain_logging("info")
    bot = MjaiBot(MjaiSettings(policy=policy, seat=int(argv[0]), write_log=False))
    run_stdio(bot)
    return 0
