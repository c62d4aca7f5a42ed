"""AdamW under a one-cycle schedule, the arithmetic of ``torch.optim.AdamW`` (single-tensor
form) stepped by ``torch.optim.lr_scheduler.OneCycleLR`` with their defaults, written out.

Why not torch's own: every ``torch.optim.Optimizer`` imports ``torch._dynamo`` when it is made
(``add_param_group``) and at each ``step``, which cost about 1 s of CPU on a 2-core machine
(2 s under load) at every ``mjbot nn train`` start, one per ``nn iterate`` round, though
nothing here is compiled. The numbers are the same: a test trains a network both ways on a
seed and finds every weight equal, bit for bit.

On CUDA torch's AdamW defaults to its multi-tensor (``foreach``) kernels, whose rounding can
differ in the last bit; this is the single-tensor form on every device.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

import torch

BETA2 = 0.999
EPS = 1e-8
# OneCycleLR's defaults: warm up for 30 % of the steps from lr / 25 to lr, then anneal to
# lr / 25 / 1e4, both cosine; Adam's beta1 cycles the other way, 0.95 -> 0.85 -> 0.95
PCT_START = 0.3
DIV_FACTOR = 25.0
FINAL_DIV_FACTOR = 1e4
BASE_MOMENTUM = 0.85
MAX_MOMENTUM = 0.95


def _cos(start: float, end: float, pct: float) -> float:
    """OneCycleLR's cosine anneal from ``start`` to ``end`` as ``pct`` goes 0 -> 1."""
    return end + (start - end) / 2.0 * (math.cos(math.pi * pct) + 1)


@dataclass
class _Moments:
    """One parameter's state, made at its first step with a gradient (as torch's is)."""

    steps: int
    exp_avg: torch.Tensor
    exp_avg_sq: torch.Tensor


class OneCycleAdamW:
    """``opt.zero_grad(); loss.backward(); opt.step()``: one AdamW step at the schedule's
    learning rate and beta1, then the schedule moves on (as ``opt.step(); sched.step()``)."""

    def __init__(self, params: Iterable[torch.nn.Parameter], lr: float, weight_decay: float,
                 total_steps: int) -> None:
        if total_steps <= 0:
            raise ValueError(f"a schedule needs at least one step, not {total_steps}")
        self.params = list(params)
        self.weight_decay = weight_decay
        self.total_steps = total_steps
        self.initial_lr = lr / DIV_FACTOR
        self.max_lr = lr
        self.min_lr = self.initial_lr / FINAL_DIV_FACTOR
        self.phases = ((float(PCT_START * total_steps) - 1, self.initial_lr, self.max_lr,
                        MAX_MOMENTUM, BASE_MOMENTUM),
                       (total_steps - 1, self.max_lr, self.min_lr, BASE_MOMENTUM,
                        MAX_MOMENTUM))
        self.state: dict[int, _Moments] = {}  # by id() of a parameter in self.params
        self.last_step = 0  # OneCycleLR's last_epoch: its first value is set at the start
        self.lr, self.beta1 = self._scheduled(0)

    def _scheduled(self, step: int) -> tuple[float, float]:
        """(learning rate, beta1) at schedule step ``step`` (OneCycleLR.get_lr)."""
        if step > self.total_steps:
            raise ValueError(f"step {step} of a {self.total_steps}-step schedule")
        start = 0.0
        for i, (end, lr0, lr1, m0, m1) in enumerate(self.phases):
            if step <= end or i == len(self.phases) - 1:
                pct = (step - start) / (end - start)
                return _cos(lr0, lr1, pct), _cos(m0, m1, pct)
            start = end
        raise AssertionError("unreachable: the last phase always matches")

    def zero_grad(self) -> None:
        for p in self.params:
            p.grad = None

    @torch.no_grad()
    def step(self) -> None:
        lr, beta1 = self.lr, self.beta1
        for p in self.params:
            grad = p.grad
            if grad is None:
                continue
            moments = self.state.get(id(p))
            if moments is None:
                moments = self.state[id(p)] = _Moments(
                    0, torch.zeros_like(p, memory_format=torch.preserve_format),
                    torch.zeros_like(p, memory_format=torch.preserve_format))
            moments.steps += 1
            step = float(moments.steps)  # torch's step is a float32 tensor read as a float
            exp_avg, exp_avg_sq = moments.exp_avg, moments.exp_avg_sq
            if self.weight_decay != 0:
                p.mul_(1 - lr * self.weight_decay)
            exp_avg.lerp_(grad, 1 - beta1)
            exp_avg_sq.mul_(BETA2).addcmul_(grad, grad, value=1 - BETA2)
            bias_correction1 = 1 - beta1 ** step
            bias_correction2 = 1 - BETA2 ** step
            step_size = lr / bias_correction1
            denom = (exp_avg_sq.sqrt() / bias_correction2 ** 0.5).add_(EPS)
            p.addcdiv_(exp_avg, denom, value=-step_size)
        self.last_step += 1
        self.lr, self.beta1 = self._scheduled(self.last_step)
