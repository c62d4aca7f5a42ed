"""What the mjai.app upload's ``bot.py`` runs: ``python -u bot.py SEAT``, the mjai.app stdin
form (adapter/platforms/mjai.py) with the seat as the only argument and no game log (the
container, and anything written in it, is removed after the game; stderr is the harness's log).

It must run in mjai.app's image (Python 3.10, numpy; no structlog, msgpack or MahjongGB):
log lines go through the standard library (adapter/logging_setup.py)."""

from __future__ import annotations

import sys

from adapter.logging_setup import configure_plain_logging
from adapter.platforms.mjai import MjaiBot, MjaiSettings, RefereeGone, run_stdio


def main(argv: list[str], policy: str = "rulebased") -> int:
    """``argv``: the seat mjai.app passes (0..3). Anything else is one line on stderr and
    exit 2, before a line of the game is read."""
    if len(argv) != 1 or argv[0] not in ("0", "1", "2", "3"):
        print(f"mjbot: bot.py takes our seat (0..3) as its only argument, got {argv!r}",
              file=sys.stderr)
        return 2
    missing = missing_network(policy)
    if missing:  # one line, not a fallback line a decision advising to train a network
        print(f"mjbot: this nn upload cannot read its network ({missing}): playing "
              "rulebased; unzip the whole zip here, or build it again with mjbot bundle mjai "
              "--policy nn", file=sys.stderr)
        policy = "rulebased"
    configure_plain_logging("info")
    bot = MjaiBot(MjaiSettings(policy=policy, seat=int(argv[0]), write_log=False))
    try:
        run_stdio(bot)
    except RefereeGone as exc:  # its stdout full, none of an answer taken: one line, as
        print(f"mjbot: {exc}", file=sys.stderr)  # `mjbot mjai` says it (it was a traceback)
        return 1
    return 0


def missing_network(policy: str) -> str:
    """Why an ``nn`` upload has no riichi network to play ("" where it has one, or plays
    another policy): its weights file left out as the zip was unpacked, or damaged."""
    if policy != "nn":
        return ""
    # not at the top: the default upload carries no network, nor needs it
    from brain.policies.nn import lost_by_upload

    return lost_by_upload("riichi")
