"""Opponent models: the shipped weights answer valid probabilities per decision, training is
deterministic for a seed and beats the baselines on held-out hands, and `mjbot models`
prints the section-1 fields."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from adapter.local.arena import ArenaConfig
from adapter.local.selfplay import SelfPlayConfig, run_selfplay
from adapter.opponent_sets import MIXES
from brain.opponents.models import OpponentModels, model_path
from brain.opponents.view import FIELDS, OpponentInputs
from replay.dataset import schema as S
from replay.dataset.shards import read_manifest, read_shard, shard_paths
from replay.dataset.snapshot import restore
from replay.learning.opponents import data as D
from replay.learning.opponents.evaluate import evaluate
from replay.learning.opponents.train import quick_config, train
from tests.in_process import mjbot_captured, mjbot_here
from tests.shared_data import DATA


def selfplay(out: Path, variant: str, hands: int, seed: int) -> list[Path]:
    dirs = []
    for i, mix in enumerate(MIXES):
        d = out / f"mix{i}"
        run_selfplay(SelfPlayConfig(ArenaConfig(variant, mix, hands, seed + i), str(d)))
        dirs.append(d)
    return dirs


@pytest.fixture(scope="module")
def riichi_sets(tmp_path_factory) -> dict[str, list[Path]]:
    root = tmp_path_factory.mktemp("opp")
    return {"train": selfplay(root / "train", "riichi", 160, 21),
            "held": selfplay(root / "held", "riichi", 60, 41)}


@pytest.fixture(scope="module")
def quick_model(riichi_sets) -> OpponentModels:
    """Three epochs of the wait head (its margin over genbutsu/suji is the thinnest: 0.024
    above the test's +0.03 after three, below it after two), two of the tenpai head (its
    margins move by at most 0.001 from the third) and one of the value head (no test of the
    trained model reads it past its shape)."""
    cfg = quick_config(seed=0, epochs=3)
    cfg = replace(cfg, tenpai=replace(cfg.tenpai, epochs=2), value=replace(cfg.value, epochs=1))
    return train(D.load(riichi_sets["train"], "riichi"), cfg)


def test_training_is_deterministic_for_a_seed(riichi_sets, quick_model, tmp_path) -> None:
    data = D.load(riichi_sets["train"], "riichi", max_decisions=2000, seed=3)
    again = D.load(riichi_sets["train"], "riichi", max_decisions=2000, seed=3)
    assert np.array_equal(data.x, again.x) and np.array_equal(data.z, again.z)
    a = train(data, quick_config(seed=5, epochs=1))
    b = train(again, quick_config(seed=5, epochs=1))
    c = train(data, quick_config(seed=6, epochs=1))
    a.save(tmp_path / "a.npz")
    b.save(tmp_path / "b.npz")
    c.save(tmp_path / "c.npz")
    with np.load(tmp_path / "a.npz") as fa, np.load(tmp_path / "b.npz") as fb, \
            np.load(tmp_path / "c.npz") as fc:
        weights = [n for n in fa.files if n != "meta"]
        assert all(np.array_equal(fa[n], fb[n]) for n in weights)
        assert not all(np.array_equal(fa[n], fc[n]) for n in weights)


def test_a_trained_model_beats_the_baselines_on_held_out_hands(riichi_sets, quick_model
                                                              ) -> None:
    held = D.load(riichi_sets["held"], "riichi", kinds="all")
    r = evaluate(quick_model, held)
    base = r["baseline"]
    assert r["tenpai_auc"] > base["tenpai_auc_riichi"] + 0.03
    assert r["tenpai_auc"] > base["tenpai_auc_turn"] + 0.1
    assert r["tenpai_auc_no_riichi"] > base["tenpai_auc_no_riichi_calls"]
    assert r["wait_auc"] > base["wait_auc_genbutsu_suji"] + 0.03
    assert 0.5 < r["deal_in_auc"] <= 1


def test_the_shipped_riichi_model_beats_the_baselines_on_fresh_walls(riichi_sets) -> None:
    """Walls it never saw (seeds 41, 42; it was trained on seeds 1-4), the value head too:
    its advantage over the mean is small (hidden dora and yaku) but not noise."""
    held = D.load(riichi_sets["held"], "riichi", kinds="all")
    r = evaluate(OpponentModels.load("riichi"), held)
    base = r["baseline"]
    assert r["tenpai_auc"] > base["tenpai_auc_riichi"] + 0.05
    assert r["tenpai_auc"] > base["tenpai_auc_turn"] + 0.1
    assert r["wait_auc"] > base["wait_auc_genbutsu_suji"] + 0.05
    assert r["value_mae"] < 0.95 * base["value_mae_mean"]


def test_saved_models_load_and_answer_the_same(quick_model, tmp_path) -> None:
    path = tmp_path / "m.npz"
    quick_model.save(path)
    loaded = OpponentModels.from_file(path)
    x = np.random.default_rng(0).random((5, quick_model.tenpai.x_mean.size)).astype(np.float32)
    assert np.allclose(loaded.tenpai_probability(x), quick_model.tenpai_probability(x))
    assert loaded.variant == "riichi" and loaded.smear == pytest.approx(quick_model.smear)


def test_saved_models_name_their_data_without_machine_paths(riichi_sets, quick_model,
                                                             tmp_path) -> None:
    """The training folders are absolute tmp paths; the file (which ships) keeps their names."""
    assert all(d.is_absolute() for d in riichi_sets["train"])
    path = tmp_path / "m.npz"
    quick_model.save(path)
    with np.load(path) as arrays:
        meta = json.loads(arrays["meta"].tobytes().decode())
    assert meta["sources"] == [d.name for d in riichi_sets["train"]]
    assert str(tmp_path.parent.parent) not in json.dumps(meta)


@pytest.mark.parametrize("variant", ["riichi", "mcr", "taiwan16"])
def test_shipped_models_give_valid_estimates_per_decision(variant, tmp_path) -> None:
    assert model_path(variant).is_file(), f"brain/data has no {variant} opponent models"
    models = OpponentModels.load(variant)
    out = tmp_path / "d"
    # one seating (four of one policy): one game, where MIXES[0]'s six seatings played six
    # (33 riichi hands) for the 12 decisions read; rulebased calls and declares riichi
    run_selfplay(SelfPlayConfig(ArenaConfig(variant, ("rulebased",) * 4,
                                            4 if variant != "mcr" else 1, 77), str(out)))
    rows = read_shard(shard_paths(out, read_manifest(out))[0][0],
                      [f.name for f in S.DECISION_FIELDS])
    picks = np.linspace(0, len(rows["seat"]) - 1, 12).astype(int)
    batch = models.estimate_inputs(OpponentInputs.from_fields(
        {n: rows[n][picks] for n in FIELDS}))
    for j, i in enumerate(picks):
        one = {n: rows[n][i] for n in rows}
        state = restore(variant, int(one["seat"]), one)
        e = models.estimate(state)
        assert e.seats.tolist() == [(state.seat + d) % 4 for d in (1, 2, 3)]
        assert e.tenpai.shape == (3,) and e.wait.shape == (3, 34) and e.value.shape == (3, 34)
        assert ((e.tenpai > 0) & (e.tenpai < 1)).all()
        assert ((e.wait > 0) & (e.wait < 1)).all()
        assert (np.isfinite(e.value) & (e.value > 0)).all()
        assert e.deal_in().shape == (3, 34) and (e.deal_in() <= e.tenpai[:, None]).all()
        assert np.allclose(e.expected_loss(), e.deal_in() * e.value)
        assert np.allclose(batch.tenpai[3 * j:3 * j + 3], e.tenpai, atol=1e-6)
        assert np.allclose(batch.wait[3 * j:3 * j + 3], e.wait, atol=1e-6)


def test_a_declared_riichi_reads_as_ready() -> None:
    from tests.test_opponent_features import riichi_state

    e = OpponentModels.load("riichi").estimate(riichi_state())
    assert e.tenpai[1] > 0.9 > e.tenpai[0]
    # her own discards and what passed since her riichi are the safest kinds
    safe = [28, 21, 33, 16]  # 2z, 4s, 7z, 8p
    assert e.wait[1, safe].max() < np.median(e.wait[1])


# --------------------------------------------------------------------------- CLI


def run_cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    """`mjbot ...` through its entry point in this process: its exit status, stdout and
    stderr. These runs train, evaluate and print; none is about the process (no signal, no
    exit by the kernel), so a Python start each bought nothing (the logging the CLI sets up
    is restored after each test, conftest.py). An exception escaping it fails the test, as a
    traceback in a child's stderr did."""
    r = mjbot_here(capsys, *args)
    return r.returncode, r.stdout, r.stderr


