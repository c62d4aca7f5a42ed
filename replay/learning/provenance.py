"""What a trained weights file records about its inputs: their names, never machine paths.

Weight files ship in the package (brain/data) and travel in the Botzone zip. A path such as
``/tmp/nn-data/mcr1`` says nothing on another machine and shows one engineer's disk layout;
the folder or file name (``mcr1``, ``gen2.npz``) is what the model cards' commands use, so
that is what the trainers write.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path, PurePath


def portable_name(path: str | PurePath) -> str:
    """The last part of ``path`` (``/work/exp2/gen2.npz`` -> ``gen2.npz``, ``C:\\d\\x`` ->
    ``x``); ``.`` and ``..`` are resolved first so they name the folder; ``""`` stays ``""``
    (no file given)."""
    text = str(path)
    if not text:
        return ""
    name = re.split(r"[\\/]", text.rstrip("\\/"))[-1]
    if name in ("", ".", ".."):
        name = Path(text).resolve().name
    return name or "."


def portable_names(paths: Iterable[str | PurePath]) -> list[str]:
    """:func:`portable_name` of each path, in order."""
    return [portable_name(p) for p in paths]
