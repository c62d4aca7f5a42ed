"""A game log's decision frame records a fallback's kind (brain/tally.py's FallbackKind:
not-ready, late, failed, illegal, table) beside its reason, and `mjbot replay` (text and
``--json``) and the viewer's decisions show it. Before, only the reason's text was written:
what a log said could not be counted by kind without parsing text meant for people. A log
from before it was recorded reads as it did (tests/test_replay_cli.py's own log has none)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from brain.policies import POLICIES, Decision
from brain.tally import FallbackKind
from protocols import events as ev
from replay.log import GameLog, read_log
from replay.timeline import decision_view
from tests.cdp import Chromium, find_chromium
from tests.in_process import mjbot_captured, mjbot_here
from tests.serve_helpers import viewer_in_thread

KINDS = {k.value for k in FallbackKind} - {""}


class _RaisesThenIllegal:
    """A policy that raises on its odd decisions and answers an action no one offered on its
    even ones: the brain falls back as ``failed``, then as ``illegal``."""

    name = "test-raises-then-illegal"

    def __init__(self) -> None:
        self.asked = 0

    def decide(self, state: object, request: object, legal: list[object],
               budget: float | None = None) -> Decision:
        self.asked += 1
        if self.asked % 2:
            raise ValueError("a broken policy")
        return Decision(ev.Pon((0, 0)))


def _read_logs(logs: Path) -> list[GameLog]:
    return [read_log(p) for p in sorted(logs.rglob("*.mjlog.msgpack"))]


def _arena_logs(logs: Path, first: str) -> list[GameLog]:
    """One arena hand's logs, written to ``logs``, with policy ``first`` in seat 0."""
    run = mjbot_captured("arena", "--policies", f"{first},rulebased,rulebased,rulebased",
                         "--hands", "1", "--seed", "3", "--log-dir", str(logs),
                         "--max-fallback-share", "1", "--no-progress")
    assert run.returncode == 0, run.stderr
    return _read_logs(logs)


