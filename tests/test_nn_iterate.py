"""`mjbot nn iterate` (issue 26): rounds of expert iteration that write their state after every
phase and resume where they stopped, never on a headline seed. A tiny config (a few hands, an
8-channel network, 2 playouts); the runs skip without torch as tests/test_nn_train.py does
(and fail instead under MJBOT_REQUIRE_TORCH=1)."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import platform
import re
import shlex
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from adapter.nn_iterate import (
    new_minus_current,
    round_seed,
    seats,
    shown_interval,
    shown_points,
)
from brain.nn.network import Network
from replay.learning.nn.iterate import IterateState
from replay.learning.seeds import HEADLINE_SEEDS, free_seed
from tests.in_process import mjbot_captured, mjbot_here


def need_torch() -> None:
    if os.environ.get("MJBOT_REQUIRE_TORCH") == "1":
        import torch  # noqa: F401  (asked for: a missing torch fails here)
    else:
        pytest.importorskip("torch", reason="torch is not installed (the [train] extra; "
                            "`make test-torch` installs a CPU build)")


# Three rulebased and three of a style: round 1 seats mc and three rulebased, round 2 takes the
# list on from its fourth name and seats mc and the style three times, so a round that reused
# round 1's seats is still caught. Each round is 4 seatings of mc and one policy (not the 12 of
# mc, a style and two rulebased, nor the 24 of four different policies: the selfplay phase is
# most of the test's time). The list's wrap-around is seats()'s, tested below.
OPPONENTS = "rulebased,rulebased,rulebased,style:value,style:value,style:value"


ROOT = Path(__file__).resolve().parent.parent
GOLDEN = ROOT / "tests" / "data" / "nn" / "golden_riichi.npz"


def _command(run: Path | str, rounds: int, *extra: str, hands: int = 1,
             start: Path | None = None) -> list[str]:
    """The tiny run's command line: a fresh 8-channel network, or ``start`` as --init (the
    tests that signal the run: its process then never imports torch, about 1.5 s of CPU a
    run, and the first generation is not what they test)."""
    network = ["--channels", "8", "--blocks", "1"] if start is None else ["--init", str(start)]
    return [sys.executable, "-m", "adapter.cli", "nn", "iterate", "--variant", "riichi",
            "--dir", str(run), "--rounds", str(rounds), "--hands", str(hands), "--opponents",
            OPPONENTS, "--selection-seed", "41", "--selection-hands", "1", "--workers", "1",
            *network, "--playouts", "2", "--epochs", "1", "--threads", "1", "--seed", "7",
            *extra]


Iterate = Callable[..., subprocess.CompletedProcess[str]]


@pytest.fixture
def iterate_here(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> Iterate:
    """The tiny run (:func:`_command`) through mjbot's main() in this process
    (tests/in_process.py), for runs sent no signal: a child paid Python's start (and torch's
    import) for each refusal. ``cwd`` becomes this test's working directory; the phases'
    children import this checkout from there (PYTHONPATH)."""
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(
        [str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])]))

    def run(run: Path | str, rounds: int, *extra: str, cwd: Path | None = None
            ) -> subprocess.CompletedProcess[str]:
        if cwd is not None:
            monkeypatch.chdir(cwd)
        return mjbot_here(capsys, *_command(run, rounds, *extra)[3:])
    return run


def _state(run: Path) -> dict[str, Any]:
    return dict(json.loads((run / "state.json").read_text()))


def _played_with(run: Path, number: int, started_from: str) -> Path:
    """The weights round ``number``'s dataset names (MJBOT_NN_WEIGHTS in its manifest), read
    from ``started_from`` (relative to the run folder ``run``)."""
    manifest = run / f"round-{number:03d}" / f"selfplay-{number:03d}" / "manifest.json"
    named = json.loads(manifest.read_text())["config"]["environment"]["MJBOT_NN_WEIGHTS"]
    return Path(os.path.normpath(run / started_from / named))


def _stamps(run: Path, number: int) -> dict[str, int]:
    folder = run / f"round-{number:03d}"
    return {p.name: p.stat().st_mtime_ns for p in (
        folder / f"selfplay-{number:03d}" / "manifest.json", folder / f"gen-{number:03d}.npz",
        folder / "selection.json")}


@pytest.fixture(scope="module")
def round_one(tmp_path_factory: pytest.TempPathFactory
              ) -> tuple[Path, subprocess.CompletedProcess[str]]:
    """One round of the tiny run, played once for the module from a working directory beside
    the run folder ("../run"); each test resumes a copy of its folder (_copy), so the round's
    self-play and training are not repeated per test. The run's return code and output are
    the tests' to check. It is sent no signal, so mjbot's main() runs it in this process (its
    phases are children as ever): a child of its own paid a Python start and torch's import
    (torch is loaded here already by need_torch). Its working directory, environment and
    logging setup are this fixture's alone."""
    need_torch()
    root = tmp_path_factory.mktemp("iterate")
    (root / "sub").mkdir()
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("PYTHONPATH", os.pathsep.join(
            [str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])]))
        patch.chdir(root / "sub")
        return root / "run", mjbot_captured(*_command("../run", 1)[3:])


def _copy(round_one: tuple[Path, subprocess.CompletedProcess[str]], tmp_path: Path
          ) -> tuple[Path, subprocess.CompletedProcess[str]]:
    """The module's round 1 as ``tmp_path/run``, for this test alone to resume."""
    played, r = round_one
    assert r.returncode == 0, r.stderr
    run = tmp_path / "run"
    shutil.copytree(played, run)
    return run, r


