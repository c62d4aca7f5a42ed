"""Self-play on Ray with the shards written by the workers, into an output directory that
every node mounts at the same path (a shared filesystem).

Shard boundaries depend on the decision counts of all earlier games, which no worker knows
while it plays. So each unit task writes its games to a part file (``.parts/unit-NNNNNN.npz``)
and returns only their decision counts; the driver cuts shards from those counts in unit order
with the local writer's own rule (:class:`ShardCutter`) and hands each finished shard to a
task that reads the parts and writes it (:func:`write_shard`). The shards and the manifest
are byte for byte those of a local run; the games never travel through the driver.
Every file is written under a temporary name and renamed, so a retried task (its worker
died) rewrites the same bytes under the same name.
"""

from __future__ import annotations

import shutil
import socket
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from adapter.local.selfplay import (
    SelfPlayConfig,
    UnitCounter,
    add_fallbacks,
    fallbacks_extra,
    play_selfplay_unit,
    run_figures,
    selfplay_meta,
)
from brain.shipped import written_whole
from brain.tally import FallbackTally
from replay.dataset import schema as S
from replay.dataset.records import Block
from replay.dataset.schema import DatasetError
from replay.dataset.shards import (
    ShardCutter,
    dataset_meta,
    prepare_out_dir,
    write_manifest,
    write_shard,
)

if TYPE_CHECKING:
    from adapter.local.ray_pool import RayRun

PARTS = ".parts"


@dataclass
class PartInfo:
    """What the driver needs of a unit whose games are in a part file."""

    unit: int
    decisions: list[int]  # per game, in seating order
    hands: int
    seconds: float
    node: str  # the worker's host, named when its part file is not where the driver looks
    errors: list[str] = field(default_factory=list)
    fallbacks: dict[str, FallbackTally] = field(default_factory=dict)


def part_path(out: str, unit: int) -> Path:
    return Path(out) / PARTS / f"unit-{unit:06d}.npz"


def play_unit_to_part(config: SelfPlayConfig, unit: int) -> PartInfo:
    """Play one unit and write its games to its part file (atomically: a retry of a unit
    whose worker died writes the same bytes)."""
    data = play_selfplay_unit(config, unit)
    path = part_path(config.out, unit)
    path.parent.mkdir(parents=True, exist_ok=True)
    arrays = {f"g{index}.{name}": array for index, block in enumerate(data.games)
              for name, array in block.arrays.items()}
    # a full disk leaves no half part, and is said with the part's name
    with written_whole(path, path.with_name(f"{path.name}.{uuid.uuid4().hex}.tmp")) as f:
        np.savez(f, **arrays)  # type: ignore[arg-type]  # numpy's allow_pickle: our keys are array names
    return PartInfo(unit, [b.decisions for b in data.games], data.hands, data.seconds,
                    socket.gethostname(), data.errors, data.fallbacks)


def write_shard_from_parts(out: str, index: int, meta: dict[str, Any],
                           games: list[tuple[int, int]]) -> dict[str, Any]:
    """Shard ``index`` of the ``(unit, game)`` pairs, read from their part files."""
    parts: dict[int, Any] = {}
    blocks = []
    try:
        for unit, game in games:
            if unit not in parts:
                parts[unit] = np.load(part_path(out, unit), allow_pickle=False)
            npz = parts[unit]
            blocks.append(Block({f.name: npz[f"g{game}.{f.name}"] for f in S.FIELDS.values()}))
        return write_shard(Path(out), index, meta, blocks)
    finally:
        for npz in parts.values():
            npz.close()


def write_on_workers(config: SelfPlayConfig, meta: dict[str, Any], ray: RayRun,
                     counter: UnitCounter) -> dict[str, Any]:
    """The whole dataset, shards written by Ray workers; returns the manifest."""
    from adapter.local.ray_pool import get, remote

    out = Path(config.out)
    prepare_out_dir(out)
    meta = dataset_meta(meta)
    cutter = ShardCutter(config.shard_decisions)
    shard_task = remote(write_shard_from_parts)
    shards: list[Any] = []
    errors: list[str] = []
    fallbacks: dict[str, FallbackTally] = {}
    games = 0
    units = config.arena.units()

    def submit(items: list[tuple[int, int]] | None) -> None:
        if items:
            shards.append(shard_task.remote(config.out, len(shards), meta, items))

    for _, info in ray.map(play_unit_to_part, lambda u: (config, u), units, ordered=True,
                           on_complete=lambda _, info: counter(info)):
        if not part_path(config.out, info.unit).is_file():
            raise DatasetError(
                f"--out-shared: the games of unit {info.unit}, written on {info.node}, are not "
                f"in {out / PARTS} here: --out is not shared by every node (run without "
                "--out-shared to have the games sent back)")
        errors.extend(info.errors)
        add_fallbacks(fallbacks, info.fallbacks)
        for game, decisions in enumerate(info.decisions):
            games += 1
            submit(cutter.add((info.unit, game), decisions))
    submit(cutter.cut())
    entries = get(shards)
    shutil.rmtree(out / PARTS, ignore_errors=True)
    return write_manifest(out, meta, games, entries,
                          {"referee_errors": errors, "fallbacks": fallbacks_extra(fallbacks)})


def run_on_workers(config: SelfPlayConfig, ray: RayRun,
                   progress: Callable[[int, int, int], None] | None = None) -> dict[str, Any]:
    """:func:`adapter.local.selfplay.run_selfplay` with the shards written by the Ray workers
    into ``config.out``, which every node sees: the manifest plus the same figures."""
    start = time.monotonic()
    counter = UnitCounter(config.arena.units(), progress)
    manifest = write_on_workers(config, selfplay_meta(config), ray, counter)
    return run_figures(config, manifest, start, counter, ray, "workers")
