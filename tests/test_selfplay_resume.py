"""`mjbot selfplay` run again at the --out of a stopped or killed run of the same options goes
on where it stopped: it plays only the wall sets not done, and leaves the very bytes an
unbroken run writes (shards and manifest), whatever --workers each part had. A stop keeps
its open shard, read back on resume; a run killed outright keeps the shards its record
(progress.json) proves whole and plays again from there; a folder of other options is
refused in one line, untouched; a complete dataset is left as it is."""

from __future__ import annotations

import hashlib
import json
import shutil
import signal
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from replay.dataset import schema as S
from replay.dataset.records import Block
from replay.dataset.shards import dataset_meta, read_manifest, read_shard
from tests.in_process import mjbot_captured, mjbot_here
from tests.serve_helpers import PYTHON_ENV, ROOT, mjbot
from tests.stop_helpers import kill_outright, stop_by_signal

# mass, rulebased/greedy: about 900 decisions and 0.2 s a wall set, 13 wall sets
RUN = ["selfplay", "--variant", "mass", "--policies", "rulebased,greedy,rulebased,greedy",
       "--hands", "300", "--seed", "6"]


def files(root: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(root.iterdir())}


def stamps(root: Path) -> dict[str, tuple[int, int]]:
    return {p.name: (p.stat().st_mtime_ns, p.stat().st_ino) for p in sorted(root.iterdir())}


@pytest.fixture(scope="module", params=[2000, 300])
def unbroken(request, tmp_path_factory) -> tuple[int, dict[str, bytes]]:
    """The dataset of one run that was never stopped (one worker), by --shard-decisions."""
    out = tmp_path_factory.mktemp("unbroken") / "d"
    r = mjbot_captured(*RUN, "--shard-decisions", str(request.param), "--workers", "1",
                       "--out", str(out))
    assert r.returncode == 0, r.stderr
    return request.param, files(out)


@pytest.fixture(scope="module")
def stopped_after_3(unbroken, tmp_path_factory) -> tuple[int, Path]:
    """A run of the unbroken one's options (one worker) stopped by SIGTERM once it has done
    3 wall sets: its exit status and its folder, which tests copy."""
    out = tmp_path_factory.mktemp("stopped-after-3") / "d"
    status, _ = stop_by_signal([*RUN, "--shard-decisions", str(unbroken[0]), "--workers", "1",
                                "--out", str(out)], signal.SIGTERM, after=3)
    return status, out


def test_a_stopped_run_goes_on_to_the_bytes_of_an_unbroken_one(tmp_path, unbroken,
                                                               stopped_after_3):
    shard_decisions, expected = unbroken
    out = tmp_path / "d"
    options = [*RUN, "--shard-decisions", str(shard_decisions)]
    status, folder = stopped_after_3
    shutil.copytree(folder, out)
    assert status == 128 + signal.SIGTERM
    stopped = read_manifest(out)
    assert 3 <= stopped["stopped"]["units_done"] < stopped["stopped"]["units_planned"]
    r = mjbot(*options, "--workers", "2", "--out", str(out), "--json")  # other workers
    assert r.returncode == 0, r.stderr
    done = stopped["stopped"]["units_done"]
    assert (f"going on with the dataset in {out} from wall set {done + 1} of "
            f"{stopped['stopped']['units_planned']}") in r.stderr
    assert json.loads(r.stdout)["resumed"]["units_done_before"] == done
    assert files(out) == expected  # the same shards and manifest, nothing else


def test_a_run_killed_outright_keeps_its_proved_shards_and_redoes_a_cut_one(
        tmp_path, unbroken, capsys):
    shard_decisions, expected = unbroken
    out = tmp_path / "d"
    options = [*RUN, "--shard-decisions", str(shard_decisions)]
    kill_outright([*options, "--workers", "2", "--out", str(out)], after=5)
    assert not (out / "manifest.json").exists()
    record = json.loads((out / "progress.json").read_text())
    kept = record["checkpoints"][-1]["shards"] if record["checkpoints"] else []
    # as a kill in the middle of writing leaves them: a shard's temporary file, and a shard
    # written after the record (here cut short)
    (out / "shard-00000.npz.tmp").write_bytes(b"PK\x03\x04 cut")
    (out / f"shard-{len(kept) + 1:05d}.npz").write_bytes(b"PK\x03\x04 cut")
    for entry in kept:  # what the record proves is kept as it is, not written again
        assert (out / entry["file"]).read_bytes() == expected[entry["file"]]
    before = {e["file"]: stamps(out)[e["file"]] for e in kept}
    r = mjbot_here(capsys, *options, "--workers", "1", "--out", str(out))
    assert r.returncode == 0, r.stderr
    assert f"({len(kept)} shard(s) kept" in r.stderr
    assert files(out) == expected
    assert {name: stamps(out)[name] for name in before} == before


