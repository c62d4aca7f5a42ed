"""A ``--budget`` within a ninth of the brain's margin (0.25 s; 0.3 s for NTPU) leaves mc only
a tenth of itself to think: every command that takes one says so in one warning line at the start,
naming the margin, instead of a run whose mc quietly played on almost no search."""

from __future__ import annotations

import json
import subprocess

import pytest

from adapter.own_python import own_python
from tests.in_process import mjbot_here


def _warnings(stderr: str) -> list[str]:
    """The warning lines' texts (the CLI logs JSON lines where stderr is no terminal)."""
    texts = []
    for line in stderr.splitlines():
        if line.startswith("{"):
            entry = json.loads(line)
            if entry.get("level") == "warning":
                texts.append(entry["event"])
    return texts


def test_arena_warns_of_each_budget_at_or_below_the_margin(capsys: pytest.CaptureFixture[str]
                                                           ) -> None:
    # MCR's one-hand games and two policy names: one wall set is 4 short hands (riichi with
    # two rulebased seats played 70 east-game hands, ~11 s, for a warning said at the start)
    r = mjbot_here(capsys, "arena", "--variant", "mcr", "--policies", "mc@budget=0.1,mc,mc,mc",
                   "--budget", "0.25", "--hands", "1", "--no-log",
                   "--max-fallback-share", "1")
    assert r.returncode == 0, r.stderr
    assert _warnings(r.stderr) == [
        "seat 'mc@budget=0.1': leaves a policy that thinks (mc) only a tenth of it, 0.01 s a "
        "decision, after the 0.25 s margin kept back for sending the answer: it falls back "
        "where it needs more; give more than 0.278 s",
        "--budget 0.25: leaves a policy that thinks (mc) only a tenth of it, 0.025 s a "
        "decision, after the 0.25 s margin kept back for sending the answer: it falls back "
        "where it needs more; give more than 0.278 s"]


@pytest.mark.parametrize("command, budget, margin", [("ntpu", "0.33", "0.3"),
                                                     ("mjai", "0.27", "0.25")])
def test_a_platform_client_warns_with_its_own_margin(command: str, budget: str,
                                                     margin: str) -> None:
    """The NTPU client keeps 0.3 s back, so 0.33 leaves mc the tenth (not at mjai's 0.25).
    Above the margin too: 0.27 less 0.25 is less than a tenth of 0.27, which mc then gets."""
    (warning,) = _client_warnings(command, "mc", budget)
    assert warning.startswith(f"--budget {budget}: leaves a policy that thinks (mc) only a "
                              "tenth of it") and f"after the {margin} s margin" in warning


@pytest.mark.parametrize("command, policy, budget", [
    ("mjai", "mc", "0.3"),         # 0.05 s to think: more than the tenth (0.03)
    ("ntpu", "mc", "0.34"),
    ("mjai", "rulebased", "0.1"),  # a fast policy: the budget is not its thinking time
])
def test_no_warning_where_no_thinking_policy_is_squeezed(command: str, policy: str,
                                                         budget: str) -> None:
    assert _client_warnings(command, policy, budget) == []


def _client_warnings(command: str, policy: str, budget: str) -> list[str]:
    """The warnings of ``mjbot COMMAND`` in its stdin form, given no input (it ends at once)."""
    form = ["--stdio"] if command == "ntpu" else []
    r = subprocess.run([*own_python("-m", "adapter.cli", command), *form, "--policy", policy,
                        "--budget", budget, "--no-log"], input="", capture_output=True,
                       text=True, timeout=120, check=False)
    assert r.returncode == 0, r.stderr
    return _warnings(r.stderr)
