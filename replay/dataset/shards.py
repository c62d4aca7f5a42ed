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
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from brain.shipped import written_whole
from replay.dataset import schema as S
from replay.dataset.records import Block

MANIFEST = "manifest.json"
PROGRESS = "progress.json"  # a stopped self-play's record (replay/dataset/progress.py)
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
    # written whole: a full disk leaves no half shard, and says the shard's name
    with written_whole(path) as f, zipfile.ZipFile(f, "w") as zf:
        _members(zf, arrays)


def npz_bytes(arrays: dict[str, np.ndarray]) -> bytes:
    """The bytes :func:`write_npz` writes for ``arrays`` (to know them before they are put in
    place)."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        _members(zf, arrays)
    return buf.getvalue()


def _members(zf: zipfile.ZipFile, arrays: dict[str, np.ndarray]) -> None:
    for name, array in arrays.items():
        info = zipfile.ZipInfo(f"{name}.npy", date_time=ZIP_EPOCH)
        info.compress_type = zipfile.ZIP_DEFLATED
        info.create_system = 3
        info.external_attr = 0o644 << 16
        zf.writestr(info, npy_bytes(array), compresslevel=COMPRESS_LEVEL)


def json_array(data: dict[str, Any]) -> np.ndarray:
    return np.frombuffer(json.dumps(data, sort_keys=True).encode(), dtype=np.uint8)


def sha256(path: str | Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


class ShardCutter:
    """Where shards end: after the game that brings the open shard to ``shard_decisions``
    decisions. One rule for every writer (this process, or Ray workers writing shards from
    the games' decision counts alone), so shards are the same whoever writes them."""

    def __init__(self, shard_decisions: int = 20000) -> None:
        self.shard_decisions = max(1, shard_decisions)
        self.pending: list[Any] = []
        self.pending_decisions = 0

    def add(self, item: Any, decisions: int) -> list[Any] | None:
        """Add one game; the finished shard's items when this game closes it, else None."""
        self.pending.append(item)
        self.pending_decisions += decisions
        return self.cut() if self.pending_decisions >= self.shard_decisions else None

    def cut(self) -> list[Any] | None:
        """The open shard's items (None when empty), and a new empty shard."""
        items, self.pending, self.pending_decisions = self.pending, [], 0
        return items or None


def write_shard(out: Path, index: int, meta: dict[str, Any], blocks: Sequence[Block],
                recorded: Callable[[dict[str, Any]], None] | None = None) -> dict[str, Any]:
    """Shard ``index`` of the games in ``blocks`` (in order); its manifest entry.
    ``recorded``: given the entry before the shard is put in place (a record that names its
    bytes is written first, while the file it replaces is still there)."""
    block = Block.concat(blocks)
    path = Path(out) / SHARD_PATTERN.format(index)
    shard_meta = {**meta, "shard": index, "decisions": block.decisions, "hands": block.hands}
    arrays = {"meta": json_array(shard_meta)}
    arrays.update((f.name, block.arrays[f.name]) for f in S.FIELDS.values())
    if recorded is None:
        write_npz(path, arrays)
        return {"file": path.name, "decisions": block.decisions, "hands": block.hands,
                "bytes": path.stat().st_size, "sha256": sha256(path)}
    data = npz_bytes(arrays)  # the entry from the bytes in hand, not the file read back
    entry = {"file": path.name, "decisions": block.decisions, "hands": block.hands,
             "bytes": len(data), "sha256": hashlib.sha256(data).hexdigest()}
    recorded(dict(entry))
    with written_whole(path) as f:
        f.write(data)
    return entry


def write_manifest(out: Path, meta: dict[str, Any], games: int, shards: list[dict[str, Any]],
                   extra: dict[str, Any] | None = None) -> dict[str, Any]:
    """The manifest, written last (atomically): a dataset without one is unfinished."""
    manifest = {
        **meta,
        **(extra or {}),
        "games": games,
        "hands": sum(s["hands"] for s in shards),
        "decisions": sum(s["decisions"] for s in shards),
        "shards": shards,
    }
    tmp = Path(out) / (MANIFEST + ".tmp")
    tmp.write_text(json.dumps(manifest, indent=1, sort_keys=True) + "\n")
    os.replace(tmp, Path(out) / MANIFEST)
    return manifest


def dataset_meta(meta: dict[str, Any]) -> dict[str, Any]:
    """What every shard and the manifest carry: the schema version and the run's ``meta``."""
    return {"schema_version": S.SCHEMA_VERSION, **meta}


class DatasetWriter:
    """Writes blocks (whole games, in the order given) into shards of about
    ``shard_decisions`` decisions each, cut between games, then the manifest."""

    def __init__(self, out: Path, meta: dict[str, Any], shard_decisions: int = 20000,
                 resumed: bool = False) -> None:
        self.out = Path(out)
        if not resumed:
            prepare_out_dir(self.out)
        self.meta = meta if resumed else dataset_meta(meta)
        self.cutter = ShardCutter(shard_decisions)
        self.shards: list[dict[str, Any]] = []
        self.games = 0
        self.open_games = 0  # games added since the last shard was written

    @classmethod
    def going_on(cls, out: Path, meta: dict[str, Any], shard_decisions: int,
                 shards: list[dict[str, Any]], games: int, open_block: Block | None,
                 open_games: int) -> DatasetWriter:
        """A writer that goes on from shards already written (``meta``: their dataset meta,
        as recorded) and the open shard's games read back: one block of ``open_games``
        games, cut as the games it holds would be (a shard ends where its decisions reach
        ``shard_decisions``, and these did not)."""
        writer = cls(out, meta, shard_decisions, resumed=True)
        writer.shards = list(shards)
        writer.games = games
        if open_block is not None and open_games:
            writer.games += open_games
            writer.open_games = open_games
            writer.cutter.add(open_block, open_block.decisions)
        return writer

    def write_open(self, recorded: Callable[[dict[str, Any]], None] | None = None
                   ) -> dict[str, Any] | None:
        """The open shard as it stands, under the name it will have once whole (where a resume
        reads its games back); its entry, None when it holds no game. Written again when it
        closes, as it will hold more games then. ``recorded``: as :func:`write_shard`."""
        if not self.cutter.pending:
            return None
        return write_shard(self.out, len(self.shards), self.meta, self.cutter.pending,
                           recorded)

    def add(self, block: Block, games: int = 1,
            recorded: Callable[[dict[str, Any]], None] | None = None) -> bool:
        """Add whole games; True when they closed a shard (written now; ``recorded``: as
        :func:`write_shard`)."""
        self.games += games
        self.open_games += games
        return self._write(self.cutter.add(block, block.decisions), recorded)

    def _write(self, blocks: list[Block] | None,
               recorded: Callable[[dict[str, Any]], None] | None = None) -> bool:
        if blocks:
            self.shards.append(write_shard(self.out, len(self.shards), self.meta, blocks,
                                           recorded))
            self.open_games = 0
        return bool(blocks)

    def keep_before(self, game: int) -> list[Path]:
        """Drop the games numbered ``game`` and after: the shards that hold any are taken off
        the list, the games before it in the first of them go back to the open shard (games
        are written in order, so what is left is what a run that never played them holds).
        The files taken off are left on disk and returned, for the caller to remove once a
        record that does not need them is written (a kill meanwhile keeps one that does)."""
        gone: list[Path] = []
        pending = [b.before(game) for b in self.cutter.pending]
        dropped = sum(b.games for b in self.cutter.pending) - sum(b.games for b in pending)
        pending = [b for b in pending if b.hands]
        while self.shards and not pending:
            entry = self.shards[-1]
            path = self.out / entry["file"]
            rows = Block(read_shard(path, S.FIELDS, entry["bytes"]))
            if int(rows.arrays["h_game"][-1]) < game:
                break
            self.shards.pop()
            gone.append(path)
            head = rows.before(game)
            dropped += rows.games - head.games
            pending = [head] if head.hands else []
        self.games -= dropped
        self.open_games = sum(b.games for b in pending)
        self.cutter.pending = pending
        self.cutter.pending_decisions = sum(b.decisions for b in pending)
        return gone

    def close(self, extra: dict[str, Any] | None = None,
              recorded: Callable[[dict[str, Any]], None] | None = None) -> dict[str, Any]:
        """Write the last shard and the manifest (``extra``: more manifest fields, e.g. what
        went wrong; ``recorded``: given the last shard's entry before it is put in place, as
        :func:`write_shard`); returns the manifest."""
        self._write(self.cutter.cut(), recorded)
        return write_manifest(self.out, self.meta, self.games, self.shards, extra)


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
        if Path(root).exists():  # a shard or the manifest named instead of its folder
            raise S.DatasetError(f"{root}: a file, not a dataset directory (name the folder "
                                 "that holds manifest.json and the shards)")
        raise S.DatasetError(f"{root}: no such dataset directory")
    try:
        manifest = json.loads(path.read_text())
    except FileNotFoundError:
        if (Path(root) / PROGRESS).is_file():  # a self-play run stopped or killed mid-way
            raise S.DatasetError(f"{path}: missing: a selfplay run stopped here before it "
                                 f"wrote it ({PROGRESS} says where it stands); the same "
                                 "`mjbot selfplay` command again goes on with it") from None
        raise S.DatasetError(f"{path}: missing (not a dataset directory, or the run that "
                             "wrote it did not finish)") from None
    except (OSError, ValueError) as exc:
        raise S.DatasetError(f"{path}: unreadable ({exc})") from None
    if not isinstance(manifest, dict):
        raise S.DatasetError(f"{path}: not a dataset manifest (a JSON {type(manifest).__name__}, "
                             "not an object)")
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


def shard_paths(root: str | Path, manifest: dict[str, Any]) -> Sequence[tuple[Path, int]]:
    return [(Path(root) / s["file"], int(s["bytes"])) for s in manifest["shards"]]