def test_a_damaged_open_shard_is_played_again(tmp_path, unbroken, stopped_after_3):
    """A stopped dataset whose last (open) shard no longer has the bytes recorded goes on from
    the checkpoint before it, not from games it cannot prove."""
    shard_decisions, expected = unbroken
    out = tmp_path / "d"
    options = [*RUN, "--shard-decisions", str(shard_decisions)]
    shutil.copytree(stopped_after_3[1], out)
    last = read_manifest(out)["shards"][-1]["file"]
    (out / last).write_bytes((out / last).read_bytes()[:-10])
    r = mjbot(*options, "--workers", "2", "--out", str(out))
    assert r.returncode == 0, r.stderr
    assert files(out) == expected


def test_other_options_are_refused_and_a_complete_dataset_is_left_alone(tmp_path, capsys):
    """The refusals and the complete dataset's run go through mjbot's entry point in this
    process (nothing played, no signal); the run that completes it is a child."""
    out = tmp_path / "d"
    options = [*RUN, "--shard-decisions", "2000", "--workers", "1"]
    stop_by_signal([*options, "--out", str(out)], signal.SIGTERM, after=2)
    seen = files(out), stamps(out)
    for changed, said in ((["--seed", "7"], "--seed 7 differs from 6"),
                          (["--hands", "400"], "--hands 400 differs from 300"),
                          (["--policies", "rulebased,rulebased,greedy,greedy"],
                           "--policies rulebased,rulebased,greedy,greedy differs from "
                           "rulebased,greedy,rulebased,greedy"),
                          (["--shard-decisions", "300"], "--shard-decisions 300 differs")):
        r = mjbot_here(capsys, *options, *changed, "--out", str(out))
        assert r.returncode == 2 and "Traceback" not in r.stderr, r.stderr
        (line,) = r.stderr.splitlines()
        assert line.startswith(f"mjbot selfplay: {said}") and str(out) in line, line
        assert (files(out), stamps(out)) == seen  # untouched
    assert mjbot(*options, "--out", str(out)).returncode == 0
    complete = files(out), stamps(out)
    assert "progress.json" not in complete[0]
    again = mjbot_here(capsys, *options, "--out", str(out), "--json")
    assert again.returncode == 0, again.stderr
    summary = json.loads(again.stdout)
    assert summary["already_complete"] is True
    assert summary["decisions"] == read_manifest(out)["decisions"]
    assert (files(out), stamps(out)) == complete  # nothing rewritten


def test_a_run_killed_outright_goes_on_from_its_open_shard_recorded(tmp_path, unbroken):
    """With --checkpoint-every 0 the open shard is written and recorded after each wall set:
    a run killed outright then loses at most the wall set under way (the games since its
    last whole shard were all played again before). The checkpoint does not change the
    dataset."""
    shard_decisions, expected = unbroken
    out = tmp_path / "d"
    options = [*RUN, "--shard-decisions", str(shard_decisions)]
    shown = kill_outright([*options, "--workers", "1", "--checkpoint-every", "0", "--out",
                           str(out)], after=4)
    last = json.loads((out / "progress.json").read_text())["checkpoints"][-1]
    # a checkpoint after every wall set (the bar counts one as it is taken, its checkpoint
    # comes after it; a kill there may leave the one of a shard cut inside it): with the open
    # shard, unless the wall set ended a shard
    assert last["unit"] >= shown - 1, (last, shown)
    recorded = [*last["shards"], *([last["open"]] if last["open"] else [])]
    whole = all(hashlib.sha256((out / e["file"]).read_bytes()).hexdigest() == e["sha256"]
                for e in recorded)
    r = mjbot(*options, "--workers", "2", "--out", str(out))
    assert r.returncode == 0, r.stderr
    if whole:  # (a kill between writing the open shard and its record goes on from before)
        assert f"from wall set {last['unit'] + 1} of" in r.stderr, r.stderr
    assert files(out) == expected


def test_a_dataset_from_before_shard_decisions_was_recorded_is_not_refused_for_it(
        tmp_path, capsys):
    """A complete dataset written before the config recorded shard_decisions, run again with
    the same options, is complete (it was refused as '--shard-decisions 20000 differs from
    None'); one with another seed is still refused."""
    out = tmp_path / "d"
    small = ["selfplay", "--variant", "mass", "--hands", "4", "--seed", "3", "--out", str(out)]
    assert mjbot_here(capsys, *small).returncode == 0
    manifest = json.loads((out / "manifest.json").read_text())
    del manifest["config"]["shard_decisions"]
    (out / "manifest.json").write_text(json.dumps(manifest, indent=1, sort_keys=True) + "\n")
    again = mjbot_here(capsys, *small)
    assert again.returncode == 0 and "already holds this dataset, complete" in again.stdout, (
        again.stderr)
    other = mjbot_here(capsys, *small[:-3], "4", "--out", str(out))
    assert other.returncode == 2 and "--seed 4 differs from 3" in other.stderr, other.stderr


