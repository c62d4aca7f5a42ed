"""Self-play datasets on disk: byte-identical shards for a seed (one worker or two, through
the real command), the shuffled loader (every decision once per epoch, bounded buffer), the
import of the real recorded games, stats, and the command's errors."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from adapter.local.arena import ArenaConfig
from adapter.local.selfplay import SelfPlayConfig, run_selfplay
from replay.dataset import schema as S
from replay.dataset.imports import import_files, read_game
from replay.dataset.loader import ShuffledLoader
from replay.dataset.shards import read_manifest, read_shard
from replay.dataset.stats import dataset_stats
from tests.in_process import mjbot_here
from tests.shared_data import BOTZONE_JUDGE_LOG, DATA, MJAI_GAME

POLICIES = ("rulebased", "greedy", "rulebased", "greedy")
TENHOU = DATA / "tenhou"
REAL_RIICHI = sorted([*TENHOU.glob("convlog_tenhou6_json/*.json"), *TENHOU.glob("mjx_pairs/*"),
                      *TENHOU.glob("dnovikoff_mjlog/*.xml")])
REAL_RIICHI = [p for p in REAL_RIICHI if not p.name.startswith("LICENSE")]


def mjbot(*args: str) -> subprocess.CompletedProcess[str]:
    """``mjbot ARGS`` as a child process: for the runs a test's capture cannot hold (the
    module's import fixture) and for the worker pool's run beside the in-process one;
    refusals and stats go through tests.in_process.mjbot_here."""
    return subprocess.run([sys.executable, "-m", "adapter.cli", *args], capture_output=True,
                          text=True, timeout=300)


def digests(root: Path) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.iterdir())}


def selfplay(out: Path, workers: int = 1, variant: str = "mass", hands: int = 30,
             shard_decisions: int = 300, seed: int = 4) -> dict[str, Any]:
    config = SelfPlayConfig(ArenaConfig(variant, POLICIES, hands, seed, workers), str(out),
                            shard_decisions)
    return run_selfplay(config)


@pytest.fixture(scope="module")
def small(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("ds") / "mass"
    manifest = selfplay(out)
    assert len(manifest["shards"]) >= 4 and manifest["referee_errors"] == []
    return out


def test_same_seed_same_bytes_with_one_or_two_workers(small, tmp_path):
    again = tmp_path / "again"
    r = mjbot("selfplay", "--variant", "mass", "--policies", ",".join(POLICIES), "--hands",
              "30", "--seed", "4", "--workers", "2", "--shard-decisions", "300", "--out",
              str(again), "--json")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["workers"] == 2
    assert digests(again) == digests(small)  # shards and manifest alike
    other = tmp_path / "other"
    selfplay(other, seed=5)
    first = lambda root: (root / "shard-00000.npz").read_bytes()  # noqa: E731
    assert first(other) != first(small)


def test_manifest_lists_every_shard_with_its_hash(small):
    manifest = read_manifest(small)
    assert manifest["schema_version"] == S.SCHEMA_VERSION and manifest["variant"] == "mass"
    for entry in manifest["shards"]:
        data = (small / entry["file"]).read_bytes()
        assert len(data) == entry["bytes"]
        assert hashlib.sha256(data).hexdigest() == entry["sha256"]
    assert sum(e["decisions"] for e in manifest["shards"]) == manifest["decisions"]
    # every field of the schema, with the documented dtype and shape
    arrays = read_shard(small / manifest["shards"][0]["file"], list(S.FIELDS))
    n = manifest["shards"][0]["decisions"]
    for f in S.FIELDS.values():
        rows = n if not f.name.startswith("h_") else manifest["shards"][0]["hands"]
        assert arrays[f.name].dtype == np.dtype(f.dtype) and arrays[f.name].shape == (
            rows, *f.shape), f.name


def test_loader_yields_each_decision_once_per_epoch_shuffled(small):
    total = read_manifest(small)["decisions"]
    loader = ShuffledLoader(small, batch_size=64, seed=3, buffer_decisions=400,
                            fields=["seat", "action", "t_tenpai", "h_deltas"])
    assert len(loader) == total
    orders = []
    for epoch in (0, 1):
        batches = list(loader.epoch(epoch))
        ids = np.concatenate([b["decision_id"] for b in batches])
        assert sorted(ids.tolist()) == list(range(total))
        assert all(len(b["seat"]) == 64 for b in batches[:-1]) and len(batches[-1]["seat"]) > 0
        assert set(batches[0]) == {"seat", "action", "t_tenpai", "h_deltas", "decision_id"}
        largest = max(e["decisions"] for e in loader.manifest["shards"])
        assert loader.peak_rows <= 400 + largest < total  # never the whole dataset
        orders.append(ids)
    assert not np.array_equal(orders[0], orders[1])
    assert not np.array_equal(orders[0], np.sort(orders[0]))
    again = np.concatenate([b["decision_id"] for b in loader.epoch(0)])
    assert np.array_equal(again, orders[0])  # the seed and epoch fix the order


def test_loader_joins_the_right_hand_to_each_decision(small):
    loader = ShuffledLoader(small, batch_size=50, seed=1, fields=["hand_index", "h_deltas"])
    manifest = loader.manifest
    shard_rows = {}
    for i, entry in enumerate(manifest["shards"]):
        shard_rows[i] = read_shard(small / entry["file"], ["hand_index", "h_deltas"])
    for batch in loader.epoch(0):
        for did, deltas in zip(batch["decision_id"], batch["h_deltas"], strict=True):
            shard = int(np.searchsorted(loader.offsets, did, side="right") - 1)
            row = int(did - loader.offsets[shard])
            hand = shard_rows[shard]["hand_index"][row]
            assert np.array_equal(shard_rows[shard]["h_deltas"][hand], deltas)


def test_drop_last_gives_only_full_batches(small):
    loader = ShuffledLoader(small, batch_size=128, seed=0, fields=["seat"], drop_last=True)
    sizes = [len(b["seat"]) for b in loader.epoch(0)]
    assert sizes and set(sizes) == {128} and sum(sizes) > len(loader) - 128 * 2


def test_truncated_shard_is_a_clear_error_naming_the_file(small, tmp_path, capsys):
    broken = tmp_path / "broken"
    broken.mkdir()
    for p in small.iterdir():
        (broken / p.name).write_bytes(p.read_bytes())
    shard = broken / "shard-00001.npz"
    shard.write_bytes(shard.read_bytes()[: shard.stat().st_size // 2])
    with pytest.raises(S.DatasetError, match=r"shard-00001\.npz.*truncated"):
        list(ShuffledLoader(broken, batch_size=10_000, seed=0).epoch(0))
    with pytest.raises(S.DatasetError, match=r"shard-00001\.npz: truncated or corrupt"):
        read_shard(shard, ["seat"])  # no manifest to compare with: the zip itself says so
    r = mjbot_here(capsys, "dataset", "stats", str(broken))
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert len(r.stderr.splitlines()) == 1 and "shard-00001.npz" in r.stderr


def test_stats_of_a_file_in_the_dataset_names_the_folder_to_give(small, capsys):
    """A shard or the manifest given instead of its folder was 'no such dataset directory',
    of a file that is there."""
    r = mjbot_here(capsys, "dataset", "stats", str(small / "manifest.json"))
    assert r.returncode == 2 and len(r.stderr.splitlines()) == 1, r.stderr
    assert "a file, not a dataset directory" in r.stderr and "Traceback" not in r.stderr


def test_stats_json_fields(small, capsys):
    r = mjbot_here(capsys, "dataset", "stats", str(small), "--json")
    assert r.returncode == 0, r.stderr
    stats = json.loads(r.stdout)
    for key in ("schema_version", "variant", "hands", "decisions", "by_kind",
                "opponent_tenpai_rate"):
        assert key in stats
    assert stats["variant"] == "mass" and stats["schema_version"] == S.SCHEMA_VERSION
    assert sum(stats["by_kind"].values()) == stats["decisions"] == len(ShuffledLoader(small))
    assert 0 < stats["opponent_tenpai_rate"] < 1
    assert stats["illegal_actions"] == 0
    # the rate, recounted from the arrays
    pairs = tenpai = 0
    for entry in read_manifest(small)["shards"]:
        d = read_shard(small / entry["file"], ["seat", "t_tenpai"])
        for seat, row in zip(d["seat"], d["t_tenpai"], strict=True):
            others = [row[s] for s in range(4) if s != seat]
            pairs += 3
            tenpai += sum(int(x) for x in others)
    assert stats["opponent_tenpai_rate"] == pytest.approx(tenpai / pairs)
    plain = mjbot_here(capsys, "dataset", "stats", str(small))
    assert plain.returncode == 0 and "opponent tenpai rate" in plain.stdout


# --------------------------------------------------------------------------- imports


@pytest.fixture(scope="module")
def imported(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("imp") / "riichi"
    r = mjbot("dataset", "import", *map(str, REAL_RIICHI), str(MJAI_GAME), "--out", str(out))
    assert r.returncode == 0, r.stderr
    return out


def test_import_of_real_games_keeps_every_recorded_move_legal(imported):
    manifest = read_manifest(imported)
    assert manifest["source"] == "import" and manifest["policies"] == ["recorded"]
    assert manifest["import"]["skipped_decisions"] == 0
    assert len(manifest["import"]["files"]) == len(REAL_RIICHI) + 1
    # each mjx mjlog and its anonymised tenhou.net/6 twin are one game: it counts once
    twins = {f["file"]: f["left_out"] for f in manifest["import"]["files"]
             if "the same game" in f.get("left_out", "")}
    # (named as given on the command line: the path)
    assert twins == {f"{stem.name}.tenhou6.json": f"the same game as {stem}.mjlog (it would "
                     "count twice)" for stem in (Path(str(p).removesuffix(".tenhou6.json"))
                                                 for p in REAL_RIICHI
                                                 if p.name.endswith(".tenhou6.json")
                                                 and "mjx_pairs" in str(p))}
    total = 0
    for entry in manifest["shards"]:
        d = read_shard(imported / entry["file"], list(S.FIELDS))
        total += entry["decisions"]
        assert (d["action_index"] >= 0).all()
        rows = np.arange(len(d["seat"]))
        taken = d["legal"][rows, d["action_index"].astype(np.int64)]
        assert np.array_equal(taken, d["action"])
        assert (d["action_index"] < d["legal_count"]).all()
    assert total > 4000


def test_import_outcomes_are_the_records_wins(imported):
    from protocols import events as ev

    path = TENHOU / "convlog_tenhou6_json" / "double_ron.json"
    record = read_game(path)
    wins = [(e.winner, e.from_seat, e.value) for e in record.events
            if isinstance(e, ev.RoundWon)]
    assert len(wins) == 2
    manifest = read_manifest(imported)
    game = [f["file"] for f in manifest["import"]["files"]].index("double_ron.json")
    found = []
    for entry in manifest["shards"]:
        d = read_shard(imported / entry["file"], ["h_game", "h_wins"])
        for g, row in zip(d["h_game"], d["h_wins"], strict=True):
            if g == game:
                found.append([tuple(int(x) for x in w) for w in row if w[0] >= 0])
    assert found == [[(w, f, v) for w, f, v in wins]]


def test_botzone_import_is_mcr(tmp_path):
    out = tmp_path / "bz"
    manifest = import_files([BOTZONE_JUDGE_LOG], out)
    assert manifest["variant"] == "mcr" and manifest["decisions"] > 10
    stats = dataset_stats(out)
    assert stats["by_action"].get("win", 0) + stats["hand_endings"].get("exhaustive", 0) >= 1


def test_nycu_sgf_import_is_taiwan16_and_one_seat_logs_are_refused(tmp_path, capsys):
    nycu = Path(__file__).resolve().parent / "data" / "nycu"
    manifest = import_files(sorted(nycu.glob("*.sgf")), tmp_path / "tw")
    assert manifest["variant"] == "taiwan16" and manifest["import"]["skipped_decisions"] == 0
    d = read_shard(tmp_path / "tw" / manifest["shards"][0]["file"], ["action_index", "t_hand"])
    assert (d["action_index"] >= 0).all() and (d["t_hand"][:, :, 0] >= 0).all()
    r = mjbot_here(capsys, "dataset", "import", str(nycu / "client1.log"), "--out",
                   str(tmp_path / "one"))
    assert r.returncode == 2 and "one seat's view only" in r.stderr


def test_a_file_given_twice_is_imported_once(tmp_path):
    game = str(TENHOU / "convlog_tenhou6_json" / "double_ron.json")
    manifest = import_files([game, game], tmp_path / "d")
    first, again = manifest["import"]["files"]
    assert "left_out" not in first and again["left_out"].startswith("the same game as")
    assert manifest["decisions"] == first["decisions"]


def test_import_refuses_mixed_variants_and_bad_files(tmp_path, capsys):
    r = mjbot_here(capsys, "dataset", "import", str(BOTZONE_JUDGE_LOG), str(REAL_RIICHI[0]),
                   "--out", str(tmp_path / "mixed"))
    assert r.returncode == 2 and "several variants" in r.stderr
    assert len(r.stderr.splitlines()) == 1
    bad = tmp_path / "bad.json"
    bad.write_text('{"log": "nope"}')
    r = mjbot_here(capsys, "dataset", "import", str(bad), "--out", str(tmp_path / "b"))
    assert r.returncode == 2 and "bad.json" in r.stderr and "Traceback" not in r.stderr


# --------------------------------------------------------------------------- the command


@pytest.mark.parametrize(("args", "message"), [
    (["--variant", "poker"], "--variant: invalid choice: 'poker'"),
    (["--policies", "rulebased,greedy,nobody,greedy"], "unknown policy 'nobody'"),
    (["--policies", "rulebased,greedy"], "needs four names"),
    (["--hands", "0"], "at least 1"),
    (["--stop-after", "0"], "--stop-after 0: needs a positive number of seconds"),
    (["--ray", "auto", "--out-shared", "--stop-after", "5"], "does not go with --out-shared"),
])
def test_selfplay_errors_are_one_line_exit_2(args, message, tmp_path, capsys):
    r = mjbot_here(capsys, "selfplay", "--out", str(tmp_path / "d"), *args)
    assert r.returncode == 2, r.stderr
    lines = r.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("mjbot selfplay: ") and message in lines[0]
    assert not (tmp_path / "d").exists()


def test_the_manifest_says_which_expert_made_the_data(tmp_path, monkeypatch):
    # the seat names read "mc" whatever the search was: the options and the network travel
    # in the environment, so the manifest records them (the weights by their SHA-256)
    weights = Path(__file__).parents[1] / "brain" / "data" / "nn_riichi.npz"
    monkeypatch.setenv("MJBOT_MC", "playouts=256,fast=nn,always_simulate=1")
    monkeypatch.setenv("MJBOT_NN_WEIGHTS", str(weights))
    manifest = selfplay(tmp_path / "expert", hands=4)
    assert manifest["config"]["environment"] == {
        "MJBOT_MC": "playouts=256,fast=nn,always_simulate=1",
        "MJBOT_NN_WEIGHTS": str(weights),
        "nn_weights_sha256": hashlib.sha256(weights.read_bytes()).hexdigest()}
    assert read_manifest(tmp_path / "expert")["config"] == manifest["config"]
    monkeypatch.delenv("MJBOT_MC")
    monkeypatch.delenv("MJBOT_NN_WEIGHTS")
    assert selfplay(tmp_path / "plain", hands=4)["config"]["environment"] == {}


def test_selfplay_refuses_an_unusable_out_dir(small, tmp_path, capsys):
    a_file = tmp_path / "file"
    a_file.write_text("x")
    other = tmp_path / "other"  # a folder of anything but a dataset
    other.mkdir()
    (other / "notes.txt").write_text("x")
    for out, message in ((small, "--hands 1 differs from"), (other, "not empty"),
                         (a_file, "not a directory"),
                         (a_file / "below", "cannot create")):
        r = mjbot_here(capsys, "selfplay", "--variant", "mass", "--hands", "1", "--out", str(out))
        assert r.returncode == 2, r.stderr
        lines = r.stderr.splitlines()
        assert len(lines) == 1 and message in lines[0], lines
    r = mjbot_here(capsys, "dataset", "stats", str(tmp_path))
    assert r.returncode == 2 and "manifest.json" in r.stderr


def test_readme_documents_every_field_as_the_schema_has_it():
    readme = (Path(__file__).resolve().parent.parent / "replay" / "dataset" /
              "README.md").read_text(encoding="utf-8")
    assert f"schema_version {S.SCHEMA_VERSION}" in readme.splitlines()[0]
    rows = {}
    for line in readme.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 5 and cells[0].startswith("`"):
            rows[cells[0].strip("`")] = cells[1:4]
    assert set(rows) == set(S.FIELDS)
    for f in S.FIELDS.values():
        shape = ("scalar" if not f.shape else "(" + ", ".join(map(str, f.shape))
                 + (",)" if len(f.shape) == 1 else ")"))
        assert rows[f.name] == [f.dtype, shape, str(f.fill)], f.name


@pytest.mark.parametrize("text", ["[1]", '"manifest"', "3"])
def test_a_manifest_that_is_not_a_json_object_is_one_line_exit_2(text, tmp_path, capsys):
    # valid JSON of the wrong shape once reached manifest.get and died with AttributeError
    (tmp_path / "manifest.json").write_text(text)
    with pytest.raises(S.DatasetError, match=r"manifest\.json: not a dataset manifest"):
        read_manifest(tmp_path)
    r = mjbot_here(capsys, "dataset", "stats", str(tmp_path))
    assert r.returncode == 2, r.stderr
    lines = r.stderr.splitlines()
    assert len(lines) == 1 and "not a dataset manifest" in lines[0] and "Traceback" not in r.stderr