def test_rounds_resume_where_the_last_run_stopped(
        round_one: tuple[Path, subprocess.CompletedProcess[str]], tmp_path: Path,
        iterate_here: Iterate, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Round 2 is resumed from another working directory than round 1 was played from: the
    state's paths are the run folder's (they were the first working directory's). Round 1
    was played from ``sub/`` beside the run folder (the round_one fixture) and the folder
    copied here: the paths in its state are relative to the run folder, so they hold."""
    need_torch()
    run, r = _copy(round_one, tmp_path)
    assert re.fullmatch(r"round 1: [+-]\d+\.\d points/hand (\[n/a\]|\[\S+,\S+\]) -> "
                        r"(kept|old kept)", r.stdout.splitlines()[0]), r.stdout
    one = _state(run)
    assert [x["done"] for x in one["rounds"]] == [True]
    first = one["rounds"][0]
    assert set(first["phases"]) == {"selfplay", "train", "select"}
    assert first["phases"]["selfplay"]["seed"] == 8
    assert "--policies mc,rulebased,rulebased,rulebased" in \
        first["phases"]["selfplay"]["command"]
    train = first["phases"]["train"]["figures"]
    assert train["train_examples"] > 0 and train["examples_seen"] == train["train_examples"]
    assert one["current"] == first["weights_after"] == "round-001/gen-001.npz"
    assert first["phases"]["selfplay"]["data"] == "round-001/selfplay-001"
    # the dataset's own record names the weights as the phase was given them, relative to the
    # folder the run was started from ("../run/gen-000.npz", from sub/), not to the run
    # folder as state.json does: state.json says which folder that was
    assert first["phases"]["selfplay"]["started_from"] == "../sub"
    assert _played_with(run, 1, "../sub") == run / "gen-000.npz"
    Network.from_file(run / one["current"], "riichi")
    stamps = _stamps(run, 1)
    # as if round 1 was trained on another machine: resumed here, it keeps that machine
    first["phases"]["train"]["machine"]["platform"] = "elsewhere"
    (run / "state.json").write_text(json.dumps(one))

    # goes on at round 2, from the parent folder: round 1 is neither played nor trained again
    r = iterate_here("run", 2, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    two = _state(run)
    assert [x["done"] for x in two["rounds"]] == [True, True]
    assert two["rounds"][0] == first and _stamps(run, 1) == stamps
    second = two["rounds"][1]
    assert second["weights_before"] == first["weights_after"]
    assert second["phases"]["selfplay"]["seed"] == 9
    assert second["phases"]["selfplay"]["started_from"] == ".."  # run from tmp_path
    assert _played_with(run, 2, "..") == run / "round-001" / "gen-001.npz"
    # the opponents come in turn: round 2 seats the fourth to the sixth
    assert "--policies mc,style:value,style:value,style:value" in \
        second["phases"]["selfplay"]["command"]
    # the commands are recorded to be run from the run folder, whatever folder ran them
    assert two["commands"] == "run from the run folder"
    assert "--data round-002/selfplay-002 round-001/selfplay-001 " in \
        second["phases"]["train"]["command"]
    assert "--init round-001/gen-001.npz " in second["phases"]["train"]["command"]
    assert second["phases"]["selfplay"]["command"].startswith(
        "MJBOT_NN_WEIGHTS=round-001/gen-001.npz ")
    # each phase names the machine that ran it: a resumed run keeps the earlier ones
    assert {p["machine"]["platform"] for p in second["phases"].values()} == {
        platform.platform()}
    assert two["rounds"][0]["phases"]["train"]["machine"]["platform"] == "elsewhere"
    assert two["machine"]["platform"] == platform.platform()  # the latest run's
    # the recorded selection, run again from the run folder, plays the same hands
    # (through main() in this process, from the run folder: the words are the recorded line's,
    # and no signal is sent; a child paid a Python start for it)
    word = shlex.split(second["phases"]["select"]["command"])
    assert word[0] == "mjbot"
    monkeypatch.chdir(run)
    rerun = mjbot_here(capsys, *word[1:])
    monkeypatch.chdir(tmp_path)
    assert rerun.returncode == 0, rerun.stderr
    arena = json.loads((run / "round-002" / "selection.json").read_text())
    assert arena["hands"] == second["phases"]["select"]["hands"]
    points, _ = new_minus_current(arena, "nn@round-002/gen-002.npz", "nn@round-001/gen-001.npz")
    assert points is not None and round(points, 1) == second["phases"]["select"]["difference"]
    # the weights name their data and start by name: the window's folders are told apart
    weights = run / second["phases"]["train"]["weights"]
    meta = Network.from_file(weights, "riichi").meta["training"]
    assert meta["data"] == ["selfplay-002", "selfplay-001"]
    assert meta["config"]["init"] == Path(second["weights_before"]).name

    # as if killed during round 2's selection: only that phase runs again
    state = _state(run)
    del state["rounds"][1]["phases"]["select"]
    state["rounds"][1]["done"] = False
    state["current"] = second["weights_before"]
    (run / "state.json").write_text(json.dumps(state))
    before = _stamps(run, 2)
    r = iterate_here(run, 2)
    assert r.returncode == 0, r.stderr
    again = _state(run)
    assert again["rounds"][0] == first
    assert again["rounds"][1]["done"] and again["rounds"][1]["phases"]["train"] == \
        second["phases"]["train"] and again["rounds"][1]["phases"]["selfplay"] == \
        second["phases"]["selfplay"]
    after = _stamps(run, 2)
    assert after["manifest.json"] == before["manifest.json"]
    assert after["gen-002.npz"] == before["gen-002.npz"]
    assert after["selection.json"] != before["selection.json"]


@pytest.mark.parametrize("seed", sorted(HEADLINE_SEEDS))
def test_a_headline_seed_is_refused_for_selection(tmp_path: Path, seed: int,
                                                  iterate_here: Iterate) -> None:
    r = iterate_here(tmp_path / "run", 1, "--selection-seed", str(seed))
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert f"--selection-seed {seed} is a headline seed" in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "run").exists()


def test_derived_seeds_never_land_on_a_headline_or_the_selection_seed() -> None:
    assert free_seed(24) == 10_024 and free_seed(5) == 5
    assert round_seed(23, 1, 41) == 10_024  # 24 is the riichi headline
    assert round_seed(40, 1, 41) == 10_041  # the selection walls stay unseen in training
    seeds = {round_seed(0, r, 41) for r in range(1, 200)}
    assert len(seeds) == 199 and not seeds & {*HEADLINE_SEEDS, 41}
    assert seats(["a", "b"], 1) == "mc,a,b,a" and seats(["a", "b"], 2) == "mc,b,a,b"


def test_the_kept_difference_is_new_minus_current_whichever_way_the_arena_names_it(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The arena names a pair in sorted order: with the new weights sorting after the current
    ones, its figure is current - new and must change sign (a run kept a generation that was
    121 points/hand behind before this)."""
    b = tmp_path / "z.npz"
    b.write_bytes((Path(__file__).parent / "data" / "nn" / "golden_riichi.npz").read_bytes())
    out = tmp_path / "sel.json"
    r = mjbot_here(capsys, "arena", "--variant", "riichi", "--policies",  # no signal: in-process
                   f"nn@{b},rulebased,rulebased,rulebased", "--hands", "4", "--seed", "43",
                   "--no-log", "--no-progress", "--json", str(out))
    assert r.returncode == 0, r.stderr
    arena = json.loads(out.read_text())
    (pair, figures), = arena["differences"].items()
    assert pair == f"nn@{b}-rulebased"  # sorted: "nn@..." before "rulebased"
    points = arena["policies"][f"nn@{b}"]["points_per_hand"] - \
        arena["policies"]["rulebased"]["points_per_hand"]
    assert points != 0
    got, ci = new_minus_current(arena, "rulebased", f"nn@{b}")  # new sorts after current
    assert got is not None and got == pytest.approx(-figures["points_per_hand"])
    assert (got > 0) == (points < 0)  # new - current has the sign of new's points - current's
    assert ci == [None if figures["ci95"][1] is None else -figures["ci95"][1],
                  None if figures["ci95"][0] is None else -figures["ci95"][0]]
    same, _ = new_minus_current(arena, f"nn@{b}", "rulebased")
    assert same == figures["points_per_hand"]


def test_a_resumed_run_refuses_options_that_differ_from_the_ones_on_record(
        round_one: tuple[Path, subprocess.CompletedProcess[str]], tmp_path: Path,
        iterate_here: Iterate) -> None:
    """Checked before anything runs: the state is left as it was (a changed option on a
    resumed run was taken silently, --init ignored)."""
    need_torch()
    run, _ = _copy(round_one, tmp_path)
    before = (run / "state.json").read_text()
    for extra, said in ((("--lr", "0.001"), "--lr 0.001 differs from 0.0005"),
                        (("--hands", "2"), "--hands 2 differs from 1"),
                        (("--init", str(run / "round-001" / "gen-001.npz")),
                         "started from a fresh network")):
        r = iterate_here(run, 2, *extra)
        assert r.returncode == 2 and said in r.stderr, r.stderr
        assert len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert (run / "state.json").read_text() == before
    assert not (run / "round-002").exists()


def test_a_run_from_init_resumed_without_it_is_told_so(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A run started from --init and resumed without it was told '--channels 64 differs
    from 8' (a fresh network's default, an option the user never typed). Now the line names
    the missing --init. The first run is killed once its state is written; the refused
    resume runs in this process (no signal: a child paid Python's start for one line)."""
    need_torch()
    run = tmp_path / "run"
    base = [sys.executable, "-m", "adapter.cli", "nn", "iterate", "--variant", "riichi",
            "--dir", str(run), "--rounds", "1", "--selection-seed", "41", "--threads", "1"]
    _killed_once_ready([*base, "--init", str(GOLDEN)],
                       lambda: (run / "state.json").exists() and "options" in _state(run))
    r = mjbot_here(capsys, *base[3:])
    assert r.returncode == 2 and r.stderr.splitlines() == [
        f"mjbot nn iterate: no --init: the run in {run} started from --init weights of sha256 "
        f"{_state(run)['start_sha256'][:12]}; give the same, or another --dir"], r.stderr


def test_an_nn_opponent_named_from_another_folder_is_known_by_its_weights(
        tmp_path: Path, iterate_here: Iterate) -> None:
    """A run given --opponents nn@w.npz in folder a, resumed from folder b as nn@../a/w.npz
    (the same file), was refused: '--opponents nn@../a/w.npz,rulebased differs from
    nn@w.npz,rulebased'. The record knows each nn@FILE opponent by its weights' SHA-256 (and
    the file resolved): the same file by another path is the same opponent (here the line
    names the --lr given otherwise, the option after it), and other weights at the path on
    record are refused in one line naming their hashes and the run's file. The first run is
    killed once its state is written; the resumes run in this process."""
    need_torch()
    a, b, run = tmp_path / "a", tmp_path / "b", tmp_path / "run"
    a.mkdir()
    b.mkdir()
    shutil.copy(ROOT / "brain" / "data" / "nn_riichi.npz", a / "w.npz")
    shutil.copy(ROOT / "brain" / "data" / "nn_riichi_gen4.npz", b / "w.npz")  # other weights
    _killed_once_ready(_command(run, 1, "--opponents", "nn@w.npz,rulebased"),
                       lambda: (run / "state.json").exists() and "options" in _state(run),
                       cwd=a)
    before = (run / "state.json").read_text()
    same = iterate_here(run, 1, "--opponents", "nn@../a/w.npz,rulebased", "--lr", "0.001",
                        cwd=b)
    assert same.returncode == 2 and same.stderr.splitlines() == [
        f"mjbot nn iterate: --lr 0.001 differs from 0.0005, the run's in {run / 'state.json'}; "
        "give the same, or another --dir"], same.stderr
    other = iterate_here(run, 1, "--opponents", "nn@w.npz,rulebased", cwd=b)
    digests = [hashlib.sha256((d / "w.npz").read_bytes()).hexdigest()[:12] for d in (b, a)]
    assert other.returncode == 2 and other.stderr.splitlines() == [
        "mjbot nn iterate: --opponents nn@w.npz,rulebased differs from nn@w.npz,rulebased, "
        f"the run's in {run / 'state.json'} (as played, nn@FILE by its weights' SHA-256: "
        f"nn@sha256:{digests[0]},rulebased where the run's were nn@sha256:{digests[1]},"
        f"rulebased; the run's files: {a.resolve() / 'w.npz'}); give the same, or another "
        "--dir"], other.stderr
    assert (run / "state.json").read_text() == before


@pytest.mark.parametrize(("extra", "said"), [
    (("--init", "brain/data/nn_mcr.npz"), "the weights are for 'mcr', not 'riichi'"),
    (("--init", "brain/data/opponents_riichi.npz"), "is not a network's weights"),
    (("--init", str(GOLDEN)), "--channels 8: --init"),  # it was ignored: GOLDEN is 16 x 1
    (("--lr", "-1"), "--lr must be a number above 0, not -1.0"),
    (("--lr", "nan"), "--lr must be a number above 0, not nan"),
    (("--dir", "FILE"), "is a file, not a folder"),
    (("--dir", "FILE/run"), "FILE is a file, not a folder"),
])
def test_bad_input_is_refused_before_a_game_is_played(
        tmp_path: Path, extra: tuple[str, str], said: str, iterate_here: Iterate) -> None:
    """One line, and no run folder left behind to stick to a later run (a bad --init was
    found after a round of self-play, recorded done)."""
    afile = tmp_path / "FILE"
    afile.write_text("")
    args = [x.replace("FILE", str(afile)) for x in extra]
    r = iterate_here(tmp_path / "run", 1, *args, cwd=ROOT)
    assert r.returncode == 2 and said in r.stderr, r.stderr
    assert len(r.stderr.strip().splitlines()) == 1 and "Traceback" not in r.stderr
    assert not (tmp_path / "run").exists() and afile.read_text() == ""


def test_a_variant_mc_cannot_play_is_refused(tmp_path: Path, iterate_here: Iterate) -> None:
    """mass has no opponent models, so no expert: it failed inside self-play and left a
    'mass run' in the folder."""
    r = iterate_here(tmp_path / "run", 1, "--variant", "mass")
    assert r.returncode == 2 and "no opponent models for 'mass'" in r.stderr, r.stderr
    assert "mc is the expert of every round" in r.stderr
    assert not (tmp_path / "run").exists()
    r = iterate_here(tmp_path / "run", 1, "--variant", "poker")
    assert r.returncode == 2 and "--variant: invalid choice: 'poker'" in r.stderr


def test_cuda_is_refused_where_torch_sees_none(tmp_path: Path, iterate_here: Iterate) -> None:
    need_torch()
    import torch

    if torch.cuda.is_available():
        pytest.skip("this torch sees a CUDA device")
    r = iterate_here(tmp_path / "run", 1, "--device", "cuda")
    assert r.returncode == 2 and "--device cuda: this torch" in r.stderr, r.stderr
    assert len(r.stderr.strip().splitlines()) == 1 and not (tmp_path / "run").exists()


# A sitecustomize for the run's processes (on their PYTHONPATH): the self-play's
# play_selfplay_unit, as it is, but first making the file $UNIT_BEGAN_ENV names, so that a
# test can signal the run once a wall set is under way. It changes nothing the run does.
UNIT_BEGAN_ENV = "MJBOT_TEST_UNIT_BEGAN"
_UNIT_BEGAN_HOOK = f"""
import os
if os.environ.get({UNIT_BEGAN_ENV!r}):
    import adapter.local.selfplay as selfplay
    play = selfplay.play_selfplay_unit
    def play_selfplay_unit(config, unit):
        open(os.environ[{UNIT_BEGAN_ENV!r}], "a").close()
        return play(config, unit)
    selfplay.play_selfplay_unit = play_selfplay_unit
"""


def _terminated_during_self_play(run: Path, hands: int, *extra: str, cwd: Path = ROOT,
                                 ctrl_c: bool = False, in_the_wall_set: bool = False
                                 ) -> tuple[subprocess.Popen[str], str]:
    """A one-round run (``extra`` added to its options, started in ``cwd``) in a session of
    its own, sent SIGTERM (to its process alone, as `kill PID` does), or with ``ctrl_c``
    SIGINT to its whole group (as a terminal's Ctrl-C), once its self-play child has begun;
    the ended process and its stderr. It starts with SIGINT live, as from a terminal: a suite
    run as a background job (a script's `make test &`) ignores SIGINT, which the run would
    inherit and rightly keep ignoring. ``in_the_wall_set``: once the self-play's first unit
    (wall set) has begun to play (:data:`_UNIT_BEGAN_HOOK`), not merely its folder made (a
    signal there, on a loaded machine, came before anything was played). What is left in its
    group is the caller's to check, then :func:`_kill_group`."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    began = run.parent / f"{run.name}-unit-began"
    if in_the_wall_set:
        hook = run.parent / f"{run.name}-hook"
        hook.mkdir()
        (hook / "sitecustomize.py").write_text(_UNIT_BEGAN_HOOK)
        env.update({"PYTHONPATH": os.pathsep.join([str(ROOT), str(hook)]),
                    UNIT_BEGAN_ENV: str(began)})
    proc = subprocess.Popen(_command(run, 1, *extra, hands=hands, start=GOLDEN),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=env, cwd=cwd, start_new_session=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    ready = began if in_the_wall_set else run / "round-001" / "selfplay-001"
    try:
        deadline = time.monotonic() + 120
        while not ready.exists():  # the child has begun (its wall set, in_the_wall_set)
            assert time.monotonic() < deadline and proc.poll() is None, proc.stderr
            time.sleep(0.05)
        if ctrl_c:
            os.killpg(proc.pid, signal.SIGINT)
        else:
            os.kill(proc.pid, signal.SIGTERM)
        _, stderr = proc.communicate(timeout=120)
    except BaseException:
        _kill_group(proc)
        raise
    return proc, stderr


def _killed_once_ready(command: list[str], ready: Callable[[], bool], cwd: Path = ROOT
                       ) -> None:
    """Run ``command`` (an `nn iterate`) in a session of its own until ``ready()``, then kill
    its whole group outright: the run's state is what the test reads."""
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env={**os.environ, "PYTHONPATH": str(ROOT)}, cwd=cwd,
                            start_new_session=True)
    try:
        deadline = time.monotonic() + 120
        while not ready():
            assert time.monotonic() < deadline and proc.poll() is None, proc.stderr
            time.sleep(0.05)
    finally:
        _kill_group(proc)
        proc.communicate(timeout=60)


def _kill_group(proc: subprocess.Popen[str]) -> None:
    """Kill the run's group outright and wait till none of it runs: a phase that had just
    begun holds the run folder's lock (handed to it) until it has died too."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)
    deadline = time.monotonic() + 60
    while any(_living(pid) for pid in _group(proc.pid)) and time.monotonic() < deadline:
        time.sleep(0.02)


def _group(pgid: int) -> list[int]:
    """The processes of group ``pgid`` (Linux's /proc; none read elsewhere)."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            if int(stat.read_text().rsplit(")", 1)[1].split()[2]) == pgid:
                found.append(int(stat.parent.name))
        except (OSError, IndexError, ValueError):
            continue
    return found


def test_sigterm_during_self_play_stops_the_phase_and_leaves_it_undone(
        tmp_path: Path) -> None:
    """SIGTERM to the run's process alone (as `kill PID` sends it): the self-play child is
    told and waited for, the phase is not recorded done, and no process is left to write a
    dataset into the run folder later (the child played on as an orphan before)."""
    need_torch()
    run = tmp_path / "run"
    proc, stderr = _terminated_during_self_play(run, hands=40)
    try:
        with pytest.raises(ProcessLookupError):  # the child went with it
            for _ in range(50):
                os.killpg(proc.pid, 0)
                time.sleep(0.1)
    finally:
        _kill_group(proc)
    assert proc.returncode == 128 + signal.SIGTERM, stderr
    assert "Traceback" not in stderr
    assert "stopped by SIGTERM in round 1, during its self-play" in stderr.splitlines()[-1]
    (one,) = _state(run)["rounds"]
    assert not one["done"] and "selfplay" not in one["phases"]


def test_ctrl_c_during_self_play_stops_the_phase_as_sigterm_does(tmp_path: Path) -> None:
    """Ctrl-C (SIGINT to the run's whole group, as a terminal sends it) ended the run at once
    ('mjbot nn: interrupted', exit 130) and killed its self-play outright, though the
    self-play was stopping by itself: its part was not recorded and the play since its last
    record was lost. It now stops as SIGTERM does: the phase is told and waited for, its
    part recorded, exit 130, the message naming SIGINT."""
    need_torch()
    run = tmp_path / "run"
    proc, stderr = _terminated_during_self_play(run, 60, ctrl_c=True)
    _kill_group(proc)
    assert proc.returncode == 128 + signal.SIGINT, stderr
    assert "Traceback" not in stderr and "interrupted" not in stderr
    assert "stopped by SIGINT in round 1, during its self-play" in stderr.splitlines()[-1]
    (one,) = _state(run)["rounds"]
    assert not one["done"] and "selfplay" not in one["phases"]
    (part,) = one["parts"]["selfplay"]
    assert part["stopped"] is True and part["from_wall_set"] == 1


def test_a_self_play_finished_under_sigterm_is_kept_naming_its_nn_opponent_from_the_run_folder(
        tmp_path: Path) -> None:
    """With one worker a stopped self-play finishes the wall set under way: a SIGTERM during
    a round's last (here only) wall set left a whole dataset, exit 0, yet the phase was
    recorded undone and the next run deleted and replayed it (an hour of mc games in a real
    round). The phase that ran to its end is now recorded; the run stops before training.

    Its recorded command is the one a whole round records: state.json's commands are to be
    run from the run folder, but an opponent's ``nn@FILE`` was recorded as given, relative to
    the folder the run was started from, so the recorded self-play, pasted in the run folder,
    named a file that is not there. It is now recorded relative to the run folder (its label
    and ``@budget=`` kept). Checked on this run, which records the self-play and stops: a
    whole round (training, selection) added nothing to what is recorded of it."""
    need_torch()
    shutil.copy(GOLDEN, tmp_path / "opponent.npz")
    run = tmp_path / "run"
    # the later --opponents wins (argparse): one opponent, in all three seats, named relative
    # to the run's working directory
    proc, stderr = _terminated_during_self_play(
        run, 1, "--opponents", "old=nn@opponent.npz@budget=5", cwd=tmp_path,
        in_the_wall_set=True)  # not before it began: then nothing was played
    _kill_group(proc)
    assert proc.returncode == 128 + signal.SIGTERM, stderr
    assert "stopped by SIGTERM in round 1, before its training" in stderr.splitlines()[-1]
    (one,) = _state(run)["rounds"]
    assert not one["done"] and list(one["phases"]) == ["selfplay"]
    manifest = json.loads((run / "round-001" / "selfplay-001" / "manifest.json").read_text())
    assert "stopped" not in manifest
    assert one["phases"]["selfplay"]["figures"]["hands"] == manifest["hands"]
    selfplay = one["phases"]["selfplay"]["command"]
    policies = shlex.split(selfplay)[shlex.split(selfplay).index("--policies") + 1]
    assert policies.split(",")[1:] == ["old=nn@../opponent.npz@budget=5"] * 3, selfplay
    assert (run / "../opponent.npz").is_file()


def test_a_fresh_mcr_run_starts_on_the_plan_planes(tmp_path: Path) -> None:
    """Without --init an MCR run's first generation read encoding 1, and every generation
    keeps its start's: the run never saw the 8-fan planner's planes that `nn train` gives
    every fresh MCR network. gen-000 is now of the variant's encoding (the run is killed
    once it is written: the rounds are not what is tested)."""
    need_torch()
    from brain.nn.encoding import encoding_for, num_planes

    run = tmp_path / "run"
    command = [sys.executable, "-m", "adapter.cli", "nn", "iterate", "--variant", "mcr",
               "--dir", str(run), "--rounds", "1", "--selection-seed", "41", "--channels", "8",
               "--blocks", "1", "--threads", "1"]
    _killed_once_ready(command, (run / "state.json").exists)  # written after gen-000.npz
    net = Network.from_file(run / "gen-000.npz", "mcr")
    assert net.encoding == encoding_for("mcr") != 1
    assert net.shape.planes == num_planes(encoding_for("mcr"))


def _living(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie only waits to be reaped)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except (FileNotFoundError, IndexError):
        return False


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the kernel's parent-death "
                    "signal is Linux's")
def test_a_run_killed_outright_takes_its_phase_with_it(tmp_path: Path) -> None:
    """SIGKILL cannot be answered, so the run cannot pass a stop on: the kernel sends the phase
    SIGTERM when the run dies. Before, the self-play child played on as an orphan."""
    need_torch()
    run = tmp_path / "run"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen(_command(run, 1, hands=4000, start=GOLDEN),
                            stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, env=env, cwd=ROOT,
                            start_new_session=True)
    try:
        deadline = time.monotonic() + 120
        while not (run / "round-001" / "selfplay-001").exists():  # the child has begun
            assert time.monotonic() < deadline and proc.poll() is None
            time.sleep(0.05)
        children = Path(f"/proc/{proc.pid}/task/{proc.pid}/children").read_text().split()
        assert children
        proc.kill()
        proc.wait(timeout=30)
        deadline = time.monotonic() + 10  # self-play of 4,000 hands takes minutes
        while any(_living(int(c)) for c in children):
            assert time.monotonic() < deadline, "the phase outlived its run"
            time.sleep(0.1)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)


def test_a_state_from_before_is_read_relative_to_its_run_folder(tmp_path: Path) -> None:
    """Older state files hold paths relative to the folder the run was started from."""
    run = tmp_path / "run"
    run.mkdir()
    (run / "state.json").write_text(json.dumps({
        "variant": "riichi", "start": "../d/it/gen-000.npz",
        "current": "../d/it/round-001/gen-001.npz",
        "rounds": [{"round": 1, "done": True, "weights_before": "../d/it/gen-000.npz",
                    "weights_after": "../d/it/round-001/gen-001.npz", "phases": {
                        "selfplay": {"data": "../d/it/round-001/selfplay-001"},
                        "train": {"weights": "../d/it/round-001/gen-001.npz"}}}]}))
    state = IterateState.open(run, "riichi", "gen-000.npz")
    assert state.current == run / "round-001" / "gen-001.npz"
    assert state.data["start"] == "gen-000.npz"
    assert state.phase(1, "selfplay") == {"data": "round-001/selfplay-001"}
    assert state.phase(1, "train") == {"weights": "round-001/gen-001.npz"}


def _recorded_command(state: IterateState, name: str) -> str:
    """The command recorded for round 1's ``name`` phase (finished, so recorded)."""
    phase = state.phase(1, name)
    assert phase is not None, f"round 1's {name} is not recorded as done"
    command: str = phase["command"]
    return command


def test_the_commands_of_a_state_from_before_are_made_to_run_from_its_run_folder(
        tmp_path: Path) -> None:
    """Older state files (run-relative paths or not) hold commands whose paths are relative
    to the folder the run was started from, which they do not name: they are read as
    commands run from the run folder, as new ones are recorded."""
    run = tmp_path / "run"
    run.mkdir()
    phases = {
        "selfplay": {"data": "round-001/selfplay-001", "command":
                     "MJBOT_NN_WEIGHTS=runs/it/gen-000.npz MJBOT_MC=playouts=2,fast=nn mjbot "
                     "selfplay --variant riichi --out runs/it/round-001/selfplay-001 --json"},
        "train": {"weights": "round-001/gen-001.npz", "command":
                  "mjbot nn train --data runs/it/round-001/selfplay-001 --init "
                  "runs/it/gen-000.npz --out runs/it/round-001/gen-001.npz --json"},
        "select": {"command": "mjbot arena --policies nn@/abs/it/round-001/gen-001.npz,"
                   "nn@runs/it/gen-000.npz,nn@runs/it/gen-000.npz,nn@runs/it/gen-000.npz "
                   "--json runs/it/round-001/selection.json"}}
    (run / "state.json").write_text(json.dumps({
        "variant": "riichi", "paths": "relative to the run folder", "start": "gen-000.npz",
        "current": "round-001/gen-001.npz",
        "rounds": [{"round": 1, "done": True, "phases": phases}]}))
    state = IterateState.open(run, "riichi", "gen-000.npz")
    assert state.data["commands"] == "run from the run folder"
    assert _recorded_command(state, "selfplay") == (
        "MJBOT_NN_WEIGHTS=gen-000.npz MJBOT_MC=playouts=2,fast=nn mjbot selfplay --variant "
        "riichi --out round-001/selfplay-001 --json")
    assert _recorded_command(state, "train") == (
        "mjbot nn train --data round-001/selfplay-001 --init gen-000.npz --out "
        "round-001/gen-001.npz --json")
    assert _recorded_command(state, "select") == (
        "mjbot arena --policies nn@round-001/gen-001.npz,nn@gen-000.npz,nn@gen-000.npz,"
        "nn@gen-000.npz --json round-001/selection.json")


def test_the_summary_prints_no_python_none_and_no_negative_zero() -> None:
    assert shown_interval([None, None]) == shown_interval(None) == "[n/a]"
    assert shown_interval([-0.04, 12.34]) == "[+0.0,+12.3]"
    assert shown_points(-0.04) == "+0.0" and shown_points(None) == "n/a"


# Hands of the stopped runs: two wall sets (a riichi wall set is 4 seatings of an east game,
# 22 hands expected), so a SIGTERM in the first leaves one done and one to play.
STOPPED_HANDS = 30


@pytest.fixture(scope="module")
def stopped_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A one-round run of STOPPED_HANDS hands stopped by SIGTERM in its self-play, after a
    wall set, played once for the module: each test goes on from a copy of its folder
    (:func:`_stopped_copy`; its state's paths are the run folder's). The SIGTERM must land
    in a wall set, not before the first began (then nothing is stopped) nor after the last
    (then nothing is left): a fresh run tries again, three times."""
    need_torch()
    run = tmp_path_factory.mktemp("stopped") / "run"
    manifest = run / "round-001" / "selfplay-001" / "manifest.json"
    for tries in range(3, 0, -1):
        proc, stderr = _terminated_during_self_play(run, STOPPED_HANDS)
        _kill_group(proc)
        assert proc.returncode == 128 + signal.SIGTERM, stderr
        if tries == 1 or (manifest.exists() and "stopped" in json.loads(manifest.read_text())):
            return run  # (after three misses, the tests find what the last one left)
        shutil.rmtree(run)
    raise AssertionError("not reached")


def _go_on(run: Path) -> subprocess.CompletedProcess[str]:
    """The stopped run's command run again to its end, in a process of its own."""
    return subprocess.run(_command(run, 1, hands=STOPPED_HANDS, start=GOLDEN),
                          capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(ROOT)}, cwd=ROOT, timeout=600)


