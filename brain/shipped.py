"""The weights shipped in brain/data, found wherever the package lives: a file in a checkout
or an install, bytes read through the import system inside a zip (the Botzone upload), where
there is no file path to open."""

from __future__ import annotations

import contextlib
import io
import os
import pkgutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np

DATA = Path(__file__).resolve().parent / "data"


def shipped(name: str) -> Path | io.BytesIO | None:
    """brain/data/NAME as a path or, inside a zip, as bytes; None where it is not shipped."""
    path = DATA / name
    if path.is_file():
        return path
    try:
        data = pkgutil.get_data("brain", f"data/{name}")
    except OSError:
        return None
    return io.BytesIO(data) if data else None


def save_weights(path: str | Path, arrays: dict[str, Any]) -> None:
    """``arrays`` compressed into ``path``, whole or not at all (:func:`written_whole`): a
    shipped model or the last generation is never left half overwritten."""
    with written_whole(path) as fh:
        np.savez_compressed(fh, **arrays)


@contextlib.contextmanager
def written_whole(path: str | Path) -> Iterator[BinaryIO]:
    """A file to write ``path`` through: written beside it and renamed at the end, so a full
    disk or a Ctrl-C while writing leaves the file that was there as it was and no half file
    under its name. An OSError names ``path`` (what the user gave), so the command can say it
    in one line."""
    path = Path(path)
    tmp = path.with_name(path.name + ".tmp")
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
