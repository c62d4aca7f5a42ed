"""`mjbot nn probe-expert`: two searches of the same turns, counted against the fast move, so a
noisy expert is seen before its data is made; the turn gate must show in the figures."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from adapter.expert_probe import probe_expert
from brain.policies.mc.config import McConfig


def test_the_turn_gate_shows_in_the_overrules():
    """Two playouts per candidate (the command's test plays two too): the gate reads their
    standard errors all the same (it still holds 42 turns, against 0 ungated), and the three
    probed games cost about a quarter less."""
    free = probe_expert("riichi", McConfig(playouts=2, fast="greedy"), 1, 5).figures()
    assert free["turns"] > 40 and free["overrules"] > 5 and free["gate_held"] == 0
    assert 0 < free["overrules_repeated"] <= free["overrules_overruled_again"] <= 1
    first = free["examples"][0]
    assert first["first"] != first["fast"] and not first["fast"].startswith("(")  # actions
    gated = probe_expert("riichi", McConfig(playouts=2, fast="greedy", turn_z=2.0), 1,
                         5).figures()
    assert gated["turns"] == free["turns"]  # the same game: the fast move plays it
    assert gated["gate_held"] > 0 and gated["overrules"] < free["overrules"]
    # no discard gains ten typical wins over another: nothing clears such a margin
    held = probe_expert("riichi", McConfig(playouts=2, fast="greedy", turn_margin=10.0), 1,
                        5).figures()
    assert held["overrules"] == 0 and held["overrule_share"] == 0
    assert held["gate_held"] > 0 and held["overrules_repeated"] is None


def _probe(env_mc: str, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "MJBOT_MC": env_mc}
    return subprocess.run([sys.executable, "-m", "adapter.cli", "nn", "probe-expert", *args],
                          capture_output=True, text=True, timeout=300, env=env)


def test_the_command_reports_in_json_and_refuses_bad_options_in_one_line():
    r = _probe("playouts=2,fast=greedy", "--variant", "riichi", "--games", "1", "--seed",
               "5", "--json")
    assert r.returncode == 0, r.stderr
    figures = json.loads(r.stdout)
    assert figures["turns"] > 40 and 0 <= figures["overrule_share"] <= 1
    for env_mc, args, message in (("playouts=oops", [], "playouts needs an int"),
                                  ("", ["--games", "0"], "--games must be at least 1"),
                                  ("", ["--variant", "go"], "unknown variant")):
        r = _probe(env_mc, *args)
        assert r.returncode == 2 and len(r.stderr.splitlines()) == 1, r.stderr
        assert message in r.stderr and "Traceback" not in r.stderr
