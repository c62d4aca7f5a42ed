"""Stage 1 of issue 17: supervised training of the residual network on dataset decisions, in
torch, from examples streamed in bounded memory (stream.py, issue 26), exported to the plain
arrays brain/nn/network.py reads.

torch is an optional extra (``pip install -e '.[train]'``): this module is the only one that
imports it, and only the ``mjbot nn train`` command and the torch-only tests load this module.
The torch model below has the numpy network's parameter names and layouts, so export is a
straight copy (a test checks both forwards agree within 1e-5).
"""

from __future__ import annotations

import copy
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn

from brain.nn.encoding import encoding_for, num_planes
from brain.nn.heads import KINDS, PER_KIND_HEADS, SCALAR_HEADS
from brain.nn.network import Network, Shape, new_meta, param_shapes
from brain.rules.variant import variant_of
from replay.dataset.schema import DatasetError
from replay.dataset.shards import sha256
from replay.learning.nn.data import Examples
from replay.learning.nn.stream import (
    DEFAULT_BUFFER,
    DEFAULT_HOLDOUT_MAX,
    ExampleStream,
    held_batches,
)
from replay.learning.provenance import portable_name, portable_names


class _Block(nn.Module):
    """One residual block's two convolutions (its own class so their types are known)."""

    def __init__(self, channels: int) -> None:
        super().__init__()
        self.conv1 = nn.Conv1d(channels, channels, 3, padding=1)
        self.conv2 = nn.Conv1d(channels, channels, 3, padding=1)

    def forward(self, h: torch.Tensor) -> torch.Tensor:
        y = torch.relu(self.conv1(h))
        return torch.relu(self.conv2(y) + h)


class TorchNet(nn.Module):
    """The torch twin of :class:`brain.nn.network.Network` (same names, same arithmetic)."""

    def __init__(self, shape: Shape) -> None:
        super().__init__()
        c, f = shape.planes, shape.channels
        self.shape = shape
        self.stem = nn.Conv1d(c, f, 3, padding=1)
        self.blocks = nn.ModuleList(_Block(f) for _ in range(shape.blocks))
        self.kind_head = nn.Conv1d(f, PER_KIND_HEADS, 1)
        self.scalar_head = nn.Linear(f * KINDS, SCALAR_HEADS)
        self.value1 = nn.Linear(f * KINDS, shape.value_hidden)
        self.value2 = nn.Linear(shape.value_hidden, 1)

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        h = torch.relu(self.stem(x))
        for block in self.blocks:
            h = block(h)
        per_kind = self.kind_head(h).reshape(h.shape[0], -1)
        flat = h.reshape(h.shape[0], -1)
        logits = torch.cat([per_kind, self.scalar_head(flat)], dim=1)
        value = self.value2(torch.relu(self.value1(flat)))[:, 0]
        return logits, value

    def export(self, variant: str, **meta: Any) -> Network:
        """The numpy network with these weights."""
        state = {k: v.detach().cpu().numpy().astype(np.float32)
                 for k, v in self.state_dict().items()}
        expected = param_shapes(self.shape)
        if set(state) != set(expected):
            raise RuntimeError(f"torch parameters {sorted(state)} != {sorted(expected)}")
        return Network(state, new_meta(variant, self.shape, **meta))


@dataclass
class TrainConfig:
    channels: int = 64
    blocks: int = 4
    value_hidden: int = 64
    epochs: int = 4
    batch_size: int = 256
    lr: float = 2e-3
    weight_decay: float = 1e-4
    value_weight: float = 0.25
    holdout: float = 0.05  # share of the examples held out when no held-out data is given
    holdout_max: int = DEFAULT_HOLDOUT_MAX  # the most held-out examples (held in memory)
    buffer: int = DEFAULT_BUFFER  # the most training examples encoded at once (stream.py)
    max_decisions: int = 0
    seed: int = 0
    threads: int = 2
    policies: Sequence[str] | None = None
    device: str = "cpu"  # "cuda" where a GPU is present
    init: str = ""  # weights file to start from (fine-tuning; its shape wins over the above)
    encoding: int | None = None  # input encoding (None: init's, else the variant's)
    correction_weight: float = 1.0  # with init: the loss weight of the examples whose answer
    # the starting network does not give (the expert's corrections; 1: every example alike)
    extra: dict[str, Any] = field(default_factory=dict)