def test_a_run_killed_while_writing_its_first_record_is_started_again(tmp_path, capsys):
    """A run killed outright while it wrote its first progress.json (before any game) left
    only progress.json.tmp, and the same command was refused as 'directory is not empty';
    it now starts the run again and writes what an unbroken run writes."""
    small = ["selfplay", "--variant", "mass", "--hands", "4", "--seed", "3", "--out"]
    assert mjbot_here(capsys, *small, str(tmp_path / "unbroken")).returncode == 0
    out = tmp_path / "d"
    out.mkdir()
    (out / "progress.json.tmp").write_text('{"checkpoints": [], "me')  # cut by the kill
    r = mjbot_here(capsys, *small, str(out))
    assert r.returncode == 0, r.stderr
    assert files(out) == files(tmp_path / "unbroken")


# a process that dies outright (os._exit, as SIGKILL ends it) just after its Nth os.replace:
# the shard or record that replace put in place is there, nothing after it
KILLED_AFTER_REPLACE = """
import os, sys
n, count, replace = int(sys.argv[1]), [0], os.replace
def killing(*a, **k):
    replace(*a, **k)
    count[0] += 1
    if count[0] == n:
        os._exit(9)
os.replace = killing
from adapter.cli import main
sys.exit(main(sys.argv[2:]))
"""


# the same run left to its end, its --out folder (ARGV[1]) copied to ARGV[2]/N just after its
# Nth os.replace: each copy is the folder a kill at that point (KILLED_AFTER_REPLACE) leaves,
# as the run writes nothing else there between a replace and the next
COPIED_AFTER_REPLACE = """
import os, shutil, sys
out, copies, count, replace = sys.argv[1], sys.argv[2], [0], os.replace
def copying(*a, **k):
    replace(*a, **k)
    count[0] += 1
    if os.path.isdir(out):
        shutil.copytree(out, os.path.join(copies, str(count[0])))
os.replace = copying
from adapter.cli import main
sys.exit(main(sys.argv[3:]))
"""


def copied_after_replace(out: Path, copies: Path, args: list[str]
                         ) -> subprocess.CompletedProcess[str]:
    """``mjbot ARGS --out OUT`` run to its end, OUT copied to ``copies / str(N)`` just after
    its Nth os.replace (COPIED_AFTER_REPLACE): the folders a kill after each replace in turn
    leaves, from one run."""
    copies.mkdir()
    return subprocess.run([sys.executable, "-c", COPIED_AFTER_REPLACE, str(out), str(copies),
                           *args, "--out", str(out)], capture_output=True, text=True,
                          timeout=300)


def killed_inside_a_wall_set(
        root: Path, options: list[str],
        wanted: dict[str, Callable[[Path, dict[str, Any]], bool]]) -> dict[str, dict[str, Any]]:
    """The folder a kill after each replace in turn leaves, until, for each name of
    ``wanted``, one has left its last checkpoint inside a wall set after the first (a shard
    cut there), one that the name's test takes (given the run's folder and that checkpoint):
    the first such folder is copied to ``root / name``; the checkpoint of each, by name. One
    run gives every kill's folder (COPIED_AFTER_REPLACE): a run killed after each replace in
    turn played the run again up to there, 12 runs and 8.6 s of CPU where the one takes 1.4 s."""
    out, copies, found = root / "killed", root / "after-replace", {}
    run = copied_after_replace(out, copies, [*options, "--workers", "1"])
    assert run.returncode == 0, run.stderr[-2000:]
    for n in range(1, 60):
        out = copies / str(n)
        if not (out / "progress.json").is_file():  # the run ended before this replace
            break
        last = json.loads((out / "progress.json").read_text())["checkpoints"][-1:]
        if not (last and last[0]["skip"] and last[0]["unit"]):
            continue
        for name, test in wanted.items():
            if name not in found and test(out, last[0]):
                shutil.copytree(out, root / name)
                found[name] = last[0]
        if len(found) == len(wanted):
            shutil.rmtree(copies)
            return found
    raise AssertionError(f"no kill left such a checkpoint inside a wall set for "
                         f"{sorted(set(wanted) - set(found))}")


GIVE_BACK = ["selfplay", "--variant", "mass", "--policies", "rulebased,greedy,rulebased,greedy",
             "--hands", "150", "--seed", "6", "--shard-decisions", "400"]


def spans_shards(out: Path, checkpoint: dict[str, Any]) -> bool:
    """Whether a checkpoint's wall set has games in its last shard and in one before it (a
    stop that gives them back removes the one and cuts the other back); 6 seatings."""
    with np.load(out / checkpoint["shards"][-1]["file"]) as last:
        return int(last["h_game"][0]) > checkpoint["unit"] * 6


