"""The residual 1-D convolutional network over the 34 kinds, forward pass in numpy only.

Architecture (Suphx / Mortal style, small enough for a few ms on one core)::

    planes (C, 34) -> conv3 (F) -> ReLU -> B x [conv3 -> ReLU -> conv3 -> + skip -> ReLU]
      -> policy: conv1x1 (4 per-kind heads, 4 x 34) ++ dense on the flattened trunk (9 scalar
         heads) = 145 logits (brain/nn/heads.py)
      -> value: dense (flattened trunk -> H) -> ReLU -> dense (1): the hand's expected score
         change of the decider, in units of ``meta["value_scale"]`` points (riichi 10,000)

Convolutions are kernel 3 with zero padding of 1 (kernel 1 for the per-kind heads), as
torch.nn.Conv1d computes them: ``out[f, t] = b[f] + sum_{c, j} w[f, c, j] * x[c, t + j - 1]``.
The weights are plain arrays in an ``.npz`` (names in :data:`PARAM_NAMES`) with a JSON ``meta``
entry; replay/learning/nn/train.py writes them from the torch model with the same names and layout.
"""

from __future__ import annotations

import json
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

import numpy as np

from brain.nn.encoding import ENCODING_VERSION, MCR_PLAN_ENCODING, NUM_PLANES, num_planes
from brain.nn.heads import KINDS, NUM_ACTIONS, PER_KIND_HEADS, SCALAR_HEADS
from brain.shipped import Packed, bad_zip_file, save_weights, shipped

FORMAT_VERSION = 1


class MissingNetwork(FileNotFoundError):
    """No network weights for the variant (or weights of another variant or encoding)."""


@dataclass(frozen=True)
class Shape:
    """What the weights' arrays must look like."""

    planes: int = NUM_PLANES
    channels: int = 64
    blocks: int = 4
    value_hidden: int = 64


def param_shapes(shape: Shape) -> dict[str, tuple[int, ...]]:
    """Every array of a network, by name: torch's Conv1d / Linear layouts (out first)."""
    c, f, flat = shape.planes, shape.channels, shape.channels * KINDS
    shapes: dict[str, tuple[int, ...]] = {"stem.weight": (f, c, 3), "stem.bias": (f,)}
    for i in range(shape.blocks):
        for j in (1, 2):
            shapes[f"blocks.{i}.conv{j}.weight"] = (f, f, 3)
            shapes[f"blocks.{i}.conv{j}.bias"] = (f,)
    shapes.update({
        "kind_head.weight": (PER_KIND_HEADS, f, 1), "kind_head.bias": (PER_KIND_HEADS,),
        "scalar_head.weight": (SCALAR_HEADS, flat), "scalar_head.bias": (SCALAR_HEADS,),
        "value1.weight": (shape.value_hidden, flat), "value1.bias": (shape.value_hidden,),
        "value2.weight": (1, shape.value_hidden), "value2.bias": (1,),
    })
    return shapes


