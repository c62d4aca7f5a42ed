"""Decision datasets -> the opponent models' training and evaluation arrays.

Every kept decision gives three (view, opponent) pairs: the public features and the tenpai
label of each; a pair whose opponent is ready (or every pair, ``kinds="all"``, for the
evaluation sets) also gives its per-kind features, which kinds complete its hand
(``t_waits``), and what each legal win would cost the viewer (``t_points``, where
``t_value >= 0``). Shards are read one at a time and decisions are kept
with a seeded probability, so memory stays bounded whatever the dataset size; per-kind
features are stored as float16 (they are small fractions and counts).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import cast

import numpy as np

from brain.opponents.features import KIND_NAMES, PUBLIC_NAMES, Features
from brain.opponents.view import FIELDS, OpponentInputs
from replay.dataset.schema import DatasetError
from replay.dataset.shards import read_manifest, read_shard, shard_paths

LABELS = ("hand_index", "t_tenpai", "t_waits", "t_value", "t_points")
CHUNK = 8192  # decisions featurised at once
RIICHI = PUBLIC_NAMES.index("riichi")


@dataclass
class OpponentData:
    """Pairs of one or more datasets. ``hand`` names each pair's deal for splits and the
    bootstrap: self-play plays every wall once per seating of the policies (six times for
    two pairs of players), so rows of one wall are near copies and go to one side of a split
    together; a pair of a self-play hand is named by its wall seed, one of an imported
    game (no seed) by its hand, as a negative number. ``z``, ``waits`` and ``points`` hold
    the pairs listed in ``k_pair`` (indices into all pairs): the ready ones, or all of
    them. ``opponent`` names the policy the observed seat played (an index into
    ``policies``, the names of every dataset read), so figures can be taken per style and a
    style can be left out of training."""

    variant: str
    x: np.ndarray  # (N, Fx) float16 public features
    tenpai: np.ndarray  # (N,) uint8
    hand: np.ndarray  # (N,) int64 the wall seed, or -(hand number + 2) for imports
    riichi: np.ndarray  # (N,) uint8: the opponent declared riichi
    calls: np.ndarray  # (N,) open melds
    turn: np.ndarray  # (N,) hand-wide discards so far
    k_pair: np.ndarray  # (M,) index into the pairs
    z: np.ndarray  # (M, 34, Fz) float16 per-kind features
    waits: np.ndarray  # (M, 34) uint8
    points: np.ndarray  # (M, 34) float32 points of a legal win on that kind, 0 elsewhere
    sources: list[str] = field(default_factory=list)
    decisions: int = 0
    opponent: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int16))  # (N,)
    policies: list[str] = field(default_factory=list)

    @property
    def ready_rows(self) -> np.ndarray:
        """Rows of ``z`` / ``waits`` / ``points`` whose opponent is ready."""
        return np.nonzero(self.tenpai[self.k_pair])[0]

    @property
    def win(self) -> np.ndarray:
        """(M, 34) bool: a wait that is a legal win (the value head's rows)."""
        return (self.waits > 0) & (self.points > 0)

    def take(self, pairs: np.ndarray) -> OpponentData:
        """The subset of pairs ``pairs`` (a bool mask or sorted indices over all pairs)."""
        keep = np.zeros(len(self.tenpai), bool)
        keep[pairs] = True
        new_index = np.cumsum(keep) - 1
        k_keep = keep[self.k_pair]
        return OpponentData(
            self.variant, self.x[keep], self.tenpai[keep], self.hand[keep], self.riichi[keep],
            self.calls[keep], self.turn[keep], new_index[self.k_pair[k_keep]], self.z[k_keep],
            self.waits[k_keep], self.points[k_keep], list(self.sources),
            self.decisions, self.opponent[keep], list(self.policies))

    def pairs_of(self, policy: str) -> np.ndarray:
        """Bool mask of the pairs whose observed seat played ``policy`` (none if unknown)."""
        if policy not in self.policies:
            return np.zeros(len(self.tenpai), bool)
        return cast(np.ndarray, self.opponent == self.policies.index(policy))

    def pair_counts(self) -> dict[str, int]:
        """Pairs per opponent policy (the policies with at least one pair)."""
        counts = np.bincount(self.opponent, minlength=len(self.policies))
        return {name: int(n) for name, n in zip(self.policies, counts, strict=True) if n}


def load(dirs: Sequence[str | Path], variant: str | None = None, max_decisions: int = 0,
         seed: int = 0, kinds: str = "ready", exclude: Sequence[str] = ()) -> OpponentData:
    """Read datasets (all of one variant). ``max_decisions`` > 0 keeps about that many
    decisions in all, each with the same seeded probability; ``kinds``: per-kind arrays for
    the "ready" pairs (training) or "all" pairs (evaluation of the deal-in product);
    ``exclude``: policies whose seats are never the observed opponent (a leave-one-style-out
    model never learns from their labels; the decisions stay, with fewer pairs)."""
    if kinds not in ("ready", "all"):
        raise ValueError(f"kinds must be 'ready' or 'all', not {kinds!r}")
    manifests = [(Path(d), read_manifest(Path(d))) for d in dirs]
    policies = sorted({str(p) for _, m in manifests for p in m.get("policies", [])})
    unknown = sorted(set(exclude) - set(policies))
    if unknown:
        raise DatasetError(f"cannot leave out {', '.join(unknown)}: no seat of the data plays "
                           f"it (its policies: {', '.join(policies)})")
    variants = {m["variant"] for _, m in manifests}
    if variant is not None and variants != {variant}:
        other = ", ".join(f"{d} is {m['variant']}" for d, m in manifests
                          if m["variant"] != variant)
        raise DatasetError(f"the datasets must be {variant}: {other}")
    if len(variants) != 1:
        raise DatasetError(f"datasets of several variants: {sorted(variants)}")
    total = sum(int(m["decisions"]) for _, m in manifests)
    keep_p = 1.0 if max_decisions <= 0 else min(1.0, max_decisions / max(total, 1))
    rng = np.random.default_rng(seed)
    parts: list[dict[str, np.ndarray]] = []
    hand_base = 0
    for root, manifest in manifests:
        names = [str(p) for p in manifest.get("policies", [])]
        to_global = np.array([policies.index(n) for n in names] or [0], np.int16)
        for path, size in shard_paths(root, manifest):
            data = read_shard(path, [*FIELDS, *LABELS, "h_seed", "h_players"],
                              expected_bytes=size)
            seeds = data.pop("h_seed").astype(np.int64)
            players = data.pop("h_players").astype(np.int64)
            if players.size and (players.min() < 0 or players.max() >= len(names)):
                raise DatasetError(f"{path}: h_players names a policy outside the manifest's "
                                   f"{names}")
            hands = np.arange(seeds.size, dtype=np.int64) + hand_base
            data["deal"] = np.where(seeds >= 0, seeds, -(hands + 2))[data["hand_index"]]
            data["players"] = to_global[players][data["hand_index"]]
            rows = np.nonzero(rng.random(len(data["seat"])) < keep_p)[0]
            for lo in range(0, len(rows), CHUNK):
                parts.append(_featurise({k: v[rows[lo:lo + CHUNK]] for k, v in data.items()},
                                        kinds == "all"))
            hand_base += seeds.size
    out = _concat(variants.pop(), parts, [str(r) for r, _ in manifests], policies)
    if exclude:
        out = out.take(~np.isin(out.opponent, [policies.index(p) for p in exclude]))
        if not len(out.tenpai):
            raise DatasetError("no pairs left once " + ", ".join(exclude) + " is left out")
    return out


def _featurise(rows: dict[str, np.ndarray], all_kinds: bool) -> dict[str, np.ndarray]:
    inputs = OpponentInputs.from_fields(rows)
    f = Features(inputs)
    b, o = f.b, f.o
    tenpai = rows["t_tenpai"][b, o].astype(np.uint8)
    ready = np.arange(len(b)) if all_kinds else np.nonzero(tenpai)[0]
    fr = Features(inputs, b[ready], o[ready])
    waits = rows["t_waits"][b[ready], o[ready]].astype(np.uint8)
    legal = (rows["t_value"][b[ready], o[ready]] >= 0) & (waits > 0)
    points = np.where(legal, rows["t_points"][b[ready], o[ready]], 0).astype(np.float32)
    x = f.public()
    return {
        "x": x.astype(np.float16), "tenpai": tenpai,
        "hand": rows["deal"][b], "opponent": rows["players"][b, o].astype(np.int16),
        "riichi": x[:, RIICHI].astype(np.uint8), "calls": f.pairs.open_melds.astype(np.int8),
        "turn": f.pairs.turn.astype(np.int16), "ready": ready,
        "z": fr.kinds().astype(np.float16), "waits": waits, "points": points,
        "decisions": np.array([len(rows["seat"])]),
    }


def _concat(variant: str, parts: list[dict[str, np.ndarray]], sources: list[str],
            policies: list[str]) -> OpponentData:
    if not parts:
        raise DatasetError("no decisions to learn from (empty dataset?)")
    offsets = np.cumsum([0, *(len(p["tenpai"]) for p in parts)])
    return OpponentData(
        variant,
        x=np.concatenate([p["x"] for p in parts]),
        tenpai=np.concatenate([p["tenpai"] for p in parts]),
        hand=np.concatenate([p["hand"] for p in parts]),
        riichi=np.concatenate([p["riichi"] for p in parts]),
        calls=np.concatenate([p["calls"] for p in parts]),
        turn=np.concatenate([p["turn"] for p in parts]),
        k_pair=np.concatenate([p["ready"] + off for p, off in zip(parts, offsets, strict=False)]),
        z=np.concatenate([p["z"] for p in parts]).reshape(-1, 34, len(KIND_NAMES)),
        waits=np.concatenate([p["waits"] for p in parts]).reshape(-1, 34),
        points=np.concatenate([p["points"] for p in parts]).reshape(-1, 34),
        sources=sources, decisions=int(sum(int(p["decisions"][0]) for p in parts)),
        opponent=np.concatenate([p["opponent"] for p in parts]), policies=policies)