def _stopped_copy(stopped_run: Path, tmp_path: Path) -> tuple[Path, Path]:
    """The module's stopped run as ``tmp_path/run``, for this test alone to go on with; the
    run folder and its stopped self-play folder."""
    run = tmp_path / "run"
    shutil.copytree(stopped_run, run)
    return run, run / "round-001" / "selfplay-001"


def test_a_self_play_stopped_in_its_middle_goes_on_where_it_stopped(stopped_run: Path,
                                                                    tmp_path: Path) -> None:
    """A self-play phase stopped by SIGTERM after some of its wall sets was deleted and played
    again from its first by the next run (hours of mc games at 90% done). The next run now
    goes on with the wall sets not done; the data is what one unbroken self-play of the
    recorded command writes, byte for byte, and state.json gives each run's part (seconds,
    machine, the wall sets it played) and the phase's seconds as their sum."""
    need_torch()
    run, _ = _stopped_copy(stopped_run, tmp_path)
    stopped = json.loads((run / "round-001" / "selfplay-001" / "manifest.json").read_text())
    done = stopped["stopped"]["units_done"]
    assert 1 <= done < stopped["stopped"]["units_planned"]
    (part,) = _state(run)["rounds"][0]["parts"]["selfplay"]
    assert part["from_wall_set"] == 1 and part["stopped_after_wall_set"] == done
    assert part["stopped"] is True

    resumed = _go_on(run)
    assert resumed.returncode == 0, resumed.stderr
    (one,) = _state(run)["rounds"]
    assert one["done"] and "parts" not in one
    phase = one["phases"]["selfplay"]
    first, second = phase["parts"]
    assert first == part
    assert second["from_wall_set"] == done + 1 and "stopped" not in second
    assert phase["seconds"] == round(first["seconds"] + second["seconds"], 1)
    assert set(second["machine"]) == {"platform", "cpus", "python", "device"}

    # the recorded command, played unbroken (its weights named as the run named them: the
    # dataset's record keeps its first part's environment, the stopped run's own path, which
    # is the module's run this folder was copied from)
    weights = stopped["config"]["environment"]["MJBOT_NN_WEIGHTS"]
    assert Path(weights).read_bytes() == (run / "gen-000.npz").read_bytes()
    words = shlex.split(phase["command"])
    args = words[words.index("mjbot") + 1:]
    args[args.index("--out") + 1] = str(tmp_path / "unbroken")
    env = {**os.environ, "PYTHONPATH": str(ROOT), "MJBOT_NN_WEIGHTS": weights,
           "MJBOT_MC": dict(w.split("=", 1) for w in words[:words.index("mjbot")])["MJBOT_MC"]}
    unbroken = subprocess.run([sys.executable, "-m", "adapter.cli", *args], capture_output=True,
                              text=True, env=env, cwd=run, timeout=600)
    assert unbroken.returncode == 0, unbroken.stderr
    data = run / phase["data"]
    assert {p.name: p.read_bytes() for p in data.iterdir()} == {
        p.name: p.read_bytes() for p in (tmp_path / "unbroken").iterdir()}


