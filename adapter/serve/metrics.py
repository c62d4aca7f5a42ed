"""What the serve process counts, and the Prometheus text exposition of it (format 0.0.4).

Written here rather than with prometheus_client: a dozen counters, one histogram family and a
few gauges need no dependency, and the process keeps one registry per supervisor (tests run
several side by side, which a library's global default registry makes awkward). Updates come
from the event loop and from the threads the platform clients decide in, so they take a lock.
"""

from __future__ import annotations

import inspect
import threading
import time
from collections.abc import Callable, Iterable
from typing import Any

LATENCY_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0)

# name -> (type, help); counters end in _total, the histogram's samples get _bucket/_sum/_count
FAMILIES: dict[str, tuple[str, str]] = {
    "mjbot_games_total": ("counter", "Games finished, per session."),
    "mjbot_hands_total": ("counter", "Hands finished, per session."),
    "mjbot_decisions_total": ("counter", "Decisions answered, per session and policy."),
    "mjbot_decision_seconds": ("histogram", "Time from request to answer, per policy."),
    "mjbot_fallbacks_total": ("counter", "Answers given by a fallback instead of the policy."),
    "mjbot_illegal_actions_total": ("counter", "Illegal answers: a policy's, replaced by the "
                                    "brain, or one the local table's referee refused."),
    "mjbot_reconnects_total": ("counter", "Reconnections a client made within one run."),
    "mjbot_restarts_total": ("counter", "Runs the supervisor started again after a failure."),
    "mjbot_failures_total": ("counter", "Runs that ended in a crash or a lost connection."),
    "mjbot_session_running": ("gauge", "1 while a session's run is in progress."),
    "mjbot_breaker_open": ("gauge", "1 while a session's circuit breaker is open."),
    "mjbot_uptime_seconds": ("gauge", "Seconds since the serve process started."),
}
SESSION_COUNTERS = ("mjbot_games_total", "mjbot_hands_total", "mjbot_illegal_actions_total",
                    "mjbot_reconnects_total", "mjbot_restarts_total", "mjbot_failures_total")

SESSION_GAUGES = ("mjbot_session_running", "mjbot_breaker_open")

Labels = tuple[tuple[str, str], ...]


class Histogram:
    def __init__(self, buckets: Iterable[float] = LATENCY_BUCKETS) -> None:
        self.bounds = tuple(buckets)
        self.counts = [0] * len(self.bounds)
        self.total = 0.0
        self.count = 0

    def observe(self, value: float) -> None:
        for i, bound in enumerate(self.bounds):
            if value <= bound:
                self.counts[i] += 1
                break
        self.total += value
        self.count += 1

    def quantile(self, q: float) -> float | None:
        """The upper bound of the bucket holding the q-quantile (None: no observations)."""
        if not self.count:
            return None
        rank, seen = q * self.count, 0
        for bound, n in zip(self.bounds, self.counts, strict=True):
            seen += n
            if seen >= rank:
                return bound
        return float("inf")


