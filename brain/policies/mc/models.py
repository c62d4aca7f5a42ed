"""The opponent models the ``mc`` policy reads, found where a bot can find them.

The shipped weights (brain/data/opponents_VARIANT.npz) are found by
:func:`brain.shipped.shipped`: a file, or inside the Botzone zip the same bytes.
``directory`` (the ``models`` option) points at other weights, e.g. freshly trained ones.
Missing weights raise at once, naming what to do: ``mc`` never plays with a made-up model.
"""

from __future__ import annotations

from pathlib import Path

from brain.opponents.models import OpponentModels
from brain.shipped import shipped

_LOADED: dict[tuple[str, str], OpponentModels] = {}
_READS = [0]  # weights read from disk by this process (distributed runs report it per worker)


class MissingModels(FileNotFoundError):
    """No opponent model weights for the variant: ``mc`` cannot play it."""


def load_models(variant: str, directory: str = "") -> OpponentModels:
    key = (variant, directory)
    if key not in _LOADED:
        _LOADED[key] = _load(variant, directory)
        _READS[0] += 1
    return _LOADED[key]


def weight_reads() -> int:
    """How many times this process has read opponent-model weights: once per variant and
    directory, however many games it plays (the cache above)."""
    return _READS[0]


def _load(variant: str, directory: str) -> OpponentModels:
    name = f"opponents_{variant}.npz"
    if directory:
        path = Path(directory) / name
        if not path.is_file():
            # models=FILE (as nn@FILE names its weights) read as FILE/opponents_....npz
            given = (f" ({directory} is a file: models= names the folder that holds {name})"
                     if Path(directory).is_file() else "")
            raise MissingModels(f"mc: no opponent models for {variant!r} at {path}{given}")
        return _checked(OpponentModels.from_file(path), variant)
    source = shipped(name)
    if source is None:
        raise MissingModels(
            f"mc: no opponent models for {variant!r} (brain/data/{name}); train them with "
            f"`mjbot models train --variant {variant}` or point MJBOT_MC=models=DIR at them")
    return _checked(OpponentModels.from_file(source), variant)  # type: ignore[arg-type]


def _checked(models: OpponentModels, variant: str) -> OpponentModels:
    if models.variant != variant:
        raise MissingModels(f"mc: the {variant!r} weights hold {models.variant!r} models")
    return models
