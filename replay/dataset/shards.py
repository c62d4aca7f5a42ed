"""Shards on disk: deterministic compressed ``.npz`` files and the dataset's manifest.

``numpy.savez_compressed`` stamps every member with the current time, so two runs of the same
seed would differ; :func:`write_npz` writes the zip itself with fixed member times, modes and
order, so the same arrays give the same bytes. A shard is written to a temporary name and
renamed, so a killed run never leaves a half shard under a shard's name; the manifest, written
last, lists each shard with its size and SHA-256.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import zipfile
import zlib
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from replay.dataset import schema as S
from replay.dataset.records import Block

MANIFEST = "manifest.json"
SHARD_PATTERN = "shard-{:05d}.npz"
ZIP_EPOCH = (1980, 1, 1, 0, 0, 0)
COMPRESS_LEVEL = 6


def npy_bytes(array: np.ndarray) -> bytes:
    buf = io.BytesIO()
    np.lib.format.write_array(buf, np.ascontiguousarray(array), allow_pickle=False)
    return buf.getvalue()


def write_npz(path: Path, arrays: dict[str, np.ndarray]) -> None:
    """An ``np.load``-able zip whose bytes depend only on ``arrays`` (members in the given
    order, fixed times and modes), written atomically."""
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "wb") as f, zipfile.ZipFile(f, "w") as zf:
        for name, array in arrays.items():
            info = zipfile.ZipInfo(f"{name}.npy", date_time=ZIP_EPOCH)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.create_system = 3
            info.external_attr = 0o644 << 16
            zf.writestr(info, npy_bytes(array), compresslevel=COMPRESS_LEVEL)
    os.replace(tmp, path)


def json_array(data: dict[str, Any]) -> np.ndarray:
    return np.frombuffer(json.dumps(data, sort_keys=True).encode(), dtype=np.uint8)


def sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


class DatasetWriter:
    """Writes blocks (whole games, in the order given) into shards of about
    ``shard_decisions`` decisions each, cut between games, then the manifest."""

    def __init__(self, out: Path, meta: dict[str, Any], shard_decisions: int = 20000) -> None:
        self.out = Path(out)
        prepare_out_dir(self.out)
        self.meta = {"schema_version": S.SCHEMA_VERSION, **meta}
        self.shard_decisions = max(1, shard_decisions)
        self.pending: list[Block] = []
        self.pending_decisions = 0
        self.shards: list[dict[str, Any]] = []
        self.games = 0

    def add(self, block: Block, games: int = 1) -> None:
        self.pending.append(block)
        self.pending_decisions += block.decisions
        self.games += games
        if self.pending_decisions >= self.shard_decisions:
            self._flush()

    def _flush(self) -> None:
        if not self.pending:
            return
        block = Block.concat(self.pending)
        self.pending, self.pending_decisions = [], 0
        index = len(self.shards)
        path = self.out / SHARD_PATTERN.format(index)
        meta = {**self.meta, "shard": index, "decisions": block.decisions, "hands": block.hands}
        arrays = {"meta": json_array(meta)}
        arrays.update((f.name, block.arrays[f.name]) for f in S.FIELDS.values())
        write_npz(path, arrays)
        self.shards.append({"file": path.name, "decisions": block.decisions,
                            "hands": block.hands, "bytes": path.stat().st_size,
                            "sha256": sha256(path)})

    def close(self, extra: dict[str, Any] | None = None) -> dict[str, Any]:
        """Write the last shard and the manifest (``extra``: more manifest fields, e.g. what
        went wrong); returns the manifest."""
        self._flush()
        manifest = {
            **self.meta,
            **(extra or {}),
            "games": self.games,
            "hands": sum(s["hands"] for s in self.shards),
            "decisions": sum(s["decisions"] for s in self.shards),
            "shards": self.shards,
        }
        tmp = self.out / (MANIFEST + ".tmp")
        tmp.write_text(json.dumps(manifest, indent=1, sort_keys=True) + "\n")
        os.replace(tmp, self.out / MANIFEST)
        return manifest


def prepare_out_dir(out: Path) -> None:
    """Create ``out`` (and its parents); refuse a file, or a directory that holds anything."""
    if out.exists() and not out.is_dir():
        raise S.DatasetError(f"{out}: exists and is not a directory")
    if out.is_dir() and any(out.iterdir()):
        raise S.DatasetError(f"{out}: directory is not empty (a dataset goes in a new or empty "
                             "directory)")
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise S.DatasetError(f"{out}: cannot create the directory ({exc.strerror})") from None


# --------------------------------------------------------------------------- reading


def read_manifest(root: Path) -> dict[str, Any]:
    path = Path(root) / MANIFEST
    if not Path(root).is_dir():
        raise S.DatasetError(f"{root}: no such dataset directory")
    try:
        manifest = json.loads(path.read_text())
    except FileNotFoundError:
        raise S.DatasetError(f"{path}: missing (not a dataset directory, or the run that "
                             "wrote it did not finish)") from None
    except (OSError, ValueError) as exc:
        raise S.DatasetError(f"{path}: unreadable ({exc})") from None
    version = manifest.get("schema_version")
    if version != S.SCHEMA_VERSION:
        raise S.DatasetError(f"{path}: schema_version {version!r}, this mjbot reads "
                             f"{S.SCHEMA_VERSION}")
    return manifest


def read_shard(path: Path, names: Iterable[str], expected_bytes: int | None = None
               ) -> dict[str, np.ndarray]:
    """The named arrays of one shard; a truncated or corrupt shard raises DatasetError
    naming the file."""
    path = Path(path)
    try:
        size = path.stat().st_size
    except FileNotFoundError:
        raise S.DatasetError(f"{path}: shard missing") from None
    if expected_bytes is not None and size != expected_bytes:
        raise S.DatasetError(f"{path}: {size} bytes, the manifest says {expected_bytes}: "
                             "truncated or replaced shard")
    out: dict[str, np.ndarray] = {}
    try:
        with np.load(path, allow_pickle=False) as npz:
            for name in names:
                out[name] = npz[name]
    except KeyError as exc:
        raise S.DatasetError(f"{path}: no field {exc} in this shard") from None
    except (zipfile.BadZipFile, zlib.error, EOFError, OSError, ValueError) as exc:
        raise S.DatasetError(f"{path}: truncated or corrupt shard ({exc})") from None
    return out


def shard_meta(path: Path) -> dict[str, Any]:
    raw = read_shard(path, ["meta"])["meta"]
    return json.loads(raw.tobytes().decode())


def shard_paths(root: Path, manifest: dict[str, Any]) -> Sequence[tuple[Path, int]]:
    return [(Path(root) / s["file"], int(s["bytes"])) for s in manifest["shards"]]
