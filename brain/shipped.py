"""The weights shipped in brain/data, found wherever the package lives: a file in a checkout
or an install, bytes read through the import system inside a zip (the Botzone upload), where
there is no file path to open."""

from __future__ import annotations

import io
import pkgutil
from pathlib import Path

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
