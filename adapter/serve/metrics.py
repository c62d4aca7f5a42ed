"""What the serve process counts, kept in a prometheus_client ``CollectorRegistry`` of its own.

One registry per :class:`Metrics` (one per serve process), never the library's global default:
tests start several supervisors in one process, and each keeps its own counts. The families,
their types, label names and help texts are the ones the hand-written exposition served before
(tests/test_serve_metrics.py holds that list); counters are declared by their ``_total`` names,
which prometheus_client writes unchanged. What a scraper can see change: the histogram's ``le``
bounds are written as Go writes floats (``le="1.0"`` and ``le="5.0"`` where the hand-written
text had ``le="1"`` and ``le="5"``; Prometheus 3 normalises both to one series), values are
written as floats (``3.0``), and series come in the order they were made rather than sorted.
The ``_created`` series prometheus_client adds to counters and histograms are left out (they
were never served; the library's own switch, ``disable_created_metrics()``, is process-wide).

Rendering costs more than the hand-written text did. Measured on the shared 2-core development
machine (absolute times vary about twofold with its load; best of 7, both interleaved in one
process, each session with two policies' decisions): 1 session 0.26 ms against 0.07, 10
sessions 4.8 ms against 2.0, 100 sessions 45 ms against 22, 1000 sessions 0.55 s against 0.37;
one decision's update about the same (6-9 us). A scrape every few seconds of the handful of
sessions one process runs costs the event loop a few milliseconds: no reason to keep our own
exposition. A process with hundreds of sessions would feel it (tens of ms per scrape).

Updates come from the event loop and from the threads the platform clients decide in:
prometheus_client's values take their own locks, and the series made here (the ones
:meth:`Metrics.remove_session` takes out for a session a reload removed) are kept under one
more.
"""

from __future__ import annotations

import inspect
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, NamedTuple

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from prometheus_client.metrics_core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from brain.tally import FallbackKind

LATENCY_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0)

SESSION = ("session",)
SESSION_KIND = ("session", "kind")
SESSION_POLICY = ("session", "policy")


class Family(NamedTuple):
    kind: str  # counter, gauge or histogram
    help: str
    labels: tuple[str, ...]


FAMILIES: dict[str, Family] = {
    "mjbot_games_total": Family("counter", "Games finished, per session.", SESSION_KIND),
    "mjbot_hands_total": Family("counter", "Hands finished, per session.", SESSION_KIND),
    "mjbot_decisions_total": Family("counter", "Decisions answered, per session and policy.",
                                    SESSION_POLICY),
    "mjbot_decision_seconds": Family("histogram", "Time from request to answer, per policy.",
                                     SESSION_POLICY),
    "mjbot_fallbacks_total": Family("counter", "Answers given by a fallback instead of the "
                                    "policy.", SESSION_POLICY),
    "mjbot_illegal_actions_total": Family("counter", "Illegal answers: a policy's, replaced by "
                                          "the brain, or one the local table's referee "
                                          "refused.", SESSION),
    "mjbot_reconnects_total": Family("counter", "Reconnections a client made within one run.",
                                     SESSION),
    "mjbot_restarts_total": Family("counter", "Runs the supervisor started again after a "
                                   "failure.", SESSION),
    "mjbot_failures_total": Family("counter", "Runs that ended in a crash or a lost "
                                   "connection.", SESSION),
    "mjbot_session_running": Family("gauge", "1 while a session's run is in progress.",
                                    SESSION),
    "mjbot_breaker_open": Family("gauge", "1 while a session's circuit breaker is open.",
                                 SESSION),
    "mjbot_uptime_seconds": Family("gauge", "Seconds since the serve process started.", ()),
    # the log folder's upkeep (logkeep.py)
    "mjbot_logs_compressed_total": Family("counter", "Finished game logs compressed in place "
                                          "(gzip).", ()),
    "mjbot_logs_removed_total": Family("counter", "Game logs removed by the disk budget or "
                                       "the age limit, per kind (practice, platform) and "
                                       "reason (budget, age).", ("kind", "reason")),
    "mjbot_log_upkeep_errors_total": Family("counter", "Log compressions or removals that "
                                            "failed.", ()),
    "mjbot_logs_bytes": Family("gauge", "Disk bytes the game logs took at the last upkeep "
                               "pass.", ()),
    "mjbot_logs_files": Family("gauge", "Game logs under the log folder at the last upkeep "
                               "pass.", ()),
    "mjbot_log_disk_free_bytes": Family("gauge", "Free bytes on the log folder's file "
                                        "system.", ()),
    "mjbot_log_disk_low": Family("gauge", "1 while the free space under the log folder is "
                                 "below the warning (low_disk_mb).", ()),
}
# the viewer's build cache (viewcache.py), read from BuildCache.counters() at each scrape:
# name -> (type, help, the counters() value it is; "builds", a map, is one series per kind)
VIEWER_FAMILIES: dict[str, tuple[str, str, str]] = {
    "mjbot_viewer_builds_total": ("counter", "Viewer builds run (they had a build slot), per "
                                  "kind of result.", "builds"),
    "mjbot_viewer_cache_hits_total": ("counter", "Viewer requests answered from the build "
                                      "cache.", "hits"),
    "mjbot_viewer_abandoned_total": ("counter", "Viewer builds not run or given up: every "
                                     "request for them had gone.", "abandoned"),
    "mjbot_viewer_refused_total": ("counter", "Viewer builds refused with a 503: too many "
                                   "waited for a slot.", "refused"),
    "mjbot_viewer_refused_client_total": ("counter", "Viewer builds refused with a 429: their "
                                          "client had its share of runs waiting already.",
                                          "refused_client"),
    "mjbot_viewer_building": ("gauge", "Viewer builds running now.", "building"),
    "mjbot_viewer_waiting": ("gauge", "Viewer runs waiting for a build slot.", "waiting"),
    "mjbot_viewer_cache_entries": ("gauge", "Viewer results kept in the build cache.",
                                   "entries"),
    "mjbot_viewer_cache_bytes": ("gauge", "Bytes of the viewer results kept in the build "
                                 "cache.", "bytes"),
    "mjbot_viewer_cache_games": ("gauge", "Parsed games kept by the viewer.", "games"),
}