@pytest.fixture(scope="module")
def killed_inside(tmp_path_factory) -> tuple[Path, dict[str, tuple[Path, dict[str, Any]]]]:
    """GIVE_BACK's unbroken run (one worker), and runs of it killed just after a shard cut
    inside a wall set, each with its last checkpoint: the first such kill (``first``), and the
    first whose wall set has games in its last shard and in one before it (``spanning``).
    Tests copy them."""
    root = tmp_path_factory.mktemp("killed-inside")
    unbroken = root / "unbroken"
    assert mjbot_captured(*GIVE_BACK, "--workers", "1", "--out", str(unbroken)).returncode == 0
    found = killed_inside_a_wall_set(root, GIVE_BACK, {"first": lambda out, checkpoint: True,
                                                       "spanning": spans_shards})
    return unbroken, {name: (root / name, checkpoint) for name, checkpoint in found.items()}


def test_a_resume_stopped_before_its_first_wall_set_keeps_the_games_it_went_on_from(
        tmp_path, killed_inside, capsys):
    """A run killed just after a shard cut inside a wall set is gone on with from that wall
    set's later games; that resume stopped before finishing a wall set recorded its stop as
    from the wall set's first game, so the next resume played its earlier games again: 45
    games instead of 42, every shard from there on other than an unbroken run's. The stop
    now keeps where in the wall set its run went on from."""
    options = GIVE_BACK
    unbroken, (killed_dir, last) = killed_inside[0], killed_inside[1]["first"]
    out = tmp_path / "d"
    shutil.copytree(killed_dir, out)
    stopped = mjbot(*options, "--workers", "2", "--stop-after", "0.001", "--out", str(out))
    assert stopped.returncode == 0, stopped.stderr
    assert read_manifest(out)["stopped"]["units_done"] == last["unit"]  # none finished
    r = mjbot_here(capsys, *options, "--workers", "1", "--out", str(out))
    assert r.returncode == 0, r.stderr
    assert read_manifest(out)["games"] == read_manifest(unbroken)["games"]
    assert files(out) == files(unbroken)


def rows(root: Path) -> Block:
    """Every row of a dataset, its shards in order."""
    return Block.concat([Block(read_shard(root / e["file"], S.FIELDS, e["bytes"]))
                         for e in read_manifest(root)["shards"]])


def test_a_resume_stopped_inside_the_wall_set_it_went_on_with_holds_whole_wall_sets(
        tmp_path, killed_inside, capsys):
    """Killed just after a shard cut inside a wall set, then gone on with and stopped before
    that wall set was done, the run's stopped dataset still held the wall set's first games
    (22 games where its manifest said 'the first 3 of 7 wall sets, each in every seating',
    18 games, and its fallback tallies covered only theirs' decisions). It now holds those
    whole wall sets, row for row an unbroken run's first games; the games cut off are played
    again on resume, which ends in the unbroken run's bytes."""
    options = GIVE_BACK
    unbroken, (killed_dir, killed) = killed_inside[0], killed_inside[1]["spanning"]
    out = tmp_path / "d"
    shutil.copytree(killed_dir, out)
    stopped = mjbot(*options, "--workers", "2", "--stop-after", "0.001", "--out", str(out))
    assert stopped.returncode == 0, stopped.stderr
    manifest = read_manifest(out)
    done = manifest["stopped"]["units_done"]
    assert done == killed["unit"]
    assert manifest["games"] == done * manifest["config"]["seatings"]
    assert manifest["decisions"] == sum(f["decisions"] for f in manifest["fallbacks"].values())
    held, first = rows(out), rows(unbroken).before(done * manifest["config"]["seatings"])
    assert held.hands == manifest["hands"] and held.decisions == manifest["decisions"]
    for name in S.FIELDS:
        assert np.array_equal(held.arrays[name], first.arrays[name]), name
    listed = {e["file"] for e in manifest["shards"]}
    assert set(files(out)) == listed | {"manifest.json", "progress.json"}
    r = mjbot_here(capsys, *options, "--workers", "1", "--out", str(out))
    assert r.returncode == 0, r.stderr
    assert f"from wall set {done + 1} of" in r.stderr
    assert files(out) == files(unbroken)


@pytest.fixture(scope="module")
def killed_across_shards(killed_inside) -> tuple[Path, Path, dict[str, Any]]:
    """An unbroken run, and a run killed just after a shard cut inside a wall set whose games
    are in that shard and one before it, with its last checkpoint."""
    unbroken, found = killed_inside
    return unbroken, *found["spanning"]


