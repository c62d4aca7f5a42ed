"""Where a dataset run stands on disk, so that a stopped or killed run goes on where it stopped.

A run that writes its shards in a fixed order (self-play: units in order, each unit's games in
seating order) records in ``progress.json`` a *checkpoint* after each unit in which it wrote a
shard: the shards written so far, each with the SHA-256 of its bytes taken when it was written,
the games they hold, and where the play stands (the first unit not wholly in them and how many
of its games are, with the tallies of the units before it). A stop adds a second checkpoint
that also holds the open shard as it stood (the partial last shard the stopped dataset's
manifest lists), so a resume reads its games back instead of playing them again. A resume takes
the latest checkpoint whose shards are all there with the bytes recorded (a file cut by a kill,
or written after the record, is not one of them) and plays on from it; the shards then come
out as an unbroken run writes them. The record goes when the dataset is complete.
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from brain.shipped import written_whole
from replay.dataset import schema as S
from replay.dataset.records import Block
from replay.dataset.shards import MANIFEST, read_shard, sha256
from replay.dataset.shards import PROGRESS as PROGRESS  # named here too, as it always was

PROGRESS_VERSION = 1


@dataclass
class Checkpoint:
    """A point a run can go on from: ``shards`` (manifest entries: file, decisions, hands,
    bytes, sha256) hold ``games`` games, every game before game ``skip`` of unit ``unit``;
    ``referee_errors`` and ``fallbacks`` (per policy, as the manifest gives them) are those of
    the units before ``unit``. ``open``: the open shard as it stood (its entry, ``games`` in it)
    when the run stopped; its games are the ones after ``shards`` up to ``unit``."""

    shards: list[dict[str, Any]] = field(default_factory=list)
    games: int = 0
    unit: int = 0
    skip: int = 0
    referee_errors: list[str] = field(default_factory=list)
    fallbacks: dict[str, dict[str, Any]] = field(default_factory=dict)
    open: dict[str, Any] | None = None
    open_games: int = 0
    external: dict[str, dict[str, Any]] = field(default_factory=dict)  # outside programs' faults

    def files(self) -> list[dict[str, Any]]:
        return [*self.shards, *([self.open] if self.open else [])]


def save_progress(out: Path, meta: dict[str, Any], checkpoints: list[Checkpoint]) -> None:
    """Replace the record (written beside it and renamed: a kill leaves the last one whole;
    a full disk leaves no half record beside it, and is said with the record's name)."""
    with written_whole(Path(out) / PROGRESS) as fh:
        fh.write((json.dumps({"progress_version": PROGRESS_VERSION, "meta": meta,
                              "checkpoints": [asdict(c) for c in checkpoints]},
                             indent=1, sort_keys=True) + "\n").encode())
        fh.flush()
        os.fsync(fh.fileno())  # a power cut after the rename leaves this record, not nothing


def drop_progress(out: Path) -> None:
    """The dataset is complete: no record is left beside it."""
    (Path(out) / PROGRESS).unlink(missing_ok=True)


def read_progress(out: Path) -> tuple[dict[str, Any], list[Checkpoint]] | None:
    """The recorded meta and checkpoints (latest last); None where there is no record.
    A record that cannot be read raises DatasetError naming it."""
    path = Path(out) / PROGRESS
    try:
        data = json.loads(path.read_text())
        checkpoints = [_checked(Checkpoint(**c)) for c in data["checkpoints"]]
        meta = data["meta"]
        if data.get("progress_version") != PROGRESS_VERSION or not isinstance(meta, dict):
            raise ValueError(f"progress_version {data.get('progress_version')!r}")
    except FileNotFoundError:
        return None
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise S.DatasetError(f"{path}: unreadable ({exc}); give another --out") from None
    return meta, checkpoints


_SHARD_FIELDS = {"file": str, "decisions": int, "hands": int, "bytes": int, "sha256": str}


def _checked(c: Checkpoint) -> Checkpoint:
    """``c`` if every field holds what a run writes there; ValueError naming the first that
    does not (a hand-edited record: one line, not a traceback where the field is used)."""
    def wrong(name: str, value: Any) -> ValueError:
        return ValueError(f"checkpoint {name} {value!r}")

    for name in ("games", "unit", "skip", "open_games"):
        value = getattr(c, name)
        if not isinstance(value, int) or isinstance(value, bool) or value < 0:
            raise wrong(name, value)
    if not isinstance(c.shards, list):
        raise wrong("shards", c.shards)
    if not isinstance(c.external, dict) or not all(
            isinstance(v, dict) for v in c.external.values()):
        raise wrong("external", c.external)
    if c.open is not None and not isinstance(c.open, dict):
        raise wrong("open", c.open)
    for entry in c.files():
        if not isinstance(entry, dict) or any(
                not isinstance(entry.get(key), kind) or isinstance(entry.get(key), bool)
                for key, kind in _SHARD_FIELDS.items()):
            raise wrong("shard", entry)
    if not isinstance(c.referee_errors, list) or not all(
            isinstance(e, str) for e in c.referee_errors):
        raise wrong("referee_errors", c.referee_errors)
    if not isinstance(c.fallbacks, dict) or not all(
            isinstance(v, dict) for v in c.fallbacks.values()):
        raise wrong("fallbacks", c.fallbacks)
    return c


def proved(out: Path, checkpoint: Checkpoint) -> bool:
    """Every shard the checkpoint names is there with the bytes it had when written."""
    for entry in checkpoint.files():
        path = Path(out) / entry["file"]
        try:
            if path.stat().st_size != entry["bytes"] or sha256(path) != entry["sha256"]:
                return False
        except OSError:
            return False
    return True


def latest_proved(out: Path, checkpoints: list[Checkpoint]) -> Checkpoint:
    """The latest checkpoint whose shards are all whole (the start where none is)."""
    for checkpoint in reversed(checkpoints):
        if proved(out, checkpoint):
            return checkpoint
    return Checkpoint()


def open_block(out: Path, checkpoint: Checkpoint) -> Block | None:
    """The open shard's games read back as one block (None where there is none)."""
    if checkpoint.open is None:
        return None
    entry = checkpoint.open
    return Block(read_shard(Path(out) / entry["file"], S.FIELDS, entry["bytes"]))


# what a run writes in its folder: anything else there is not its own
OWN_SUFFIXES = (".npz", ".npz.tmp")


def clear_for_resume(out: Path, checkpoint: Checkpoint) -> None:
    """Remove what the resumed run will write again: the manifest of the stopped run, shards
    past the checkpoint and the temporary files of a killed one."""
    keep = {entry["file"] for entry in checkpoint.files()} | {PROGRESS}
    for path in Path(out).iterdir():
        if path.name not in keep:
            path.unlink()


def foreign_files(out: Path) -> list[str]:
    """Files in ``out`` that no dataset run writes there (a resume refuses to clear them)."""
    own = {MANIFEST, MANIFEST + ".tmp", PROGRESS, PROGRESS + ".tmp"}
    return sorted(p.name for p in Path(out).iterdir()
                  if not (p.name in own or (p.name.startswith("shard-") and p.is_file()
                                            and p.name.endswith(OWN_SUFFIXES))))
