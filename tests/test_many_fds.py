"""Outside programs and fake servers in a process that holds more than 1024 descriptors (a
long tournament run, an arena with many seats and logs): select.select refused any descriptor
of 1024 or more (FD_SETSIZE) with a ValueError, so every read from and write to a program, the
wait for its exit, the Botzone judge and the NTPU server failed. Run in a child process, whose
descriptor table the test process does not share."""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
from pathlib import Path

import pytest

HELD = 1100  # descriptors held open, so that every pipe and socket made after lands above 1024
NEEDED = HELD + 300  # and room for what the runs below open themselves

SCRIPT = """
import json, os, resource, sys
soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
if soft != resource.RLIM_INFINITY and soft < NEEDED:
    resource.setrlimit(resource.RLIMIT_NOFILE, (NEEDED, hard))
held = [os.open(os.devnull, os.O_RDONLY) for _ in range(HELD)]
assert min(held) < 1024 < max(held), (min(held), max(held))

from adapter.fakes.botzone_judge import BotProcess
from adapter.fakes.ntpu_server import run_match
from adapter.local.arena import ArenaConfig, run_arena, summarize
from tests.test_botzone_judge import PLAYS_ITS_DRAWS, judge_with

said = {}
# the outside program: a few lines of Python playing its draws (what is tested is this
# process's pipes to it, above 1024; mjbot botzone was a start of mjbot and a policy a game)
plays = os.path.join(os.environ["MANY_FDS_DIR"], "plays_its_draws.py")
with open(plays, "w") as f:
    f.write(PLAYS_ITS_DRAWS)
seat = f"botzone-keep:{sys.executable} {plays}"
config = ArenaConfig("mcr", (seat, "greedy", "greedy", "greedy"), hands=1, seed=7,
                     seat_limit=30)
summary = summarize(config, run_arena(config), 1.0)
said["arena"] = [summary["hands"], summary["external_seats"][seat]]

judged = judge_with(0, "keep", [sys.executable, "-c", PLAYS_ITS_DRAWS], seed=8).play()
said["judge"] = [judged.verdicts, judged.reason]
one_shot = BotProcess(0, "simple", (sys.executable, "-c", "import sys; sys.stdin.read(); "
                                    "print('PASS')"), limit=30.0, later_limit=30.0)
one_shot.command = one_shot.command[:-1]
said["one_shot"] = one_shot.request("0 0 0")

match = run_match(1, ["greedy"] * 4, seed=5, transport="stdio", write_log=False,
                  time_limit=30.0, client_args=["--no-log"])
said["ntpu"] = [match.hands, match.exit_codes,
                [(s.illegal, s.timeouts, s.dropped) for s in match.stats]]
print(json.dumps(said))
""".replace("NEEDED", str(NEEDED)).replace("HELD", str(HELD))


def test_programs_and_fake_servers_work_with_descriptors_above_1024(tmp_path):
    hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    if hard != resource.RLIM_INFINITY and hard < NEEDED:
        pytest.skip(f"the hard RLIMIT_NOFILE ({hard}) forbids the {NEEDED} descriptors needed")
    done = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True,
                          timeout=600, cwd=Path(__file__).resolve().parents[1],
                          env={**os.environ, "MANY_FDS_DIR": str(tmp_path)})
    assert done.returncode == 0, done.stderr[-3000:]
    said = json.loads(done.stdout.splitlines()[-1])
    no_faults = {"late": 0, "crashed": 0, "garbage": 0, "illegal": 0, "restarts": 0,
                 "stderr_left_out": 0, "first_fault": None}
    hands, faults = said["arena"]
    assert hands > 0 and faults == no_faults, said["arena"]
    assert said["judge"][0] == {}, said["judge"]
    assert said["one_shot"] == "PASS"
    assert said["ntpu"] == [1, [0, 0, 0, 0], [[0, 0, False]] * 4]
