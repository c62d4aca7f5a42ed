"""One small network shape for all three opponent heads, in plain numpy.

``out = w2 . relu(zs Wz + xs Wx + b1) + b2`` where ``xs`` is the standardised per-opponent
vector and ``zs`` the standardised per-kind vector (absent for the tenpai head). The per-kind
heads add ``xs Wx`` once per opponent and broadcast it over the 34 kinds, so a decision costs
one (3 x F) product and one (102 x Fz) product. ``hidden = 0`` is a linear model (logistic
regression for the classifiers), the paper's own choice; the trainer picks either.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import cast

import numpy as np


@dataclass
class Net:
    """Weights of one head; arrays are float32 (float64 while training)."""

    x_mean: np.ndarray  # (Fx,)
    x_scale: np.ndarray  # (Fx,) 1 / std
    wx: np.ndarray  # (Fx, H) or (Fx, 1) when linear
    b1: np.ndarray  # (H,) or (1,)
    w2: np.ndarray  # (H,) ; empty when linear
    b2: np.ndarray  # () output bias
    z_mean: np.ndarray | None = None  # (Fz,)
    z_scale: np.ndarray | None = None
    wz: np.ndarray | None = None  # (Fz, H)

    def __post_init__(self) -> None:
        for name in _WEIGHTS:
            a = getattr(self, name)
            if a is not None:
                setattr(self, name, flush_subnormals(a))

    @property
    def linear(self) -> bool:
        return self.w2.size == 0

    def pre(self, x: np.ndarray, z: np.ndarray | None = None) -> np.ndarray:
        """First layer: (N, H) without z, (N, K, H) with z of shape (N, K, Fz)."""
        a = cast(np.ndarray, ((x - self.x_mean) * self.x_scale) @ self.wx + self.b1)
        if z is None or self.wz is None:
            return a
        assert self.z_mean is not None and self.z_scale is not None
        zs = (z - self.z_mean) * self.z_scale
        return cast(np.ndarray, zs @ self.wz + a[:, None, :])

    def forward(self, x: np.ndarray, z: np.ndarray | None = None) -> np.ndarray:
        """The raw output (a logit, or the regression value): (N,) or (N, K)."""
        pre = self.pre(x, z)
        if self.linear:
            return cast(np.ndarray, pre[..., 0] + self.b2)
        return cast(np.ndarray, np.maximum(pre, 0) @ self.w2 + self.b2)

    def to_arrays(self, prefix: str) -> dict[str, np.ndarray]:
        out = {f"{prefix}.{name}": np.asarray(getattr(self, name), np.float32)
               for name in ("x_mean", "x_scale", "wx", "b1", "w2", "b2")}
        if self.wz is not None:
            for name in ("z_mean", "z_scale", "wz"):
                out[f"{prefix}.{name}"] = np.asarray(getattr(self, name), np.float32)
        return out

    @classmethod
    def from_arrays(cls, arrays: dict[str, np.ndarray], prefix: str) -> Net:
        def get(name: str) -> np.ndarray | None:
            key = f"{prefix}.{name}"
            return np.asarray(arrays[key], np.float32) if key in arrays else None

        parts = {n: get(n) for n in ("x_mean", "x_scale", "wx", "b1", "w2", "b2", "z_mean",
                                     "z_scale", "wz")}
        missing = [n for n in ("x_mean", "x_scale", "wx", "b1", "w2", "b2") if parts[n] is None]
        if missing:
            raise ValueError(f"opponent model: {prefix}.{missing[0]} missing")
        return cls(**parts)  # type: ignore[arg-type]


_WEIGHTS = ("x_mean", "x_scale", "wx", "b1", "w2", "b2", "z_mean", "z_scale", "wz")


def flush_subnormals(a: np.ndarray) -> np.ndarray:
    """``a`` with its subnormal values (nonzero, below the dtype's smallest normal number:
    1.2e-38 for float32) made 0. Training with weight decay leaves many weights there (the
    shipped taiwan16 value head: 767 of its 1632 ``wz``), and a product with a subnormal
    operand runs many times slower on x86: the value head's first layer over 139,264 rows
    took 0.96 s against 0.03 s once flushed. Against weights of ordinary size such a value
    changes no float32 sum, so the outputs stay the same. Anything else is returned as is."""
    if not np.issubdtype(np.asarray(a).dtype, np.floating):
        return a
    tiny = np.finfo(a.dtype).tiny
    small = np.abs(a) < tiny
    if not small.any():
        return a
    return np.where(small, np.zeros((), a.dtype), a)


def sigmoid(x: np.ndarray) -> np.ndarray:
    return 0.5 * (1.0 + np.tanh(0.5 * x))