SESSION_COUNTERS = ("mjbot_games_total", "mjbot_hands_total", "mjbot_illegal_actions_total",
                    "mjbot_reconnects_total", "mjbot_restarts_total", "mjbot_failures_total")

SESSION_GAUGES = ("mjbot_session_running", "mjbot_breaker_open")

_CLASSES: dict[str, Any] = {"counter": Counter, "gauge": Gauge, "histogram": Histogram}


@dataclass(frozen=True)
class HistogramView:
    """One histogram series as read back: counts per bucket (not cumulative), sum, count."""

    bounds: tuple[float, ...]
    counts: tuple[int, ...]
    total: float
    count: int

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


class _Served(Collector):
    """The registry as /metrics serves it: without the ``_created`` samples."""

    def __init__(self, registry: CollectorRegistry) -> None:
        self._registry = registry

    def collect(self) -> Iterator[Metric]:
        for family in self._registry.collect():  # fresh objects on every collect
            created = family.name + "_created"
            family.samples = [s for s in family.samples if s.name != created]
            yield family


class _Viewer(Collector):
    """The viewer's counters (:data:`VIEWER_FAMILIES`), read from ``read`` (the build
    cache's ``counters``) when scraped: kept by the cache alone, not copied here."""

    def __init__(self, read: Callable[[], dict[str, Any]]) -> None:
        self._read = read

    def collect(self) -> Iterator[Metric]:
        counters = self._read()
        values = {**counters, **counters["cache"]}
        for name, (kind, help_text, key) in VIEWER_FAMILIES.items():
            if kind == "counter":
                family: Any = CounterMetricFamily(name.removesuffix("_total"), help_text,
                                                  labels=("kind",) if key == "builds" else ())
            else:
                family = GaugeMetricFamily(name, help_text)
            if key == "builds":
                for kind_of, n in values["builds"].items():
                    family.add_metric([kind_of], float(n))
            else:
                family.add_metric([], float(values[key]))
            yield family


