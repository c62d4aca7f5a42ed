"""One-player games of the playout policy alone, for the two tables the playouts need.

Seed 002 computes WPET, the chance that a player becomes ready at each of its draws, from the
one-player policy playing alone against a wall; the same games give P(win within d draws |
shanten s), which our own fold decision inside a playout reads. ``python -m
brain.policies.mc.solo`` plays them and prints brain/policies/mc/tables.py (a few seconds).
"""

from __future__ import annotations

import sys
import textwrap

import numpy as np

from brain.policies.mc.oneplayer import choose_discards, static_bias
from brain.rules.variant import VARIANT_NAMES, variant_of
from brain.shanten import shanten_batch

DRAWS = 32  # longer than any variant's hand: every table covers the longest one
MAX_SHANTEN = 6


def play(variant: str, games: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """(ready draw index (G,), -1 if never; complete draw index (G,), -1 if never) and the
    shanten after each draw (G, DRAWS) of solo greedy games (no calls, 136 tiles, no flowers;
    mass: 108 without honours)."""
    spec = variant_of(variant)
    size, kinds = spec.hand_size, spec.tile_kinds
    rng = np.random.default_rng(seed)
    tiles = np.repeat(np.arange(kinds), 4)
    order = np.argsort(rng.random((games, tiles.size)), axis=1)
    deck = tiles[order]
    hands = np.zeros((games, 34), np.int8)
    rows = np.arange(games)
    for i in range(size):
        np.add.at(hands, (rows, deck[:, i]), 1)
    bias = static_bias()
    sh = shanten_batch(hands).astype(np.int16)
    shanten_after = np.zeros((games, DRAWS), np.int16)
    done = np.full(games, -1, np.int16)
    for t in range(DRAWS):
        d = deck[:, size + t]
        hands[rows, d] += 1
        s14 = shanten_batch(hands).astype(np.int16)
        won = (s14 == -1) & (done < 0)
        done[won] = t
        improve = s14 < sh
        x = d.astype(np.int16).copy()
        if improve.any():
            idx = np.flatnonzero(improve)
            k, new = choose_discards(hands[idx], bias)
            x[idx] = k
            sh[idx] = new
        hands[rows, x] -= 1
        shanten_after[:, t] = sh
    return done, shanten_after


def wpet(shanten_after: np.ndarray) -> list[float]:
    """Hazard of becoming ready at draw t (ready after it, not before)."""
    ready = shanten_after <= 0
    out = []
    before = np.zeros(ready.shape[0], bool)
    for t in range(ready.shape[1]):
        at_risk = ~before
        out.append(float((ready[:, t] & at_risk).sum() / max(at_risk.sum(), 1)))
        before |= ready[:, t]
    return out


def p_win(done: np.ndarray, shanten_after: np.ndarray) -> list[list[float]]:
    """P(complete within d more draws | shanten s after a draw and discard): [s][d]."""
    n = shanten_after.shape[1]
    wins = np.zeros((MAX_SHANTEN + 1, n + 1))
    seen = np.zeros((MAX_SHANTEN + 1, n + 1))
    for t in range(n):
        s = np.clip(shanten_after[:, t], 0, MAX_SHANTEN)
        alive = (done < 0) | (done > t)
        left = n - 1 - t  # draws still to come in this game
        lag = np.where(done > t, done - t, 10**6)
        for d in range(left + 1):
            hit = (lag <= d) & alive
            np.add.at(seen[:, d], s[alive], 1)
            np.add.at(wins[:, d], s[alive & hit], 1)
    table = np.where(seen > 0, wins / np.maximum(seen, 1), 0.0)
    for s in range(MAX_SHANTEN + 1):  # never less likely with more draws
        table[s] = np.maximum.accumulate(table[s])
    return [[round(float(v), 4) for v in row[:n]] for row in table]


def _tuple(values: list[float], indent: int) -> list[str]:
    """A tuple literal (with its trailing comma) wrapped to the line length."""
    pad = " " * indent
    lines = textwrap.wrap(", ".join(repr(v) for v in values) + ",", 96 - indent)
    out = [f"{pad} {line}" for line in lines]
    out[0] = f"{pad}({lines[0]}"
    out[-1] += "),"
    return out


def main() -> None:
    games = int(sys.argv[1]) if len(sys.argv) > 1 else 20000
    print('"""WPET and P(win) of the playout policy playing alone; written by\n'
          '``python -m brain.policies.mc.solo`` (do not edit)."""\n')
    print(f"GAMES = {games}\n")
    wp: dict[str, list[float]] = {}
    pw: dict[str, list[list[float]]] = {}
    for v in VARIANT_NAMES:
        done, after = play(v, games, seed=16)
        wp[v] = [round(x, 4) for x in wpet(after)]
        pw[v] = p_win(done, after)
    print("WPET = {")
    for v, row in wp.items():
        print(f'    "{v}":')
        print("\n".join(_tuple(row, 8)))
    print("}\n")
    print("P_WIN = {")
    for v, rows in pw.items():
        print(f'    "{v}": (')
        for row in rows:
            print("\n".join(_tuple(row, 8)))
        print("    ),")
    print("}")


if __name__ == "__main__":
    main()
