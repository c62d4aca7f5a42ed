"""Fitting the three heads of brain/opponents with our own numpy gradient descent.

Each head is a :class:`~brain.opponents.net.Net` trained by minibatch Adam with L2 decay and a
cosine learning-rate schedule; a tenth of the hands is held out and the epoch with the best
held-out loss is kept (early stopping without a second pass). The tenpai and wait heads
minimise the log loss, the value head the squared error of log points; its expected points
are ``exp(prediction) * smear`` with Duan's smearing factor (the mean of exp(residual) on the
training rows), so the exponent of a log-space fit is not read as a mean. Everything is seeded:
the same data and seed give the same weights.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, replace
from typing import Any, cast

import numpy as np

from brain.opponents.models import OpponentModels
from brain.opponents.net import Net, sigmoid
from brain.rules.variant import variant_of
from replay.learning.opponents.data import OpponentData
from replay.learning.provenance import portable_names


@dataclass(frozen=True)
class HeadConfig:
    hidden: int = 32  # 0: a linear model
    epochs: int = 12
    batch: int = 512
    lr: float = 2e-3
    l2: float = 1e-5


@dataclass(frozen=True)
class TrainConfig:
    """Sizes and decay chosen on self-play held out by wall seed (brain/data/
    opponent_models.md lists the runs): rows of one wall are near copies of each other, so an
    unregularised net learns deals by heart within two epochs; the L2 decay keeps it
    general."""

    seed: int = 0
    tenpai: HeadConfig = HeadConfig(hidden=32, epochs=6, l2=3e-3)
    wait: HeadConfig = HeadConfig(hidden=32, epochs=6, l2=1e-3)
    value: HeadConfig = HeadConfig(hidden=32, epochs=8, l2=1e-2)
    valid_share: float = 0.1


def config_for(variant: str, seed: int = 0) -> TrainConfig:
    """The defaults, with MCR's tenpai head decayed harder: its ready hands show less on the
    table (no riichi, few calls), and the weaker decay fits the training walls instead
    (held-out AUC 0.871 against 0.882)."""
    cfg = TrainConfig(seed=seed)
    if variant_of(variant).quiet_tenpai:
        cfg = replace(cfg, tenpai=HeadConfig(hidden=32, epochs=8, l2=1e-2))
    return cfg


STD_FLOOR = 0.2  # a rare 0/1 feature is scaled by at most 5: a net trained on self-play
# must not read a meld pattern it saw twice as twenty standard deviations on human games


def _scale(a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Column means and 1/max(std, STD_FLOOR) over rows (float64 sums)."""
    flat = a.reshape(-1, a.shape[-1])
    mean = np.zeros(flat.shape[1])
    sq = np.zeros(flat.shape[1])
    for lo in range(0, flat.shape[0], 65536):
        block = flat[lo:lo + 65536].astype(np.float64)
        mean += block.sum(0)
        sq += (block ** 2).sum(0)
    n = max(flat.shape[0], 1)
    mean /= n
    std = np.sqrt(np.maximum(sq / n - mean ** 2, 0))
    return mean.astype(np.float32), (1 / np.maximum(std, STD_FLOOR)).astype(np.float32)