class Metrics:
    """The serve process's families in its own registry, updated by family name and labels."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        self._clock = clock
        self.started = clock()
        self._lock = threading.Lock()
        self._families: dict[str, Any] = {
            name: _CLASSES[f.kind](name, f.help, f.labels, registry=self.registry,
                                   **({"buckets": LATENCY_BUCKETS} if f.kind == "histogram"
                                      else {}))
            for name, f in FAMILIES.items()}
        self._families["mjbot_uptime_seconds"].set_function(
            lambda: round(self._clock() - self.started, 3))
        self._series: dict[tuple[str, tuple[str, ...]], Any] = {}
        self._served = _Served(self.registry)
        self._viewer: _Viewer | None = None

    def add_viewer(self, read: Callable[[], dict[str, Any]]) -> None:
        """The viewer's counters in this registry, read from ``read`` when scraped (a status
        server's app made again replaces the last one's)."""
        with self._lock:
            if self._viewer is not None:
                self.registry.unregister(self._viewer)
            self._viewer = _Viewer(read)
            self.registry.register(self._viewer)

    @staticmethod
    def _family(name: str, kind: str | None = None) -> Family:
        family = FAMILIES.get(name)
        if family is None:
            raise KeyError(f"unknown metric {name}")
        if kind is not None and family.kind != kind:
            raise TypeError(f"{name} is a {family.kind}, not a {kind}")
        return family

    @staticmethod
    def _values(name: str, family: Family, labels: dict[str, Any]) -> tuple[str, ...]:
        if labels.keys() != set(family.labels):
            raise ValueError(f"{name} takes the labels {list(family.labels)}, "
                             f"not {sorted(labels)}")
        return tuple(str(labels[k]) for k in family.labels)

    def _child(self, name: str, labels: dict[str, Any], kind: str | None = None) -> Any:
        """The series of ``name`` with these labels, made (at 0) the first time."""
        family = self._family(name, kind)
        if not family.labels:
            return self._families[name]
        key = (name, self._values(name, family, labels))
        child = self._series.get(key)
        if child is None:
            with self._lock:
                child = self._series.get(key)
                if child is None:
                    child = self._series[key] = self._families[name].labels(*key[1])
        return child

    def inc(self, name: str, value: float = 1.0, **labels: str) -> None:
        self._child(name, labels).inc(value)

    def set(self, name: str, value: float, **labels: str) -> None:
        self._child(name, labels, "gauge").set(value)

    def set_function(self, name: str, read: Callable[[], float]) -> None:
        """A label-less gauge read when scraped (the free disk space)."""
        self._family(name, "gauge")
        self._families[name].set_function(read)

    def observe(self, name: str, value: float, **labels: str) -> None:
        self._child(name, labels, "histogram").observe(value)

    def _samples(self, name: str, labels: dict[str, Any]) -> list[Any]:
        """The samples of one series, read back through the family's own collect()."""
        family = self._family(name)
        wanted = dict(zip(family.labels, self._values(name, family, labels), strict=True))
        return [s for metric in self._families[name].collect() for s in metric.samples
                if {k: v for k, v in s.labels.items() if k != "le"} == wanted]

    def get(self, name: str, **labels: str) -> float:
        """A counter's or gauge's value (0 for a series not made yet)."""
        if self._family(name).kind == "histogram":
            raise TypeError(f"{name} is a histogram: read it with histogram()")
        return next((s.value for s in self._samples(name, labels) if s.name == name), 0.0)

    def histogram(self, name: str, **labels: str) -> HistogramView | None:
        """One histogram series (None: no such series)."""
        self._family(name, "histogram")
        samples = self._samples(name, labels)
        buckets = [(float(s.labels["le"]), s.value) for s in samples
                   if s.name == name + "_bucket"]
        if not buckets:
            return None
        bounds = tuple(b for b, _ in buckets if b != float("inf"))
        cumulative = [int(v) for _, v in buckets[:len(bounds)]]
        counts = tuple(n - p for n, p in zip(cumulative, [0, *cumulative], strict=False))
        total = next(s.value for s in samples if s.name == name + "_sum")
        count = int(next(s.value for s in samples if s.name == name + "_count"))
        return HistogramView(bounds, counts, total, count)

    def add_session(self, session: str, kind: str) -> None:
        """Every per-session counter at 0, so that a quiet session is still listed (a changed
        session keeps its counts); its gauges at 0, not left as the handle it replaces set
        them."""
        for name in SESSION_COUNTERS:
            labels = {"session": session, "kind": kind} if "kind" in FAMILIES[name].labels \
                else {"session": session}
            self._child(name, labels)
        for name in SESSION_GAUGES:
            self.set(name, 0.0, session=session)

    def remove_session(self, session: str) -> None:
        """Every series of a session the config no longer has: a removed session is not
        shown as running, or with its breaker open, by a scrape after it is gone."""
        with self._lock:
            gone = [(name, values) for name, values in self._series
                    if "session" in FAMILIES[name].labels
                    and values[FAMILIES[name].labels.index("session")] == session]
            for name, values in gone:
                del self._series[(name, values)]
                self._families[name].remove(*values)

    def decision(self, session: str, policy: str, elapsed: float, fallback: str = "",
                 kind: str = "") -> None:
        """One answered decision of the policy's (an only legal action, which the policy is
        not asked, is not reported); a fallback caused by an illegal answer counts as both,
        told by its ``kind`` (brain/tally.py's FallbackKind value), not by its reason's text:
        an answer that is no Decision, or a late policy's best so far that cannot be played,
        is illegal and its text does not say "illegal"; a policy that raised may say it."""
        self.inc("mjbot_decisions_total", session=session, policy=policy)
        self.observe("mjbot_decision_seconds", elapsed, session=session, policy=policy)
        if fallback:
            self.inc("mjbot_fallbacks_total", session=session, policy=policy)
            if kind == FallbackKind.ILLEGAL.value:
                self.inc("mjbot_illegal_actions_total", session=session)

    def render(self) -> bytes:
        """The Prometheus text format (0.0.4), families in FAMILIES' order."""
        return generate_latest(self._served)

    def exposition(self) -> str:
        return self.render().decode()


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