@pytest.fixture(scope="module")
def fell_back(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The logs of one arena hand with :class:`_RaisesThenIllegal` in seat 0, played once for
    the module: the tests that read them each played the same hand before."""
    logs = tmp_path_factory.mktemp("fell_back") / "logs"
    with pytest.MonkeyPatch.context() as patch:
        patch.setitem(POLICIES, _RaisesThenIllegal.name, _RaisesThenIllegal)
        _arena_logs(logs, _RaisesThenIllegal.name)
    return logs


def test_an_arena_log_records_each_fallbacks_kind_and_replay_shows_it(
        fell_back: Path, capsys: pytest.CaptureFixture[str]) -> None:
    logs = _read_logs(fell_back)
    ours = [(log, d) for log in logs for d in log.decisions()
            if d.policy == _RaisesThenIllegal.name and len(d.legal) > 1]
    assert ours and all(d.fallback for _, d in ours)
    kinds = {d.fallback_kind for _, d in ours}
    assert kinds == {"failed", "illegal"}, kinds
    for _, d in ours:  # the kind is the reason's, not a guess
        assert ("raised ValueError" in d.fallback) == (d.fallback_kind == "failed"), d
    # the other seats' own answers record none
    assert all(not d.fallback_kind for log in logs for d in log.decisions()
               if d.policy == "rulebased")
    # `mjbot replay` of the seat that fell back: each FALLBACK line and JSON entry says it
    log, _ = ours[0]
    seat = next(d.seat for d in log.decisions() if d.policy == _RaisesThenIllegal.name)
    assert seat is not None
    frames = [d for d in log.decisions() if d.seat == seat and d.fallback]
    run = mjbot_here(capsys, "replay", str(log.path), "--seat", str(seat), "--json")
    assert run.returncode == 0, run.stderr
    shown = [f for h in json.loads(run.stdout)["summary"]["hands"] for f in h["fallbacks"]]
    assert [(f["kind"], f["why"]) for f in shown] == [(d.fallback_kind, d.fallback)
                                                      for d in frames]
    text = mjbot_here(capsys, "replay", str(log.path), "--seat", str(seat)).stdout
    lines = [line.strip() for line in text.splitlines() if "FALLBACK" in line]
    assert len(lines) == len(frames)
    assert all(f"({d.fallback_kind}: {d.fallback})" in line
               for line, d in zip(lines, frames, strict=True)), lines[:3]
    # the viewer's decision, as its game page gets it
    view: dict[str, Any] = decision_view(frames[0], None)
    assert view["fallback_kind"] == frames[0].fallback_kind and view["fallback"]


def test_a_policy_past_its_budget_is_logged_as_late(tmp_path: Path) -> None:
    """mc with a thousandth of a second: what it misses is the clock's (``late``) where its
    best so far is played, as the answer said (the arena's budget warning aside)."""
    logs = _arena_logs(tmp_path, "fast=mc@budget=0.01")
    fell_back = [d for log in logs for d in log.decisions() if d.fallback]
    assert fell_back and {d.fallback_kind for d in fell_back} <= KINDS
    late = [d for d in fell_back if "played its best so far" in d.fallback]
    assert late and all(d.fallback_kind == "late" for d in late)


def test_a_botzone_turn_and_a_platform_session_log_the_kind(tmp_path: Path) -> None:
    """The two other writers of decision frames: a Botzone turn (mc without its opponent
    models raises at every decision: ``failed``), and every other platform's session
    (adapter/session.py's record_answer, each answer's own kind)."""
    import io

    from adapter.platforms.botzone import run_once
    from adapter.session import SessionSummary, record_answer
    from brain import anytime
    from brain.brain import Answer
    from replay.log import GameLogWriter, Header
    from tests.test_botzone_adapter import judge_turns, simple_input

    judged, answers = judge_turns()
    requests = [c["0"] for c in judged]
    recorded = [a["0"]["response"] for a in answers]
    n = next(i for i, r in enumerate(requests, 1) if r.startswith("2 "))  # our first draw
    assert run_once(io.StringIO(simple_input(requests[:n], recorded[:n - 1])), io.StringIO(),
                    policy=f"mc@models={tmp_path}", log_dir=str(tmp_path / "bz")) == 0
    (path,) = (tmp_path / "bz").rglob("*.mjlog.msgpack")
    (turn,) = read_log(path).decisions()
    assert turn.fallback.startswith("mc raised") and turn.fallback_kind == "failed", turn

    pass_ = ev.Pass()
    kinds = [FallbackKind.NONE, FallbackKind.LATE, FallbackKind.NOT_READY]
    with GameLogWriter(tmp_path / "s.mjlog.msgpack", Header("tenhou", "riichi", 0)) as log:
        for kind in kinds:
            record_answer(Answer(pass_, (pass_,), "mc", fallback="" if not kind.value else "x",
                                 source=anytime.POLICY, kind=kind),
                          ev.DecisionRequest("claim"), SessionSummary(), log, "tenhou")
    assert [d.fallback_kind for d in read_log(log.path).decisions()] == [k.value for k in kinds]


@pytest.mark.skipif(find_chromium() is None, reason="no chromium binary (Debian: apt-get "
                    "install chromium; .ci/run installs it)")
def test_the_viewers_decision_line_says_the_kind(fell_back: Path, tmp_path: Path) -> None:
    """The viewer's game page, in a real browser: a fallback's decision line reads
    `fallback (failed): <reason>` (it was `fallback: <reason>`)."""
    logs = fell_back
    game = sorted(logs.rglob("*.mjlog.msgpack"))[0]
    chromium_binary = find_chromium()
    assert chromium_binary is not None
    chromium = Chromium(chromium_binary, tmp_path / "profile")
    try:
        browser = chromium.page()
        with viewer_in_thread(logs) as (url, _loop, _cache):
            browser.navigate(url + "games/0~" + "~".join(game.relative_to(logs).parts) + "#1/1")
            browser.wait_for("document.getElementById('step-index').textContent"
                             ".startsWith('step 1 /')")
            for _ in range(60):  # step on to the first fallback of the policy
                if browser.evaluate("document.querySelector('#decisions .error') !== null"):
                    break
                browser.key("ArrowRight")
            else:
                pytest.fail("no fallback shown in the first steps")
            shown = browser.evaluate("document.querySelector('#decisions .error').textContent")
            assert shown.startswith(" · fallback (failed): test-raises-then-illegal raised "
                                    "ValueError"), shown
        browser.close()
    finally:
        chromium.close()


def test_review_shows_each_fallback_beside_its_judgement(
        fell_back: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`mjbot review` of our own log said nothing of the decisions where the policy fell
    back: a user asking why a game was lost could not see them beside the review's own
    judgement. Each such row has ``fallback`` (kind and reason, as replay words them), the
    summary counts them by kind with the review's loss on them, the text lists the costliest
    and ``--all`` marks each; a log from before the kind was recorded gives the reason
    alone."""
    from replay.replayer import action_text
    from tests.log_samples import log_frames, write_frames

    logs = _read_logs(fell_back)
    log = next(g for g in logs if any(d.policy == _RaisesThenIllegal.name
                                      for d in g.decisions()))
    seat = next(d.seat for d in log.decisions() if d.policy == _RaisesThenIllegal.name)
    assert seat is not None
    frames = [d for d in log.decisions() if d.seat == seat]
    fell = [d for d in frames if d.fallback]
    assert fell and len(fell) < len(frames)  # a forced answer is the policy's own
    rated = [d for d in frames if len(d.legal) > 1]  # a forced decision is not rated
    assert fell and all(d in rated for d in fell) and len(rated) < len(frames)
    args = ["review", str(log.path), "--seat", str(seat), "--policy", "rulebased"]
    run = mjbot_here(capsys, *args, "--json", "-")
    assert run.returncode == 0, run.stderr
    result = json.loads(run.stdout)
    rows = result["rows"]
    assert result["decisions"] + result["forced_decisions"] == len(frames)
    assert len(rows) == result["decisions"] == len(rated)
    assert [r["played"] for r in rows] == [action_text(d.action) for d in rated]
    assert [r.get("fallback") for r in rows] == [
        {"kind": d.fallback_kind, "why": d.fallback} if d.fallback else None for d in rated]
    assert result["forced_fallbacks"] == 0
    assert result["fallbacks"] == len(fell)
    assert result["fallback_kinds"] == {k: sum(d.fallback_kind == k for d in fell)
                                        for k in ("failed", "illegal")}
    losses = [r["loss"] or 0.0 for r in rows if "fallback" in r]
    assert result["fallback_loss"] == round(sum(losses), 3)
    shown = result["costly_fallbacks"]
    assert len(shown) == min(5, len(fell))
    assert [r["loss"] for r in shown] == sorted(losses, reverse=True)[:len(shown)]

    page = tmp_path / "review.html"
    assert mjbot_here(capsys, *args, "--html", str(page)).returncode == 0
    html = page.read_text(encoding="utf-8")
    # each in the table of every decision, and again among the costliest decisions
    assert html.count("(FALLBACK ") == len(fell) + sum("fallback" in r for r in result["costly"])
    assert f"<th>fallbacks</th><td>{len(fell)} (failed " in html
    text = mjbot_here(capsys, *args, "--all").stdout
    assert (f"  fallbacks {len(fell)} of {len(frames)} decisions (failed "
            f"{result['fallback_kinds']['failed']}, illegal "
            f"{result['fallback_kinds']['illegal']}), loss on them "
            f"{result['fallback_loss']:g}") in text.splitlines()
    first = shown[0]
    assert (f"- {first['round']} {first['kind']}: FALLBACK {first['played']} "
            f"({first['fallback']['kind']}: {first['fallback']['why']}); best "
            f"{first['best']}, loss {first['loss']:zg}") in text.splitlines()
    marked = [line for line in text.splitlines() if line.startswith("  ") and "FALLBACK (" in line]
    assert len(marked) == len(fell)
    assert all(f"FALLBACK ({d.fallback_kind}: {d.fallback})" in line
               for line, d in zip(marked, fell, strict=True))

    # the same log as an mjbot wrote it before the kind was recorded: the reason alone
    older = write_frames(tmp_path / "older.mjlog.msgpack", [
        {k: v for k, v in f.items() if k != "fallback_kind"} for f in log_frames(log.path)])
    run = mjbot_here(capsys, "review", str(older), "--seat", str(seat), "--policy",
                     "rulebased", "--all")
    assert run.returncode == 0, run.stderr
    assert f"  fallbacks {len(fell)} of {len(frames)} decisions (kind not recorded " \
           f"{len(fell)})" in run.stdout
    assert f"FALLBACK ({fell[0].fallback})" in run.stdout


def test_review_counts_a_fallback_on_a_forced_decision(
        fell_back: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Since review rates only decisions with a choice, a fallback on a forced one (an answer
    past its deadline on a pass-only offer, a riichi's discard) had no row and was counted
    nowhere: review's ``fallbacks`` said fewer than the log and `mjbot replay` record. It is
    counted with the others (by kind, and as ``forced_fallbacks``) and the text says how many
    were forced; the fallbacks are said of every decision, forced ones included."""
    from tests.log_samples import log_frames, write_frames

    log = next(g for g in _read_logs(fell_back)
               if any(d.policy == _RaisesThenIllegal.name for d in g.decisions()))
    seat = next(d.seat for d in log.decisions() if d.policy == _RaisesThenIllegal.name)
    frames = log_frames(log.path)
    forced = next(f for f in frames if f.get("k") == "decision" and f.get("seat") == seat
                  and len(f["legal"]) <= 1)
    assert not forced["fallback"]
    forced.update(fallback="answered past its deadline: the one legal action played",
                  fallback_kind="late")
    path = write_frames(tmp_path / "forced.mjlog.msgpack", frames)
    decisions = [d for d in read_log(path).decisions() if d.seat == seat]
    fell = [d for d in decisions if d.fallback]
    run = mjbot_here(capsys, "replay", str(path), "--seat", str(seat), "--json")
    assert run.returncode == 0, run.stderr
    replayed = [f for h in json.loads(run.stdout)["summary"]["hands"] for f in h["fallbacks"]]
    assert len(replayed) == len(fell)

    args = ["review", str(path), "--seat", str(seat), "--policy", "rulebased"]
    run = mjbot_here(capsys, *args, "--json", "-")
    assert run.returncode == 0, run.stderr
    result = json.loads(run.stdout)
    assert result["fallbacks"] == len(fell) and result["forced_fallbacks"] == 1
    assert sum("fallback" in r for r in result["rows"]) == len(fell) - 1
    assert result["fallback_kinds"] == {k: sum(d.fallback_kind == k for d in fell)
                                        for k in ("failed", "illegal", "late")}
    assert result["fallback_kinds"]["late"] == 1
    text = mjbot_here(capsys, *args).stdout
    assert (f"  fallbacks {len(fell)} of {len(decisions)} decisions (failed "
            f"{result['fallback_kinds']['failed']}, illegal "
            f"{result['fallback_kinds']['illegal']}, late 1), 1 of them on a forced decision "
            f"(not rated), loss on them {result['fallback_loss']:g}") in text.splitlines()
    assert f"the 5 costliest fallbacks (of {len(fell) - 1} rated; --all marks each):" \
        in text.splitlines()


# an mjai bot that discards the red dragon on every turn, mostly without holding it
_RED_DRAGON = """import json, sys
seat = int(sys.argv[-1])
for line in sys.stdin:
    last = json.loads(line)[-1]
    answer = {"type": "none"}
    if last["type"] == "tsumo" and last["actor"] == seat:
        answer = {"type": "dahai", "actor": seat, "pai": "C", "tsumogiri": False}
    print(json.dumps(answer), flush=True)
"""


def test_replay_names_an_outside_programs_fault_once(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """An outside program's fallback reason starts with its kind ('illegal: discard C is not
    legal ...'), which `mjbot replay` put after the kind again: 'FALLBACK discard 8m
    (illegal: illegal: discard C ...)'. The kind is said once."""
    bot = tmp_path / "bot.py"
    bot.write_text(_RED_DRAGON)
    logs = _arena_logs(tmp_path / "logs", f"me=mjai:{sys.executable} {bot}")
    log, seat = next((log, d.seat) for log in logs for d in log.decisions()
                     if d.policy == "me" and d.fallback)
    text = mjbot_here(capsys, "replay", str(log.path), "--seat", str(seat)).stdout
    lines = [line.strip() for line in text.splitlines() if "FALLBACK" in line]
    assert lines and all("(illegal: discard C is not legal on a turn request)" in line
                         for line in lines), lines[:3]
    # `mjbot review` words a fallback as replay does
    text = mjbot_here(capsys, "review", str(log.path), "--seat", str(seat), "--policy",
                      "rulebased").stdout
    lines = [line.strip() for line in text.splitlines() if "FALLBACK" in line]
    assert lines and all("(illegal: discard C is not legal on a turn request)" in line
                         for line in lines), lines[:3]