class _Head:
    """Parameters and Adam state of one Net during training."""

    NAMES = ("wx", "wz", "b1", "w2", "b2")

    def __init__(self, fx: int, fz: int, cfg: HeadConfig, rng: np.random.Generator,
                 x_stats: tuple[np.ndarray, np.ndarray],
                 z_stats: tuple[np.ndarray, np.ndarray] | None) -> None:
        h = max(cfg.hidden, 1)
        fan_in = fx + fz
        linear = cfg.hidden == 0
        std = 0.0 if linear else np.sqrt(2.0 / fan_in)
        self.p: dict[str, np.ndarray] = {
            "wx": (rng.standard_normal((fx, h)) * std).astype(np.float32),
            "wz": (rng.standard_normal((fz, h)) * std).astype(np.float32),
            "b1": np.zeros(h, np.float32),
            "w2": (np.zeros(0, np.float32) if linear
                   else (rng.standard_normal(h) / np.sqrt(h)).astype(np.float32)),
            "b2": np.zeros((), np.float32),
        }
        self.m = {k: np.zeros_like(v) for k, v in self.p.items()}
        self.v = {k: np.zeros_like(v) for k, v in self.p.items()}
        self.t = 0
        self.linear = linear
        self.has_z = fz > 0
        self.x_stats, self.z_stats = x_stats, z_stats

    def net(self) -> Net:
        p = {k: v.copy() for k, v in self.p.items()}
        z_mean, z_scale = self.z_stats if self.has_z and self.z_stats else (None, None)
        return Net(self.x_stats[0], self.x_stats[1], p["wx"], p["b1"], p["w2"], p["b2"],
                   z_mean, z_scale, p["wz"] if self.has_z else None)

    def step(self, xs: np.ndarray, zs: np.ndarray | None, y: np.ndarray, loss: str,
             lr: float, l2: float) -> float:
        """One Adam step on standardised inputs; returns the batch loss."""
        p = self.p
        a = xs @ p["wx"] + p["b1"]
        pre = a if zs is None else zs @ p["wz"] + a[:, None, :]
        if self.linear:
            h = None
            out = pre[..., 0] + p["b2"]
        else:
            h = np.maximum(pre, 0)
            out = h @ p["w2"] + p["b2"]
        count = out.size
        if loss == "logistic":
            value = float(np.mean(np.logaddexp(0, out) - y * out))
            dout = (sigmoid(out) - y) / count
        else:
            value = float(np.mean((out - y) ** 2) / 2)
            dout = (out - y) / count
        g: dict[str, np.ndarray] = {"b2": np.asarray(dout.sum(), np.float32)}
        if self.linear:
            dpre = dout[..., None]
            g["w2"] = p["w2"]
        else:
            assert h is not None
            g["w2"] = (h.reshape(-1, h.shape[-1]).T @ dout.reshape(-1)) + l2 * p["w2"]
            dpre = (dout[..., None] * p["w2"]) * (pre > 0)
        if zs is None:
            da = dpre
            g["wz"] = np.zeros_like(p["wz"])
        else:
            hdim = dpre.shape[-1]
            g["wz"] = zs.reshape(-1, zs.shape[-1]).T @ dpre.reshape(-1, hdim) + l2 * p["wz"]
            da = dpre.sum(1)
        g["wx"] = xs.T @ da + l2 * p["wx"]
        g["b1"] = np.zeros_like(p["b1"]) if self.linear else da.sum(0)
        self.t += 1
        b1c, b2c = 1 - 0.9 ** self.t, 1 - 0.999 ** self.t
        for k in self.NAMES:
            gk = np.asarray(g[k], np.float32)
            self.m[k] = 0.9 * self.m[k] + 0.1 * gk
            self.v[k] = 0.999 * self.v[k] + 0.001 * gk * gk
            p[k] = (p[k] - lr * (self.m[k] / b1c) / (np.sqrt(self.v[k] / b2c) + 1e-8)
                    ).astype(np.float32)
        return value


def _standardise(a: np.ndarray, stats: tuple[np.ndarray, np.ndarray]) -> np.ndarray:
    return cast(np.ndarray, (a.astype(np.float32) - stats[0]) * stats[1])


def fit_head(x: np.ndarray, y: np.ndarray, cfg: HeadConfig, loss: str, seed: int,
             z: np.ndarray | None = None,
             valid: tuple[np.ndarray, np.ndarray, np.ndarray | None] | None = None,
             log: list[dict[str, Any]] | None = None) -> Net:
    """Train one head. ``x`` (N, Fx); ``z`` (N, K, Fz) or None; ``y`` (N,) or (N, K);
    ``valid`` = (x, y, z) held out. The epoch with the lowest held-out loss is returned;
    with no held-out row (none given, or the held-out hands hold none of this head's: few
    hands) the last epoch, its held-out loss logged as None (it read 0.0, and the first
    epoch, 'best' at 0.0, was the one returned)."""
    if valid is not None and not len(valid[0]):
        valid = None
    rng = np.random.default_rng(seed)
    x_stats = _scale(x)
    z_stats = _scale(z) if z is not None else None
    head = _Head(x.shape[1], 0 if z is None else z.shape[-1], cfg, rng, x_stats, z_stats)
    head.p["b2"] = np.asarray(_base_output(y, loss), np.float32)
    best: tuple[float | None, Net] | None = None
    n = x.shape[0]
    for epoch in range(cfg.epochs):
        lr = cfg.lr * 0.5 * (1 + np.cos(np.pi * epoch / cfg.epochs))
        order = rng.permutation(n)
        total, batches, started = 0.0, 0, time.perf_counter()
        for lo in range(0, n, cfg.batch):
            idx = np.sort(order[lo:lo + cfg.batch])
            xs = _standardise(x[idx], x_stats)
            zs = None if z is None or z_stats is None else _standardise(z[idx], z_stats)
            total += head.step(xs, zs, y[idx].astype(np.float32), loss, float(lr), cfg.l2)
            batches += 1
        net = head.net()
        held = None if valid is None else head_loss(net, *valid, loss=loss)
        if log is not None:
            log.append({"epoch": epoch, "train_loss": total / max(batches, 1),
                        "valid_loss": held, "seconds": time.perf_counter() - started})
        if best is None or held is None or best[0] is None or held < best[0]:
            best = (held, net)
    assert best is not None
    return best[1]


