"""The weights shipped in brain/data, found wherever the package lives: a file in a checkout
or an install, bytes read through the import system inside a zip (the Botzone upload), where
there is no file path to open.

The Botzone zip carries them packed (:func:`pack_arrays`: plain ``.npy`` records one after
the other), not as the ``.npz`` itself: an ``.npz`` is a zip, and np.load of one imported
zipfile (with pathlib, shutil, bz2, lzma), about 8 ms of CPU in every one-shot turn of an
``mc`` or ``nn`` bot (`mjbot bench botstart --policy mc`), where nothing else needs it."""

from __future__ import annotations

import contextlib
import io
import json
import os
import pkgutil
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np

DATA = Path(__file__).resolve().parent / "data"
PACKED_SUFFIX = ".arrays"  # an .npz's arrays as a bundle carries them: name.npz -> name.arrays


class Packed:
    """An ``.npz``'s arrays as :func:`pack_arrays` wrote them (read with :meth:`arrays`)."""

    def __init__(self, data: bytes, name: str) -> None:
        self.data = data
        self.name = name  # brain/data/NAME.arrays, for what a damaged one is called

    def arrays(self) -> dict[str, np.ndarray]:
        """The arrays by name, as the ``.npz`` held them; ValueError naming the member for
        one damaged or cut (its CRC-32 is checked, head and records, before any is read:
        zipimport checks none)."""
        packed, crc = self.data[:-4], self.data[-4:]
        try:
            if len(self.data) < 4 or zlib.crc32(packed) != int.from_bytes(crc, "little"):
                raise ValueError("its CRC-32 does not match")
            f = io.BytesIO(packed)
            head = json.loads(np.load(f, allow_pickle=False).tobytes().decode())
            return {str(name): np.load(f, allow_pickle=False) for name in head["names"]}
        except (ValueError, EOFError, KeyError, TypeError, UnicodeDecodeError) as exc:
            raise ValueError(f"{self.name} is damaged ({exc}): rebuild the bundle") from None


def bad_zip_file() -> type[Exception]:
    """zipfile.BadZipFile, imported only when an except clause asks for it (an error is
    being matched): the loaders' top-level `import zipfile` was paid in every Botzone turn."""
    import zipfile

    return zipfile.BadZipFile


def pack_arrays(path: str | Path) -> bytes:
    """The arrays of the ``.npz`` at ``path`` as plain ``.npy`` records, a JSON head first
    (their names), and last the CRC-32 of all before it (4 bytes, little-endian; it covered
    the records alone, so that a damaged head read names wrong or failed in numpy's header
    parser, outside the errors caught): read back without zipfile."""
    with np.load(path, allow_pickle=False) as npz:
        arrays = {k: npz[k] for k in npz.files}
    body = io.BytesIO()
    for array in arrays.values():
        np.save(body, array, allow_pickle=False)
    head = io.BytesIO()
    np.save(head, np.frombuffer(json.dumps({"names": list(arrays)}).encode(), dtype=np.uint8))
    packed = head.getvalue() + body.getvalue()
    return packed + zlib.crc32(packed).to_bytes(4, "little")


def packed_name(name: str) -> str:
    """The member a bundle carries ``name`` (X.npz) packed as, X.arrays: one mapping for the
    bundle that writes it (adapter/platforms/botzone_bundle.py) and :func:`shipped` that
    reads it."""
    return name.removesuffix(".npz") + PACKED_SUFFIX


def shipped(name: str) -> Path | io.BytesIO | Packed | None:
    """brain/data/NAME as a path or, inside a zip, as bytes (packed by :func:`pack_arrays`
    where the bundle carries it so); None where it is not shipped."""
    path = DATA / name
    if path.is_file():
        return path
    for member in [packed_name(name), name] if name.endswith(".npz") else [name]:
        try:
            data = pkgutil.get_data("brain", f"data/{member}")
        except OSError:
            continue
        if data:
            return Packed(data, f"brain/data/{member}") if member != name else io.BytesIO(data)
    return None


def save_weights(path: str | Path, arrays: dict[str, Any]) -> None:
    """``arrays`` compressed into ``path``, whole or not at all (:func:`written_whole`): a
    shipped model or the last generation is never left half overwritten."""
    with written_whole(path) as fh:
        np.savez_compressed(fh, **arrays)


@contextlib.contextmanager
def written_whole(path: str | Path, tmp: Path | None = None) -> Iterator[BinaryIO]:
    """A file to write ``path`` through: written beside it and renamed at the end, so a full
    disk or a Ctrl-C while writing leaves the file that was there as it was and no half file
    under its name. An OSError names ``path`` (what the user gave), so the command can say it
    in one line. ``tmp``: the name written first (``PATH.tmp``), a writer's own where two
    may write ``path`` at once (a Ray unit retried while its first try still runs)."""
    path = Path(path)
    tmp = path.with_name(path.name + ".tmp") if tmp is None else tmp
    try:
        with open(tmp, "wb") as fh:
            yield fh
        os.replace(tmp, path)
    except BaseException as exc:
        with contextlib.suppress(OSError):
            tmp.unlink()
        if isinstance(exc, OSError):
            raise OSError(exc.errno, exc.strerror, str(path)) from None
        raise
