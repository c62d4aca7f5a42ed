"""Precomputed tables behind :mod:`brain.shanten`.

For one suit (9 kinds, counts 0..4, indexed by the base-5 code ``sum c_j * 5**j``) and for the
honours (7 kinds, no chows) we store, for every count pattern ``h`` and every target of ``m``
groups (0..5) plus ``p`` pairs (0..1), the least number of tiles that must be *added* to ``h`` so
that it contains such a target, never needing a fifth copy of a kind::

    d(h, m, p) = min over targets t  of  sum_j max(0, t_j - h_j)

A whole hand's distance is the min-plus combination of its four parts' vectors, and
shanten = distance to (k groups + 1 pair) - 1. The vectors take only a few hundred distinct
values, closed under combination, so each part maps to a small vector id and combining two ids
is one lookup in a dense table. Tables are built by a dynamic programme over kinds (a few
seconds), shipped as ``brain/data/shanten_tables.npz`` and checked against a fresh build by the
tests; a missing or corrupt file is rebuilt into the user's cache directory.
"""

from __future__ import annotations

import contextlib
import io
import os
import pkgutil
import sys
from typing import TYPE_CHECKING, cast

import numpy as np

if TYPE_CHECKING:
    from pathlib import Path

MAX_GROUPS = 5
GROUP_SLOTS = MAX_GROUPS + 1
VECTOR_LEN = GROUP_SLOTS * 2  # index m * 2 + p
INF = 31  # above any real distance (at most 3 * 5 + 2 = 17); fits 5 bits for packing
TABLE_VERSION = 1
# a str, not a Path: importing pathlib (with urllib.parse) was ~5% of a one-shot Botzone turn's
# own start in the upload zip, where nothing else needs it
SHIPPED = os.path.join(os.path.dirname(__file__), "data", "shanten_tables.npz")
# The upload bundles' copy: one .npy per array, read through the import system. A zip holds no
# file to open, and np.load of an .npz inside it imported zipfile (with pathlib, shutil, bz2,
# lzma): ~9% of a one-shot turn's own start, every turn (mjbot bench botzone)
PACKAGED = "data/shanten_tables/{}.npy"
PACKAGED_CRC = "data/shanten_tables/crc32.txt"  # of those files, in STORED's order

# Per-part statistics used for seven pairs / thirteen orphans and tile counts, packed in one int
# so that the four parts of a hand add up with three additions.
STAT_BITS = 6
PAIRS_SHIFT, KINDS_SHIFT, ORPHAN_KINDS_SHIFT, ORPHAN_PAIRS_SHIFT, TILES_SHIFT = 0, 6, 12, 18, 24
STAT_MASK = (1 << STAT_BITS) - 1


def _distance_table(length: int, chows: bool) -> np.ndarray:
    """d(h, m, p) for every count pattern of ``length`` kinds: shape (5**length, VECTOR_LEN).

    Right-to-left DP over kinds. State at kind i: c1 = chows started at i-1 (still need i and
    i+1), c2 = chows started at i-2 (still need i). At kind i we choose s new chows, u pungs and
    q pairs with c1 + c2 + s + 3u + 2q <= 4 copies; the cost is the copies we lack.
    """
    nxt = np.full((1, 5, 5, GROUP_SLOTS, 2), INF, np.uint8)
    nxt[0, 0, 0, 0, 0] = 0
    have = np.arange(5)
    for i in range(length - 1, -1, -1):
        rest = nxt.shape[0]
        c1_states = 5 if chows and i >= 1 else 1
        c2_states = 5 if chows and i >= 2 else 1
        max_new_chows = 4 if chows and i <= length - 3 else 0
        out = np.full((rest, 5, c1_states, c2_states, GROUP_SLOTS, 2), INF, np.uint8)
        for c1 in range(c1_states):
            for c2 in range(c2_states):
                if c1 + c2 > 4:
                    continue
                # the cost of a choice depends only on the copies it needs: the best rest
                # per need first (no kind-count axis), then one pass per need over the counts
                by_need: dict[int, np.ndarray] = {}
                for s in range(max_new_chows + 1):
                    after = nxt[:, s, c1]
                    for u in (0, 1):
                        for q in (0, 1):
                            need = c1 + c2 + s + 3 * u + 2 * q
                            groups = s + u
                            if need > 4 or groups >= GROUP_SLOTS:
                                continue
                            if need not in by_need:
                                by_need[need] = np.full((rest, GROUP_SLOTS, 2), INF, np.uint8)
                            reached = by_need[need][:, groups:, q:]
                            np.minimum(reached, after[:, : GROUP_SLOTS - groups, : 2 - q],
                                       out=reached)
                best = out[:, :, c1, c2]
                for need, rests in by_need.items():
                    cost = np.maximum(0, need - have).astype(np.uint8)
                    np.minimum(best, rests[:, None, :, :] + cost[None, :, None, None], out=best)
                np.minimum(best, INF, out=best)
        widened = np.full((rest * 5, 5, 5, GROUP_SLOTS, 2), INF, np.uint8)
        widened[:, :c1_states, :c2_states] = out.reshape(rest * 5, c1_states, c2_states,
                                                         GROUP_SLOTS, 2)
        nxt = widened
    return nxt[:, 0, 0].reshape(-1, VECTOR_LEN)