def _base_output(y: np.ndarray, loss: str) -> float:
    """The constant that fits ``y`` best: the output bias starts there, so the first epochs
    learn the features rather than the base rate (log points start near 8, not 0)."""
    if y.size == 0:
        return 0.0
    mean = float(np.mean(y, dtype=np.float64))
    if loss == "logistic":
        mean = min(max(mean, 1e-4), 1 - 1e-4)
        return float(np.log(mean / (1 - mean)))
    return mean


def head_loss(net: Net, x: np.ndarray, y: np.ndarray, z: np.ndarray | None = None,
              loss: str = "logistic") -> float:
    total, count = 0.0, 0
    for lo in range(0, x.shape[0], 4096):
        out = net.forward(x[lo:lo + 4096].astype(np.float32),
                          None if z is None else z[lo:lo + 4096].astype(np.float32))
        t = y[lo:lo + 4096].astype(np.float32)
        if loss == "logistic":
            total += float((np.logaddexp(0, out) - t * out).sum())
        else:
            total += float(((out - t) ** 2).sum() / 2)
        count += out.size
    return total / max(count, 1)


def split_hands(data: OpponentData, share: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Pair masks (train, held out): whole deals (:attr:`OpponentData.hand`) go to one
    side, so the held-out loss is not flattered by the same wall seen in another seating."""
    hands = np.unique(data.hand)
    rng = np.random.default_rng([seed, 7])
    held = rng.permutation(hands)[:max(1, round(share * hands.size))]
    valid = np.isin(data.hand, held)
    return ~valid, valid


def value_rows(data: OpponentData) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The value head's rows: (x, z, log points) of every legal winning kind of a ready
    pair, as (M, Fx), (M, 1, Fz), (M, 1)."""
    r, k = np.nonzero(data.win)
    x = data.x[data.k_pair[r]]
    z = data.z[r, k][:, None, :]
    return x, z, np.log(data.points[r, k])[:, None]


def train(data: OpponentData, cfg: TrainConfig = TrainConfig(),
          log: dict[str, list[dict[str, Any]]] | None = None) -> OpponentModels:
    """All three heads on ``data``; ``log`` collects each head's epochs."""
    started = time.perf_counter()
    train_mask, valid_mask = split_hands(data, cfg.valid_share, cfg.seed)
    tr, va = data.take(np.nonzero(train_mask)[0]), data.take(np.nonzero(valid_mask)[0])
    logs: dict[str, list[dict[str, Any]]] = {"tenpai": [], "wait": [], "value": []}
    tenpai = fit_head(tr.x, tr.tenpai, cfg.tenpai, "logistic", cfg.seed,
                      valid=(va.x, va.tenpai, None), log=logs["tenpai"])
    tw, vw = tr.ready_rows, va.ready_rows
    wait = fit_head(tr.x[tr.k_pair[tw]], tr.waits[tw], cfg.wait, "logistic", cfg.seed + 1,
                    z=tr.z[tw], valid=(va.x[va.k_pair[vw]], va.waits[vw], va.z[vw]),
                    log=logs["wait"])
    vx, vz, vy = value_rows(tr)
    hx, hz, hy = value_rows(va)
    value = fit_head(vx, vy, cfg.value, "regression", cfg.seed + 2, z=vz,
                     valid=(hx, hy, hz), log=logs["value"])
    log_range = (float(vy.min()), float(vy.max())) if vy.size else (0.0, 0.0)
    fitted = np.clip(value.forward(vx.astype(np.float32), vz.astype(np.float32))[:, 0],
                     *log_range)
    smear = float(np.mean(np.exp(vy[:, 0] - fitted))) if vy.size else 1.0
    if log is not None:
        log.update(logs)
    meta = {
        "pairs": len(data.tenpai), "ready_pairs": int(data.tenpai.sum()),
        "value_rows": int(data.win.sum()), "decisions": data.decisions,
        "opponent_pairs": data.pair_counts(),
        "tenpai_rate": float(data.tenpai.mean()),
        "value_mean": float(data.points[data.win].mean()) if data.win.any() else 0.0,
        "seed": cfg.seed, "sources": portable_names(data.sources),  # names: the file ships
        "heads": {name: vars(getattr(cfg, name)) for name in ("tenpai", "wait", "value")},
        "train_seconds": round(time.perf_counter() - started, 1),
    }
    return OpponentModels(data.variant, {"tenpai": tenpai, "wait": wait, "value": value},
                          smear, log_range, meta)


def quick_config(seed: int = 0, epochs: int = 3, variant: str = "riichi") -> TrainConfig:
    """A short schedule (tests, smoke runs)."""
    base = config_for(variant, seed)
    return replace(base, tenpai=replace(base.tenpai, epochs=epochs),
                   wait=replace(base.wait, epochs=epochs), value=replace(base.value, epochs=epochs))