def test_a_stop_giving_games_back_killed_at_any_point_keeps_the_shards_it_went_on_from(
        tmp_path, killed_across_shards, capsys):
    """A resume stopped inside the wall set it went on with gives that wall set's games back:
    a shard removed, one cut back. Killed there (a second Ctrl-C, a scheduler's SIGKILL after
    its SIGTERM) after it wrote the cut-back shard, or its manifest, it left no checkpoint
    proved (the one it went on from named the shards it had changed), and the next run
    started from wall set 1 with 0 shards kept: the whole run's play thrown away. The stop
    is now on record before a shard of the checkpoint is changed, so a kill after any of its
    replaces goes on from one or the other, to the unbroken run's bytes."""
    unbroken, killed_dir, killed = killed_across_shards
    stopped, copies = tmp_path / "stopped", tmp_path / "after-replace"
    shutil.copytree(killed_dir, stopped)
    # the folder a kill after each of the stop's replaces leaves (one stop gives them all: a
    # stop killed after each replace in turn started its run and two workers again for each)
    stop = copied_after_replace(stopped, copies, [*GIVE_BACK, "--workers", "2",
                                                  "--stop-after", "0.001"])
    assert stop.returncode == 0, stop.stderr[-2000:]
    replaces = len(list(copies.iterdir()))
    assert replaces >= 3, stop.stderr  # the cut-back shard, the manifest and the record
    # killed after each replace, then the stop run to its end
    for n, out in [*((n, copies / str(n)) for n in range(1, replaces + 1)), (0, stopped)]:
        r = mjbot_here(capsys, *GIVE_BACK, "--workers", "1", "--out", str(out))
        assert r.returncode == 0, r.stderr
        assert f"from wall set {killed['unit'] + 1} of" in r.stderr, (n, r.stderr)
        assert files(out) == files(unbroken), n
        shutil.rmtree(out)


def test_the_resume_after_a_stop_that_gave_games_back_killed_keeps_the_shards(
        tmp_path, killed_across_shards, capsys):
    """After a stop that gave a wall set's games back, the record holds one checkpoint, the
    stop's, proved by its open shard (the one cut back). The next run, killed just after it
    wrote over that shard (its first shard cut) and before its record, left no checkpoint
    proved: 'from wall set 1 of 7 (0 shard(s) kept)', every shard removed. The first write
    over that open shard is now recorded before it is put in place."""
    unbroken, killed_dir, killed = killed_across_shards
    gave_back = tmp_path / "gave-back"
    shutil.copytree(killed_dir, gave_back)
    stopped = mjbot(*GIVE_BACK, "--workers", "2", "--stop-after", "0.001", "--out",
                    str(gave_back))
    assert stopped.returncode == 0, stopped.stderr
    record = json.loads((gave_back / "progress.json").read_text())["checkpoints"]
    assert [c["open"] is not None for c in record] == [True]  # the stop's, nothing before
    # the folder a kill after each of the next run's replaces leaves (one run gives them all:
    # a run killed after each in turn played again up to there, four runs for one)
    copies = tmp_path / "after-replace"
    run = copied_after_replace(gave_back, copies, [*GIVE_BACK, "--workers", "1"])
    assert run.returncode == 0, run.stderr[-2000:]
    for n in range(1, 5):  # the first cut's shard (over the open one), its record, ...
        out = copies / str(n)
        assert out.is_dir(), n  # the run made that many replaces
        r = mjbot_here(capsys, *GIVE_BACK, "--workers", "1", "--out", str(out))
        assert r.returncode == 0, r.stderr
        assert f"from wall set {killed['unit'] + 1} of" in r.stderr, (n, r.stderr)
        assert files(out) == files(unbroken), n
        shutil.rmtree(out)


@pytest.fixture(scope="module")
def stopped(tmp_path_factory) -> Path:
    """A stopped run's folder (progress.json beside its shards), copied by each test."""
    out = tmp_path_factory.mktemp("stopped") / "d"
    stop_by_signal([*RUN, "--shard-decisions", "300", "--workers", "1", "--out", str(out)],
                   signal.SIGTERM, after=2)
    assert (out / "progress.json").is_file()
    return out


@pytest.mark.parametrize("field", ["games", "unit", "skip", "open_games", "shards", "open",
                                   "referee_errors", "fallbacks", "shard", "external"])
def test_a_hand_edited_record_is_refused_in_one_line(tmp_path, stopped, field, capsys):
    """A progress.json edited by hand (a field of the wrong type) was a traceback where the
    field was used (TypeError, AttributeError); it is refused in one line naming the field,
    and the folder is left as it was. Through mjbot's entry point in this process (a
    refusal before any game: no signal, no worker), where an uncaught error fails the test
    as its traceback would."""
    out = tmp_path / "d"
    shutil.copytree(stopped, out)
    record = json.loads((out / "progress.json").read_text())
    for checkpoint in record["checkpoints"]:
        if field == "shard":
            checkpoint["shards"][0]["bytes"] = "many"
        elif field == "external":  # an outside program's faults, not as a run writes them
            checkpoint[field] = {"mine": "x"}
        else:
            checkpoint[field] = "x"
    (out / "progress.json").write_text(json.dumps(record))
    seen = files(out), stamps(out)
    r = mjbot_here(capsys, *RUN, "--shard-decisions", "300", "--workers", "1", "--out", str(out))
    assert r.returncode == 2 and "Traceback" not in r.stderr, r.stderr
    (line,) = r.stderr.splitlines()
    assert f"progress.json: unreadable (checkpoint {field} " in line, line
    assert (files(out), stamps(out)) == seen