def masked_loss(logits: torch.Tensor, legal: torch.Tensor, target: torch.Tensor,
                weight: torch.Tensor | None = None) -> torch.Tensor:
    """Cross-entropy over the legal heads only (illegal logits pushed to -1e9); with
    ``weight``, the weighted mean over the examples."""
    z = logits.masked_fill(~legal, -1e9)
    if weight is None:
        return nn.functional.cross_entropy(z, target)
    return (nn.functional.cross_entropy(z, target, reduction="none") * weight).sum() / \
        weight.sum()


def correction_weights(start: TorchNet, x: torch.Tensor, legal: torch.Tensor,
                       target: torch.Tensor, weight: float) -> torch.Tensor:
    """``weight`` where the starting network's answer is not the target, else 1: expert
    iteration's few corrections would otherwise drown in the rows where the expert simply
    played the network's own move (brain/data/nn_models.md, "Why agreement fell")."""
    with torch.no_grad():
        logits, _ = start(x)
        pred = _answer(logits, legal)
    return torch.where(pred == target, 1.0, weight).to(logits.dtype)


def _answer(logits: torch.Tensor, legal: torch.Tensor) -> torch.Tensor:
    """The argmax head over the legal heads of each row."""
    return logits.masked_fill(~legal.to(logits.device), -1e9).argmax(dim=1)


def accuracy(model: TorchNet, batches: Iterable[Examples], device: str = "cpu",
             start: np.ndarray | None = None) -> dict[str, float]:
    """Share of examples whose masked argmax is the recorded answer (all, and turns where a
    discard was answered), and the value head's mean squared error. ``start``: the starting
    network's answers to the same examples in order (:func:`answers`), for the figures that
    tell fine-tuning's gains apart (``_Tally.figures``)."""
    model.eval()
    tally = _Tally()
    lo = 0
    with torch.no_grad():
        for ex in batches:
            logits, value = model(torch.from_numpy(ex.x).to(device))
            tally.add(logits, value, ex, None if start is None else start[lo:lo + len(ex)])
            lo += len(ex)
    model.train()
    return tally.figures()


def answers(model: TorchNet, batches: Iterable[Examples], device: str = "cpu") -> np.ndarray:
    """The model's masked argmax head for every example, in order."""
    model.eval()
    out = []
    with torch.no_grad():
        for ex in batches:
            logits, _ = model(torch.from_numpy(ex.x).to(device))
            out.append(_answer(logits, torch.from_numpy(ex.mask)).cpu().numpy())
    model.train()
    return np.concatenate(out) if out else np.zeros(0, dtype=np.int64)


class _Tally:
    """Hits, discard hits and squared value error summed over batches; with the starting
    network's answers, also how its hits and misses fared."""

    def __init__(self) -> None:
        self.n = self.hits = self.hits_discard = self.n_discard = 0
        self.sq = 0.0
        self.start_hits = self.start_hits_kept = self.corrections_learned = 0
        self.has_start = False

    def add(self, logits: torch.Tensor, value: torch.Tensor, ex: Examples,
            start: np.ndarray | None = None) -> None:
        t = torch.from_numpy(ex.target).to(logits.device)
        pred = _answer(logits.detach(), torch.from_numpy(ex.mask))
        self.n += len(ex)
        self.hits += int((pred == t).sum())
        discard = t < 2 * KINDS
        self.n_discard += int(discard.sum())
        self.hits_discard += int(((pred == t) & discard).sum())
        self.sq += float(((value.detach().cpu() - torch.from_numpy(ex.value)) ** 2).sum())
        if start is not None:
            self.has_start = True
            hit = (pred == t).cpu().numpy()
            was = start == ex.target
            self.start_hits += int(was.sum())
            self.start_hits_kept += int((hit & was).sum())
            self.corrections_learned += int((hit & ~was).sum())

    def figures(self) -> dict[str, float]:
        """With a starting network: ``start_accuracy`` (its share of hits), ``corrections``
        (the examples it missed: where the expert overruled it, in expert iteration),
        ``corrections_learned`` (their share now hit) and ``start_hits_kept`` (the share of
        its hits still hit). Fine-tuning that only sharpens the start's own answers learns no
        corrections: the accuracy alone cannot tell that apart from learning."""
        n = max(self.n, 1)
        out: dict[str, float] = {
            "accuracy": round(self.hits / n, 4),
            "discard_accuracy": round(self.hits_discard / max(self.n_discard, 1), 4),
            "value_mse": round(self.sq / n, 4), "examples": self.n}
        if self.has_start:
            missed = self.n - self.start_hits
            out.update({"start_accuracy": round(self.start_hits / n, 4), "corrections": missed,
                        "corrections_learned": round(self.corrections_learned / max(missed, 1), 4),
                        "start_hits_kept": round(self.start_hits_kept / max(self.start_hits, 1),
                                                 4)})
        return out


