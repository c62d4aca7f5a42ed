"""Training examples streamed from dataset folders in bounded memory, numpy only (issue 26).

Encoding every kept row at once held 8 GB for 357k examples. Here an example's planes are
float32 (planes=133 x 34 tiles: 18,088 bytes) plus its 145 legal-head flags and 22 bytes of
target, value and origin: **18,255 bytes an example**, so the default 40,000-example shuffle
buffer is 0.73 GB and the default 20,000-example held-out cap 0.37 GB; with the process's
own ~0.47 GB (torch, one shard's raw rows: measured, brain/data/nn_models.md) a default run
peaks near 1.6 GB whatever the data's size.
(MCR's plan-planes encoding, 155 planes, makes an example 21,247 bytes: about 1.75 GB.)

How: one cheap pass (:func:`~replay.learning.nn.data.kept_heads`, no table state) lists the
kept rows of every shard, so each epoch's size, the held-out choice and the learning-rate
schedule are known before anything is encoded. Each epoch then visits the shards of all
folders in a seeded order, encodes a shard's kept training rows in a seeded order into free
slots of the buffer and, whenever the buffer is full, hands out one minibatch drawn at random
from it; the rest is drained shuffled at the end. Every training example is seen exactly once
per epoch; at most the buffer, one shard's raw rows and the held-out set are in memory.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from brain.nn.encoding import encoding_for
from replay.dataset import schema as S
from replay.dataset.loader import ShuffledLoader
from replay.learning.nn.data import FIELDS, Examples, kept_heads

BYTES_PER_EXAMPLE = 18_255
DEFAULT_BUFFER = 40_000
DEFAULT_HOLDOUT_MAX = 20_000
CHEAP = ["policy", "fallback", "legal", "legal_count", "action", "action_index",
         "request_tile"]


@dataclass
class _Source:
    """One dataset folder: its loaders and, per shard, the kept rows (row numbers within
    the shard) that train and that are held out."""

    loader: ShuffledLoader
    train: list[np.ndarray]
    held: list[np.ndarray]


def _kept_rows(cheap: ShuffledLoader, wanted: set[int] | None, index: int) -> np.ndarray:
    """The row numbers of shard ``index`` that :func:`kept_heads` keeps."""
    data = cheap.shard(index)
    n = int(data["decision_id"].shape[0])
    rows = []
    for i in range(n):
        row = {k: a[i] for k, a in data.items()}
        if kept_heads(row, wanted) is not None:
            rows.append(i)
    return np.asarray(rows, dtype=np.int64)


class ExampleStream:
    """Minibatches of the kept rows of ``dirs`` (one variant). ``holdout_dirs``: held-out
    folders (at most ``holdout_max`` of their kept rows, a seeded sample); without them a
    seeded ``holdout_share`` of ``dirs``' kept rows, capped the same way, never trained on.
    ``max_decisions``: at most about this many training examples in all (a seeded sample per
    folder; 0: all). ``buffer``: the most training examples encoded at once. ``encoding``:
    the input encoding version (None: the variant's, :func:`~brain.nn.encoding.encoding_for`)."""

    def __init__(self, dirs: Sequence[str | Path], policies: Sequence[str] | None = None,
                 seed: int = 0, batch_size: int = 256, buffer: int = DEFAULT_BUFFER,
                 holdout_share: float = 0.05, holdout_max: int = DEFAULT_HOLDOUT_MAX,
                 holdout_dirs: Sequence[str | Path] | None = None,
                 max_decisions: int = 0, encoding: int | None = None) -> None:
        if batch_size < 1 or buffer < batch_size:
            raise ValueError("the buffer must hold at least one batch")
        self.seed, self.batch_size, self.buffer = seed, batch_size, buffer
        self.sources = [self._scan(d, policies) for d in dirs]
        held_sources = [self._scan(d, policies) for d in holdout_dirs or []]
        variants = {s.loader.manifest["variant"] for s in [*self.sources, *held_sources]}
        if len(variants) != 1:
            raise S.DatasetError(f"the datasets hold several variants: {sorted(variants)}")
        self.variant: str = variants.pop()
        self.encoding = encoding_for(self.variant) if encoding is None else encoding
        rng = np.random.default_rng([seed, 1])
        if holdout_dirs:
            self._choose_held(held_sources, holdout_max, rng, remove=False)
            self._held_from = held_sources
        else:
            total = sum(len(r) for s in self.sources for r in s.train)
            self._choose_held(self.sources, min(holdout_max, int(total * holdout_share)), rng,
                              remove=True)
            self._held_from = self.sources
        if max_decisions:
            per_dir = max(1, max_decisions // len(self.sources))
            for s in self.sources:
                _subsample(s.train, per_dir, rng)
        if not len(self):
            named = sorted({str(p) for s in self.sources
                            for p in s.loader.manifest.get("policies", [])})
            missing = sorted(set(policies or ()) - set(named))
            raise S.DatasetError(
                f"no player named {', '.join(missing)} in the datasets (their players: "
                f"{', '.join(named)})" if missing
                else "no decision with a choice in the datasets")
        self.peak_buffer = 0  # the most training examples held at once, over every epoch
        self.seen = 0  # training examples handed out, over every epoch
        self._held: Examples | None = None

    def _scan(self, root: str | Path, policies: Sequence[str] | None) -> _Source:
        loader = ShuffledLoader(root, fields=FIELDS)
        cheap = ShuffledLoader(root, fields=CHEAP)
        names = list(loader.manifest["policies"])
        wanted = None if policies is None else {i for i, p in enumerate(names) if p in policies}
        kept = [_kept_rows(cheap, wanted, i) for i in range(len(loader.shards))]
        return _Source(loader, kept, [np.zeros(0, dtype=np.int64) for _ in kept])

    @staticmethod
    def _choose_held(sources: list[_Source], count: int, rng: np.random.Generator,
                     remove: bool) -> None:
        """Move (``remove``) or copy a seeded ``count`` of the sources' kept rows to held."""
        sizes = [len(r) for s in sources for r in s.train]
        pick = np.zeros(sum(sizes), dtype=bool)
        pick[rng.permutation(len(pick))[:count]] = True
        lo = 0
        for s in sources:
            for i, rows in enumerate(s.train):
                chosen = pick[lo:lo + len(rows)]
                lo += len(rows)
                s.held[i] = rows[chosen]
                s.train[i] = rows[~chosen] if remove else np.zeros(0, dtype=np.int64)

    def __len__(self) -> int:
        """Training examples per epoch."""
        return sum(len(r) for s in self.sources for r in s.train)

    def batches_per_epoch(self) -> int:
        return (len(self) + self.batch_size - 1) // self.batch_size

    def held_out(self) -> Examples:
        """The held-out examples, encoded once (at most ``holdout_max``)."""
        if self._held is None:
            count = sum(len(r) for s in self._held_from for r in s.held)
            out = Examples.empty(count, self.encoding)
            n = 0
            for d, s in enumerate(self._held_from):
                for index, rows in enumerate(s.held):
                    if len(rows):
                        n = self._encode_rows(s, index, rows, d, out, iter(range(n, count)))
            self._held = out
        return self._held

    def held_players(self) -> list[str]:
        """The players the held-out rows come from (what a refusal names)."""
        return sorted({str(p) for s in self._held_from
                       for p in s.loader.manifest.get("policies", [])})

    @property
    def peak_examples_held(self) -> int:
        """The most examples held at once: the buffer's peak plus the held-out set."""
        return self.peak_buffer + (len(self._held) if self._held is not None else 0)

    def _encode_rows(self, s: _Source, index: int, rows: np.ndarray, d: int, out: Examples,
                     slots: Iterator[int]) -> int:
        data = s.loader.shard(index)
        last = -1
        for r in rows:  # chosen from the kept rows: the player filter is already applied
            row = {k: a[int(r)] for k, a in data.items()}
            heads = kept_heads(row, None)
            if heads is None:  # the cheap pass kept it: the shard changed under us
                raise S.DatasetError(f"{s.loader.root}: shard {index} changed while training")
            last = next(slots)
            out.write(last, self.variant, row, heads, int(row["decision_id"]), d,
                      self.encoding)
        return last + 1

    def epoch(self, epoch: int) -> Iterator[Examples]:
        """One pass over the training examples, in minibatches of ``batch_size`` (the last
        one smaller); the order is fixed by the seed and ``epoch``."""
        rng = np.random.default_rng([self.seed, 2, epoch])
        units = [(d, i) for d, s in enumerate(self.sources) for i, r in enumerate(s.train)
                 if len(r)]
        cap = min(self.buffer, len(self))
        pool = Examples.empty(cap, self.encoding)
        free = list(range(cap - 1, -1, -1))  # free slots, popped from the end
        for u in rng.permutation(len(units)):
            d, index = units[int(u)]
            s = self.sources[d]
            data = s.loader.shard(index)
            for r in rng.permutation(s.train[index]):
                if not free:
                    picked = rng.choice(cap, self.batch_size, replace=False)
                    yield self._hand_out(pool, picked)
                    free.extend(int(p) for p in picked[::-1])
                row = {k: a[int(r)] for k, a in data.items()}
                heads = kept_heads(row, None)
                if heads is None:
                    raise S.DatasetError(f"{s.loader.root}: shard {index} changed while "
                                         "training")
                pool.write(free.pop(), self.variant, row, heads, int(row["decision_id"]), d,
                           self.encoding)
                self.peak_buffer = max(self.peak_buffer, cap - len(free))
        taken = np.ones(cap, dtype=bool)
        taken[free] = False
        rest = rng.permutation(np.flatnonzero(taken))
        for lo in range(0, len(rest), self.batch_size):
            yield self._hand_out(pool, rest[lo:lo + self.batch_size])

    def _hand_out(self, pool: Examples, slots: np.ndarray) -> Examples:
        self.seen += len(slots)
        return pool.take(slots)


def _subsample(train: list[np.ndarray], keep: int, rng: np.random.Generator) -> None:
    """Keep a seeded ``keep`` of the rows listed in ``train`` (per shard arrays, in place)."""
    sizes = [len(r) for r in train]
    pick = np.zeros(sum(sizes), dtype=bool)
    pick[rng.permutation(len(pick))[:keep]] = True
    lo = 0
    for i, rows in enumerate(train):
        train[i] = rows[pick[lo:lo + len(rows)]]
        lo += len(rows)


def held_batches(held: Examples, batch: int = 1024) -> Iterator[Examples]:
    """The held-out set in slices (views, no copy)."""
    for lo in range(0, len(held), batch):
        yield held.part(lo, min(lo + batch, len(held)))