class Metrics:
    """Counters, gauges and histograms keyed by (family, labels)."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._lock = threading.Lock()
        self._values: dict[tuple[str, Labels], float] = {}
        self._histograms: dict[tuple[str, Labels], Histogram] = {}
        self._clock = clock
        self.started = clock()

    @staticmethod
    def _key(name: str, labels: dict[str, str]) -> tuple[str, Labels]:
        if name not in FAMILIES:
            raise KeyError(f"unknown metric {name}")
        return name, tuple(sorted((k, str(v)) for k, v in labels.items()))

    def inc(self, name: str, value: float = 1.0, **labels: str) -> None:
        key = self._key(name, labels)
        with self._lock:
            self._values[key] = self._values.get(key, 0.0) + value

    def set(self, name: str, value: float, **labels: str) -> None:
        key = self._key(name, labels)
        with self._lock:
            self._values[key] = value

    def get(self, name: str, **labels: str) -> float:
        with self._lock:
            return self._values.get(self._key(name, labels), 0.0)

    def observe(self, name: str, value: float, **labels: str) -> None:
        key = self._key(name, labels)
        with self._lock:
            self._histograms.setdefault(key, Histogram()).observe(value)

    def histogram(self, name: str, **labels: str) -> Histogram | None:
        with self._lock:
            return self._histograms.get(self._key(name, labels))

    def add_session(self, session: str, kind: str) -> None:
        """Every per-session counter at 0, so that a quiet session is still listed (a changed
        session keeps its counts); its gauges at 0, not left as the handle it replaces set
        them."""
        for name in SESSION_COUNTERS:
            labels = {"session": session, "kind": kind} if name in (
                "mjbot_games_total", "mjbot_hands_total") else {"session": session}
            key = self._key(name, labels)
            with self._lock:
                self._values.setdefault(key, 0.0)
        for name in SESSION_GAUGES:
            self.set(name, 0.0, session=session)

    def remove_session(self, session: str) -> None:
        """Every series of a session the config no longer has: a removed session is not
        shown as running, or with its breaker open, by a scrape after it is gone."""
        def other(key: tuple[str, Labels]) -> bool:
            return ("session", session) not in key[1]

        with self._lock:
            self._values = {k: v for k, v in self._values.items() if other(k)}
            self._histograms = {k: h for k, h in self._histograms.items() if other(k)}

    def decision(self, session: str, policy: str, elapsed: float, fallback: str = "") -> None:
        """One answered decision; a fallback caused by an illegal answer counts as both."""
        self.inc("mjbot_decisions_total", session=session, policy=policy)
        self.observe("mjbot_decision_seconds", elapsed, session=session, policy=policy)
        if fallback:
            self.inc("mjbot_fallbacks_total", session=session, policy=policy)
            if "illegal" in fallback:
                self.inc("mjbot_illegal_actions_total", session=session)

    def exposition(self) -> str:
        """The Prometheus text format, families in a fixed order."""
        self.set("mjbot_uptime_seconds", round(self._clock() - self.started, 3))
        with self._lock:
            values = dict(self._values)
            histograms = {k: (h.bounds, list(h.counts), h.total, h.count)
                          for k, h in self._histograms.items()}
        out: list[str] = []
        for name, (kind, text) in FAMILIES.items():
            out.append(f"# HELP {name} {text}")
            out.append(f"# TYPE {name} {kind}")
            if kind == "histogram":
                for (family, labels), (bounds, counts, total, count) in sorted(
                        histograms.items()):
                    if family != name:
                        continue
                    running = 0
                    for bound, n in zip(bounds, counts, strict=True):
                        running += n
                        out.append(f"{name}_bucket{_labels(labels, le=_num(bound))} {running}")
                    out.append(f"{name}_bucket{_labels(labels, le='+Inf')} {count}")
                    out.append(f"{name}_sum{_labels(labels)} {_num(total)}")
                    out.append(f"{name}_count{_labels(labels)} {count}")
                continue
            for (family, labels), value in sorted(values.items()):
                if family == name:
                    out.append(f"{name}{_labels(labels)} {_num(value)}")
        return "\n".join(out) + "\n"


def _num(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else repr(float(value))


def _escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')


def _labels(labels: Labels, **extra: str) -> str:
    pairs = [*labels, *extra.items()]
    if not pairs:
        return ""
    return "{" + ",".join(f'{k}="{_escape(v)}"' for k, v in pairs) + "}"


class MeasuredBrain:
    """Stands in for a client's :class:`~brain.brain.Brain` or its thinker
    (:class:`adapter.thinking.thinker.Thinker`): every ``decide*`` method is passed through and each
    answer's time, policy and fallback reported; everything else is the wrapped object's own.
    The clients keep them in ``bot.thinker`` / ``bot.brain``, so the supervisor measures them
    without a hook in their code (an awaitable ``decide`` is measured when awaited)."""

    def __init__(self, brain: Any, report: Callable[[Any], None]) -> None:
        self._brain = brain
        self._report = report

    def decide(self, *args: Any, **kwargs: Any) -> Any:
        return self._measured(self._brain.decide)(*args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        value = getattr(self._brain, name)
        if name.startswith("decide") and callable(value):
            return self._measured(value)
        return value

    def _measured(self, method: Callable[..., Any]) -> Callable[..., Any]:
        def call(*args: Any, **kwargs: Any) -> Any:
            result = method(*args, **kwargs)
            if inspect.isawaitable(result):
                return self._awaited(result)
            self._safe_report(result)
            return result
        return call

    async def _awaited(self, pending: Any) -> Any:
        result = await pending
        self._safe_report(result)
        return result

    def _safe_report(self, answer: Any) -> None:
        if hasattr(answer, "elapsed"):
            self._report(answer)
