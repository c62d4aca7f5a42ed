"""``mjbot bench mjai``: our bot against the PyPI ``mjai`` package's ``RulebaseBot`` in that
package's own in-process arena (``mjai.mlibriichi.arena.Match``: the Rust game engine mjai.app
runs, with its own rules and scoring). Opt-in: the package is not a dependency of mjbot (it
bundles an AGPL-licensed extension, and it pins ``mahjong~=1.2`` although its bots never import
it, while mjbot needs ``mahjong`` 2: pip reports the two as ResolutionImpossible, so ``mjai``
cannot be part of an extra). The extra ``[mjai]`` installs what it needs with their own
dependencies, then ``mjai`` goes in without its pins (``make bench-mjai`` does both)::

    pip install -e '.[mjai]' && pip install --no-deps mjai==0.2.1

Each game seats two mjbot engines and two RulebaseBot engines, rotated over the seats across
games; the table reports average rank and points per game for each side.
"""

from __future__ import annotations

import json
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from adapter.mjai import MjaiBot, MjaiSettings, reply_line

INSTALL = "pip install -e '.[mjai]' && pip install --no-deps mjai==0.2.1 (or: make bench-mjai)"


class _Engine:
    """The engine interface ``Match.py_match`` drives (as mjai's own DockerMjaiLogEngine):
    each call brings the events of the hand so far; pass on the new ones, masked for the
    seat, as one mjai.app line to ``react``."""

    engine_type = "mjai-log"

    def __init__(self, name: str, react: Any) -> None:
        self.name = name
        self.react = react
        self.player_ids: list[int] = []
        self.seen = 0
        self.answers = 0
        self.seconds = 0.0

    def set_player_ids(self, player_ids: list[int]) -> None:
        self.player_ids = player_ids

    def _line(self, events: list[dict[str, Any]]) -> str:
        return json.dumps(events, separators=(",", ":"))

    def react_batch(self, game_states: Any) -> list[str]:
        out = []
        for game_state in game_states:
            seat = self.player_ids[game_state.game_index]
            events = json.loads(game_state.events_json)
            if self.seen > len(events):
                self.seen = 0
            new = []
            for event in events[self.seen:]:
                if event["type"] == "tsumo" and event["actor"] != seat:
                    event = {**event, "pai": "?"}
                if event["type"] == "start_kyoku":
                    event = {**event, "tehais": [h if s == seat else ["?"] * 13
                                                 for s, h in enumerate(event["tehais"])]}
                new.append(event)
            self.seen = len(events)
            if not new:
                out.append('{"type":"none"}')
                continue
            start = time.perf_counter()
            out.append(self.react(self._line(new)))
            self.seconds += time.perf_counter() - start
            self.answers += 1
        return out

    def start_game(self, game_idx: int) -> None:
        seat = self.player_ids[game_idx] if self.player_ids else 0
        self.react(self._line([{"type": "start_game", "names": ["0", "1", "2", "3"],
                                "id": seat}]))

    def end_kyoku(self, game_idx: int) -> None:
        self.react(self._line([{"type": "end_kyoku"}]))
        self.seen = 0

    def end_game(self, game_idx: int, scores: list[int]) -> None:
        self.react(self._line([{"type": "end_game", "scores": list(scores)}]))


def _ours(seat_hint: int, policy: str) -> Any:
    bot = MjaiBot(MjaiSettings(policy=policy, write_log=False))

    def react(line: str) -> str:
        return reply_line(bot, line).rstrip("\n")
    return react


def _theirs(seat_hint: int) -> Any:
    from mjai.bot.rulebase import RulebaseBot

    bot: Any = None

    def react(line: str) -> str:
        nonlocal bot
        events = json.loads(line)
        if events and events[0].get("type") == "start_game":
            bot = RulebaseBot(player_id=int(events[0].get("id", seat_hint)))
        if bot is None:
            bot = RulebaseBot(player_id=seat_hint)
        return bot.react(line)
    return react


def bench_mjai(games: int = 8, seed: int = 10000, policy: str = "rulebased") -> dict[str, Any]:
    """Play ``games`` games; returns per-side average rank and points."""
    try:
        from loguru import logger
        from mjai.mlibriichi.arena import Match
    except ImportError as exc:
        raise RuntimeError(f"this opt-in benchmark needs the module {exc.name or exc!s}, which is "
                           f"not installed: {INSTALL}") from exc
    logger.disable("mjai")  # RulebaseBot logs every decision
    ranks: dict[str, list[int]] = {"mjbot": [], "RulebaseBot": []}
    points: dict[str, list[int]] = {"mjbot": [], "RulebaseBot": []}
    started = time.perf_counter()
    for game in range(games):
        rotation = game % 4
        sides = ["mjbot" if (s + rotation) % 2 == 0 else "RulebaseBot" for s in range(4)]
        engines = [_Engine(side, _ours(s, policy) if side == "mjbot" else _theirs(s))
                   for s, side in enumerate(sides)]
        with tempfile.TemporaryDirectory() as tmp:
            match = Match(log_dir=tmp)
            match.py_match(*engines, seed_start=(seed + game, 2000))
            scores = _final_scores(Path(tmp))
        order = sorted(range(4), key=lambda s: -scores[s])
        for rank, seat in enumerate(order, start=1):
            ranks[sides[seat]].append(rank)
            points[sides[seat]].append(scores[seat] - 25000)
    return {
        "games": games, "seconds": round(time.perf_counter() - started, 1),
        "average_rank": {k: round(statistics.mean(v), 3) for k, v in ranks.items()},
        "points_per_game": {k: round(statistics.mean(v)) for k, v in points.items()},
        "reference": "mjai 0.2.1 RulebaseBot, mlibriichi arena (its rules and scoring)",
    }


def _final_scores(log_dir: Path) -> list[int]:
    """The final scores from the arena's mjai log: the last hand's starting scores plus the
    deltas of its wins and draws (its end_game carries none)."""
    for path in sorted(p for p in log_dir.rglob("*") if p.is_file()):
        scores: list[int] | None = None
        for line in _read_text(path).splitlines():
            event = json.loads(line)
            if event.get("type") == "start_kyoku":
                scores = [int(x) for x in event["scores"]]
            elif event.get("type") in ("hora", "ryukyoku") and scores is not None:
                deltas = event.get("deltas") or [0, 0, 0, 0]
                scores = [a + int(b) for a, b in zip(scores, deltas, strict=True)]
        if scores is not None:
            return scores
    raise RuntimeError(f"no game in the arena's log under {log_dir}")


def _read_text(path: Path) -> str:
    data = path.read_bytes()
    if path.suffix == ".gz":
        import gzip

        data = gzip.decompress(data)
    return data.decode("utf-8", errors="replace")