def test_stats_of_a_run_killed_while_going_on_says_the_command_goes_on(tmp_path, stopped,
                                                                       capsys):
    """A stopped dataset whose resume was killed outright has no manifest until a run goes on
    with it; `dataset stats` said 'missing (not a dataset directory, or the run that wrote
    it did not finish)', never that the same selfplay command goes on. It says so now."""
    out = tmp_path / "d"
    shutil.copytree(stopped, out)
    kill_outright([*RUN, "--shard-decisions", "300", "--workers", "1", "--out", str(out)],
                  after=1)
    assert not (out / "manifest.json").exists() and (out / "progress.json").is_file()
    r = mjbot_here(capsys, "dataset", "stats", str(out))
    assert r.returncode == 2 and len(r.stderr.splitlines()) == 1, r.stderr
    assert "the same `mjbot selfplay` command again goes on with it" in r.stderr


@pytest.mark.parametrize("flag", ["--budget", "--seat-limit"])
def test_other_time_limits_are_refused_in_one_line(tmp_path, stopped, capsys, flag):
    """A resume given another --budget (our seats' seconds per decision) or --seat-limit
    (outside programs' per answer) went on and mixed two limits' play in one dataset without
    a word, while every other option that shapes the data was refused. Refused now, like
    them, naming the option and both values; the same limits go on."""
    out = tmp_path / "d"
    shutil.copytree(stopped, out)
    seen = files(out), stamps(out)
    r = mjbot_here(capsys, *RUN, "--shard-decisions", "300", "--workers", "1", flag, "5",
                   "--out", str(out))
    assert r.returncode == 2 and "Traceback" not in r.stderr, r.stderr
    (line,) = r.stderr.splitlines()
    assert line.startswith(f"mjbot selfplay: {flag} 5 differs from (not given), the dataset's "
                           f"in {out}"), line
    assert (files(out), stamps(out)) == seen  # untouched
    small = ["selfplay", "--variant", "mass", "--hands", "4", "--seed", "3"]
    done = tmp_path / "complete"
    assert mjbot_here(capsys, *small, flag, "2", "--out", str(done)).returncode == 0
    other = mjbot_here(capsys, *small, flag, "0.5", "--out", str(done))
    assert other.returncode == 2 and f"{flag} 0.5 differs from 2, " in other.stderr, (
        other.stderr)
    none = mjbot_here(capsys, *small, "--out", str(done))
    assert none.returncode == 2 and f"{flag} (not given) differs from 2, " in none.stderr
    same = mjbot_here(capsys, *small, flag, "2", "--out", str(done))
    assert same.returncode == 0 and "already holds this dataset, complete" in same.stdout


def test_nn_seats_are_known_by_their_weights_not_the_path_naming_them(tmp_path, capsys,
                                                                    monkeypatch):
    """A run with an nn@FILE seat named relative to its folder, killed, was refused when gone
    on with from another folder naming the same file ('the environment's sha256 ../a/w.npz
    ... differs from (unset)'), though the weights were the very same. The record now knows
    the seat by its weights (SHA-256, and the file resolved): the same file by another path
    goes on, under the seat's name on record, to the bytes of an unbroken run; other weights
    at the path on record are refused in one line naming both, the folder untouched."""
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir()
    b.mkdir()
    shutil.copy(ROOT / "brain" / "data" / "nn_riichi.npz", a / "w.npz")
    shutil.copy(ROOT / "brain" / "data" / "nn_riichi_gen4.npz", b / "w.npz")  # other weights
    options = ["selfplay", "--variant", "riichi", "--hands", "40", "--seed", "5",
               "--shard-decisions", "300", "--workers", "1"]
    seats = "nn@{},rulebased,rulebased,rulebased"
    unbroken, out = tmp_path / "unbroken", tmp_path / "d"
    monkeypatch.chdir(a)  # the runs that need no process of their own run here, from a or b
    r = mjbot_here(capsys, *options, "--policies", seats.format("w.npz"), "--out",
                   str(unbroken))
    assert r.returncode == 0, r.stderr
    subprocess.run([sys.executable, "-c", KILLED_AFTER_REPLACE, "4", *options, "--policies",
                    seats.format("w.npz"), "--out", str(out)], cwd=a, env=PYTHON_ENV,
                   capture_output=True, timeout=300)
    assert not (out / "manifest.json").exists() and (out / "progress.json").is_file()
    seen = files(out), stamps(out)
    monkeypatch.chdir(b)
    other = mjbot_here(capsys, *options, "--policies", seats.format("w.npz"), "--out", str(out))
    assert other.returncode == 2 and "Traceback" not in other.stderr, other.stderr
    (line,) = other.stderr.splitlines()
    digests = [hashlib.sha256((d / "w.npz").read_bytes()).hexdigest()[:12] for d in (b, a)]
    assert line.startswith(
        f"mjbot selfplay: --policies nn@w.npz (SHA-256 {digests[0]}, {b.resolve() / 'w.npz'}) "
        f"differs from nn@w.npz (SHA-256 {digests[1]}, {a.resolve() / 'w.npz'}), the "
        f"dataset's in {out}"), line
    assert (files(out), stamps(out)) == seen
    r = mjbot_here(capsys, *options, "--policies", seats.format("../a/w.npz"), "--out",
                   str(out))
    assert r.returncode == 0, r.stderr
    assert "from wall set 2 of 2 (2 shard(s) kept)" in r.stderr, r.stderr
    assert files(out) == files(unbroken)


