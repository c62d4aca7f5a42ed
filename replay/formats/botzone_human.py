"""Botzone's human MCR games as preprocessed by ccr-cheng's botzone-mahjong-environment
(``processed_data_sample.json``, ../shared/data/botzone): one JSON object per line and game,
``{"round_wind", "first_player", "tiles", "actions"}``.

``tiles[p]`` is player p's whole take in order (the starting hand, 14 for the first player,
then every draw; padded with ``""`` to 34); ``actions[p][i]`` is what p did at step i, the
same number of steps for all four: ``[0]`` nothing (every step of a draw is all ``[0]``),
``[2, t]`` discard, ``[3, "mid t"]`` chow of the last discard then discard t, ``[4, t]`` pung
then discard t, ``[5]`` open kong, ``[5, t]`` concealed kong, ``[6]`` added kong (its tile not
written: the pung the hand can add to), ``[7]`` win. Who draws is not written either: the
order of play gives it (after an unclaimed discard the next seat, after a kong the kong's
seat). The win's fan and scores were not kept: wins are valued by our MCR rules (Botzone's
payments), seat winds counted from the first player (the dealer, East, as MCR deals; ccr-cheng's
own environment counts them from player 0 instead, and no file here can tell: a game's recorded
fan list, which would, is not kept), the wall one shared wall of 136 tiles less the flowers.

Flowers (``H1``..``H8``, the preprocessing's mahjong_data/preprocess.py): a starting hand keeps
its flowers as dealt, each one's replacement is the holder's next take, and its draw a step of
all ``[0]`` (at the start or at the holder's turn: a step of all ``[0]`` right after a draw is
such a replacement); a flower drawn in play is dropped with its ``补花`` line, so its replacement
reads as the plain draw (a replacement that is itself a flower is dropped the same way). As
Botzone's deal tells flowers (protocols/botzone.py), the starting hands are dealt with each
flower already replaced and the flowers follow as FlowerReplaced (one fan each to the holder's
win, counted after the 8-fan minimum). The flowers the file dropped are lost: a win's 花牌
counts only the starting hand's.
"""

from __future__ import annotations

import json
from typing import Any

from brain.rules import rules_for
from brain.state import StateError, TableState
from protocols import events as ev
from protocols import tiles as T
from replay.record import GameRecord, RecordError, canonical, unknown_start, view_event

VARIANT = "mcr"
KEYS = ("round_wind", "first_player", "tiles", "actions")
# human games draw from one wall (the per-player lists are the preprocessing's): its last tile
# (海底) is the 136th non-flower tile, the flowers' replacements having come from it too
SHARED_WALL = {"duplicate_walls": False}
# what may follow each action code (preprocess.py's add_*): 0 pass, 2 discard t, 3 chow
# "mid t", 4 pung then discard t, 5 open kong / 5 t concealed kong, 6 added kong, 7 win
ARGUMENTS = {0: (0,), 2: (1,), 3: (1,), 4: (1,), 5: (0, 1), 6: (0,), 7: (0,)}
ACTION_FORMS = "[0], [2, t], [3, 'mid t'], [4, t], [5], [5, t], [6] or [7]"


