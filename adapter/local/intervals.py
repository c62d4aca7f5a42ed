"""The multiplier of a 95% interval for a mean over a few samples (wall sets, games).

An arena's interval treats each wall set as one sample; with the normal 1.96 a run of a few
wall sets claimed far more than it knew (three wall sets need 4.30: Student's t with two
degrees of freedom). The quantile is found from the t density by Simpson's rule and bisection,
with the standard library alone (scipy is no dependency), and cached per degree of freedom."""

from __future__ import annotations

import functools
import math

Z975 = 1.959964  # the normal quantile, which t reaches as the samples grow
STEPS = 400  # Simpson intervals on [0, t]: the quantile to about 1e-7


def _upper_half_mass(t: float, df: int) -> float:
    """P(0 <= T <= t) for Student's t with ``df`` degrees of freedom (Simpson's rule)."""
    log_c = math.lgamma((df + 1) / 2) - math.lgamma(df / 2) - 0.5 * math.log(df * math.pi)
    power = -(df + 1) / 2

    def density(x: float) -> float:
        return math.exp(log_c + power * math.log1p(x * x / df))

    h = t / STEPS
    total = density(0.0) + density(t)
    for i in range(1, STEPS):
        total += (4 if i % 2 else 2) * density(i * h)
    return total * h / 3


@functools.lru_cache(maxsize=256)
def t975(df: int) -> float:
    """The 97.5% quantile of Student's t with ``df`` >= 1 degrees of freedom: a 95% interval
    for the mean of ``df + 1`` samples is the mean +- t975(df) standard errors (12.71 for
    two, 4.30 for three, 2.26 for ten, 1.98 for a hundred)."""
    if df < 1:
        raise ValueError(f"degrees of freedom must be at least 1, not {df}")
    if df == 1:
        return math.tan(math.pi * 0.475)
    if df == 2:
        return 0.95 / math.sqrt(2 * 0.975 * 0.025)  # (2p - 1) sqrt(2 / (4p(1 - p)))
    if df > 100_000:
        return Z975 * (1 + (Z975 ** 2 + 1) / (4 * df))  # Cornish-Fisher's first term
    lo, hi = Z975, 13.0  # t975 lies between the normal's and df 2's
    for _ in range(60):
        mid = (lo + hi) / 2
        if _upper_half_mass(mid, df) < 0.475:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2


RANKS = (1.0, 4.0)  # where an average rank lies (first to fourth)
SHARES = (0.0, 1.0)  # where a rate lies


def cut_to(bounds: tuple[float | None, float | None], span: tuple[float, float]) \
        -> list[float | None]:
    """An interval cut to ``span``, where the true value lies, so it covers no less: a short
    run's average rank read [0.57, 6.93], ranks no seat can have. An end that is None (too
    few samples for an interval) stays None."""
    lo, hi = bounds
    return [None if lo is None else max(span[0], lo), None if hi is None else min(span[1], hi)]