def train(variant: str, data: Sequence[str | Path], out: str | Path, config: TrainConfig,
          holdout_data: Sequence[str | Path] | None = None,
          progress: Any = None, stop: Callable[[], str] | None = None) -> dict[str, Any]:
    """Train on ``data`` streamed in bounded memory (stream.py), evaluate on ``holdout_data``
    (or a seeded share of ``data``), write the numpy weights to ``out``; the run's figures as a
    dict (also stored in the weights' meta).

    ``stop`` is asked before every step; a reason (a deadline, a signal) ends the run there, and
    the weights trained so far are evaluated and written all the same, the run's figures
    saying so under ``stopped`` (an hours-long CPU run cut by Ctrl-C kept nothing before).
    Stopped before its first step, it writes nothing (:class:`StoppedBeforeTraining`)."""
    if config.correction_weight != 1.0 and not config.init:
        raise ValueError("a correction weight needs the starting weights (init)")
    threads = torch.get_num_threads()  # process-wide: the caller's count comes back after
    torch.set_num_threads(max(1, config.threads))
    # the run seeds torch's global generator (config.seed); the caller's state comes back too
    # (CUDA's as well where the run is on it)
    try:
        with torch.random.fork_rng(devices=[] if config.device == "cpu" else None):
            return _train(variant, data, out, config, holdout_data, progress, stop)
    finally:
        torch.set_num_threads(threads)