def _conv3(x: np.ndarray, w2: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Kernel-3 convolution with padding 1 of ``x`` (N, C, 34); ``w2``: (F, 3C) (see
    :meth:`Network.__init__`)."""
    n, c, length = x.shape
    xp = np.zeros((n, c, length + 2), dtype=x.dtype)
    xp[:, :, 1:-1] = x
    cols = np.stack([xp[:, :, 0:length], xp[:, :, 1:length + 1], xp[:, :, 2:length + 2]],
                    axis=2).reshape(n, 3 * c, length)
    return cast(np.ndarray, np.matmul(w2, cols) + b[None, :, None])


class Network:
    """The numpy network. ``params``: arrays named as :func:`param_shapes`; ``meta``: what
    the weights file says about itself (variant, versions, training run)."""

    def __init__(self, params: dict[str, np.ndarray], meta: dict[str, Any]) -> None:
        self.meta = meta
        self.shape = Shape(int(meta["planes"]), int(meta["channels"]), int(meta["blocks"]),
                           int(meta["value_hidden"]))
        expected = param_shapes(self.shape)
        for name, want in expected.items():
            got = params.get(name)
            if got is None or tuple(got.shape) != want:
                raise MissingNetwork(f"nn: weights array {name!r} is "
                                     f"{None if got is None else tuple(got.shape)}, "
                                     f"expected {want}")
        p = {k: np.ascontiguousarray(v, dtype=np.float32) for k, v in params.items()
             if k in expected}
        self.params = p

        def w2(name: str) -> np.ndarray:
            w = p[name]
            return np.ascontiguousarray(w.reshape(w.shape[0], -1))

        self._stem = (w2("stem.weight"), p["stem.bias"])
        self._blocks = [((w2(f"blocks.{i}.conv1.weight"), p[f"blocks.{i}.conv1.bias"]),
                         (w2(f"blocks.{i}.conv2.weight"), p[f"blocks.{i}.conv2.bias"]))
                        for i in range(self.shape.blocks)]
        self._kind = (p["kind_head.weight"][:, :, 0], p["kind_head.bias"])

    @property
    def variant(self) -> str:
        return str(self.meta.get("variant", ""))

    @property
    def encoding(self) -> int:
        """The encoding version its inputs must be made with (:func:`brain.nn.encoding.encode`)."""
        return int(self.meta.get("encoding_version", ENCODING_VERSION))

    def forward(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``x``: (N, planes, 34) or (planes, 34). Logits (N, 145) and values (N,) (no batch
        axis in, none out)."""
        single = x.ndim == 2
        h = np.asarray(x, dtype=np.float32)
        if single:
            h = h[None]
        h = np.maximum(_conv3(h, *self._stem), 0.0)
        for (w1, b1), (w2, b2) in self._blocks:
            y = np.maximum(_conv3(h, w1, b1), 0.0)
            h = np.maximum(_conv3(y, w2, b2) + h, 0.0)
        p = self.params
        kw, kb = self._kind
        per_kind = (np.matmul(kw, h) + kb[None, :, None]).reshape(h.shape[0], -1)
        flat = h.reshape(h.shape[0], -1)
        scalar = flat @ p["scalar_head.weight"].T + p["scalar_head.bias"]
        logits = np.concatenate([per_kind, scalar], axis=1)
        hidden = np.maximum(flat @ p["value1.weight"].T + p["value1.bias"], 0.0)
        value = (hidden @ p["value2.weight"].T + p["value2.bias"])[:, 0]
        assert logits.shape[1] == NUM_ACTIONS
        if single:
            return logits[0], value[0]
        return logits, value

    # ------------------------------------------------------------------ files

    def save(self, path: str | Path) -> None:
        arrays = dict(self.params)
        arrays["meta"] = np.frombuffer(json.dumps(self.meta, sort_keys=True).encode(),
                                       dtype=np.uint8)
        save_weights(path, arrays)

    @classmethod
    def from_file(cls, source: Any, variant: str | None = None) -> Network:
        """Read weights (a path or a binary file object); refuse another variant or another
        encoding version with :class:`MissingNetwork`."""
        name = getattr(source, "name", source)  # a path or an open file: what the user gave
        if isinstance(source, Packed):  # a Botzone bundle's (brain/shipped.py)
            try:
                arrays = source.arrays()
            except ValueError as exc:  # its own words: which member, damaged, rebuild the bundle
                raise MissingNetwork(f"nn: {exc}") from None
        else:
            try:
                with np.load(source, allow_pickle=False) as data:
                    arrays = {k: data[k] for k in data.files}
            except FileNotFoundError:
                raise
            except (OSError, ValueError, EOFError, TypeError, AttributeError, bad_zip_file(),
                    zlib.error):
                # numpy's own words ("pickled data", "cannot load file", an .npy array without
                # `with`) say nothing of what the user handed in: name it. zlib.error: a member
                # whose compressed bytes were damaged (a bad copy, a bad disk) fails to inflate
                raise MissingNetwork(f"nn: {name} is not a weights file (the .npz that `mjbot "
                                     "nn train` writes)") from None
        if "meta" not in arrays:
            raise MissingNetwork(f"nn: {name} has no meta entry (not the .npz that `mjbot nn "
                                 "train` writes)")
        try:  # damaged or foreign bytes: json's own words name neither the file nor the entry
            meta = json.loads(arrays.pop("meta").tobytes().decode())
        except (UnicodeDecodeError, ValueError):
            meta = None
        if not isinstance(meta, dict):
            raise MissingNetwork(f"nn: {name}: its meta entry is not the JSON object `mjbot "
                                 "nn train` writes (a damaged or foreign file)")
        if "format_version" not in meta:  # another model's .npz: say which, where it is known
            kind = (" (it holds opponent models: mjbot models train)"
                    if "public_features" in meta else "")
            raise MissingNetwork(f"nn: {name} is not a network's weights (the .npz that "
                                 f"`mjbot nn train` writes){kind}")
        if meta.get("format_version") != FORMAT_VERSION:
            raise MissingNetwork(f"nn: weights format {meta.get('format_version')}, this "
                                 f"code reads {FORMAT_VERSION}")
        version = meta.get("encoding_version")
        try:
            planes = num_planes(version) if isinstance(version, int) else -1
        except ValueError:
            planes = -1
        if planes < 0:
            raise MissingNetwork(f"nn: weights trained on encoding {version}, this code "
                                 f"encodes {ENCODING_VERSION} and {MCR_PLAN_ENCODING}; retrain "
                                 f"with `mjbot nn train`")
        if meta.get("planes") != planes:
            raise MissingNetwork(f"nn: weights of {meta.get('planes')} planes, encoding "
                                 f"{version} has {planes}")
        if variant is not None and meta.get("variant") != variant:
            raise MissingNetwork(f"nn: the weights are for {meta.get('variant')!r}, not "
                                 f"{variant!r}")
        network = cls(_checked_arrays(name, arrays, meta), meta)
        bad = network.non_finite()
        if bad:
            raise MissingNetwork(f"nn: {name}: {bad} holds values that are not finite "
                                 "numbers (a diverged training run)")
        return network

    def non_finite(self) -> str:
        """The first parameter holding a NaN or an infinity ('' where there is none): such
        a network answers garbage, so it is neither written nor played."""
        return next((name for name, value in self.params.items()
                     if not np.isfinite(value).all()), "")


def _checked_arrays(name: Any, arrays: dict[str, np.ndarray], meta: dict[str, Any]
                    ) -> dict[str, np.ndarray]:
    """``arrays`` read from the file ``name``, once its meta gives a shape and each array that
    shape wants is there, of that shape, of floating-point numbers: a damaged or foreign file
    (a meta without its sizes, a member missing, of another shape, of strings) is refused in
    one line naming it, where int() or numpy's cast raised a traceback of their own words."""
    sizes = {k: meta.get(k) for k in ("channels", "blocks", "value_hidden")}
    for key, value in sizes.items():
        if not isinstance(value, int) or isinstance(value, bool) or value < (
                0 if key == "blocks" else 1):
            raise MissingNetwork(f"nn: {name}: its meta gives {key} {value!r}, not a count "
                                 "(a damaged or foreign file)")
    shape = Shape(int(meta["planes"]), int(meta["channels"]), int(meta["blocks"]),
                  int(meta["value_hidden"]))
    for key, want in param_shapes(shape).items():
        got = arrays.get(key)
        if got is None:
            raise MissingNetwork(f"nn: {name}: no array {key!r} (a damaged or foreign file)")
        if tuple(got.shape) != want:
            raise MissingNetwork(f"nn: {name}: array {key!r} is {tuple(got.shape)}, "
                                 f"expected {want} (a damaged or foreign file)")
        if got.dtype.kind != "f":
            raise MissingNetwork(f"nn: {name}: array {key!r} holds {got.dtype}, not "
                                 "floating-point numbers (a damaged or foreign file)")
    return arrays


def new_meta(variant: str, shape: Shape, encoding: int = ENCODING_VERSION,
             **extra: Any) -> dict[str, Any]:
    """The ``meta`` of a weights file of this code's format, inputs of encoding ``encoding``."""
    return {"format_version": FORMAT_VERSION, "encoding_version": encoding,
            "variant": variant, "planes": shape.planes, "channels": shape.channels,
            "blocks": shape.blocks, "value_hidden": shape.value_hidden, **extra}


def random_network(variant: str, shape: Shape = Shape(), seed: int = 0,
                   encoding: int = ENCODING_VERSION) -> Network:
    """A network with seeded random weights (He-scaled): for tests and the benchmark's timing,
    never for play (the ``nn`` policy only loads trained weights). ``shape.planes`` must be
    ``num_planes(encoding)``."""
    rng = np.random.default_rng(seed)
    params = {}
    for name, dims in param_shapes(shape).items():
        fan_in = int(np.prod(dims[1:])) if len(dims) > 1 else 1
        scale = np.sqrt(2.0 / fan_in) if name.endswith("weight") else 0.01
        params[name] = (rng.standard_normal(dims) * scale).astype(np.float32)
    return Network(params, new_meta(variant, shape, encoding, trained=False))


# ---------------------------------------------------------------------- shipped weights

_LOADED: dict[tuple[str, str], Network] = {}


def weights_name(variant: str) -> str:
    return f"nn_{variant}.npz"


def load_network(variant: str, path: str = "") -> Network:
    """The network for ``variant``: ``path`` when given (``variant`` "": whatever variant the
    file holds), else the shipped brain/data/nn_VARIANT.npz (read through pkgutil inside a zip
    bundle). Cached."""
    key = (variant, path)
    if key not in _LOADED:
        _LOADED[key] = _load(variant, path)
    return _LOADED[key]


def _load(variant: str, path: str) -> Network:
    if path:
        if not Path(path).is_file():
            raise MissingNetwork(f"nn: no weights file at {path}")
        return Network.from_file(path, variant or None)
    source = shipped(weights_name(variant))
    if source is None:
        raise MissingNetwork(
            f"nn: no network weights for {variant!r} (brain/data/{weights_name(variant)}); "
            f"train them with `mjbot nn train --variant {variant} --data DIR --out FILE` and "
            f"point MJBOT_NN_WEIGHTS=FILE at them")
    return Network.from_file(source, variant)