@pytest.mark.parametrize("left", ["no record", "a cut record"])
def test_a_self_play_phase_an_older_mjbot_left_stopped_is_played_again(
        stopped_run: Path, tmp_path: Path, left: str) -> None:
    """A self-play phase stopped under an mjbot that wrote no progress.json (a stopped
    manifest, no record) made every later run fail in its self-play ('a stopped dataset with
    no progress.json ... give another --out', which nn iterate cannot give); that folder is
    now played again from its start, as before, and the round ends. So is one whose record a
    power cut left empty (selfplay refuses an unreadable record: 'give another --out')."""
    need_torch()
    run, data = _stopped_copy(stopped_run, tmp_path)
    if left == "no record":
        (data / "progress.json").unlink()  # as the older mjbot left it
    else:
        (data / "progress.json").write_bytes(b"")  # written, never synced, then the power cut
    resumed = _go_on(run)
    assert resumed.returncode == 0, resumed.stderr
    assert _state(run)["rounds"][0]["done"]
    assert "stopped" not in json.loads((data / "manifest.json").read_text())


def test_a_resumed_self_play_cut_without_a_report_does_not_claim_wall_set_one(
        stopped_run: Path, tmp_path: Path) -> None:
    """A run's self-play part that went on from a later wall set and was cut without a report
    (killed after the stop grace, as here: SIGTERM to the run, SIGKILL to its self-play) was
    recorded in state.json as played from wall set 1; where its start is not known it now
    says none."""
    need_torch()
    run, data = _stopped_copy(stopped_run, tmp_path)
    proc = subprocess.Popen(_command(run, 1, hands=STOPPED_HANDS, start=GOLDEN),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "PYTHONPATH": str(ROOT)}, cwd=ROOT,
                            start_new_session=True)
    try:
        deadline = time.monotonic() + 120
        while (data / "manifest.json").exists():  # the resumed self-play has cleared it
            assert time.monotonic() < deadline and proc.poll() is None, proc.stderr
            time.sleep(0.02)
        (child,) = map(int, Path(f"/proc/{proc.pid}/task/{proc.pid}/children").read_text()
                       .split())
        # a phase that does not answer the stop (what the run kills past the grace): frozen
        # before the run passes the stop on, or it could stop and report between the two
        # signals below (the run and the phase scheduled first on a loaded machine)
        os.kill(child, signal.SIGSTOP)
        os.kill(proc.pid, signal.SIGTERM)
        os.kill(child, signal.SIGKILL)  # what the run does to a phase past the grace
        _, stderr = proc.communicate(timeout=120)
    finally:
        _kill_group(proc)
    assert proc.returncode == 128 + signal.SIGTERM, stderr
    first, second = _state(run)["rounds"][0]["parts"]["selfplay"]
    assert first["from_wall_set"] == 1
    assert second["stopped"] is True and "stopped_after_wall_set" not in second
    assert "from_wall_set" not in second, second


