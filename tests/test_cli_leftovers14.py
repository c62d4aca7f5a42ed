"""Command-line leftovers: the early SIGTERM line's command words."""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from adapter import early_stop
from adapter.cli import build_parser
from tests.serve_helpers import free_port
from tests.test_early_stop import stopped_while_starting

ROOT = Path(__file__).resolve().parents[1]


def _stopped_while_starting(argv: list[str]) -> subprocess.CompletedProcess[str]:
    """`mjbot ARGV` stopped where its own imports are done and no command has run."""
    return stopped_while_starting(["mjbot", *argv])


def test_an_early_sigterm_names_the_whole_command_and_no_option_value() -> None:
    """`mjbot nn iterate` stopped in its first second said `mjbot nn: stopped`; it names the
    command as typed now, as the command's own lines do, and still no option's value."""
    done = _stopped_while_starting(["--log-level", "info", "nn", "iterate",
                                    "--run", "s3cr3t-run"])
    assert done.returncode == -signal.SIGTERM, done
    assert done.stderr == "mjbot nn iterate: stopped (SIGTERM)\n", done.stderr


@pytest.mark.parametrize(("argv", "named"), [
    (["models", "eval", "--data", "x"], "models eval"),
    (["dataset", "import", "--token", "iterate"], "dataset import"),
    (["nn", "--token", "s3cr3t"], "nn"),  # a value that is no command of nn's: not said
    (["serve", "conf.toml", "--status", "127.0.0.1:0"], "serve"),  # a positional: not said
    (["bench", "idleread"], "bench"),  # bench names itself so (a choice, not a command)
    (["--log-level", "nn", "tenhou"], "tenhou"),
    ([], ""),
])
def test_the_words_taken(argv: list[str], named: str) -> None:
    assert early_stop._command(argv) == named


def test_the_nested_commands_are_the_parsers_own() -> None:
    """The handler speaks before the parser is built: its table of nested commands is held
    here to the parser's, so that a command added there is named in full here too."""
    nested: dict[str, tuple[str, ...]] = {}
    top = next(a for a in build_parser()._actions
               if isinstance(a, argparse._SubParsersAction))
    for name, parser in top.choices.items():
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                nested[name] = tuple(action.choices)
                assert not any(isinstance(a, argparse._SubParsersAction)
                               for p in action.choices.values() for a in p._actions)
    assert nested == early_stop.NESTED


def test_an_arena_stopped_early_or_later_says_it_in_one_wording() -> None:
    """Stopped in its first second an arena said `mjbot arena: stopped (SIGTERM)`; stopped
    later (here while its listening seat waits for a bot, the run's own handler set) it said
    `mjbot: SIGTERM: stopping with what has finished` before its `mjbot arena: stopped
    (SIGTERM) ...` line. Every stop line now names the command, the signal in brackets."""
    early = _stopped_while_starting(["arena", "--hands", "1"])
    assert early.stderr == "mjbot arena: stopped (SIGTERM)\n", early.stderr
    proc = subprocess.Popen(
        [sys.executable, "-m", "adapter.cli", "arena", "--policies",
         f"mjai-tcp:127.0.0.1:{free_port()},rulebased,rulebased,rulebased", "--hands", "1",
         "--no-log"], cwd=ROOT, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True, env={**os.environ, "PYTHONPATH": str(ROOT)})
    try:
        assert proc.stderr is not None
        assert "waiting for an mjai client" in proc.stderr.readline()  # the run is under way
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    lines = [line for line in err.splitlines() if line]
    assert lines == ["mjbot arena: stopping (SIGTERM) with what has finished",
                     "mjbot arena: stopped (SIGTERM) before the first wall set was finished: "
                     "no figures"], err


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_a_view_stopped_after_start_up_says_so_in_one_line(tmp_path: Path,
                                                           signum: int) -> None:
    """`mjbot view` stopped once it listened exited 0 with no line at all (a stop, or a view
    gone for another reason?); it ends with one line now, `view: stopped` and the signal, as
    serve ends with `serve: stopped`."""
    proc = subprocess.Popen([sys.executable, "-m", "adapter.cli", "view", str(tmp_path)],
                            cwd=ROOT, stdin=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True,
                            env={**os.environ, "PYTHONPATH": str(ROOT)})
    try:
        assert proc.stderr is not None
        assert "(Ctrl-C to stop)" in proc.stderr.readline()
        proc.send_signal(signum)
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 0, err
    lines = err.splitlines()
    assert len(lines) == 1, err
    said = json.loads(lines[0])  # stderr is no terminal: a JSON log line, as serve's
    assert (said["event"], said["signal"]) == ("view: stopped", signal.Signals(signum).name)


def _mjbot(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "adapter.cli", *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=600,
                          stdin=subprocess.DEVNULL, env={**os.environ, "PYTHONPATH": str(ROOT)})


def test_models_eval_refuses_held_out_data_the_models_were_trained_on(tmp_path: Path) -> None:
    """`models eval --data` took a held-out set of the very datasets the models were trained
    on (the same folder, a copy, or the same self-play walls, or the same records imported
    again) and printed in-sample figures without a word, where `nn train --holdout` refuses
    each. The weights now record their training data's digests and eval checks --data by
    them as training checks --holdout; weights that record none are warned about."""
    from tests.shared_data import DATA

    def selfplay(name: str, policies: str, seed: str) -> str:
        r = _mjbot("selfplay", "--policies", policies, "--hands", "1", "--seed", seed,
                   "--out", str(tmp_path / name))
        assert r.returncode == 0, r.stderr
        return str(tmp_path / name)

    def imported(name: str, *files: Path) -> str:
        r = _mjbot("dataset", "import", "--out", str(tmp_path / name), *map(str, files))
        assert r.returncode == 0, r.stderr
        return str(tmp_path / name)

    train = selfplay("train", "greedy,greedy,greedy,rulebased", "9")
    same_walls = selfplay("walls", "rulebased,rulebased,rulebased,rulebased", "9")
    other = selfplay("other", "greedy,greedy,greedy,rulebased", "10")
    convlog = sorted((DATA / "tenhou" / "convlog_tenhou6_json").glob("*.json"))
    records = imported("records", *convlog[:4])
    again = imported("again", *reversed(convlog[:2]))
    weights = str(tmp_path / "m.npz")
    r = _mjbot("models", "train", "--variant", "riichi", "--data", train, records, "--out",
               weights, "--max-decisions", "10", "--epochs", "1")
    assert r.returncode == 0, r.stderr
    base = ["models", "eval", "--variant", "riichi", "--model", weights, "--real",
            str(convlog[5]), "--bootstrap", "0", "--no-cache", "--data"]
    for held, said in ((train, f"--data {train}: 1 of its shards are ones {weights} was "
                               "trained on"),
                       (same_walls, f"--data {same_walls} was dealt the walls {weights} was "
                                    "trained on (riichi self-play seed 9)"),
                       (again, f"--data {again}: 2 of its 2 hands are ones {weights} was "
                               "trained on")):
        r = _mjbot(*base, held)
        assert r.returncode == 2 and said in r.stderr, r.stderr
        assert r.stderr.count("\n") == 1 and "Traceback" not in r.stderr, r.stderr
    r = _mjbot(*base, other)
    assert r.returncode == 0 and "not checked" not in r.stderr, r.stderr
    r = _mjbot(*base[:5], str(ROOT / "brain" / "data" / "opponents_riichi.npz"), *base[6:],
               other)  # the shipped weights record no training data: said, then measured
    assert r.returncode == 0 and "--data not checked against the data" in r.stderr, r.stderr