def loads(text: str) -> GameRecord:
    """Every game of the file (one per line) as one hand of the record; the scores run on
    from game to game (each game's payments as Botzone's, the total the file's)."""
    # each line's game, or why it is none (that game alone left out, below)
    games: list[tuple[int, dict[str, Any] | str]] = []
    text = text.removeprefix("\ufeff")  # a byte-order mark an editor put in front
    lines = text.splitlines()
    cut = ""
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            game = json.loads(line)
        except json.JSONDecodeError as exc:
            if n == len(lines) and not text.endswith("\n"):
                if not games:
                    raise RecordError(f"botzone human: line {n} is not JSON ({exc}), and the "
                                      "file ends on it: cut short?") from None
                # a file cut inside its last line: the whole games before it still read
                cut = f"line {n} ends inside its game: the {len(games)} games before it are read"
                break
            # one line not JSON refused the whole file, every other game lost
            games.append((n, f"line {n} is not JSON ({exc})"))
            continue
        if not isinstance(game, dict) or any(k not in game for k in KEYS):
            lacks = [k for k in KEYS if k not in game] if isinstance(game, dict) else []
            games.append((n, f"line {n} is not a preprocessed game (an object with "
                             f"{', '.join(KEYS)}" + (f"; it lacks {', '.join(lacks)})"
                                                     if lacks else ")")))
            continue
        games.append((n, game))
    if not games:
        raise RecordError("botzone human: no game in the file")
    out: list[Any] = [ev.GameStarted(VARIANT, 0, ("", "", "", ""), SHARED_WALL)]
    lines_of: list[int] = [0]  # each event's line
    damaged: dict[int, str] = {}
    totals = [0, 0, 0, 0]
    for n, game in games:
        try:
            if isinstance(game, str):
                raise RecordError(f"botzone human: {game}")
            events = _Game(game, f"line {n}").events(tuple(totals))
        except (KeyError, TypeError, ValueError, IndexError, AttributeError) as exc:
            # that game (a hand of the record) alone is left out: one bad tile name
            # refused the whole file, every other game lost
            why = str(exc).removeprefix("botzone human: ") if isinstance(exc, RecordError) \
                else f"line {n}: {type(exc).__name__}: {exc}"
            damaged[len(out)] = why[:300]
            out.append(unknown_start())
            lines_of.append(n)
            continue
        out += events
        lines_of += [n] * len(events)
        end = events[-1]
        if isinstance(end, ev.RoundWon | ev.RoundDrawn) and end.deltas:
            totals = [a + b for a, b in zip(totals, end.deltas, strict=True)]
    if len(damaged) == len(games):  # no game reads: refused whole, as it was
        raise RecordError(f"botzone human: {damaged[min(damaged)]}")
    # the totals lack a damaged game's payments: no final scores to rank by; a file cut inside
    # its last game has no end either (the import said its game end was read)
    if not damaged and not cut:
        out.append(ev.GameEnded(tuple(totals)))
        lines_of.append(lines_of[-1])
    meta: dict[str, Any] = {"games": len(games)}
    if cut:
        meta["cut"] = cut
    return GameRecord(VARIANT, "botzone_human", out, meta, lines=lines_of, damaged=damaged)


def _tile(text: Any, where: str, *, flower: bool = False) -> int:
    """One tile; a flower only where the file may hold one (a starting hand)."""
    try:
        tile = T.from_botzone(str(text))
    except T.TileError:
        raise RecordError(f"botzone human: bad tile {text!r} in {where}") from None
    if T.is_flower(tile) and not flower:
        raise RecordError(f"botzone human: a flower ({text}) in {where}, where the "
                          "preprocessing keeps none (only a starting hand holds flowers)")
    return tile