@pytest.mark.parametrize(("on_record", "given", "said"), [
    ("rb=rulebased", "xx=rulebased", "--policies xx,greedy,greedy,greedy differs from rb,"),
    ("nn@{w}", "nn@{w}@budget=1", "--policies nn@{w}@budget=1,greedy,greedy,greedy differs"),
    ("me=nn@{w}", "me=nn@{g4}", "--policies me (SHA-256 c3e51d437497, {g4r}) differs from "
     "me (SHA-256 94dde162b430, {wr})"),
    ("me=nn@{w}", "me=nn@./{w}", ""),
    ("nn@{w}", "nn@./{w}", ""),
])
def test_seats_are_compared_by_what_plays_there(on_record, given, said, monkeypatch):
    """Only an nn@FILE's path is free to differ: a label of its own (the data's name for the
    seat) or a seat's @budget= given otherwise is still refused as --policies, and other
    weights are named by their hashes and files."""
    from adapter.local.arena import ArenaConfig
    from adapter.local.selfplay import SelfPlayConfig, differing_option, selfplay_meta

    monkeypatch.chdir(ROOT)
    names = {"w": "brain/data/nn_riichi.npz", "g4": "brain/data/nn_riichi_gen4.npz"}
    names.update({"wr": str(ROOT / names["w"]), "g4r": str(ROOT / names["g4"])})

    def meta(seat: str) -> dict[str, Any]:
        seats = (seat.format(**names), "greedy", "greedy", "greedy")
        return dataset_meta(selfplay_meta(SelfPlayConfig(ArenaConfig("riichi", seats), "x")))

    assert differing_option(meta(on_record), meta(given)).startswith(said.format(**names))
    assert bool(said) == bool(differing_option(meta(on_record), meta(given)))


def test_an_older_mjbots_killed_run_is_refused_saying_why(tmp_path, capsys):
    """A self-play folder an mjbot before the resume left when it was killed outright
    (tests/data/upgrade/selfplay_killed_63b119a: its shards, no manifest, no progress.json),
    run again with the same command after an upgrade: refused in one line that says it holds
    an unfinished run's shards with nothing to go on from, not that the folder 'is not
    empty' as if it were someone else's; nothing in it is touched."""
    out = tmp_path / "sp"
    shutil.copytree(ROOT / "tests" / "data" / "upgrade" / "selfplay_killed_63b119a", out)
    seen = files(out), stamps(out)
    r = mjbot_here(capsys, "selfplay", "--variant", "riichi", "--policies",
                   "rulebased,greedy,rulebased,greedy", "--hands", "4000", "--seed", "7",
                   "--workers", "1", "--out", str(out), "--shard-decisions", "300")
    assert r.returncode == 2, r.stderr
    (line,) = r.stderr.splitlines()
    assert line == (f"mjbot selfplay: {out}: holds 1 shard(s) but neither manifest.json nor "
                    "progress.json: a selfplay run ended there before it finished and left no "
                    "record to go on from (an mjbot older than the resume of a killed run, or "
                    "the record removed); give another --out"), line
    assert (files(out), stamps(out)) == seen


def test_an_older_mjbots_run_killed_in_its_first_shard_starts_afresh(tmp_path, capsys):
    """A self-play folder an mjbot before the resume left when it was killed while it wrote
    its first shard (tests/data/upgrade/selfplay_killed_first_shard_63b119a: the half shard's
    temporary file alone), run again with the same command: it was refused as 'directory is
    not empty', though nothing in it is anything but the run's own half-written file. The run
    starts afresh and makes the same dataset as in an empty folder."""
    old = ROOT / "tests" / "data" / "upgrade" / "selfplay_killed_first_shard_63b119a"
    assert [p.name for p in old.iterdir()] == ["shard-00000.npz.tmp"]
    options = ["selfplay", "--variant", "riichi", "--policies",
               "rulebased,greedy,rulebased,greedy", "--hands", "8", "--seed", "7",
               "--workers", "1", "--shard-decisions", "300"]
    shutil.copytree(old, tmp_path / "sp")
    r = mjbot_here(capsys, *options, "--out", str(tmp_path / "sp"))
    assert r.returncode == 0, r.stderr
    fresh = mjbot_here(capsys, *options, "--out", str(tmp_path / "fresh"))
    assert fresh.returncode == 0, fresh.stderr
    assert files(tmp_path / "sp") == files(tmp_path / "fresh")


