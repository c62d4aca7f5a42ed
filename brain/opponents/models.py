"""The three opponent heads of one variant, loaded from brain/data and asked once per decision.

``OpponentModels.load("riichi").estimate(state)`` gives, for the three other seats of the
state's viewer: P(tenpai), P(kind k completes its hand | tenpai) for the 34 kinds, and the
expected points the viewer pays if it deals a winning kind in (t_points of the datasets:
riichi points, MCR 8 + fan, Taiwan's payment). Seed 002's losing probability and expected loss
follow: ``LP = tenpai * wait``, ``EL = LP * value`` (:class:`OpponentEstimate`). The same call
on many rows (``estimate_inputs``) is what training and evaluation use, so the numbers the
model card reports are the ones play sees.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import cast

import numpy as np

from brain.opponents.features import KIND_NAMES, PUBLIC_NAMES, Features
from brain.opponents.net import Net, sigmoid
from brain.opponents.view import OpponentInputs
from brain.shipped import Packed, bad_zip_file, save_weights
from brain.state import TableState

DATA = Path(__file__).resolve().parent.parent / "data"
HEADS = ("tenpai", "wait", "value")


def model_path(variant: str) -> Path:
    return DATA / f"opponents_{variant}.npz"


@dataclass(frozen=True)
class OpponentEstimate:
    """Per (view, opponent) pair: ``seats`` the opponents' absolute seats (N,), ``tenpai`` (N,),
    ``wait`` (N, 34) P(kind completes the hand | tenpai), ``value`` (N, 34) expected points
    paid by the viewer on a deal-in of that kind, given it wins."""

    seats: np.ndarray
    tenpai: np.ndarray
    wait: np.ndarray
    value: np.ndarray

    def deal_in(self) -> np.ndarray:
        """LP(p, k) = P(p tenpai) * P(k wins for p): (N, 34)."""
        return cast(np.ndarray, self.tenpai[:, None] * self.wait)

    def expected_loss(self) -> np.ndarray:
        """EL(p, k) = LP(p, k) * HS(p, k): (N, 34) points."""
        return cast(np.ndarray, self.deal_in() * self.value)


class OpponentModels:
    """The tenpai, wait and value heads of one variant (see module docstring)."""

    def __init__(self, variant: str, heads: dict[str, Net], smear: float,
                 log_range: tuple[float, float], meta: dict[str, object]) -> None:
        self.variant = variant
        self.tenpai, self.wait, self.value = heads["tenpai"], heads["wait"], heads["value"]
        self.smear = smear  # E[exp(residual)]: log-space prediction -> expected points
        # log points seen in training: a prediction never leaves it (no extrapolated yakuman)
        self.log_range = log_range
        self.meta = meta

    # ------------------------------------------------------------------ persistence

    def save(self, path: str | Path) -> None:
        arrays: dict[str, np.ndarray] = {}
        for name in HEADS:
            arrays.update(getattr(self, name).to_arrays(name))
        arrays["value.smear"] = np.asarray(self.smear, np.float32)
        arrays["value.log_range"] = np.asarray(self.log_range, np.float32)
        meta = dict(self.meta, variant=self.variant, public_features=list(PUBLIC_NAMES),
                    kind_features=list(KIND_NAMES))
        arrays["meta"] = np.frombuffer(json.dumps(meta, sort_keys=True).encode(), np.uint8)
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        save_weights(path, arrays)

    @classmethod
    def from_file(cls, path: str | Path | Packed) -> OpponentModels:
        """The models of ``path``; ValueError in one line for a file that is not theirs (a
        corrupted or cut file, another model's .npz), FileNotFoundError for none."""
        shown = path if isinstance(path, str | Path) else getattr(path, "name", "the file")
        if isinstance(path, Packed):  # a Botzone bundle's (brain/shipped.py): a damaged one's
            arrays = path.arrays()  # ValueError names it and says to rebuild the bundle
        else:
            try:
                with np.load(path, allow_pickle=False) as data:
                    arrays = {k: data[k] for k in data.files}
            except FileNotFoundError:
                raise
            except (OSError, ValueError, EOFError, bad_zip_file()):  # numpy's words name no file
                raise ValueError(f"{shown} is not opponent models (the .npz "
                                 "that `mjbot models train` writes)") from None
        if "meta" not in arrays:
            raise ValueError(f"{shown} is not opponent models (no meta "
                             "entry)")
        meta = json.loads(arrays.pop("meta").tobytes().decode())
        if "public_features" not in meta and "format_version" in meta:
            raise ValueError("a network's weights (mjbot nn train), not opponent models "
                             "(mjbot models train)")
        if (meta.get("public_features") != list(PUBLIC_NAMES)
                or meta.get("kind_features") != list(KIND_NAMES)):
            raise ValueError(f"{path}: trained on other features than brain/opponents/"
                             "features.py computes; retrain (mjbot models train)")
        heads = {name: Net.from_arrays(arrays, name) for name in HEADS}
        lo, hi = (float(v) for v in arrays["value.log_range"])
        return cls(str(meta["variant"]), heads, float(arrays["value.smear"]), (lo, hi), meta)

    @staticmethod
    @cache
    def load(variant: str) -> OpponentModels:
        """The shipped weights of ``variant`` (brain/data/opponents_VARIANT.npz), cached."""
        path = model_path(variant)
        if not path.is_file():
            raise FileNotFoundError(f"no opponent models for {variant!r} ({path})")
        return OpponentModels.from_file(path)

    # ------------------------------------------------------------------ inference

    def estimate(self, state: TableState) -> OpponentEstimate:
        """The three other seats of ``state``'s viewer, next seat first."""
        return self.estimate_inputs(OpponentInputs.from_state(state))

    def estimate_inputs(self, inputs: OpponentInputs, b: np.ndarray | None = None,
                        o: np.ndarray | None = None) -> OpponentEstimate:
        """Any pairs (row b, opponent seat o); by default each row's three opponents."""
        f = Features(inputs, b, o)
        x, z = f.public(), f.kinds()
        return OpponentEstimate(f.o, self.tenpai_probability(x), self.wait_probability(x, z),
                                self.expected_value(x, z))

    def tenpai_probability(self, x: np.ndarray) -> np.ndarray:
        return sigmoid(self.tenpai.forward(x))

    def wait_probability(self, x: np.ndarray, z: np.ndarray) -> np.ndarray:
        return sigmoid(self.wait.forward(x, z))

    def expected_value(self, x: np.ndarray, z: np.ndarray) -> np.ndarray:
        raw = np.clip(self.value.forward(x, z), *self.log_range)
        return cast(np.ndarray, np.exp(raw) * self.smear)