class _Game:
    """One line's game replayed step by step into full-information events."""

    def __init__(self, game: dict[str, Any], where: str) -> None:
        self.where = where
        for key in ("first_player", "round_wind"):
            value = game[key]
            if isinstance(value, bool) or not isinstance(value, int) or value not in range(4):
                raise RecordError(f"botzone human: {where}: {key} is {value!r}, not 0..3")
        self.first = game["first_player"]
        self.wind = game["round_wind"]
        walls = game["tiles"]
        actions = game["actions"]
        for key, value in (("tiles", walls), ("actions", actions)):
            if not isinstance(value, list) or len(value) != 4 or \
                    not all(isinstance(v, list) for v in value):
                raise RecordError(f"botzone human: {where}: {key} is not 4 lists, one a player")
        for p, moves in enumerate(actions):
            for i, move in enumerate(moves):
                if not isinstance(move, list) or not move or type(move[0]) is not int or \
                        len(move) - 1 not in ARGUMENTS.get(move[0], ()):
                    raise RecordError(f"botzone human: {where}, step {i}: player {p}'s action "
                                      f"{move!r} is none of {ACTION_FORMS}")
        self.taken = [14 if p == self.first else 13 for p in range(4)]
        self.walls = [[_tile(t, f"{where}, player {p}'s tiles"
                             + (" (its starting hand)" if i < self.taken[p] else
                                f" (its draw {i - self.taken[p] + 1})"),
                             flower=i < self.taken[p])
                       for i, t in enumerate(t for t in wall if t != "")]
                      for p, wall in enumerate(walls)]
        steps = {len(a) for a in actions}
        if len(steps) != 1:
            raise RecordError(f"botzone human: {where}: the players' action lists differ in "
                              f"length ({sorted(len(a) for a in actions)})")
        self.actions = actions
        self.hands = [list(self.walls[p][:self.taken[p]]) for p in range(4)]
        if any(len(h) != n for h, n in zip(self.hands, self.taken, strict=True)):
            raise RecordError(f"botzone human: {where}: a starting hand is short")
        # the starting flowers, each replaced in place by the holder's next take
        self.flowers = [[t for t in h if T.is_flower(t)] for h in self.hands]
        for p, hand in enumerate(self.hands):
            for i, t in enumerate(hand):
                if T.is_flower(t):
                    hand[i] = self._take(p, f"{where}, player {p}'s starting flower "
                                            f"{T.to_botzone(t)}")
        # steps of all [0] still to come for those replacements' draws
        self.replacements = sum(map(len, self.flowers))
        self.melds: list[list[ev.MeldCalled]] = [[], [], [], []]
        self.out: list[Any] = []
        self.last: tuple[str, int, int | None] = ("DRAW", self.first, self.hands[self.first][-1])
        self.replacement = False

    def events(self, scores: tuple[int, ...]) -> list[Any]:
        dealt = tuple(tuple(h[:13]) for h in self.hands)
        self.out.append(ev.RoundStarted(round_wind=self.wind, dealer=self.first,
                                        scores=scores, round_number=self.first,
                                        hands=dealt))
        self.out += [ev.FlowerReplaced(p, f) for p in range(4) for f in self.flowers[p]]
        self.out.append(ev.TileDrawn(self.first, self.hands[self.first][13]))
        for i in range(len(self.actions[0])):
            step = f"{self.where}, step {i}"
            moves = [(p, a[i]) for p, a in enumerate(self.actions) if a[i] and a[i][0] != 0]
            if len(moves) > 1:
                raise RecordError(f"botzone human: {step}: {len(moves)} players act at once")
            if not moves:
                self._draw(step)
                continue
            seat, move = moves[0]
            if self._move(seat, move, step):
                return self.out
        self.out.append(ev.RoundDrawn("exhaustive", (0, 0, 0, 0)))
        return self.out

    def _draw(self, step: str) -> None:
        kind, seat, _ = self.last
        if kind in ("GANG", "BUGANG"):
            drawer = seat
        elif kind in ("PLAY", "PENG", "CHI"):
            drawer = (seat + 1) % 4
        elif kind == "DRAW" and self.replacements:
            # a draw right after a draw: a starting flower's replacement, already in the deal
            self.replacements -= 1
            return
        else:
            raise RecordError(f"botzone human: {step}: a draw after {kind} by player {seat}")
        tile = self._take(drawer, step)
        self.hands[drawer].append(tile)
        self.out.append(ev.TileDrawn(drawer, tile, kind in ("GANG", "BUGANG")))
        self.last = ("DRAW", drawer, tile)

    def _take(self, seat: int, step: str) -> int:
        """``seat``'s next tile from its part of the wall."""
        if self.taken[seat] >= len(self.walls[seat]):
            raise RecordError(f"botzone human: {step}: player {seat} draws from an empty wall")
        tile = self.walls[seat][self.taken[seat]]
        self.taken[seat] += 1
        return tile

    def _move(self, seat: int, move: list[Any], step: str) -> bool:
        """Apply one player's move; True when it ended the game (a win)."""
        code = move[0]
        if code == 2:
            self._discard(seat, _tile(move[1], step), step)
        elif code in (3, 4):
            self._claim(seat, code, str(move[1]), step)
        elif code == 5:
            self._kong(seat, move[1] if len(move) > 1 else None, step)
        elif code == 6:
            self._added_kong(seat, step)
        elif code == 7:
            self._win(seat, step)
            return True
        else:
            raise RecordError(f"botzone human: {step}: unknown action {move!r}")
        return False

    def _remove(self, seat: int, tile: int, step: str) -> None:
        try:
            self.hands[seat].remove(tile)
        except ValueError:
            raise RecordError(f"botzone human: {step}: player {seat} gives up "
                              f"{T.to_botzone(tile)}, which it does not hold") from None

    def _discard(self, seat: int, tile: int, step: str) -> None:
        kind, by, drawn = self.last
        self._remove(seat, tile, step)
        tsumogiri = kind == "DRAW" and by == seat and drawn == tile
        self.out.append(ev.TileDiscarded(seat, tile, tsumogiri))
        self.last = ("PLAY", seat, tile)

    def _claimed(self, seat: int, step: str) -> tuple[int, int]:
        kind, by, tile = self.last
        if kind not in ("PLAY", "PENG", "CHI") or tile is None or by == seat:
            raise RecordError(f"botzone human: {step}: player {seat} claims with no discard "
                              "of another player before it")
        return by, tile

    def _claim(self, seat: int, code: int, arg: str, step: str) -> None:
        from_seat, tile = self._claimed(seat, step)
        parts = arg.split()
        if code == 3:
            if len(parts) != 2:
                raise RecordError(f"botzone human: {step}: a chow needs 'mid discard', got "
                                  f"{arg!r}")
            mid = T.kind(_tile(parts[0], step))
            tiles: tuple[int, ...] = (mid - 1, mid, mid + 1)
            if T.kind(tile) not in tiles or mid >= 27 or mid % 9 in (0, 8):
                raise RecordError(f"botzone human: {step}: no chow around {parts[0]} takes "
                                  f"{T.to_botzone(tile)}")
            meld_kind = "chi"
        else:
            tiles = (tile, tile, tile)
            meld_kind = "pon"
        own = list(tiles)
        own.remove(T.kind(tile))
        for t in own:
            self._remove(seat, t, step)
        meld = ev.MeldCalled(seat, meld_kind, canonical(tiles), tile, from_seat)
        self.melds[seat].append(meld)
        self.out.append(meld)
        verb = "CHI" if code == 3 else "PENG"
        self._discard(seat, _tile(parts[-1], step), step)
        self.last = (verb, seat, self.last[2])

    def _kong(self, seat: int, arg: Any, step: str) -> None:
        if arg is None:
            from_seat, tile = self._claimed(seat, step)
            for _ in range(3):
                self._remove(seat, tile, step)
            meld = ev.MeldCalled(seat, "open_kan", (tile,) * 4, tile, from_seat)
        else:
            tile = _tile(arg, step)
            if self.last[:2] != ("DRAW", seat):
                raise RecordError(f"botzone human: {step}: a concealed kong by player {seat} "
                                  "not after its own draw")
            for _ in range(4):
                self._remove(seat, tile, step)
            meld = ev.MeldCalled(seat, "closed_kan", (tile,) * 4)
        self.melds[seat].append(meld)
        self.out.append(meld)
        self.last = ("GANG", seat, None)

    def _added_kong(self, seat: int, step: str) -> None:
        if self.last[:2] != ("DRAW", seat):
            raise RecordError(f"botzone human: {step}: an added kong by player {seat} not "
                              "after its own draw")
        kinds = [m.called for m in self.melds[seat] if m.kind == "pon"
                 and m.called is not None and T.kind(m.called) in self.hands[seat]]
        drawn = self.last[2]
        if drawn in kinds:
            tile = drawn
        elif len(kinds) == 1:
            tile = kinds[0]
        else:
            raise RecordError(f"botzone human: {step}: cannot tell which pung player {seat} "
                              "adds to")
        assert tile is not None
        self._remove(seat, tile, step)
        self.out.append(ev.MeldCalled(seat, "added_kan", (tile,) * 4, tile))
        self.last = ("BUGANG", seat, tile)

    def _win(self, seat: int, step: str) -> None:
        kind, by, tile = self.last
        robbing = False
        if kind == "DRAW" and by == seat:
            from_seat = None
            hand = list(self.hands[seat])
        elif kind in ("PLAY", "PENG", "CHI", "BUGANG") and by != seat and tile is not None:
            from_seat = by
            robbing = kind == "BUGANG"
            hand = [*self.hands[seat], tile]
        else:
            raise RecordError(f"botzone human: {step}: player {seat} wins after {kind} by "
                              f"player {by}")
        assert tile is not None
        value, deltas, items, detail = self._value(seat, tile, from_seat, robbing)
        self.out.append(ev.RoundWon(seat, from_seat, canonical(hand), tile, value, deltas,
                                    items, detail=detail))

    def _value(self, seat: int, tile: int, from_seat: int | None, robbing: bool) \
            -> tuple[int, tuple[int, ...], tuple[str, ...], str]:
        """Fan, Botzone's payments and the fans by our MCR rules, from the winner's view."""
        state = TableState(VARIANT, seat)
        try:
            state.apply(ev.GameStarted(VARIANT, seat, ("", "", "", ""),
                                       SHARED_WALL))
            for e in self.out:
                state.apply(view_event(e, seat, VARIANT))
        except StateError as exc:
            return 0, (0, 0, 0, 0), (), f"no value: the hand does not replay ({exc})"
        score = rules_for(VARIANT).win_score(state, tile, from_seat, robbing)
        if score is None:
            return 0, (0, 0, 0, 0), (), "no value: below 8 fan or no win by mjbot's MCR rules"
        return (score.value, tuple(score.deltas),
                tuple(f"{name}({value})" for name, value in score.items), "")