def test_a_link_named_as_a_runs_temporary_file_is_not_removed(tmp_path, capsys):
    """A folder holding only a symbolic link named as a run's half shard (a user's link to a
    dataset of theirs, ``shard-00000.npz.tmp``): the name alone was taken for a killed run's
    own temporary file, and the link was removed before the run started there. No run makes
    a link: the folder is refused as another's, as any other non-empty one, and the link
    stays."""
    mine = tmp_path / "mine.npz"
    mine.write_bytes(b"PK\x03\x04 a user's own file")
    out = tmp_path / "sp"
    out.mkdir()
    (out / "shard-00000.npz.tmp").symlink_to(mine)
    r = mjbot_here(capsys, "selfplay", "--variant", "riichi", "--policies",
                   "rulebased,greedy,rulebased,greedy", "--hands", "8", "--seed", "7",
                   "--workers", "1", "--shard-decisions", "300", "--out", str(out))
    assert r.returncode == 2, r.stderr
    assert "directory is not empty" in r.stderr, r.stderr
    assert [p.name for p in out.iterdir()] == ["shard-00000.npz.tmp"]
    assert (out / "shard-00000.npz.tmp").is_symlink() and mine.read_bytes().startswith(b"PK")


@pytest.fixture(scope="module")
def with_an_nn_seat(tmp_path_factory) -> tuple[list[str], Path]:
    """A complete dataset with an nn@FILE seat (its weights on record), and its command."""
    from tests.in_process import mjbot_captured

    out = tmp_path_factory.mktemp("nn") / "d"
    options = ["selfplay", "--variant", "riichi", "--hands", "2", "--seed", "1", "--workers",
               "1", "--policies", f"nn@{ROOT / 'brain' / 'data' / 'nn_riichi.npz'},rulebased,"
               "greedy,greedy", "--out", str(out)]
    r = mjbot_captured(*options)
    assert r.returncode == 0, r.stderr
    return options, out


@pytest.mark.parametrize(("field", "value"), [
    ("weights", "oops"), ("weights", [1]), ("weights", "each 3"),
    ("environment", ["MJBOT_MC"]), ("specs", "x"), ("policies_seated", "nn"),
])
def test_a_hand_edited_config_is_refused_in_one_line(tmp_path, with_an_nn_seat, capsys,
                                                     field, value):
    """A dataset's config.weights edited by hand into anything but an object of objects was
    a traceback on resume (AttributeError: 'str' object has no attribute 'get'), where the
    nn@FILE seat was compared; it is refused in one line naming the field, the folder as it
    was."""
    options, done = with_an_nn_seat
    out = tmp_path / "d"
    shutil.copytree(done, out)
    manifest = json.loads((out / "manifest.json").read_text())
    config = manifest["config"]
    config[field] = {k: 3 for k in config[field]} if value == "each 3" else value
    (out / "manifest.json").write_text(json.dumps(manifest))
    seen = files(out), stamps(out)
    r = mjbot_here(capsys, *options[:-1], str(out))
    assert r.returncode == 2 and "Traceback" not in r.stderr, r.stderr
    (line,) = r.stderr.splitlines()
    assert line.startswith(f"mjbot selfplay: {out / 'manifest.json'}: config.{field} is "), line
    assert line.endswith("(edited by hand?); put it back, or give another --out"), line
    assert (files(out), stamps(out)) == seen


def test_a_dataset_an_older_mjbot_played_with_a_length_its_variant_ignores_goes_on(
        tmp_path, capsys):
    """An mjbot before 406c4c8 took `selfplay --variant mass --length south` and recorded
    riichi_length "south" (the games were mass games all the same). That --length is now
    refused, and without it the dataset was refused as '--length east differs from south':
    no command went on with it. A variant whose game has a set length is not compared on
    the riichi length; a riichi dataset still is."""
    from adapter.local.arena import ArenaConfig
    from adapter.local.selfplay import SelfPlayConfig, differing_option, selfplay_meta

    out = tmp_path / "d"
    small = ["selfplay", "--variant", "mass", "--hands", "4", "--seed", "3", "--out", str(out)]
    assert mjbot_here(capsys, *small).returncode == 0
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["config"]["riichi_length"] == "east"
    manifest["config"]["riichi_length"] = "south"  # as `--length south` was recorded
    (out / "manifest.json").write_text(json.dumps(manifest, indent=1, sort_keys=True) + "\n")
    again = mjbot_here(capsys, *small)
    assert again.returncode == 0 and "already holds this dataset, complete" in again.stdout, (
        again.stderr)

    def meta(variant: str, length: str) -> dict[str, Any]:
        arena = ArenaConfig(variant, ("rulebased",) * 4, 4, 3, 1, None, length)
        return dataset_meta(selfplay_meta(SelfPlayConfig(arena, str(out))))

    assert differing_option(meta("riichi", "south"), meta("riichi", "east")) == (
        "--length east differs from south")
    assert differing_option(meta("mcr", "south"), meta("mcr", "east")) == ""