def refused(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    """`mjbot ...` through its entry point in this process, for refusals, which read and play
    nothing (a Python start each bought nothing): its exit status and stderr. An exception
    escaping it fails the test, as a traceback in the child's stderr did."""
    r = mjbot_here(capsys, *args)
    return r.returncode, r.stderr


def test_cli_train_then_eval_prints_the_section_fields(riichi_sets, tmp_path, capsys) -> None:
    out = tmp_path / "m.npz"
    code, text, _ = run_cli(capsys, "models", "train", "--variant", "riichi", "--data",
                            *map(str, riichi_sets["train"]), "--out", str(out), "--epochs",
                            "1", "--max-decisions", "3000", "--json")
    assert code == 0 and out.is_file()
    summary = json.loads(text)
    assert summary["out"] == str(out) and set(summary["epochs"]) == {"tenpai", "wait", "value"}
    code, text, _ = run_cli(capsys, "models", "eval", "--variant", "riichi", "--model",
                            str(out), "--data", *map(str, riichi_sets["held"]), "--bootstrap",
                            "20", "--json")
    assert code == 0
    r = json.loads(text)
    for key in ("tenpai_auc", "tenpai_auc_real", "wait_auc", "wait_auc_real", "value_mae",
                "value_mae_real"):
        assert isinstance(r[key], float), key
    for key in ("tenpai_auc_riichi", "wait_auc_genbutsu_suji", "tenpai_auc_real_riichi",
                "wait_auc_real_genbutsu_suji", "value_mae_mean"):
        assert isinstance(r["baselines"][key], float), key
    assert r["real"]["files"] == 21 and r["real_reason"] is None
    lo, hi = r["ci95"]["tenpai_auc_real"]
    assert lo <= r["tenpai_auc_real"] <= hi


def test_cli_eval_builds_its_held_out_set_and_says_why_real_is_null(capsys) -> None:
    code, text, _ = run_cli(capsys, "models", "eval", "--variant", "taiwan16", "--hands", "8",
                            "--bootstrap", "0", "--json")
    assert code == 0
    r = json.loads(text)
    assert isinstance(r["tenpai_auc"], float) and isinstance(r["wait_auc"], float)
    assert r["tenpai_auc_real"] is None and r["wait_auc_real"] is None
    assert "our own bots" in r["real_reason"]
    assert r["heldout"]["selfplay_seed"] == 1001 and r["heldout"]["hands_per_mix"] == 8
    assert r["baselines"]["tenpai_auc_riichi"] is None
    assert isinstance(r["baselines"]["tenpai_auc_calls"], float)


def test_cli_refuses_an_unknown_variant_in_one_line(capsys) -> None:
    code, err = refused(capsys, "models", "eval", "--variant", "hanafuda")
    assert code == 2 and err.strip().splitlines() == [
        "mjbot models eval: argument --variant: invalid choice: 'hanafuda' (choose from "
        "'riichi', 'mcr', 'taiwan16', 'mass')"]


def test_a_corrupted_models_file_is_refused_in_one_line(tmp_path, capsys) -> None:
    """A cut or corrupted opponents file (a copy that did not finish) ended `models eval` in
    numpy's BadZipFile traceback. Now one line names the file and what it should be."""
    bad = tmp_path / "opponents_riichi.npz"
    bad.write_bytes(model_path("riichi").read_bytes()[:5000])
    code, err = refused(capsys, "models", "eval", "--variant", "riichi", "--model", str(bad))
    assert code == 2 and err.strip().splitlines() == [
        f"mjbot models eval: {bad} is not opponent models (the .npz that `mjbot models train` "
        "writes)"]


def test_mc_seats_whose_models_cannot_be_read_are_refused_before_a_game(tmp_path, capsys
                                                                        ) -> None:
    """mc reads its opponent models (MJBOT_MC's or the seat's models=DIR) at each decision:
    missing or corrupted, it raised every time, and the arena or a self-play run played to
    the end on the fallback (an hour of --stop-after for a dataset of fallbacks), said only by
    the fallback share at the end. Now the run is refused in one line before any game, and
    --out is not made."""
    cut = tmp_path / "cut"
    cut.mkdir()
    (cut / "opponents_riichi.npz").write_bytes(model_path("riichi").read_bytes()[:5000])
    for folder, why in ((tmp_path / "none", f"no opponent models for 'riichi' at "
                         f"{tmp_path / 'none' / 'opponents_riichi.npz'}"),
                        (cut, f"{cut / 'opponents_riichi.npz'} is not opponent models")):
        out = tmp_path / "data"
        seat = f"mc@models={folder}"
        code, err = refused(capsys, "selfplay", "--policies", f"{seat},rulebased,rulebased,"
                            "rulebased", "--hands", "1", "--out", str(out))
        assert code == 2 and len(err.strip().splitlines()) == 1, err[-2000:]
        assert err.startswith(f"mjbot selfplay: {seat}: {why}") and not out.exists()


def test_mc_models_given_a_file_says_it_names_a_folder(tmp_path, capsys) -> None:
    """`mjbot replay GAME --policy mc@models=brain/data/opponents_riichi.npz` (the file, as
    nn@FILE names its weights) said only "no opponent models for 'riichi' at
    brain/data/opponents_riichi.npz/opponents_riichi.npz". It now says what models= names."""
    game = tmp_path / "game.json"
    game.write_text((DATA / "tenhou" / "convlog_tenhou6_json" / "ryukyoku.json").read_text(
        encoding="utf-8"), encoding="utf-8")
    weights = model_path("riichi")
    seat = f"mc@models={weights}"
    code, err = refused(capsys, "replay", str(game), "--policy", seat)
    assert code == 2 and len(err.strip().splitlines()) == 1, err[-2000:]
    assert err.strip().endswith(f"no opponent models for 'riichi' at {weights}/opponents_riichi"
                                f".npz ({weights} is a file: models= names the folder that "
                                "holds opponents_riichi.npz)"), err


@pytest.fixture(scope="module")
def one_hand_set(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A one-wall-set self-play dataset (greedy x3 and rulebased, seed 9), recorded once for
    the module: the tests that train on it only read it (their models go to their own
    folders)."""
    data = tmp_path_factory.mktemp("one-hand") / "data"
    r = mjbot_captured("selfplay", "--policies", "greedy,greedy,greedy,rulebased", "--hands",
                       "1", "--seed", "9", "--out", str(data))
    assert r.returncode == 0, r.stderr
    return data


def test_a_head_with_no_held_out_example_says_so(one_hand_set, tmp_path, capsys) -> None:
    """Trained on few decisions, the held-out hands may hold no ready pair (wait head) or no
    win (value head): their 'best held-out loss' read 0.0000, a loss of nothing, and that
    0.0 made the first epoch the one kept. Now the log holds None, the report says there
    was no held-out example, and the last epoch is kept."""
    data = one_hand_set
    args = ("models", "train", "--variant", "riichi", "--data", str(data), "--out",
            str(tmp_path / "m.npz"), "--max-decisions", "10", "--epochs", "2")
    code, out, err = run_cli(capsys, *args, "--json")
    assert code == 0, err
    epochs = json.loads(out)["epochs"]
    assert all(r["valid_loss"] is None for r in epochs["wait"] + epochs["value"])
    assert all(r["valid_loss"] > 0 for r in epochs["tenpai"])
    code, out, err = run_cli(capsys, *args)
    assert code == 0, err
    assert ("  wait: no held-out example (the held-out hands hold none: too few hands); the "
            "last of 2 epochs kept") in out.splitlines()
    assert "held-out loss 0.0000" not in out


def test_the_help_gives_the_sample_models_train_reads_by_default(capsys) -> None:
    """models train reads at most 400,000 decisions unless told otherwise, and its help said
    only '0: every one': a user with a larger dataset did not learn that it was sampled."""
    code, out, _ = run_cli(capsys, "models", "train", "--help")
    assert code == 0 and "default 400000, so a larger dataset is not read whole" in " ".join(
        out.split())


ROOT = Path(__file__).resolve().parent.parent
# mjbot's main() in a fresh process that then says how many threads it holds: OpenBLAS starts
# its pool when numpy loads and keeps it, so the count after the run is the one it trained with
_THREADS_AFTER = ("import os, sys\nfrom adapter.cli import main\ncode = main(sys.argv[1:])\n"
                  "print('threads', len(os.listdir('/proc/self/task')), file=sys.stderr)\n"
                  "sys.exit(code)")


@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="counts threads in /proc")
def test_models_train_runs_numpy_on_one_blas_thread_unless_told(one_hand_set, tmp_path,
                                                               capsys) -> None:
    """OpenBLAS's default, a thread per core, made `models train` 2-15 times slower than one
    thread on a busy 2-core machine (README, "Opponent models"). Now it trains on one thread
    unless --threads (or OPENBLAS_NUM_THREADS) says otherwise, and --threads 0 is refused."""
    data = one_hand_set
    env = {k: v for k, v in os.environ.items() if k not in (
        "OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")}
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), *filter(None, [env.get("PYTHONPATH")])])

    def threads(*extra: str) -> int:
        r = subprocess.run([sys.executable, "-c", _THREADS_AFTER, "models", "train",
                            "--variant", "riichi", "--data", str(data), "--out",
                            str(tmp_path / "m.npz"), "--max-decisions", "10", "--epochs", "1",
                            *extra], capture_output=True, text=True, env=env)
        assert r.returncode == 0, r.stderr
        return int(r.stderr.split()[-1])

    assert threads() == 1
    if (os.cpu_count() or 1) >= 2:  # OpenBLAS holds at most a thread per core
        assert threads("--threads", "2") == 2
    code, err = refused(capsys, "models", "train", "--variant", "riichi", "--data", str(data),
                        "--threads", "0")
    assert code == 2 and err.strip().splitlines() == [
        "mjbot models train: --threads must be at least 1, got 0"]
