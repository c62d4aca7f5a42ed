"""What `models train` records of the data it was trained on (``trained_on`` in the weights'
meta) stays small for a big training set: it kept every imported hand's deal, 9 bytes a hand
in the file (a million hands: 9 MB of an opponent models file of 100 KB, over the 8 MB a model
may weigh, and half a second and 100 MB more at every load)."""

from __future__ import annotations

import json
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

HANDS = 50_000


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
