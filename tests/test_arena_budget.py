"""``--budget``: our own seats at the local table decide under a platform's per-decision
limit, and the arena reports the thinking time each policy actually used."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from adapter.local.arena import ArenaConfig, format_summary, play_unit, run_arena, summarize
from adapter.local.seat import seat_for, split_budget
from adapter.local.timing import DecisionTimes, percentile, times_from_logs
from brain.brain import policy_seconds
from replay.log import read_log
from tests.cpu_clock import CpuClock
from tests.in_process import mjbot_here


def test_arena_budget_reports_times_within_the_limit(tmp_path):
    """A 0.3 s budget held and reported. The seats keep it, and time their decisions, on the
    CPU seconds this process used (tests/cpu_clock.py, through the arena's ``clock``): a
    budget of work, so a loaded machine that keeps the process off its cores for half a
    second breaks nothing (a wall-clock bound here failed under load: max 0.58 s at load
    20), while a policy or a brain that ignores the budget still spends the CPU past it."""
    config = ArenaConfig("riichi", ("mc", "rulebased", "rulebased", "rulebased"), hands=6,
                         seed=3, budget=0.3, log_dir=str(tmp_path), clock=CpuClock())
    results = run_arena(config)
    assert not any(r.errors for r in results)
    summary = summarize(config, results, 1.0)
    assert summary["budget"] == 0.3
    assert "thinking per decision (budget 0.3 s): mc " in format_summary(summary)
    mc, times = summary["policies"]["mc"], summary["thinking"]["mc"]
    assert times["timed_decisions"] == mc["decisions"] > 0
    assert 0 < times["mean_s"] <= times["p99_s"] <= times["max_s"] <= 0.3
    assert times["decisions_per_s"] == pytest.approx(1 / times["mean_s"])
    assert 0 < times["searched"] < times["timed_decisions"]  # the switch: mostly at once
    assert times["work_per_search"] > 0  # playouts per searched decision
    assert summary["thinking"]["rulebased"]["timed_decisions"] > 0
    assert summary["thinking"]["rulebased"]["searched"] == 0
    # the brain's deadline (limit less margin): each answer of mc's own came by it, any later
    # one is a counted fallback
    budget = policy_seconds(0.3)
    asked = [d for r in results for path in r.logs for d in read_log(path).decisions()
             if d.policy == "mc" and len(d.legal) > 1]
    assert len(asked) == mc["decisions"]
    late = [d for d in asked if d.elapsed > budget + 0.01]
    assert all(f"mc missed its {budget:.3f}s budget" in d.fallback for d in late), late[:3]
    # mc itself keeps to its share of that deadline: on this clock a miss is rare (a garbage
    # collection in a search), where a policy that ignores its budget misses every search
    assert mc["fallbacks"] <= mc["decisions"] // 20, mc["first_fallback"]


def test_a_seat_name_carries_its_own_budget():
    seat = seat_for("riichi", 0, "mc@budget=0.5", budget=2.0)
    assert seat.name == "mc@budget=0.5" and seat.brain.limit == 0.5 and seat.brain.name == "mc"
    plain = seat_for("riichi", 1, "mc", budget=2.0)
    assert plain.name == "mc" and plain.brain.limit == 2.0
    assert seat_for("riichi", 2, "rulebased").brain.limit is None
    # the seat's clock reaches the brain and the policy it builds: one clock for the brain's
    # deadline and mc's share of it
    clock = CpuClock()
    timed = seat_for("riichi", 3, "mc", budget=2.0, clock=clock)
    assert timed.brain.clock is clock and timed.brain.policy.clock is clock
    assert split_budget("nn@weights.npz@budget=1") == ("nn@weights.npz", 1.0)
    for bad in ("mc@budget=0", "mc@budget=-1", "mc@budget=soon", "@budget=1"):
        with pytest.raises(ValueError, match="needs a policy and seconds above 0"):
            split_budget(bad)


def test_two_budgets_at_one_table_are_reported_apart():
    config = ArenaConfig("riichi", ("mc@budget=0.3", "greedy", "greedy", "greedy"), hands=1,
                         seed=4, budget=0.2)
    result = play_unit(config, 0)
    assert not result.errors
    summary = summarize(config, [result], 1.0)
    mine = summary["thinking"]["mc@budget=0.3"]
    assert mine["timed_decisions"] == summary["policies"]["mc@budget=0.3"]["decisions"] > 0
    assert summary["thinking"]["greedy"]["timed_decisions"] > 0


@pytest.mark.parametrize("command", ["arena", "league", "selfplay"])
@pytest.mark.parametrize("value", ["0", "-1", "soon"])
def test_bad_budget_is_one_line(command, value, tmp_path, capsys):
    extra = ["--out", str(tmp_path / "out")] if command == "selfplay" else []
    r = mjbot_here(capsys, command, "--budget", value, *extra)
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert f"argument --budget: seconds above 0 (at most 3600), not '{value}'" in r.stderr


def test_bad_seat_budget_is_one_line(capsys):
    r = mjbot_here(capsys, "arena", "--policies", "mc@budget=0,rulebased,rulebased,rulebased")
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert r.stderr.strip().splitlines()[-1].endswith(
        "seat 'mc@budget=0': @budget=SECONDS needs a policy and seconds above 0 (at most "
        "3600), not '0'")


def test_decision_times_pool_and_quantiles():
    a, b = DecisionTimes(), DecisionTimes()
    for s in (0.1, 0.2, 0.3):
        a.record(s)
    b.record(0.4, work=30)
    b.record(0.0, work=10)
    a.add(b)
    d = a.as_dict()
    assert d["timed_decisions"] == 5 and d["max_s"] == 0.4 and d["p99_s"] == 0.4
    assert d["mean_s"] == pytest.approx(0.2) and d["decisions_per_s"] == pytest.approx(5.0)
    assert d["searched"] == 2 and d["work_per_search"] == 20
    assert percentile([5.0, 1.0, 3.0], 0.5) == 3.0
    assert DecisionTimes().as_dict()["mean_s"] is None


def test_times_read_back_from_game_logs_match_the_table(tmp_path):
    config = ArenaConfig("riichi", ("rulebased", "greedy", "greedy", "greedy"), hands=1,
                         seed=5, log_dir=str(tmp_path))
    result = play_unit(config, 0)
    from_logs = times_from_logs([str(tmp_path)])
    assert set(from_logs) == {"rulebased", "greedy"}
    for name, row in from_logs.items():
        assert row["timed_decisions"] == result.fallbacks[name].decisions > 0
        assert row["timed_decisions"] == result.times[name].as_dict()["timed_decisions"]
        assert row["games"] == 4 and row["fallbacks"] == 0
        assert row["max_s"] == pytest.approx(max(result.times[name].seconds), abs=1e-6)
    r = subprocess.run([sys.executable, "-m", "adapter.local.timing", str(tmp_path)],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and json.loads(r.stdout) == json.loads(json.dumps(from_logs))


def test_a_fake_servers_log_is_not_counted(ntpu_match):
    """The match (tests/conftest.py, played once for the tests that read it): ntpu-server's
    own log beside its clients', rulebased,greedy,rulebased,rulebased over two hands."""
    figures = times_from_logs([str(ntpu_match)])
    assert set(figures) == {"rulebased", "greedy"}  # not the server's "rulebased-1,..." seats
    # each client's own games only: three rulebased clients and one greedy, two hands each
    assert {name: row["games"] for name, row in figures.items()} == {"rulebased": 6,
                                                                     "greedy": 2}
    assert all(row["decisions_per_s"] for row in figures.values())


def test_the_thinking_line_names_each_seats_own_limit(capsys):
    """The thinking line's heading "(budget 0.5 s)" stood over every seat it listed, an
    outside program among them, whose answers are timed against its platform's limit (mjai's
    2 s) and never the budget, and a seat with its own @budget=. Each is now listed with the
    limit it had; one heading stays where all had the run's budget."""
    program = Path(__file__).with_name("mjai_tsumogiri.py")
    tsumogiri = f"tg=mjai:{sys.executable} {program} --policy=tsumogiri"
    line = _thinking_line(capsys, f"{tsumogiri},rulebased,fast=rulebased@budget=0.2,rulebased",
                          "--budget", "0.5")
    assert line.startswith("thinking per decision: "), line
    assert "/s (budget 0.5 s), " in line.split("rulebased ")[1], line
    assert "/s (budget 0.2 s)" in line.split("fast ")[1], line
    assert line.split("tg ")[1].endswith("/s (mjai's 2 s, 30 s the first)"), line
    line = _thinking_line(capsys, f"{tsumogiri},rulebased,rulebased,rulebased",
                          "--seat-limit", "9")
    assert line.split("tg ")[1].endswith("/s (--seat-limit 9 s)"), line
    assert line.split("rulebased ")[1].split(", tg")[0].endswith("/s (no limit)"), line
    line = _thinking_line(capsys, "rulebased,fast=rulebased@budget=0.5,rulebased,rulebased",
                          "--budget", "0.5")
    assert line.startswith("thinking per decision (budget 0.5 s): fast "), line
    assert "(budget" not in line.split(": ", 1)[1], line


def _thinking_line(capsys, policies: str, *options: str) -> str:
    r = mjbot_here(capsys, "arena", "--policies", policies, "--hands", "1", "--seed", "3",
                   "--no-log", "--max-fallback-share", "1", *options)
    assert r.returncode == 0, r.stderr
    return next(x for x in r.stdout.splitlines() if x.startswith("thinking per decision"))
