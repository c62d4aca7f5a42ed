"""Streamed training examples (issue 26): replay/learning/nn/stream.py holds at most its buffer
plus the held-out cap, hands out every kept row exactly once per epoch, and `mjbot nn train`
learns from it (same seed, same weights; held-out accuracy above guessing). The stream itself is
numpy only; the training tests skip without torch as tests/test_nn_train.py does (and fail
instead under MJBOT_REQUIRE_TORCH=1)."""

from __future__ import annotations

import json
import os
import subprocess
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from adapter.commands import nn as nn_command
from brain.nn.network import Network
from replay.dataset.loader import ShuffledLoader
from replay.learning.nn import stream as stream_module
from replay.learning.nn.data import FIELDS, kept_heads
from replay.learning.nn.stream import ExampleStream
from tests.in_process import mjbot_here

Run = Callable[..., subprocess.CompletedProcess[str]]


def need_torch() -> None:
    if os.environ.get("MJBOT_REQUIRE_TORCH") == "1":
        import torch  # noqa: F401  (asked for: a missing torch fails here)
    else:
        pytest.importorskip("torch", reason="torch is not installed (the [train] extra; "
                            "`make test-torch` installs a CPU build)")


@pytest.fixture
def mjbot(capsys: pytest.CaptureFixture[str]) -> Run:
    """``mjbot ARGS`` in this process (tests/in_process.py): these runs are sent no signal and
    need no process of their own, and a child paid Python's start and torch's import."""
    return lambda *args: mjbot_here(capsys, *args)


@pytest.fixture(scope="module")
def sets(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """rulebased self-play: a training set in several small shards, a held-out set. Played in
    this process (`mjbot selfplay`'s config): the sets are the tests' input, not what they test."""
    from adapter.local.arena import ArenaConfig
    from adapter.local.selfplay import SelfPlayConfig, run_selfplay

    root = tmp_path_factory.mktemp("stream")
    out = {}
    # about 690 kept training rows (more than --buffer plus --holdout-max, in 3 or more
    # shards) and 380 held-out ones (more than the cap): every training encodes each row once
    # an epoch, and 1,170 and 590 rows cost this file 70% more time for nothing more checked
    for name, hands, seed, shard in (("train", 12, 5, 100), ("held", 1, 3, 300)):
        out[name] = root / name
        run_selfplay(SelfPlayConfig(ArenaConfig("riichi", ("rulebased",) * 4, hands, seed),
                                    str(out[name]), shard_decisions=shard))
    return out


def kept_ids(root: Path) -> set[int]:
    """The decision ids of the kept rows, read with the plain loader, row by row."""
    out = set()
    for batch in ShuffledLoader(root, batch_size=4096, fields=FIELDS).epoch(0):
        for i in range(batch["seat"].shape[0]):
            if kept_heads({k: a[i] for k, a in batch.items()}, None) is not None:
                out.add(int(batch["decision_id"][i]))
    return out


def test_the_stream_holds_its_buffer_and_hands_out_every_kept_row_once(
        sets: dict[str, Path]) -> None:
    kept = kept_ids(sets["train"])
    assert len(ShuffledLoader(sets["train"]).shards) >= 3 and len(kept) > 500
    stream = ExampleStream([sets["train"]], batch_size=16, buffer=64, holdout_share=0.05,
                           holdout_max=20)
    held = stream.held_out()
    assert len(held) == 20  # 5% of the kept rows is more than the cap
    orders = []
    for epoch in range(2):
        ids = [int(s) for batch in stream.epoch(epoch) for s in batch.source]
        assert Counter(ids).most_common(1)[0][1] == 1
        assert set(ids) | {int(s) for s in held.source} == kept
        assert not set(ids) & {int(s) for s in held.source}
        orders.append(ids)
    assert orders[0] != orders[1]  # each epoch its own order
    assert stream.seen == 2 * len(stream) == 2 * (len(kept) - 20)
    assert stream.peak_buffer == 64 and stream.peak_examples_held == 64 + 20
    again = ExampleStream([sets["train"]], batch_size=16, buffer=64, holdout_max=20)
    assert [int(s) for b in again.epoch(0) for s in b.source] == orders[0]


def test_the_commands_defaults_are_the_streams() -> None:
    assert nn_command.DEFAULT_BUFFER == stream_module.DEFAULT_BUFFER
    assert nn_command.DEFAULT_HOLDOUT_MAX == stream_module.DEFAULT_HOLDOUT_MAX


def _train(mjbot: Run, sets: dict[str, Path], out: Path, *extra: str) -> dict[str, Any]:
    r = mjbot("nn", "train", "--variant", "riichi", "--data", str(sets["train"]), "--holdout",
              str(sets["held"]), "--out", str(out), "--channels", "16", "--blocks", "1",
              "--threads", "1", "--batch-size", "32", "--buffer", "200", "--holdout-max",
              "300", "--seed", "4", "--json", *extra)
    assert r.returncode == 0, r.stderr
    return dict(json.loads(r.stdout))


def test_streamed_training_is_bounded_reproducible_and_learns(sets: dict[str, Path],
                                                              tmp_path: Path, mjbot: Run) -> None:
    need_torch()
    # two epochs: the count of examples seen still tells epochs apart, and one is already
    # far above guessing (0.49 against 0.19)
    first = _train(mjbot, sets, tmp_path / "a.npz", "--epochs", "2")
    kept = len(kept_ids(sets["train"]))
    assert first["train_examples"] == kept > 200 + 300
    assert first["examples_seen"] == 2 * kept
    assert first["holdout_examples"] == 300 and first["peak_examples_held"] <= 200 + 300
    # guessing uniformly among the legal heads of the same held-out rows
    held = ExampleStream([sets["train"]], seed=4, holdout_dirs=[sets["held"]],
                         holdout_max=300).held_out()
    guess = float(np.mean(1.0 / held.mask.sum(axis=1)))
    assert first["holdout"]["accuracy"] > guess + 0.2, (first["holdout"], guess)
    second = _train(mjbot, sets, tmp_path / "b.npz", "--epochs", "2")
    a = Network.from_file(tmp_path / "a.npz", "riichi").params
    b = Network.from_file(tmp_path / "b.npz", "riichi").params
    assert all(np.array_equal(a[k], b[k]) for k in a)
    assert second["history"] == first["history"]
    _train(mjbot, sets, tmp_path / "c.npz", "--epochs", "1", "--seed", "5")
    c = Network.from_file(tmp_path / "c.npz", "riichi").params
    assert not all(np.array_equal(a[k], c[k]) for k in a)


def test_a_buffer_smaller_than_a_batch_is_refused_in_one_line(sets: dict[str, Path],
                                                               tmp_path: Path, mjbot: Run) -> None:
    r = mjbot("nn", "train", "--variant", "riichi", "--data", str(sets["train"]), "--out",
              str(tmp_path / "w.npz"), "--buffer", "8", "--batch-size", "32")
    assert r.returncode == 2 and "--buffer 8 must hold a batch" in r.stderr
    assert "Traceback" not in r.stderr


def test_a_correction_weight_without_starting_weights_is_refused(
        sets: dict[str, Path], tmp_path: Path, mjbot: Run) -> None:
    base = ["nn", "train", "--variant", "riichi", "--data", str(sets["train"]), "--out",
            str(tmp_path / "w.npz")]
    r = mjbot(*base, "--correction-weight", "3")
    assert r.returncode == 2 and "--correction-weight needs --init" in r.stderr
    r = mjbot(*base, "--correction-weight", "0")
    assert r.returncode == 2 and "--correction-weight must be above 0" in r.stderr
    assert "Traceback" not in r.stderr
