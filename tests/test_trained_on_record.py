"""What `models train` records of the data it was trained on (``trained_on`` in the weights'
meta) stays small for a big training set: it kept every imported hand's deal, 9 bytes a hand
in the file (a million hands: 9 MB of an opponent models file of 100 KB, over the 8 MB a model
may weigh, and half a second and 100 MB more at every load)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from adapter.commands import (
    DEALS_KEPT,
    UserInputError,
    require_held_out_from,
    training_record,
)
from brain.opponents.models import OpponentModels, model_path
from replay.dataset import schema as S
from replay.dataset.shards import sha256
from tests.in_process import mjbot_here
from tests.shared_data import DATA

HANDS = 50_000
ROOT = Path(__file__).resolve().parents[1]


def imported(folder: Path, hands: range) -> str:
    """An imported dataset of one decision a hand, each hand dealt differently (its number in
    the first seat's tiles): as many hands as a few thousand Tenhou games hold, which no
    import of the records in the repository reaches."""
    folder.mkdir()
    count = len(hands)
    t_hand = np.full((count, 4, S.HAND_WIDTH), -1, np.int8)
    numbers = np.asarray(hands, np.int64)
    for i in range(4):  # four base-34 digits: 34**4 deals
        t_hand[:, 0, i] = (numbers // 34 ** i) % 34
    shard = folder / "shard-00000.npz"
    np.savez(shard, hand_index=np.arange(count, dtype=np.int32), t_hand=t_hand,
             v_dora=np.full((count, S.MAX_DORA), 3, np.int8))
    (folder / "manifest.json").write_text(json.dumps({
        "source": "import", "variant": "riichi", "hands": count,
        "shards": [{"file": shard.name, "bytes": shard.stat().st_size,
                    "sha256": sha256(shard), "hands": count}]}))
    return str(folder)


def test_the_record_of_a_big_import_is_small_and_still_tells_its_hands(tmp_path: Path) -> None:
    train = imported(tmp_path / "train", range(HANDS))
    record = training_record([train])
    assert record == training_record([train])  # the same every run
    assert record["deals_total"] == HANDS and len(record["deals"]) == DEALS_KEPT
    assert len(json.dumps(record)) < 400_000  # all 50,000: 950 KB
    models = OpponentModels.from_file(model_path("riichi"))
    shipped = model_path("riichi").stat().st_size
    models.meta["trained_on"] = record
    models.save(tmp_path / "m.npz")
    assert (tmp_path / "m.npz").stat().st_size < shipped + 200_000

    # 2,000 of the hands trained on, imported again: refused, by the deals recorded
    again = imported(tmp_path / "again", range(1000, 3000))
    with pytest.raises(UserInputError) as refused:
        require_held_out_from([again], record, "m.npz", "--data")
    said = str(refused.value)
    assert f"of its 2000 hands are ones m.npz was trained on (the same records imported; " \
           f"it records {DEALS_KEPT} of the {HANDS} it was, so more may be)" in said, said
    # 2,000 others: taken
    require_held_out_from([imported(tmp_path / "other", range(HANDS, HANDS + 2000))],
                          record, "m.npz", "--data")


def _mjbot(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "adapter.cli", *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=600,
                          stdin=subprocess.DEVNULL, env={**os.environ, "PYTHONPATH": str(ROOT)})


def test_models_eval_refuses_real_records_the_models_were_trained_on(tmp_path: Path) -> None:
    """`models eval --data` refused an import of the records the models were trained on,
    but the same records given to `--real` (the people's games eval imports itself) gave
    `tenpai_auc_real` and `wait_auc_real` in-sample without a word."""
    convlog = sorted((DATA / "tenhou" / "convlog_tenhou6_json").glob("*.json"))
    train = tmp_path / "records"
    r = _mjbot("dataset", "import", "--out", str(train), *map(str, convlog[:4]))
    assert r.returncode == 0, r.stderr
    weights = str(tmp_path / "m.npz")
    r = _mjbot("models", "train", "--variant", "riichi", "--data", str(train), "--out",
               weights, "--max-decisions", "10", "--epochs", "1")
    assert r.returncode == 0, r.stderr
    held = tmp_path / "held"
    r = _mjbot("selfplay", "--policies", "greedy,greedy,greedy,rulebased", "--hands", "1",
               "--seed", "10", "--out", str(held))
    assert r.returncode == 0, r.stderr
    base = ["models", "eval", "--variant", "riichi", "--model", weights, "--data", str(held),
            "--bootstrap", "0", "--no-cache", "--real"]
    r = _mjbot(*base, str(convlog[5]), str(convlog[1]))
    assert r.returncode == 2, r.stderr
    assert f"--real (2 records): 1 of its 2 hands are ones {weights} was trained on" in \
        r.stderr and r.stderr.count("\n") == 1, r.stderr
    r = _mjbot(*base, str(convlog[5]))  # records not trained on: measured
    assert r.returncode == 0 and "tenpai AUC" in r.stdout and not r.stderr, r.stderr


def test_a_refusal_of_eval_with_data_is_one_line_with_weights_that_record_nothing(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """With weights that record no training data (the shipped ones) every `models eval
    --data` warned first that --data was not checked, so a refusal of the command's own came
    second, two lines where it was one (`--styles ... go with --by-style`, or `--by-style`'s
    `no pairs of mc in --data`). The warning is said beside the figures now."""
    r = mjbot_here(capsys, "models", "eval", "--variant", "riichi", "--data", str(tmp_path),
                   "--styles", "rulebased")
    assert r.returncode == 2 and r.stderr.strip().splitlines() == [
        "mjbot models eval: --styles, --seed, --keep-sets and --versus go with --by-style"], \
        r.stderr


def test_models_eval_refuses_to_build_its_held_out_sets_on_the_walls_trained_on(
        tmp_path: Path) -> None:
    """The self-play sets `models eval` builds itself (seed 1001 and the next; --by-style's on
    --seed, 3001 by default) were played on the walls the models were trained on where their
    training set had that seed, and the figures read in-sample without a word: a --data of
    the same set was refused. Refused now before they are played."""
    def trained_on_seed(seed: str) -> str:
        data = tmp_path / f"s{seed}"
        r = _mjbot("selfplay", "--policies", "greedy,greedy,greedy,rulebased", "--hands", "1",
                   "--seed", seed, "--out", str(data))
        assert r.returncode == 0, r.stderr
        weights = str(tmp_path / f"m{seed}.npz")
        r = _mjbot("models", "train", "--variant", "riichi", "--data", str(data), "--out",
                   weights, "--max-decisions", "10", "--epochs", "1")
        assert r.returncode == 0, r.stderr
        return weights

    base = ["models", "eval", "--variant", "riichi", "--bootstrap", "0", "--no-cache",
            "--hands", "1"]
    weights = trained_on_seed("1002")
    r = _mjbot(*base, "--model", weights)
    assert r.returncode == 2 and r.stderr.splitlines() == [
        f"mjbot models eval: the held-out self-play set (seed 1001) would be dealt the walls "
        f"{weights} was trained on (riichi self-play seed 1002): the held-out figures would "
        "be read on the deals trained on; give --data a held-out set played on another "
        "--seed"], r.stderr
    weights = trained_on_seed("7")
    by_style = [*base, "--model", weights, "--by-style", "--styles", "rulebased", "--seed"]
    r = _mjbot(*by_style, "7")
    assert r.returncode == 2 and "the per-style sets (seed 7) would be dealt the walls" in \
        r.stderr and r.stderr.count("\n") == 1, r.stderr
    r = _mjbot(*by_style, "8")
    assert r.returncode == 0, r.stderr
