"""The serve process's metrics, kept with prometheus_client (issue 25): what /metrics serves
has the families, types, help texts and label names the hand-written exposition served
(``BEFORE``, written from main's /metrics), each :class:`Metrics` has a registry of its own
(never the library's global one), and a session a reload removes leaves no series."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import prometheus_client
import pytest
from aiohttp import web
from aiohttp.test_utils import TestClient, TestServer
from prometheus_client.parser import text_string_to_metric_families

from adapter.serve.config import loads
from adapter.serve.metrics import LATENCY_BUCKETS, Metrics
from adapter.serve.practice import _Reporter, _ReportingSeat
from adapter.serve.runners import Outcome, RunContext, _apply_report
from adapter.serve.status import StatusServer
from adapter.serve.supervisor import Supervisor
from brain import anytime
from brain.brain import Answer
from brain.policies import POLICIES
from brain.policies.base import Decision
from brain.tally import FallbackKind
from protocols import events as ev
from tests.serve_helpers import until

SESSION, KIND, POLICY = ("session",), ("kind", "session"), ("policy", "session")
HISTOGRAM = {"mjbot_decision_seconds_bucket": ("le", "policy", "session"),
             "mjbot_decision_seconds_count": POLICY, "mjbot_decision_seconds_sum": POLICY}
# What main's hand-written /metrics served for a session that had played (every family with a
# sample): the name on its TYPE line -> (type, help, {sample name: its label names}).
BEFORE: dict[str, tuple[str, str, dict[str, tuple[str, ...]]]] = {
    "mjbot_games_total": ("counter", "Games finished, per session.",
                          {"mjbot_games_total": KIND}),
    "mjbot_hands_total": ("counter", "Hands finished, per session.",
                          {"mjbot_hands_total": KIND}),
    "mjbot_decisions_total": ("counter", "Decisions answered, per session and policy.",
                              {"mjbot_decisions_total": POLICY}),
    "mjbot_decision_seconds": ("histogram", "Time from request to answer, per policy.",
                               HISTOGRAM),
    "mjbot_fallbacks_total": ("counter", "Answers given by a fallback instead of the policy.",
                              {"mjbot_fallbacks_total": POLICY}),
    "mjbot_illegal_actions_total": (
        "counter", "Illegal answers: a policy's, replaced by the brain, or one the local "
                   "table's referee refused.", {"mjbot_illegal_actions_total": SESSION}),
    "mjbot_reconnects_total": ("counter", "Reconnections a client made within one run.",
                               {"mjbot_reconnects_total": SESSION}),
    "mjbot_restarts_total": ("counter", "Runs the supervisor started again after a failure.",
                             {"mjbot_restarts_total": SESSION}),
    "mjbot_failures_total": ("counter", "Runs that ended in a crash or a lost connection.",
                             {"mjbot_failures_total": SESSION}),
    "mjbot_session_running": ("gauge", "1 while a session's run is in progress.",
                              {"mjbot_session_running": SESSION}),
    "mjbot_breaker_open": ("gauge", "1 while a session's circuit breaker is open.",
                           {"mjbot_breaker_open": SESSION}),
    "mjbot_uptime_seconds": ("gauge", "Seconds since the serve process started.",
                             {"mjbot_uptime_seconds": ()}),
}
# The log folder's upkeep (adapter/serve/logkeep.py), added after: no removal yet, so the
# removals' counter has no series.
UPKEEP: dict[str, tuple[str, str, dict[str, tuple[str, ...]]]] = {
    "mjbot_logs_compressed_total": ("counter", "Finished game logs compressed in place (gzip).",
                                    {"mjbot_logs_compressed_total": ()}),
    "mjbot_logs_removed_total": ("counter", "Game logs removed by the disk budget or the age "
                                 "limit, per kind (practice, platform) and reason (budget, "
                                 "age).", {}),
    "mjbot_log_upkeep_errors_total": ("counter", "Log compressions or removals that failed.",
                                      {"mjbot_log_upkeep_errors_total": ()}),
    "mjbot_logs_bytes": ("gauge", "Disk bytes the game logs took at the last upkeep pass.",
                         {"mjbot_logs_bytes": ()}),
    "mjbot_logs_files": ("gauge", "Game logs under the log folder at the last upkeep pass.",
                         {"mjbot_logs_files": ()}),
    "mjbot_log_disk_free_bytes": ("gauge", "Free bytes on the log folder's file system.",
                                  {"mjbot_log_disk_free_bytes": ()}),
    "mjbot_log_disk_low": ("gauge", "1 while the free space under the log folder is below the "
                           "warning (low_disk_mb).", {"mjbot_log_disk_low": ()}),
}

# The viewer's build cache, read from BuildCache.counters() when scraped: before any build,
# the builds' counter has no series.
VIEWER: dict[str, tuple[str, str, dict[str, tuple[str, ...]]]] = {
    "mjbot_viewer_builds_total": ("counter", "Viewer builds run (they had a build slot), per "
                                  "kind of result.", {}),
    "mjbot_viewer_cache_hits_total": ("counter", "Viewer requests answered from the build "
                                      "cache.", {"mjbot_viewer_cache_hits_total": ()}),
    "mjbot_viewer_abandoned_total": ("counter", "Viewer builds not run or given up: every "
                                     "request for them had gone.",
                                     {"mjbot_viewer_abandoned_total": ()}),
    "mjbot_viewer_refused_total": ("counter", "Viewer builds refused with a 503: too many "
                                   "waited for a slot.", {"mjbot_viewer_refused_total": ()}),
    "mjbot_viewer_refused_client_total": ("counter", "Viewer builds refused with a 429: their "
                                          "client had its share of runs waiting already.",
                                          {"mjbot_viewer_refused_client_total": ()}),
    "mjbot_viewer_building": ("gauge", "Viewer builds running now.",
                              {"mjbot_viewer_building": ()}),
    "mjbot_viewer_waiting": ("gauge", "Viewer runs waiting for a build slot.",
                             {"mjbot_viewer_waiting": ()}),
    "mjbot_viewer_cache_entries": ("gauge", "Viewer results kept in the build cache.",
                                   {"mjbot_viewer_cache_entries": ()}),
    "mjbot_viewer_cache_bytes": ("gauge", "Bytes of the viewer results kept in the build "
                                 "cache.", {"mjbot_viewer_cache_bytes": ()}),
    "mjbot_viewer_cache_games": ("gauge", "Parsed games kept by the viewer.",
                                 {"mjbot_viewer_cache_games": ()}),
}


def playing(decisions: int) -> Callable[[Any, RunContext], Any]:
    """A run that reports what a game would (``decisions`` answers by two policies, one a
    fallback after an illegal answer), then waits for the stop."""
    async def run(spec: Any, ctx: RunContext) -> Outcome:
        for n in range(decisions):
            ctx.probe.decision("rulebased", 0.0004 * (n + 1), "")
        ctx.probe.decision("greedy", 0.01, "rulebased answered an illegal action Pass()",
                           "illegal")
        ctx.probe.hands(5)
        ctx.probe.illegal(1)
        ctx.probe.reconnects(1)
        ctx.probe.game_finished({"scores": [1, 2, 3, 4], "seat": 0, "points": 5,
                                 "ranks": [1, 2, 3, 4], "hands": 5, "log": None})
        await ctx.stop.event.wait()
        return Outcome("stopped")
    return run


def sessions(*names: str) -> str:
    return "".join(f'[sessions.{name}]\nkind = "local"\n' for name in names)


async def started(config: str, decisions: int = 3) -> Supervisor:
    sup = Supervisor(loads(config, environ={}), runners={"local": playing(decisions)},
                     log_dir="unused")
    sup.start()
    await until(lambda: all(h.games_played >= 1 for h in sup.handles.values()))
    return sup


@pytest.fixture
async def scrape() -> AsyncIterator[Callable[[Supervisor], Any]]:
    """GET /metrics from a status server on a loopback socket."""
    clients: list[TestClient[web.Request, web.Application]] = []

    async def get(sup: Supervisor) -> str:
        client = TestClient(TestServer(StatusServer(sup, sup.metrics).app()))
        await client.start_server()
        clients.append(client)
        response = await client.get("/metrics")
        assert response.status == 200
        assert response.headers["Content-Type"] == "text/plain; version=0.0.4; charset=utf-8"
        return await response.text()

    yield get
    for client in clients:
        await client.close()


def described(text: str) -> dict[str, tuple[str, str, dict[str, tuple[str, ...]]]]:
    """The families of an exposition as ``BEFORE`` writes them."""
    helps = {line.split(" ", 3)[2]: line.split(" ", 3)[3] for line in text.splitlines()
             if line.startswith("# HELP ")}
    types = {line.split()[2]: line.split()[3] for line in text.splitlines()
             if line.startswith("# TYPE ")}
    samples: dict[str, dict[str, tuple[str, ...]]] = {name: {} for name in types}
    for family in text_string_to_metric_families(text):
        scraped = family.name + "_total" if family.type == "counter" else family.name
        for s in family.samples:
            samples[scraped][s.name] = tuple(sorted(s.labels))
    return {name: (kind, helps[name], samples[name]) for name, kind in types.items()}


def series(text: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    return {(s.name, tuple(sorted(s.labels.items()))): s.value
            for f in text_string_to_metric_families(text) for s in f.samples}


async def test_the_families_scraped_are_the_ones_main_served(scrape: Any) -> None:
    sup = await started(sessions("practice"))
    try:
        text = await scrape(sup)
    finally:
        await sup.stop(2)
    assert described(text) == {**BEFORE, **UPKEEP, **VIEWER}
    assert "_created" not in text  # prometheus_client's extra series are not served
    assert list(described(text)) == [*BEFORE, *UPKEEP, *VIEWER]  # in the same order
    values = series(text)
    assert values[("mjbot_games_total", (("kind", "local"), ("session", "practice")))] == 1
    assert values[("mjbot_illegal_actions_total", (("session", "practice"),))] == 2
    assert values[("mjbot_restarts_total", (("session", "practice"),))] == 0
    bounds = sorted({float(s.labels["le"]) for f in text_string_to_metric_families(text)
                     for s in f.samples if s.name == "mjbot_decision_seconds_bucket"})
    assert bounds == [*LATENCY_BUCKETS, float("inf")]


async def test_every_metrics_keeps_a_registry_of_its_own(scrape: Any) -> None:
    one = await started(sessions("practice"), decisions=2)
    two = await started(sessions("practice"), decisions=7)
    try:
        first, second = series(await scrape(one)), series(await scrape(two))
    finally:
        await asyncio.gather(one.stop(2), two.stop(2))
    key = ("mjbot_decisions_total", (("policy", "rulebased"), ("session", "practice")))
    assert (first[key], second[key]) == (2, 7)
    labels = {"session": "practice", "policy": "rulebased"}
    assert one.metrics.registry.get_sample_value("mjbot_decisions_total", labels) == 2
    assert two.metrics.registry.get_sample_value("mjbot_decisions_total", labels) == 7
    assert one.metrics.registry is not two.metrics.registry
    assert not [f.name for f in prometheus_client.REGISTRY.collect()
                if f.name.startswith("mjbot_")]


async def test_a_session_removed_by_a_reload_leaves_no_series(scrape: Any) -> None:
    sup = await started(sessions("keep", "drop"))
    try:
        before = series(await scrape(sup))
        dropped = {k for k in before if ("session", "drop") in k[1]}
        # every sample name but the uptime's and the log upkeep's had a series of the
        # session to remove
        names = {name for name, _ in before}
        assert {name for name, _ in dropped} == names - {"mjbot_uptime_seconds", *UPKEEP,
                                                         *VIEWER}
        # 12 families, the histogram's as _bucket, _count and _sum; 6 of the upkeep's; 9 of
        # the viewer's (no build yet)
        assert len(names) == 14 + 6 + 9
        await sup.reload(loads(sessions("keep"), environ={}))
        after = series(await scrape(sup))
        assert not {k for k in after if ("session", "drop") in k[1]}
        kept = {k: v for k, v in before.items()
                if ("session", "keep") in k[1] and k[0] != "mjbot_session_running"}
        assert {k: after[k] for k in kept} == kept  # untouched
        await sup.reload(loads(sessions("keep", "drop"), environ={}))  # back: counted anew
        await until(lambda: sup.handles["drop"].games_played >= 1)
        again = series(await scrape(sup))
        key = ("mjbot_decisions_total", (("policy", "rulebased"), ("session", "drop")))
        assert again[key] == before[key] == 3
    finally:
        await sup.stop(2)


def test_values_read_back_and_the_uptime_follows_the_clock() -> None:
    now = [100.0]
    metrics = Metrics(clock=lambda: now[0])
    metrics.add_session("s", "local")
    for elapsed in (0.0004, 0.003, 0.003, 0.2, 9.0):
        metrics.decision("s", "mc", elapsed)
    metrics.inc("mjbot_hands_total", 4, session="s", kind="local")
    assert metrics.get("mjbot_hands_total", session="s", kind="local") == 4
    assert metrics.get("mjbot_games_total", session="s", kind="local") == 0
    assert metrics.get("mjbot_decisions_total", session="other", policy="mc") == 0
    view = metrics.histogram("mjbot_decision_seconds", session="s", policy="mc")
    assert view is not None and view.count == 5 and view.total == pytest.approx(9.2064)
    assert view.bounds == LATENCY_BUCKETS and sum(view.counts) == 4  # 9.0 is past the last
    assert view.quantile(0.5) == 0.005 and view.quantile(1.0) == float("inf")
    assert metrics.histogram("mjbot_decision_seconds", session="s", policy="nn") is None
    now[0] = 112.3456
    assert metrics.get("mjbot_uptime_seconds") == 12.346
    assert "mjbot_uptime_seconds 12.346" in metrics.exposition()


def test_a_wrong_name_or_label_is_refused_with_what_was_wrong() -> None:
    metrics = Metrics()
    with pytest.raises(KeyError, match="unknown metric mjbot_nothing"):
        metrics.inc("mjbot_nothing", session="s")
    with pytest.raises(ValueError, match=r"takes the labels \['session', 'kind'\]"):
        metrics.inc("mjbot_games_total", session="s")
    with pytest.raises(TypeError, match="is a counter, not a gauge"):
        metrics.set("mjbot_games_total", 3, session="s", kind="local")
    assert "mjbot_games_total{" not in metrics.exposition()  # nothing half made


async def test_the_viewers_counters_are_in_health_and_metrics_from_one_source(
        tmp_path: Path) -> None:
    """`mjbot serve`'s viewer builds (waiting, running, given up, refused with a 503) and
    its cache were in neither /health nor /metrics: an operator could not see why viewer
    requests were slow or refused. Both now read BuildCache.counters(), the cache's own
    counts, and agree."""
    from replay.log import Footer, GameLogWriter
    from tests.log_samples import sample_hand, sample_header, write_steps

    logs = tmp_path / "logs"
    logs.mkdir()
    writer = GameLogWriter(logs / "one.mjlog.msgpack", sample_header())
    write_steps(writer, [*sample_hand(0), *sample_hand(1)])
    writer.close(Footer({"hands": 2}, (23000, 31000, 23000, 23000)))
    sup = await started(sessions("practice"))
    client = TestClient(TestServer(StatusServer(sup, sup.metrics, roots=[str(logs)]).app()))
    await client.start_server()
    try:
        health = (await (await client.get("/health")).json())["viewer"]
        assert health["builds"] == {} and health["cache"]["entries"] == 0
        game = "0~one.mjlog.msgpack"
        for route in ("", "/hands/1", "/commentary", "/hands/1"):  # the last from the cache
            response = await client.get(f"/api/games/{game}{route}")
            assert response.status == 200, await response.text()
        health = (await (await client.get("/health")).json())["viewer"]
        text = await (await client.get("/metrics")).text()
    finally:
        await client.close()
        await sup.stop(2)
    assert health["builds"] == {"commentary": 1, "hand": 1, "outline": 1, "timeline": 1}
    assert health["hits"] >= 1 and health["building"] == health["waiting"] == 0
    assert health["abandoned"] == health["refused"] == health["refused_client"] == 0
    assert health["cache"]["entries"] == 3 and health["cache"]["games"] == 1
    assert health["cache"]["bytes"] > 0
    # each count with its bound, as README's /health row says (the games' bound was missing)
    assert {k: health["cache"][k] for k in ("max_entries", "max_bytes", "max_games")} == {
        "max_entries": 256, "max_bytes": 64 << 20, "max_games": 8}
    values = series(text)
    assert {k[1][0][1]: v for k, v in values.items()
            if k[0] == "mjbot_viewer_builds_total"} == health["builds"]
    for name, key in (("mjbot_viewer_cache_hits_total", "hits"),
                      ("mjbot_viewer_abandoned_total", "abandoned"),
                      ("mjbot_viewer_refused_total", "refused"),
                      ("mjbot_viewer_refused_client_total", "refused_client"),
                      ("mjbot_viewer_building", "building"),
                      ("mjbot_viewer_waiting", "waiting")):
        assert values[(name, ())] == health[key], name
    for name, key in (("mjbot_viewer_cache_entries", "entries"),
                      ("mjbot_viewer_cache_bytes", "bytes"),
                      ("mjbot_viewer_cache_games", "games")):
        assert values[(name, ())] == health["cache"][key], name


class _NoDecision:
    """Answers what is no Decision: an illegal answer whose reason does not say "illegal"."""

    name = "test-no-decision"
    fast = True

    def decide(self, state: Any, request: Any, legal: Any, budget: Any = None,
               publish: Any = None) -> Any:
        return None


class _RaisesIllegal:
    """Raises with "illegal" in its message: a failure, not an illegal answer."""

    name = "test-raises-illegal"
    fast = True

    def decide(self, state: Any, request: Any, legal: Any, budget: Any = None,
               publish: Any = None) -> Decision:
        raise ValueError("illegal meld in the hand")


async def test_an_illegal_answer_is_counted_by_its_kind_not_its_reasons_text(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """serve counted an illegal answer (mjbot_illegal_actions_total, the status page's
    "illegal") by "illegal" in the fallback's reason, where sessions, logs and the bench
    read the answer's kind (brain/tally.py): an answer that is no Decision and a late
    policy's best so far that cannot be played (the policy's illegal answers by their kind)
    went uncounted, and a policy that raised with "illegal" in its message was counted.
    A practice game's answers, through its report lines, are counted by their kind now."""
    for policy in (_NoDecision, _RaisesIllegal):
        monkeypatch.setitem(POLICIES, policy.name, policy)
    lines: list[dict[str, Any]] = []
    reporter = _Reporter(lines.append)
    legal = [ev.Pass(), ev.Discard(1)]
    for name in (_NoDecision.name, _RaisesIllegal.name):
        _ReportingSeat("riichi", 0, name, None, reporter).decide(ev.DecisionRequest("claim"),
                                                                legal)
    # a late mc whose best so far cannot be played (as tests/test_thinker.py's plays it)
    late = Answer(ev.Pass(), tuple(legal), "mc", (), 0.25,
                  "mc missed its 0.250s budget; its best so far Discard(tile=999, "
                  "riichi=False) is not legal", anytime.fallback_source("rulebased"),
                  kind=FallbackKind.ILLEGAL)
    reporter.decision(0, late.policy, late.elapsed, late.fallback, late.kind.value)
    report = {"t": "hand", "hands": 1, "illegal": 0, "decisions": reporter.decisions}

    async def run(spec: Any, ctx: RunContext) -> Outcome:
        _apply_report(json.loads(json.dumps(report)), ctx.probe)  # as the report line goes
        ctx.probe.game_finished({"scores": [1, 2, 3, 4], "seat": 0, "points": 5,
                                 "ranks": [1, 2, 3, 4], "hands": 1, "log": None})
        await ctx.stop.event.wait()
        return Outcome("stopped")

    sup = Supervisor(loads(sessions("practice"), environ={}), runners={"local": run},
                     log_dir="unused")
    sup.start()
    try:
        await until(lambda: sup.handles["practice"].games_played >= 1)
        handle = sup.handles["practice"]
        assert (handle.decisions_made, handle.fallbacks) == (3, 3)
        assert handle.illegal_answers == 2
        assert sup.metrics.get("mjbot_illegal_actions_total", session="practice") == 2
    finally:
        await sup.stop(2)
