"""The README's local test of the Botzone upload zip, run as written: each
`python3 dist/mjbot-botzone.zip ... < FILE` command of the Botzone section, in a Python with only
numpy and MahjongGB, on the file its text describes, does what the text says."""

from __future__ import annotations

import re
import shlex
import subprocess
from pathlib import Path

from adapter.platforms.botzone import KEEP_RUNNING
from adapter.platforms.botzone_bundle import build_botzone_bundle
from tests.test_botzone_bundle import bare_python  # noqa: F401  (the fixture)

README = Path(__file__).resolve().parent.parent / "README.md"
FIRST_TURN = "1\n0 1 1\n\n\n"  # a one-turn simple input: turn count, request, data, globaldata
DEAL = "1 0 0 0 0 B9 W4 W6 W5 T2 T9 T4 W1 T1 B8 B1 F1 W4"  # seat 1's, from a real game
# what each file holds, as the README describes it
FILES = {"turn.txt": FIRST_TURN, "session.txt": f"{FIRST_TURN}{DEAL}\n2 W2\n"}


def zip_commands() -> list[list[str]]:
    """The README's zip test commands, as argument lists."""
    section = README.read_text().split("## Botzone (MCR)", 1)[1].split("\n## ", 1)[0]
    spans = re.findall(r"`(python3 dist/mjbot-botzone\.zip[^`]*)`", section.replace("\n", " "))
    return [shlex.split(span) for span in spans]


def test_the_readme_zip_tests_do_what_their_text_says(tmp_path, bare_python):  # noqa: F811
    """The README gave one command, `--no-keep-running < turn.txt`, and said it kept running
    and answered each request of a session file: one-shot, it answered the first turn and
    echoed the later requests back as globaldata. It names the one-shot test and the
    kept-running one now, each with the file it reads."""
    build_botzone_bundle(tmp_path / "dist")
    commands = zip_commands()
    assert sorted(c[-1] for c in commands) == ["session.txt", "turn.txt"], commands
    for command in commands:
        *argv, redirect, name = command
        assert redirect == "<" and argv[:2] == ["python3", "dist/mjbot-botzone.zip"], command
        (tmp_path / name).write_text(FILES[name])
        with open(tmp_path / name) as stdin:
            done = subprocess.run([bare_python, *argv[1:]], stdin=stdin, cwd=tmp_path,
                                  capture_output=True, text=True, timeout=60)
        assert done.returncode == 0 and not done.stderr, done.stderr
        out = done.stdout.splitlines()
        if name == "turn.txt":  # response, debug, data: nothing of the input echoed back
            assert out == ["PASS", "", '{"v": 1}'], out
        else:  # every request answered, each answer before the marker
            answers = [line for line in out if line and line != KEEP_RUNNING
                       and not line.startswith("{")]
            assert out.count(KEEP_RUNNING) == 3, out
            assert answers[:2] == ["PASS", "PASS"] and answers[2].startswith("PLAY "), out