def _pack(vectors: np.ndarray) -> np.ndarray:
    weights = np.uint64(1) << (np.uint64(5) * np.arange(VECTOR_LEN, dtype=np.uint64))
    return cast(np.ndarray, (vectors.astype(np.uint64) * weights).sum(axis=1))


def _unique_rows(vectors: np.ndarray) -> np.ndarray:
    """Distinct rows, ordered by packed key (np.unique on 64-bit keys, not on rows: far faster)."""
    _, first = np.unique(_pack(vectors), return_index=True)
    return vectors[first]


def _min_plus(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """All pairwise min-plus combinations: (na, L) x (nb, L) -> (na, nb, L)."""
    a4 = a.reshape(-1, 1, GROUP_SLOTS, 2).astype(np.int16)
    b4 = b.reshape(1, -1, GROUP_SLOTS, 2).astype(np.int16)
    out = np.full((a4.shape[0], b4.shape[1], GROUP_SLOTS, 2), INF, np.int16)
    for m1 in range(GROUP_SLOTS):
        for p1 in range(2):
            for m2 in range(GROUP_SLOTS - m1):
                for p2 in range(2 - p1):
                    target = out[:, :, m1 + m2, p1 + p2]
                    np.minimum(target, a4[:, :, m1, p1] + b4[:, :, m2, p2], out=target)
    return np.minimum(out, INF).astype(np.uint8).reshape(a4.shape[0], b4.shape[1], VECTOR_LEN)


def part_stats(length: int, orphan_positions: tuple[int, ...]) -> np.ndarray:
    """Packed (pairs, kinds, orphan kinds, orphan pairs, tiles) for every count pattern: each
    kind's share added up (no field carries into the next: at most 9 kinds and 36 tiles, below
    ``1 << STAT_BITS``). Built at the first batch (brain.shanten), not shipped: a few
    milliseconds where inflating the stored 16 MB took about 30; the single-call path counts
    one part's from its digits and needs none."""
    digit = np.arange(5, dtype=np.int64)
    stats = np.zeros(1, np.int64)
    for j in range(length):  # code = sum d_j * 5**j: kind j's digit is the slowest so far
        share = ((digit >= 2) << PAIRS_SHIFT) + ((digit >= 1) << KINDS_SHIFT) + (
            digit << TILES_SHIFT)
        if j in orphan_positions:
            share += ((digit >= 1) << ORPHAN_KINDS_SHIFT) + ((digit >= 2) << ORPHAN_PAIRS_SHIFT)
        stats = (share[:, None] + stats[None, :]).ravel()
    return stats


def build_tables() -> dict[str, np.ndarray]:
    """Build every table from scratch (a few seconds)."""
    suit = _distance_table(9, chows=True)
    honour = _distance_table(7, chows=False)
    # One registry of vectors closed under combination, sorted by packed key.
    vectors = _unique_rows(np.concatenate([suit, honour]))
    while True:
        combined = _min_plus(vectors, vectors).reshape(-1, VECTOR_LEN)
        grown = _unique_rows(np.concatenate([vectors, combined]))
        if len(grown) == len(vectors):
            break
        vectors = grown
    keys = _pack(vectors)

    def ids_of(v: np.ndarray) -> np.ndarray:
        return np.searchsorted(keys, _pack(v)).astype(np.uint16)

    combine = ids_of(_min_plus(vectors, vectors).reshape(-1, VECTOR_LEN))
    return {
        "version": np.array([TABLE_VERSION]),
        "vectors": vectors,
        "combine": combine.reshape(len(vectors), len(vectors)),
        "suit_ids": ids_of(suit),
        "honour_ids": ids_of(honour),
    }


STORED = ("version", "vectors", "combine", "suit_ids", "honour_ids")  # the file's arrays


def _valid(tables: dict[str, np.ndarray]) -> bool:
    try:
        n = len(tables["vectors"])
        return (
            int(tables["version"][0]) == TABLE_VERSION
            and tables["vectors"].shape == (n, VECTOR_LEN)
            and tables["combine"].shape == (n, n)
            and tables["suit_ids"].shape == (5**9,)
            and tables["honour_ids"].shape == (5**7,)
            and int(tables["combine"].max()) < n
            and int(tables["suit_ids"].max()) < n
        )
    except (KeyError, IndexError, ValueError, TypeError):
        return False


def _packaged() -> dict[str, np.ndarray] | None:
    """The tables an upload bundle carries (:func:`packaged_members`), read through the import
    system: inside a zip (the Botzone and mjai.app uploads) there is no file path to open.
    Checked against the CRC-32 the bundle carries with them (zipimport checks none): a member
    missing, damaged or from another build is one line on stderr, and the tables are built
    anew, where it was a silent rebuild of seconds every turn, or, for a member of the right
    shape, a wrong shanten."""
    if os.path.exists(SHIPPED):
        return None
    import zlib  # in a zip, zipimport has already imported it to inflate the modules

    members: dict[str, bytes] = {}
    damage = []  # what is wrong, member by member
    for key, name in {**{k: PACKAGED.format(k) for k in STORED}, "crc32": PACKAGED_CRC}.items():
        try:
            members[key] = pkgutil.get_data("brain", name) or b""
        except OSError as exc:  # zipimport says a name it has not with errno 0
            if not isinstance(exc, FileNotFoundError) and exc.errno:
                damage.append(f"{name.rsplit('/', 1)[1]} unreadable ({exc})")
            else:
                damage.append(f"{name.rsplit('/', 1)[1]} missing")
        except (ImportError, zlib.error) as exc:  # zipimport: a damaged header or stream
            damage.append(f"{name.rsplit('/', 1)[1]} unreadable ({exc})")
    if all(d.endswith(" missing") for d in damage) and not members:  # no bundle: a checkout
        # whose shipped file is gone (built into the cache)
        return None
    crc = 0
    for key in STORED:
        crc = zlib.crc32(members.get(key, b""), crc)
    if not damage and members["crc32"].strip() != str(crc).encode():
        damage.append("their CRC-32 does not match crc32.txt")
    if not damage:
        try:
            tables = {k: np.load(io.BytesIO(members[k])) for k in STORED}
        except (ValueError, EOFError) as exc:
            damage.append(f"unreadable ({exc})")
        else:
            if _valid(tables):
                return tables
            damage.append("not valid tables")
    print(f"mjbot: this bundle's shanten tables (brain/{PACKAGED.format('*')}) are damaged: "
          f"{'; '.join(damage)}; they come from the user's cache or are built anew (seconds, "
          "every start): rebuild the bundle (mjbot bundle)", file=sys.stderr)
    return None


def packaged_members(path: str = SHIPPED) -> dict[str, bytes]:
    """The tables of ``path`` as an upload bundle carries them: name in the zip -> the bytes of
    one .npy file per array, and the CRC-32 of those (in STORED's order) as decimal text
    (ValueError where ``path`` holds no valid tables)."""
    import zlib

    tables = _read(path)
    if tables is None:
        raise ValueError(f"no valid shanten tables in {path}")
    members = {}
    crc = 0
    for key in STORED:
        out = io.BytesIO()
        np.save(out, tables[key])
        members["brain/" + PACKAGED.format(key)] = out.getvalue()
        crc = zlib.crc32(out.getvalue(), crc)
    members["brain/" + PACKAGED_CRC] = str(crc).encode()
    return members


def _read(path: str | Path | io.BytesIO) -> dict[str, np.ndarray] | None:
    try:
        with np.load(path) as npz:
            tables = {k: npz[k] for k in STORED}  # an array is inflated only when read
    except (OSError, ValueError, EOFError, KeyError):
        return None
    return tables if _valid(tables) else None


def save_tables(tables: dict[str, np.ndarray], path: str | Path) -> None:
    from pathlib import Path  # not at the top: every bot start imports this module

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + f".{os.getpid()}.tmp.npz")
    np.savez_compressed(tmp, **tables)  # type: ignore[arg-type]  # numpy's allow_pickle: our keys are array names
    os.replace(tmp, path)


