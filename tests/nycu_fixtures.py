"""How tests/data/nycu/ was made: hands played at our own Taiwan 16-tile table, written as the
NYCU lab's SGF, and one client's lines from a match at our fake NTPU server as a command log.

Run ``python -m tests.nycu_fixtures`` from the project root to write the files again (the
SGF hands are deterministic; the match uses four ``mjbot ntpu`` processes). The SGF walls are
laid out as the lab referee deals (the dealer's 17 in a row, then 16 to each other seat), as
its real records in tests/data/shared/ntpu/lab_referee/ show; our own table's drawn hand
(draw.sgf) ends on the last draw, as the referee's records do.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from adapter.local.referee import HandReferee, HandSetup
from adapter.local.seat import BrainSeat
from protocols import events as ev
from protocols import tiles as T
from replay.formats import nycu_sgf
from replay.log import EventFrame, RxFrame, TxFrame, read_log
from replay.record import GameRecord
from tests.table_helpers import ScriptedSeat, layout_wall, take_when_legal

DATA = Path(__file__).resolve().parent / "data" / "nycu"
ROOT = Path(__file__).resolve().parent.parent

# The hand with every call: E (dealer) holds 7777z 777s; S holds 4s5s and discards 5p after its
# chow; W holds 55p and discards 7s after its pong; N is ready on 9s from the deal. Every seat
# takes any win, kong, pong or chow it may and otherwise discards what it drew, so the wall
# decides the play: E's 17th (1p), closed kong 7z, replacement 3s thrown, S chows it and throws
# 5p, W pongs and throws 7s, E kongs it (open), throws its replacement 1z; S draws 2z and throws
# it, W draws 5p and adds it to its pong, throws its replacement 3z; N draws 9s: self-drawn win.
RICH_HANDS = ["258m369p148s777s7777z",
              "134679m248p459s456z5p", "2358m146755p26s456z7s", "123456789m123789p9s"]
RICH_DRAWS = "1p2z5p9s"
RICH_REPLACEMENTS = "3s1z3z"  # drawn from the end of the wall: 3s first, then 1z, then 3z


class Capture:
    """Stands in for the referee's game log: keeps the full-information events."""

    def __init__(self) -> None:
        self.events: list[Any] = []

    def event(self, e: Any) -> None:
        self.events.append(e)

    def decision(self, *args: Any, **kwargs: Any) -> None:
        return None


def rich_wall() -> tuple[int, ...]:
    wall = layout_wall("taiwan16", RICH_HANDS, RICH_DRAWS)
    dealt = 4 * 16 + len(T.parse_mpsz(RICH_DRAWS))
    unused = list(wall[dealt:])
    tail = T.parse_mpsz(RICH_REPLACEMENTS)
    for t in tail:
        unused.remove(t)
    return (*wall[:dealt], *unused, *tail[::-1])


def _play(players: list[Any], setup: HandSetup) -> GameRecord:
    capture = Capture()
    referee = HandReferee("taiwan16", players, capture)
    referee.emit(ev.GameStarted("taiwan16", 0))
    referee.play(setup)
    return GameRecord("taiwan16", "local", capture.events)


def rich_hand() -> GameRecord:
    script = take_when_legal(ev.Win, ev.Kan, ev.Pon, ev.Chi)
    players = [ScriptedSeat("taiwan16", s, script) for s in range(4)]
    return _play(players, HandSetup(seed=0, wall=rich_wall()))


def greedy_hand(seed: int) -> GameRecord:
    """A hand between four greedy brains on the seeded wall (dealer: seed % 4)."""
    players = [BrainSeat("taiwan16", s, "greedy") for s in range(4)]
    return _play(players, HandSetup(seed=seed, dealer=seed % 4, round_number=seed % 4))


def first_hand(ends_with: type) -> GameRecord:
    """The greedy hand of the lowest seed that ends with a ``RoundWon`` on a discard or a
    ``RoundDrawn``: chosen by what happens, so that a policy change picks another seed."""
    for seed in range(1, 200):
        hand = greedy_hand(seed)
        end = [e for e in hand.events if isinstance(e, ev.RoundWon | ev.RoundDrawn)][-1]
        if isinstance(end, ends_with) and (
                not isinstance(end, ev.RoundWon) or end.from_seat is not None):
            return hand
    raise AssertionError(f"no greedy hand among 200 seeds ends with {ends_with.__name__}")


def sgf_fixtures() -> dict[str, str]:
    """File name -> SGF text, for the hands the tests read."""
    ron = first_hand(ev.RoundWon)
    return {
        "rich.sgf": nycu_sgf.dumps(rich_hand()),
        "ron.sgf": nycu_sgf.dumps(ron),
        "draw.sgf": nycu_sgf.dumps(first_hand(ev.RoundDrawn)),
        "ron-deal-nodes.sgf": nycu_sgf.dumps(ron, deal_nodes=True).replace(
            ";S[M", "C[the deal, as the client writes it]\n;S[M", 1),
    }


def command_log(match_log: Path, client: int) -> str:
    """One client's lines from a fake-server match log, marked as the lab's client prints
    them: ``[ << ]`` what it received, ``[ >> ]`` what it sent."""
    lines = []
    for f in read_log(match_log).frames:
        if isinstance(f, TxFrame | RxFrame):
            raw = f.raw.decode() if isinstance(f.raw, bytes) else f.raw
            who, _, line = raw.partition(" ")
            if who == f"{client + 1}>":
                lines.append(f"[ << ] {line}")
            elif who == f"{client + 1}<":
                lines.append(f"[ >> ] {line}")
    return "\n".join(lines) + "\n"


def match_record(match_log: Path) -> GameRecord:
    events = [f.event for f in read_log(match_log).frames if isinstance(f, EventFrame)]
    return GameRecord("taiwan16", "local", events)


def play_match(log_dir: Path, hands: int = 2, seed: int = 2,
               policies: str = "rulebased,rulebased,rulebased,rulebased") -> Path:
    subprocess.run([sys.executable, "-m", "adapter.cli", "--log-level", "warning",
                    "ntpu-server", "--clients", "stdio", "--hands", str(hands), "--seed",
                    str(seed), "--policies", policies, "--log-dir",
                    str(log_dir)], cwd=ROOT, check=True, capture_output=True)
    (path,) = (log_dir / "ntpu-server").rglob("*.mjlog.msgpack")
    return path


def main() -> None:
    DATA.mkdir(parents=True, exist_ok=True)
    for name, text in sgf_fixtures().items():
        (DATA / name).write_text(text, encoding="ascii")
    with tempfile.TemporaryDirectory() as tmp:
        log = play_match(Path(tmp))
        (DATA / "match.sgf").write_text(nycu_sgf.dumps(match_record(log)), encoding="ascii")
        (DATA / "client1.log").write_text(command_log(log, 0), encoding="ascii")


if __name__ == "__main__":
    main()