def _train(variant: str, data: Sequence[str | Path], out: str | Path, config: TrainConfig,
           holdout_data: Sequence[str | Path] | None, progress: Any,
           stop: Callable[[], str] | None) -> dict[str, Any]:
    """:func:`train`'s run, on the thread count it set and in its forked random state."""
    torch.manual_seed(config.seed)
    start = time.monotonic()
    # the start by its content, read before --out can replace it (``--init g.npz --out g.npz``)
    init_sha256 = sha256(config.init) if config.init else ""
    start_net = Network.from_file(config.init, variant) if config.init else None
    encoding = (start_net.encoding if start_net is not None
                else config.encoding or encoding_for(variant))
    stream = ExampleStream(data, config.policies, config.seed, config.batch_size,
                           config.buffer, config.holdout, config.holdout_max, holdout_data,
                           config.max_decisions, encoding)
    if stream.variant != variant:
        raise DatasetError(f"the datasets are {stream.variant}, not {variant}")
    held = stream.held_out()
    if not len(held):  # else every held-out figure read 0.0000 as if measured
        kept = f" of {', '.join(config.policies)}" if config.policies else ""
        raise DatasetError(
            f"no held-out example: the --holdout datasets hold no decision with a choice"
            f"{kept} (their players: {', '.join(stream.held_players())})" if holdout_data
            else f"no held-out example: {config.holdout:.0%} of {len(stream)} examples is "
            "none; give --holdout DIR (mjbot selfplay on other seeds)")
    prepare_s = time.monotonic() - start
    if start_net is not None:
        model = TorchNet(start_net.shape)
        model.load_state_dict({k: torch.from_numpy(v.copy()) for k, v in start_net.params.items()})
    else:
        model = TorchNet(Shape(num_planes(encoding), config.channels, config.blocks,
                               config.value_hidden))
    dev = config.device
    model.to(dev)
    start_answers = (answers(model, held_batches(held), dev) if start_net is not None
                     else None)
    frozen = copy.deepcopy(model).eval() if config.correction_weight != 1.0 else None
    opt = torch.optim.AdamW(model.parameters(), lr=config.lr, weight_decay=config.weight_decay)
    steps = config.epochs * stream.batches_per_epoch()
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=config.lr, total_steps=steps)
    history = []
    seen_tally = _Tally()
    done = 0  # steps taken
    trained = 0  # their examples: a batch drawn when a stop came took no step
    reason = ""
    for epoch in range(config.epochs):
        total, examples = 0.0, 0
        tally = _Tally()  # the training figures: the last epoch's, before each step
        for batch in stream.epoch(epoch):
            reason = stop() if stop is not None else ""
            if reason:
                break
            x = torch.from_numpy(batch.x).to(dev)
            legal = torch.from_numpy(batch.mask).to(dev)
            target = torch.from_numpy(batch.target).to(dev)
            logits, value = model(x)
            tally.add(logits, value, batch)
            weight = (None if frozen is None else
                      correction_weights(frozen, x, legal, target, config.correction_weight))
            loss = masked_loss(logits, legal, target, weight) + \
                config.value_weight * nn.functional.mse_loss(
                    value, torch.from_numpy(batch.value).to(dev))
            opt.zero_grad()
            torch.autograd.backward(loss)  # loss.backward() minus its untyped signature
            opt.step()
            sched.step()
            total += loss.item() * len(batch)
            examples += len(batch)
            done += 1
            trained += len(batch)
        if reason and not done:
            raise StoppedBeforeTraining(reason)
        if examples:  # an epoch cut before its first step has no figures (the last stand)
            seen_tally = tally
            figures = {"epoch": epoch + 1, "train_loss": round(total / examples, 4),
                       "holdout": accuracy(model, held_batches(held), dev, start_answers)}
            if examples < len(stream):
                figures["examples"] = examples  # a stopped epoch's share
            history.append(figures)
            if progress is not None:
                progress(figures)
        reason = reason or (stop() if stop is not None and epoch + 1 < config.epochs else "")
        if reason:
            break
    stopped = ({"reason": reason, "steps_done": done, "steps_planned": steps,
                "epochs_done": sum(1 for h in history if "examples" not in h),
                "epochs_planned": config.epochs} if reason else None)
    result = {  # inputs by name only: the weights ship, machine paths must not (provenance.py)
        "variant": variant, "encoding": encoding, "data": portable_names(data),
        "holdout_data": portable_names(holdout_data) if holdout_data else "split",
        "train_examples": len(stream), "holdout_examples": len(held),
        "examples_seen": trained, "peak_examples_held": stream.peak_examples_held,
        "config": {**{k: portable_name(v) if k == "init" else v
                      for k, v in vars(config).items() if k != "extra"},
                   "init_sha256": init_sha256},
        "prepare_seconds": round(prepare_s, 1),
        "seconds": round(time.monotonic() - start, 1), "history": history,
        "holdout": history[-1]["holdout"] if history else {},
        "train": seen_tally.figures(), **config.extra,
    }
    if stopped is not None:
        result["stopped"] = stopped
    net = model.cpu().export(variant, encoding=encoding, training=result,
                             value_scale=variant_of(variant).value_scale)
    bad = net.non_finite()
    if bad:  # a diverged run (too high a learning rate): no file that plays garbage
        raise DivergedTraining(f"training diverged: {bad} holds values that are not finite "
                               f"numbers (loss {history[-1]['train_loss'] if history else '?'}); "
                               f"nothing written to {out} (try a lower --lr)")
    net.save(out)
    return result


class StoppedBeforeTraining(Exception):
    """A stop (its reason: "time", "SIGTERM", "SIGINT") came before the first step: there are
    no trained weights, and nothing is written."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class DivergedTraining(ValueError):
    """The trained weights hold NaN or infinite values: refused, never written."""