def test_a_self_play_phase_gone_on_with_from_another_folder_says_where_it_was_begun(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A self-play phase stopped in a run started from sub/ (--dir ../run) and gone on with
    from the run folder's parent (--dir run): its dataset keeps the first part's record, the
    weights named from sub/, but the phase's started_from said '..', the folder its last part
    ran from, so following the manifest from there found no such file. The phase now names
    the folder its dataset was begun from; each part still names its own."""
    need_torch()
    (tmp_path / "sub").mkdir()
    monkeypatch.chdir(tmp_path / "sub")  # where the first run's relative paths are read
    run = tmp_path / "run"
    proc, stderr = _terminated_during_self_play(Path("../run"), 40, cwd=tmp_path / "sub",
                                                in_the_wall_set=True)
    _kill_group(proc)
    assert proc.returncode == 128 + signal.SIGTERM, stderr
    (part,) = _state(run)["rounds"][0]["parts"]["selfplay"]
    assert part["started_from"] == "../sub"
    resumed = subprocess.run(_command("run", 1, hands=40, start=GOLDEN), capture_output=True,
                             text=True, env={**os.environ, "PYTHONPATH": str(ROOT)},
                             cwd=tmp_path, timeout=600)
    assert resumed.returncode == 0, resumed.stderr
    (one,) = _state(run)["rounds"]
    phase = one["phases"]["selfplay"]
    assert [p["started_from"] for p in phase["parts"]] == ["../sub", ".."]
    assert phase["started_from"] == "../sub" and "selfplay_started_from" not in one
    assert _played_with(run, 1, phase["started_from"]) == run / "gen-000.npz"


def test_a_self_play_part_after_a_run_killed_outright_is_in_the_phase_record(
        tmp_path: Path) -> None:
    """A run killed outright (SIGKILL to it alone) leaves its self-play to stop after its wall
    set, unrecorded; the next run went on from there, and as the phase's one recorded part its
    record gave no parts: seconds of that run alone, and no from_wall_set to show where it had
    got to (what the README says the next part shows). The part is now recorded whenever it
    did not play the phase from its first wall set."""
    need_torch()
    run = tmp_path / "run"
    data = run / "round-001" / "selfplay-001"
    manifest = data / "manifest.json"
    for _ in range(3):  # the stop must land in a wall set, not before the first nor after the last
        proc = subprocess.Popen(_command(run, 1, hands=STOPPED_HANDS, start=GOLDEN),
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                env={**os.environ, "PYTHONPATH": str(ROOT)}, cwd=ROOT,
                                start_new_session=True)
        try:
            deadline = time.monotonic() + 120
            while not data.exists():  # the self-play has begun
                assert time.monotonic() < deadline and proc.poll() is None, proc.stderr
                time.sleep(0.05)
            os.kill(proc.pid, signal.SIGKILL)  # the run alone: its phase is sent SIGTERM
            proc.communicate(timeout=60)
            while any(_living(pid) for pid in _group(proc.pid)):  # the phase ends itself
                assert time.monotonic() < deadline + 120
                time.sleep(0.05)
        finally:
            _kill_group(proc)
        if manifest.exists() and "stopped" in json.loads(manifest.read_text()):
            break
        shutil.rmtree(run)
    done = json.loads(manifest.read_text())["stopped"]["units_done"]
    assert "parts" not in _state(run)["rounds"][0]  # the killed run recorded nothing
    resumed = _go_on(run)
    assert resumed.returncode == 0, resumed.stderr
    phase = _state(run)["rounds"][0]["phases"]["selfplay"]
    (part,) = phase["parts"]
    assert part["from_wall_set"] == done + 1 and phase["seconds"] == part["seconds"]
