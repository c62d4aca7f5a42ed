"""`mjbot nn probe-expert`: two searches of the same turns, counted against the fast move, so a
noisy expert is seen before its data is made; the turn gate must show in the figures."""

from __future__ import annotations

import json

import pytest

from adapter.expert_probe import probe_expert
from brain.policies.mc.config import McConfig
from tests.in_process import mjbot_here


def test_the_command_reports_in_json_and_the_turn_gate_shows_in_the_overrules(
        capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """Two playouts per candidate: the gate reads their standard errors all the same (it
    still holds 9 of the 49 turns, against 0 ungated). The ungated probe is the command's own
    run (`mjbot nn probe-expert --json`, in this process: it is sent no signal), so its JSON is
    checked and read as the figures the gated probes are set against; a separate command test
    played the very same game (riichi, 1 game, seed 5, playouts=2, fast=greedy) a second time.
    The searches are asked in the game's first hand only (--hands 1): the whole east game's
    223 turns made the three probes about five times as long, for the same checks."""
    monkeypatch.setenv("MJBOT_MC", "playouts=2,fast=greedy")
    r = mjbot_here(capsys, "nn", "probe-expert", "--variant", "riichi", "--games", "1",
                   "--seed", "5", "--hands", "1", "--json")
    assert r.returncode == 0, r.stderr
    free = json.loads(r.stdout)
    # one hand: at most the live wall's 70 draws and 4 kan draws are turns
    assert 40 < free["turns"] <= 75 and 0 <= free["overrule_share"] <= 1
    assert free["overrules"] > 5 and free["gate_held"] == 0
    assert 0 < free["overrules_repeated"] <= free["overrules_overruled_again"] <= 1
    first = free["examples"][0]
    assert first["first"] != first["fast"] and not first["fast"].startswith("(")  # actions
    gated = probe_expert("riichi", McConfig(playouts=2, fast="greedy", turn_z=2.0), 1,
                         5, hands=1).figures()
    assert gated["turns"] == free["turns"]  # the same game: the fast move plays it
    assert gated["gate_held"] > 0 and gated["overrules"] < free["overrules"]
    # no discard gains ten typical wins over another: nothing clears such a margin
    held = probe_expert("riichi", McConfig(playouts=2, fast="greedy", turn_margin=10.0), 1,
                        5, hands=1).figures()
    assert held["overrules"] == 0 and held["overrule_share"] == 0
    assert held["gate_held"] > 0 and held["overrules_repeated"] is None


@pytest.mark.parametrize(("env_mc", "args", "message"), [
    ("playouts=oops", [], "playouts needs an int"),
    ("", ["--games", "0"], "--games must be at least 1"),
    ("", ["--variant", "go"], "--variant: invalid choice: 'go'"),
    ("", ["--hands", "-1"], "--hands must be at least 0"),
])
def test_the_command_refuses_bad_options_in_one_line(
        capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, env_mc: str,
        args: list[str], message: str) -> None:
    """In this process (mjbot's main()): a child paid Python's start for each refusal."""
    monkeypatch.setenv("MJBOT_MC", env_mc)
    r = mjbot_here(capsys, "nn", "probe-expert", *args)
    assert r.returncode == 2 and len(r.stderr.splitlines()) == 1, r.stderr
    assert message in r.stderr and "Traceback" not in r.stderr


def test_a_stop_ends_the_searches_and_keeps_the_figures_so_far() -> None:
    """Once the stop names a reason no turn is searched: the game in play ends at the fast
    move's speed, no other game starts, and the figures are the turns searched before (a
    stop ended the process with nothing printed, hours of searches lost)."""
    asked = [0]

    def stop() -> str:  # a SIGTERM after the first 30 turns' questions
        asked[0] += 1
        return "SIGTERM" if asked[0] > 30 else ""

    config = McConfig(playouts=2, fast="greedy")
    tally = probe_expert("riichi", config, 3, 5, hands=1, stop=stop)
    figures = tally.figures()
    assert figures["stopped"] == "SIGTERM" and figures["games"] == 0
    assert 0 < figures["turns"] < 30
    whole = probe_expert("riichi", config, 1, 5, hands=1).figures()
    assert whole["stopped"] == "" and whole["games"] == 1 and whole["turns"] > 30


def test_sigterm_prints_the_figures_so_far_and_exits_as_signalled(tmp_path) -> None:
    """The command itself: SIGTERM once it has begun, and it prints its JSON figures, saying
    it stopped, with 128 + 15 as a shell reports a signalled process."""
    import os
    import signal
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    env = {**os.environ, "MJBOT_MC": "playouts=4,fast=greedy"}
    proc = subprocess.Popen([sys.executable, "-m", "adapter.cli", "nn", "probe-expert",
                             "--variant", "riichi", "--games", "50", "--seed", "5", "--json"],
                            cwd=root, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    assert proc.stderr is not None
    started = proc.stderr.readline()
    assert "SIGTERM or Ctrl-C stops" in started, started
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 128 + signal.SIGTERM, err
    figures = json.loads(out)
    assert figures["stopped"] == "SIGTERM" and figures["games"] < 50
    assert "Traceback" not in err
