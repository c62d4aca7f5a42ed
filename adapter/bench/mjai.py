"""``mjbot bench mjai``: our bot against the PyPI ``mjai`` package's ``RulebaseBot`` in that
package's own in-process arena (``mjai.mlibriichi.arena.Match``: the Rust game engine mjai.app
runs, with its own rules and scoring). Opt-in: the package is not a dependency of mjbot (it
bundles an AGPL-licensed extension, and it pins ``mahjong~=1.2`` although its bots never import
it, while mjbot needs ``mahjong`` 2: pip reports the two as ResolutionImpossible, so ``mjai``
cannot be part of an extra). The extra ``[mjai]`` installs what it needs with their own
dependencies, then ``mjai`` goes in without its pins (``make bench-mjai`` does both)::

    pip install -e '.[mjai]' && pip install --no-deps mjai==0.2.1

Each game seats two mjbot engines (playing ``--policy``) and two RulebaseBot engines, rotated
over the seats across games; the table reports average rank (with a 95% interval over games)
and points per game for each side, each game's scores and ranks, and how often mjbot's brain
had to answer for its policy.
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from adapter.bench.common import add_bench, report
from adapter.commands import (
    UserInputError,
    add_fallback_argument,
    at_least,
    fallback_verdict,
    require_networks,
    require_policy,
)

# mjai's rule, a tie to the earlier seat, is our placement with the first dealer at seat 0
from adapter.local.game import placement as ranks_of
from adapter.local.intervals import RANKS, cut_to, t975
from adapter.platforms.mjai import MjaiBot, MjaiSettings, reply_line
from brain.tally import FallbackTally

INSTALL = "pip install -e '.[mjai]' && pip install --no-deps mjai==0.2.1 (or: make bench-mjai)"


# a seat's engine: one mjai.app line of events in, its one reply line out
React = Callable[[str], str]


class _Engine:
    """The engine interface ``Match.py_match`` drives (as mjai's own DockerMjaiLogEngine):
    each call brings the events of the hand so far; pass on the new ones, masked for the
    seat, as one mjai.app line to ``react``."""

    engine_type = "mjai-log"

    def __init__(self, name: str, react: React) -> None:
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


def _ours(seat_hint: int, policy: str) -> tuple[React, MjaiBot]:
    """The react function of one mjbot seat playing ``policy``, and its bot (whose brain
    tallies the decisions it answered for the policy)."""
    bot = MjaiBot(MjaiSettings(policy=policy, write_log=False))

    def react(line: str) -> str:
        return reply_line(bot, line).rstrip("\n")
    return react, bot


def _theirs(seat_hint: int) -> React:
    from mjai.bot.rulebase import RulebaseBot

    bot: RulebaseBot | None = None

    def react(line: str) -> str:
        nonlocal bot
        events = json.loads(line)
        if events and events[0].get("type") == "start_game":
            bot = RulebaseBot(player_id=int(events[0].get("id", seat_hint)))
        if bot is None:
            bot = RulebaseBot(player_id=seat_hint)
        reply: str = bot.react(line)  # mjai's Bot.react: str in, str out (Any where mjai is absent)
        return reply
    return react


def bench_mjai(games: int = 8, seed: int = 10000, policy: str = "rulebased") -> dict[str, Any]:
    """Play ``games`` games with mjbot playing ``policy`` in two seats; returns each game's
    seats, scores and ranks, per-side average rank (with a 95% interval over games) and
    points, and how often mjbot's brain had to answer for the policy."""
    try:
        from loguru import logger
        from mjai.mlibriichi.arena import Match
    except ImportError as exc:
        raise RuntimeError(f"this opt-in benchmark needs the module {exc.name or exc!s}, which is "
                           f"not installed: {INSTALL}") from exc
    logger.disable("mjai")  # RulebaseBot logs every decision
    per_game = []
    tally = FallbackTally()
    started = time.perf_counter()
    for game in range(games):
        rotation = game % 4
        sides = [MJBOT if (s + rotation) % 2 == 0 else THEIRS for s in range(4)]
        ours = {s: _ours(s, policy) for s, side in enumerate(sides) if side == MJBOT}
        engines = [_Engine(side, ours[s][0] if side == MJBOT else _theirs(s))
                   for s, side in enumerate(sides)]
        with tempfile.TemporaryDirectory() as tmp:
            match = Match(log_dir=tmp)
            match.py_match(*engines, seed_start=(seed + game, 2000))
            scores = _final_scores(Path(tmp))
        for _, bot in ours.values():
            tally.add(bot.brain.tally)
            bot.brain.close()
        per_game.append({"game": game, "seed": [seed + game, 2000], "seats": sides,
                         "scores": scores, "ranks": ranks_of(scores)})
    return summarize(per_game, policy, time.perf_counter() - started, tally)


MJBOT, THEIRS = "mjbot", "RulebaseBot"
START = 25000


def summarize(per_game: list[dict[str, Any]], policy: str, seconds: float,
              tally: FallbackTally) -> dict[str, Any]:
    """The bench's figures from its games. A game is one sample of a side's average rank
    (its two seats' ranks are not independent), so the interval is over games."""
    average: dict[str, float] = {}
    interval: dict[str, list[float | None]] = {}
    points: dict[str, int] = {}
    for side in (MJBOT, THEIRS):
        means = [statistics.mean(g["ranks"][s] for s in range(4) if g["seats"][s] == side)
                 for g in per_game]
        average[side] = round(statistics.mean(means), 3)
        if len(means) > 1:
            half = t975(len(means) - 1) * statistics.stdev(means) / math.sqrt(len(means))
            interval[side] = cut_to((round(average[side] - half, 3),
                                     round(average[side] + half, 3)), RANKS)
        else:
            interval[side] = [None, None]
        points[side] = round(statistics.mean(
            g["scores"][s] - START for g in per_game for s in range(4) if g["seats"][s] == side))
    return {
        "policy": policy, "games": len(per_game), "seconds": round(seconds, 1),
        "average_rank": average, "average_rank_ci95": interval, "points_per_game": points,
        "fallbacks": {policy: tally.as_dict()}, "per_game": per_game,
        "reference": "mjai 0.2.1 RulebaseBot, mlibriichi arena (its rules and scoring)",
    }


def _final_scores(log_dir: Path) -> list[int]:
    """The final scores of the game in the arena's mjai log under ``log_dir``."""
    for path in sorted(p for p in log_dir.rglob("*") if p.is_file()):
        events = [json.loads(line) for line in _read_text(path).splitlines() if line.strip()]
        if any(e.get("type") == "start_kyoku" for e in events):
            return final_scores(events)
    raise RuntimeError(f"no game in the arena's log under {log_dir}")


def final_scores(events: list[dict[str, Any]]) -> list[int]:
    """The final scores from a game's mjai events (its end_game carries none): the last
    hand's starting scores, less 1,000 for each riichi accepted in it (a win's deltas pay the
    sticks to the winner but never take them from the declarer), plus the deltas of its wins
    and draws; sticks still on the table at the end go to the top seat (the first in seat
    order on a tie), as the arena (libriichi's) does. The four then sum to the table total."""
    scores: list[int] | None = None
    sticks = 0
    for event in events:
        kind = event.get("type")
        if kind == "start_kyoku":
            scores = [int(x) for x in event["scores"]]
            sticks = int(event.get("kyotaku", 0))
        elif scores is None:
            continue
        elif kind == "reach_accepted":
            scores[int(event["actor"])] -= 1000
            sticks += 1
        elif kind in ("hora", "ryukyoku"):
            deltas = event.get("deltas") or [0, 0, 0, 0]
            scores = [a + int(b) for a, b in zip(scores, deltas, strict=True)]
            if kind == "hora":
                sticks = 0  # the (first) winner took them
    if scores is None:
        raise RuntimeError("no hand in the game's mjai log")
    if sticks:
        scores[scores.index(max(scores))] += 1000 * sticks
    return scores


def _read_text(path: Path) -> str:
    data = path.read_bytes()
    if path.suffix == ".gz":
        import gzip

        data = gzip.decompress(data)
    return data.decode("utf-8", errors="replace")


def register(benches: Any) -> None:
    p = add_bench(benches, "mjai", run, "vs the mjai package's RulebaseBot (opt-in install)")
    p.add_argument("--games", type=at_least(1), default=8, help="games (two seats each side)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--policy", default="rulebased", help="what mjbot plays (default "
                   "%(default)s; nn, mc, nn@FILE ...)")
    add_fallback_argument(p)


def run(args: argparse.Namespace) -> int:
    if args.games < 1:
        raise UserInputError("--games must be at least 1")
    require_policy(args.policy)
    require_networks([args.policy], "riichi")
    try:
        result = bench_mjai(games=args.games, seed=10000 + args.seed, policy=args.policy)
    except RuntimeError as exc:
        raise UserInputError(str(exc)) from None
    report(args, result, text)
    return fallback_verdict(args, result["fallbacks"])


def text(result: dict[str, Any]) -> str:
    lines = [f"mjbot ({result['policy']}) vs {result['reference']}: {result['games']} games, "
             f"two seats each, rotated, {result['seconds']} s"]
    for side in ("mjbot", "RulebaseBot"):
        lo, hi = result["average_rank_ci95"][side]
        ci = "[n/a]" if lo is None else f"[{lo:.3f},{hi:.3f}]"
        lines.append(f"  {side:<12} average rank {result['average_rank'][side]:.3f} {ci}   "
                     f"points per game {result['points_per_game'][side]:+d}")
    f = result["fallbacks"][result["policy"]]
    lines.append(f"  fallbacks    {f['fallbacks']} of {f['decisions']} mjbot decisions "
                 f"({100 * f['fallback_share']:.1f}%)"
                 + (f", first: {f['first_fallback']}" if f["first_fallback"] else ""))
    return "\n".join(lines)