def cache_path() -> Path:
    from pathlib import Path  # not at the top: every bot start imports this module

    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "mjbot" / f"shanten_tables_v{TABLE_VERSION}.npz"


def load_tables() -> dict[str, np.ndarray]:
    """The shipped tables; else the user cache; else build now and try to cache them."""
    tables = _read(SHIPPED) or _packaged() or _read(cache_path())
    if tables is not None:
        return tables
    tables = build_tables()
    # A read-only home (a sandbox, Botzone) keeps the in-memory tables only.
    with contextlib.suppress(OSError):
        save_tables(tables, cache_path())
    return tables


def digest(tables: dict[str, np.ndarray]) -> str:
    """A content hash, to compare shipped and freshly built tables."""
    import hashlib  # not at the top: every bot start imports this module (2-3 ms of it)

    h = hashlib.sha256()
    for key in sorted(tables):
        h.update(key.encode())
        h.update(np.ascontiguousarray(tables[key]).tobytes())
    return h.hexdigest()


if __name__ == "__main__":
    import argparse

    argparse.ArgumentParser(  # --help says what it does, instead of doing it
        prog="python -m brain.shanten_tables",
        description=f"Build the shanten tables from code and write them to {SHIPPED} (the "
        "shipped file; its card's SHA-256 is of the tables built so).").parse_args()
    save_tables(build_tables(), SHIPPED)
    print(f"wrote {SHIPPED}")
