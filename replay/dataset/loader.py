"""Shuffled batches from a dataset directory without loading it all.

Per epoch the shards are visited in a seeded random order; their decisions go into a buffer
of about ``buffer_decisions`` rows, which is shuffled, and batches are cut from the shuffled
rows while the buffer keeps at least half of its size for mixing with the next shard. Every
decision comes out exactly once per epoch; at most the buffer plus one shard is in memory.
Hand fields (``h_...``) asked for are joined onto each decision row, and every batch carries
``decision_id`` (the row's place in the dataset: shards in manifest order), so rows can be
traced back and counted.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from replay.dataset import schema as S
from replay.dataset.shards import read_manifest, read_shard, shard_paths


class ShuffledLoader:
    """``fields``: schema field names to load (default: every decision field and every hand
    field); ``seed`` and the epoch number fix the order."""

    def __init__(self, root: str | Path, batch_size: int = 256, seed: int = 0,
                 fields: Sequence[str] | None = None, buffer_decisions: int = 65536,
                 drop_last: bool = False) -> None:
        if batch_size < 1:
            raise ValueError("batch_size must be at least 1")
        self.root = Path(root)
        self.manifest = read_manifest(self.root)
        self.shards = shard_paths(self.root, self.manifest)
        names = list(fields) if fields is not None else list(S.FIELDS)
        unknown = [n for n in names if n not in S.FIELDS]
        if unknown:
            raise S.DatasetError(f"unknown field {unknown[0]!r} (see replay/dataset/README.md)")
        self.decision_fields = [n for n in names if not n.startswith("h_")]
        self.hand_fields = [n for n in names if n.startswith("h_")]
        self.batch_size = batch_size
        self.seed = seed
        self.buffer_decisions = max(buffer_decisions, batch_size)
        self.drop_last = drop_last
        counts = [int(s["decisions"]) for s in self.manifest["shards"]]
        self.offsets = np.cumsum([0, *counts])
        self.peak_rows = 0  # the most decision rows held at once during the last epoch

    def __len__(self) -> int:
        """Decisions per epoch."""
        return int(self.offsets[-1])

    def shard(self, index: int) -> dict[str, np.ndarray]:
        """One shard's rows in file order (``decision_id`` included), for readers that pick
        their own rows (replay/learning/nn/stream.py)."""
        return self._shard(index)

    def _shard(self, index: int) -> dict[str, np.ndarray]:
        path, size = self.shards[index]
        need = list(self.decision_fields)
        if self.hand_fields and "hand_index" not in need:
            need.append("hand_index")
        data = read_shard(path, [*need, *self.hand_fields], expected_bytes=size)
        rows = int(self.manifest["shards"][index]["decisions"])
        for name in need:
            if data[name].shape[0] != rows:
                raise S.DatasetError(f"{path}: {name} has {data[name].shape[0]} rows, the "
                                     f"manifest says {rows}")
        out = {n: data[n] for n in self.decision_fields}
        for n in self.hand_fields:
            out[n] = data[n][data["hand_index"]]
        out["decision_id"] = np.arange(rows, dtype=np.int64) + int(self.offsets[index])
        return out

    def epoch(self, epoch: int = 0) -> Iterator[dict[str, np.ndarray]]:
        """The batches of one epoch: dicts of arrays with ``batch_size`` rows (the last one
        smaller unless ``drop_last``)."""
        rng = np.random.default_rng([self.seed, epoch])
        order = rng.permutation(len(self.shards))
        pool: dict[str, np.ndarray] | None = None
        self.peak_rows = 0
        keep = self.buffer_decisions // 2
        for index in order:
            pool = _append(pool, self._shard(int(index)))
            size = _rows(pool)
            self.peak_rows = max(self.peak_rows, size)
            if size < self.buffer_decisions:
                continue
            pool = _take(pool, rng.permutation(size))
            cut = ((size - keep) // self.batch_size) * self.batch_size
            yield from self._batches(pool, 0, cut, last=False)
            pool = {k: v[cut:] for k, v in pool.items()}
        if pool is not None and _rows(pool):
            pool = _take(pool, rng.permutation(_rows(pool)))
            yield from self._batches(pool, 0, _rows(pool), last=True)

    def _batches(self, pool: dict[str, np.ndarray], start: int, stop: int,
                 last: bool) -> Iterator[dict[str, np.ndarray]]:
        for lo in range(start, stop, self.batch_size):
            hi = min(lo + self.batch_size, stop)
            if hi - lo < self.batch_size and (self.drop_last or not last):
                return
            yield {k: v[lo:hi] for k, v in pool.items()}


def _rows(pool: dict[str, Any]) -> int:
    return int(pool["decision_id"].shape[0])


def _append(pool: dict[str, np.ndarray] | None,
            more: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    if pool is None:
        return more
    return {k: np.concatenate([pool[k], more[k]]) for k in more}


def _take(pool: dict[str, np.ndarray], order: np.ndarray) -> dict[str, np.ndarray]:
    return {k: v[order] for k, v in pool.items()}
