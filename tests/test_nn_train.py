"""The neural policy's torch side (issue 17): the numpy forward equals the torch model's, and
a tiny CPU training run from a self-play dataset to weights the ``nn`` policy plays. Skipped
where torch is not installed (it is the optional ``[train]`` extra); ``make test-torch``
installs a CPU build and runs this file with MJBOT_REQUIRE_TORCH=1 (no skip); CI installs the
same build before its ``make test`` and sets MJBOT_REQUIRE_TORCH=1 where it installs (.ci/run)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

SKIP = ("torch is not installed (the [train] extra): `make test-torch` installs a CPU build "
        "(torch==2.13.0+cpu, where pip finds one) and runs this file; CI installs it before its "
        "make test where it installs, and then requires it")
if os.environ.get("MJBOT_REQUIRE_TORCH") == "1":
    import torch  # asked for: a missing torch fails here instead of skipping
else:
    torch = pytest.importorskip("torch", reason=SKIP)

from brain.nn.encoding import NUM_PLANES  # noqa: E402
from brain.nn.network import Network, Shape  # noqa: E402
from replay.dataset.shards import sha256  # noqa: E402
from replay.learning.nn.train import TorchNet, correction_weights, masked_loss  # noqa: E402
from tests.full_disk import mjbot_on_a_full_disk  # noqa: E402
from tests.in_process import mjbot_here  # noqa: E402

NN_DATA = Path(__file__).resolve().parent / "data" / "nn"


def torch_twin(net: Network) -> TorchNet:
    model = TorchNet(net.shape)
    model.load_state_dict({k: torch.from_numpy(v) for k, v in net.params.items()})
    return model.eval()


def test_the_golden_outputs_are_the_torch_models() -> None:
    net = Network.from_file(NN_DATA / "golden_riichi.npz", "riichi")
    with np.load(NN_DATA / "golden_io.npz") as io, torch.no_grad():
        logits, value = torch_twin(net)(torch.from_numpy(io["x"]))
        np.testing.assert_allclose(logits.numpy(), io["logits"], atol=1e-5, rtol=0)
        np.testing.assert_allclose(value.numpy(), io["value"], atol=1e-5, rtol=0)


def test_numpy_forward_equals_torch_on_random_weights_and_inputs() -> None:
    torch.manual_seed(3)
    model = TorchNet(Shape(NUM_PLANES, 24, 2, 16)).eval()
    for p in model.parameters():  # away from the init's small scale
        torch.nn.init.normal_(p, std=0.1)
    net = model.export("taiwan16")
    x = np.random.default_rng(3).random((7, NUM_PLANES, 34)).astype(np.float32)
    with torch.no_grad():
        logits, value = model(torch.from_numpy(x))
    ours, our_value = net.forward(x)
    np.testing.assert_allclose(ours, logits.numpy(), atol=1e-5, rtol=1e-5)
    np.testing.assert_allclose(our_value, value.numpy(), atol=1e-5, rtol=1e-5)


Run = Callable[..., subprocess.CompletedProcess[str]]


@pytest.fixture
def nn_train(capsys: pytest.CaptureFixture[str]) -> Run:
    """``mjbot nn train ARGS`` in this process (tests/in_process.py): no signal is sent to it
    and no process of its own is needed, and a child paid Python's start and torch's import."""
    return lambda *args: mjbot_here(capsys, "nn", "train", *args)


@pytest.fixture
def mjbot(capsys: pytest.CaptureFixture[str]) -> Run:
    """``mjbot ARGS`` in this process, as :func:`nn_train` (a selfplay or arena game of the
    weights just trained: a child paid Python's start for it)."""
    return lambda *args: mjbot_here(capsys, *args)


def _selfplay(out: Path, variant: str, player: str, hands: int, seed: int = 5) -> Path:
    """A self-play dataset of four ``player`` seats in ``out``, as `mjbot selfplay` writes it
    (the same config), played in this process: the data is the tests' input, not what they
    test, and a child process per dataset was a Python start-up each."""
    from adapter.local.arena import ArenaConfig
    from adapter.local.selfplay import SelfPlayConfig, run_selfplay

    run_selfplay(SelfPlayConfig(ArenaConfig(variant, (player,) * 4, hands, seed), str(out)))
    return out


def _rulebased_riichi_data(tmp_path: Path, hands: int) -> Path:
    """A riichi self-play dataset of four rulebased seats (seed 5) in ``tmp_path / data``."""
    return _selfplay(tmp_path / "data", "riichi", "rulebased", hands)


def _selfplay_and_train(nn_train: Run, tmp_path: Path, variant: str, name: str, hands: int,
                        epochs: int) -> tuple[Path, Path, dict[str, Any]]:
    """A small rulebased self-play set (seed 5) and a tiny network trained on it: (the data
    folder, the weights, ``nn train --json``'s result)."""
    data = _selfplay(tmp_path / "data", variant, "rulebased", hands)
    weights = tmp_path / name
    r = nn_train("--variant", variant, "--data", str(data), "--out", str(weights),
                 "--epochs", str(epochs), "--channels", "8", "--blocks", "1", "--threads", "1",
                 "--json")
    assert r.returncode == 0, r.stderr
    return data, weights, json.loads(r.stdout)


def test_a_tiny_training_run_gives_weights_the_policy_plays(
        tmp_path: Path, nn_train: Run, mjbot: Run, monkeypatch: pytest.MonkeyPatch) -> None:
    threads = torch.get_num_threads()
    torch.set_num_threads(3)  # not the run's --threads 1
    torch.manual_seed(12345)  # not the run's --seed
    generator = torch.random.get_rng_state()
    data, weights, result = _selfplay_and_train(nn_train, tmp_path, "riichi", "nn.npz",
                                                hands=2, epochs=2)
    assert torch.equal(torch.random.get_rng_state(), generator)  # the caller's draws go on
    # torch's thread count is process-wide: the run puts the caller's back (a test after it,
    # or a program calling train(), ran on the run's one thread)
    assert torch.get_num_threads() == 3
    torch.set_num_threads(threads)
    assert result["train_examples"] > 100 and result["holdout_examples"] > 0
    assert 0.0 <= result["holdout"]["accuracy"] <= 1.0
    net = Network.from_file(weights, "riichi")
    assert net.meta["training"]["train_examples"] == result["train_examples"]
    x = np.random.default_rng(0).random((2, NUM_PLANES, 34)).astype(np.float32)
    with torch.no_grad():
        logits, _ = torch_twin(net)(torch.from_numpy(x))
    np.testing.assert_allclose(net.forward(x)[0], logits.numpy(), atol=1e-5, rtol=0)
    tuned = tmp_path / "tuned.npz"  # fine-tuning starts from the weights, keeps their shape
    r = nn_train("--variant", "riichi", "--data", str(data), "--out", str(tuned),
                 "--epochs", "1", "--init", str(weights), "--channels", "99", "--threads", "1")
    assert r.returncode == 2 and "--channels 99: --init" in r.stderr, r.stderr  # was ignored
    assert "is 8 channels x 1 blocks" in r.stderr and not tuned.exists()
    r = nn_train("--variant", "riichi", "--data", str(data), "--out", str(tuned),
                 "--epochs", "1", "--init", str(weights), "--channels", "8", "--threads", "1",
                 "--correction-weight", "3", "--json")
    assert r.returncode == 0, r.stderr
    tuned_result = json.loads(r.stdout)
    assert tuned_result["config"]["correction_weight"] == 3.0
    # the same seed holds out the same rows: the start's figure is the first run's, and the
    # hits now are its hits kept plus its misses learned
    held = tuned_result["holdout"]
    assert held["start_accuracy"] == result["holdout"]["accuracy"]
    n, start_hits = held["examples"], round(held["start_accuracy"] * held["examples"])
    assert held["corrections"] == n - start_hits
    assert round(held["start_hits_kept"] * start_hits + held["corrections_learned"] *
                 held["corrections"]) == round(held["accuracy"] * n)
    tuned_meta = Network.from_file(tuned, "riichi").meta
    assert tuned_meta["channels"] == 8
    # the weights ship: their record names the data and the start by name, not by machine path
    assert net.meta["training"]["data"] == ["data"]
    assert tuned_meta["training"]["config"]["init"] == "nn.npz"
    assert str(tmp_path) not in json.dumps(tuned_meta)
    # ... and the start by its content: a name alone cannot say which nn.npz it was
    assert tuned_meta["training"]["config"]["init_sha256"] == sha256(weights)
    assert tuned_result["config"]["init_sha256"] == sha256(weights)
    assert net.meta["training"]["config"]["init_sha256"] == ""  # no start
    before = sha256(tuned)  # fine-tuned in place: the record keeps the start it replaced
    r = nn_train("--variant", "riichi", "--data", str(data), "--out", str(tuned),
                 "--epochs", "1", "--init", str(tuned), "--threads", "1")
    assert r.returncode == 0, r.stderr
    again = Network.from_file(tuned, "riichi").meta["training"]["config"]
    assert again["init"] == "tuned.npz" and again["init_sha256"] == before != sha256(tuned)
    sp = tmp_path / "sp"
    monkeypatch.setenv("MJBOT_NN_WEIGHTS", str(weights))
    r = mjbot("selfplay", "--variant", "riichi", "--policies", "nn,rulebased,nn,rulebased",
              "--hands", "1", "--seed", "6", "--out", str(sp))
    assert r.returncode == 0, r.stderr


def test_mcr_trains_on_its_plan_planes_and_fine_tuning_keeps_the_encoding(
        tmp_path: Path, nn_train: Run, mjbot: Run) -> None:
    """MCR weights are trained on encoding 2 (the plan planes); a fine-tune keeps the encoding
    of its start, and the policy plays the result."""
    from brain.nn.encoding import MCR_PLAN_ENCODING, num_planes

    data, weights, result = _selfplay_and_train(nn_train, tmp_path, "mcr", "mcr.npz",
                                                hands=1, epochs=1)
    assert result["encoding"] == MCR_PLAN_ENCODING
    net = Network.from_file(weights, "mcr")
    assert net.encoding == MCR_PLAN_ENCODING and net.shape.planes == num_planes(MCR_PLAN_ENCODING)
    tuned = tmp_path / "tuned.npz"
    r = nn_train("--variant", "mcr", "--data", str(data), "--out", str(tuned),
                 "--epochs", "1", "--init", str(weights), "--threads", "1")
    assert r.returncode == 0, r.stderr
    assert Network.from_file(tuned, "mcr").encoding == MCR_PLAN_ENCODING
    r = mjbot("arena", "--variant", "mcr", "--policies", f"nn@{tuned},rulebased,rulebased,"
              "rulebased", "--hands", "1", "--seed", "6", "--no-log",
              "--max-fallback-share", "0", "--json", str(tmp_path / "arena.json"))
    assert r.returncode == 0, r.stderr  # not one decision answered for the network
    seated = json.loads((tmp_path / "arena.json").read_text())["policies"][f"nn@{tuned}"]
    assert seated["decisions"] > 0 and seated["fallbacks"] == 0


def test_training_refuses_a_folder_without_a_dataset(tmp_path: Path, nn_train: Run) -> None:
    r = nn_train("--variant", "riichi", "--data", str(tmp_path), "--out",
                 str(tmp_path / "w.npz"))
    assert r.returncode == 2 and "no dataset here" in r.stderr and "Traceback" not in r.stderr


def test_a_diverged_run_writes_no_weights_and_says_why(tmp_path: Path, nn_train: Run) -> None:
    """A learning rate far too high gives a NaN loss: the run ends 1 with one line, and no
    file that would play garbage at a table is left behind."""
    data = _rulebased_riichi_data(tmp_path, 8)
    out = tmp_path / "w.npz"
    r = nn_train("--variant", "riichi", "--data", str(data), "--out", str(out),
                 "--epochs", "1", "--channels", "8", "--blocks", "1", "--threads", "1",
                 "--lr", "1e12")
    assert r.returncode == 1 and "Traceback" not in r.stderr, r.stderr
    assert "training diverged" in r.stderr and "nothing written" in r.stderr
    assert not out.exists()
    r = nn_train("--variant", "riichi", "--data", str(data), "--out", str(out),
                 "--device", "no-such-device")
    assert r.returncode == 2 and "not a torch device" in r.stderr and not out.exists()


def test_a_held_out_set_with_no_example_is_refused_not_scored_zero(tmp_path: Path,
                                                                   nn_train: Run) -> None:
    """--holdout datasets with no decision of the --policies learned (another teacher's
    games) trained on and printed 'held-out accuracy 0.0000', value mse 0.0000, into the
    weights' record too: figures of nothing. Now one line before training, no file."""
    sets = {name: _selfplay(tmp_path / name, "riichi", player, 1, seed)  # other walls
            for name, player, seed in (("data", "rulebased", 5), ("held", "greedy", 6))}
    out = tmp_path / "w.npz"
    r = nn_train("--variant", "riichi", "--data", str(sets["data"]), "--holdout",
                 str(sets["held"]), "--policies", "rulebased", "--out", str(out), "--epochs", "1",
                 "--channels", "8", "--blocks", "1", "--threads", "1")
    assert r.returncode == 2 and r.stdout == "", r.stdout
    assert r.stderr.splitlines() == [
        "mjbot nn train: no held-out example: the --holdout datasets hold no decision with a "
        "choice of rulebased (their players: greedy)"]
    assert not out.exists()


def test_weights_the_disk_has_no_room_for_leave_the_old_file_whole(tmp_path: Path) -> None:
    """Training to an --out the disk had no room for ended, after the whole run, in a
    traceback, with the file there cut short (a retrained brain/data/nn_riichi.npz, the last
    generation: gone). Now one line says it, exit 1, and the old file is as it was."""
    data = _rulebased_riichi_data(tmp_path, 2)
    out = tmp_path / "w.npz"
    old = (NN_DATA / "golden_riichi.npz").read_bytes()
    out.write_bytes(old)
    r = mjbot_on_a_full_disk("nn", "train", "--variant", "riichi", "--data", str(data),
                             "--out", str(out), "--epochs", "1", "--channels", "8", "--blocks",
                             "1", "--threads", "1", "--json", file_bytes=len(old) // 2)
    assert r.returncode == 1 and "Traceback" not in r.stderr, r.stderr[-2000:]
    assert r.stderr.splitlines()[-1] == (f"mjbot nn train: cannot write {out}: File too large "
                                         "(nothing written there)")
    assert out.read_bytes() == old and sorted(tmp_path.iterdir()) == [data, out]


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_a_stopped_training_writes_the_weights_so_far_and_says_so(tmp_path: Path,
                                                                  signum: int) -> None:
    """Ctrl-C or SIGTERM during `nn train` (hours on a CPU) ended it with nothing: the epochs
    trained were lost. Now the weights so far are evaluated and written, the run's figures
    (and the weights' record) saying it stopped and where, exit 128 + the signal."""
    data = _rulebased_riichi_data(tmp_path, 1)
    out = tmp_path / "w.npz"
    proc = subprocess.Popen(
        [sys.executable, "-m", "adapter.cli", "nn", "train", "--variant", "riichi", "--data",
         str(data), "--out", str(out), "--epochs", "100000", "--channels", "8", "--blocks",
         "1", "--threads", "1"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        # a suite started as a background job of a script ignores SIGINT, and a run started
        # ignoring it keeps ignoring it (adapter.local.stopping): a terminal's Ctrl-C is wanted
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    assert proc.stdout is not None and proc.stderr is not None
    first = proc.stdout.readline()  # the first epoch is whole: the stop comes after it
    assert first.startswith("  epoch 1: loss"), first + proc.stderr.read()
    proc.send_signal(signum)
    rest, err = proc.communicate(timeout=120)
    name = signal.Signals(signum).name
    assert proc.returncode == 128 + signum and "Traceback" not in err, err[-2000:]
    training = Network.from_file(out, "riichi").meta["training"]
    stopped = training["stopped"]
    # the training figures are the last epoch's that took a step (one cut before its first
    # step gave a tally of nothing: 0 examples, accuracy 0.0)
    assert training["train"]["examples"] > 0, training["train"]
    assert stopped["reason"] == name and stopped["epochs_planned"] == 100000
    assert stopped["epochs_done"] >= 1 and 0 < stopped["steps_done"] < stopped["steps_planned"]
    assert (f"stopped early ({name}) after {stopped['steps_done']} of "
            f"{stopped['steps_planned']} steps ({stopped['epochs_done']} of 100000 epochs "
            "whole)") in rest


def test_an_epoch_cut_short_says_so_in_its_progress_line(tmp_path: Path) -> None:
    """`nn train` stopped inside an epoch printed "epoch 1: loss ..." for it, as for a whole
    one (only the next line said the run stopped). The stop here comes before the third step
    of the first epoch: a stop request as `nn train`'s, asked before every step."""
    from adapter.commands.nn import epoch_line
    from replay.learning.nn.train import TrainConfig, train

    data = _rulebased_riichi_data(tmp_path, 1)
    asked = 0

    def stop() -> str:
        nonlocal asked
        asked += 1
        return "SIGINT" if asked == 3 else ""

    lines: list[str] = []
    result = train("riichi", [data], tmp_path / "w.npz",
                   TrainConfig(channels=8, blocks=1, epochs=3, batch_size=16, threads=1),
                   progress=lambda figures: lines.append(epoch_line(figures)), stop=stop)
    assert result["train_examples"] > 32 and result["stopped"]["steps_done"] == 2
    (line,) = lines
    assert line.startswith("  epoch 1, cut short after 32 examples: loss "), line


def test_a_stopped_trainings_examples_seen_are_those_it_trained_on(tmp_path: Path) -> None:
    """The weights' record of a stopped run counted the batch drawn when the stop came, which
    took no step: Ctrl-C after the first epoch's 43 steps of 256 recorded 11,183 examples
    seen of 10,927 in all. Now the examples of the steps taken, as in a whole run."""
    from replay.learning.nn.train import TrainConfig, train

    data = _rulebased_riichi_data(tmp_path, 1)
    asked = 0

    def stop() -> str:
        nonlocal asked
        asked += 1
        return "SIGINT" if asked == 3 else ""

    out = tmp_path / "w.npz"
    result = train("riichi", [data], out,
                   TrainConfig(channels=8, blocks=1, epochs=3, batch_size=16, threads=1),
                   stop=stop)
    assert result["stopped"]["steps_done"] == 2 and result["train_examples"] > 48
    assert result["examples_seen"] == 32
    assert Network.from_file(out, "riichi").meta["training"]["examples_seen"] == 32


def test_a_training_stopped_before_its_first_step_writes_nothing(tmp_path: Path,
                                                                 nn_train: Run) -> None:
    data = _rulebased_riichi_data(tmp_path, 1)
    out = tmp_path / "w.npz"
    r = nn_train("--variant", "riichi", "--data", str(data), "--out", str(out),
                 "--channels", "8", "--blocks", "1", "--threads", "1", "--stop-after", "1e-9")
    assert r.returncode == 1 and "Traceback" not in r.stderr, r.stderr
    assert r.stderr.splitlines()[-1] == ("mjbot nn train: stopped (--stop-after passed) before the "
                                         f"first training step: nothing written to {out}")
    assert not out.exists()
    r = nn_train("--variant", "riichi", "--data", str(data), "--out", str(out),
                 "--stop-after", "-1")
    assert r.returncode == 2 and "--stop-after -1: needs a positive number" in r.stderr


def test_the_correction_weight_falls_on_the_starts_misses() -> None:
    torch.manual_seed(1)
    start = TorchNet(Shape(NUM_PLANES, 8, 1, 8)).eval()
    x = torch.rand(40, NUM_PLANES, 34)
    legal = torch.zeros(40, 145, dtype=torch.bool)
    legal[:, :6] = True
    with torch.no_grad():
        pred = start(x)[0].masked_fill(~legal, -1e9).argmax(dim=1)
    target = pred.clone()
    target[::3] = (pred[::3] + 1) % 6  # every third row: an answer the start does not give
    weight = correction_weights(start, x, legal, target, 7.0)
    assert weight.tolist() == [7.0 if i % 3 == 0 else 1.0 for i in range(40)]
    logits = torch.randn(40, 145)
    per = torch.nn.functional.cross_entropy(logits.masked_fill(~legal, -1e9), target,
                                            reduction="none")
    assert torch.allclose(masked_loss(logits, legal, target, weight),
                          (per * weight).sum() / weight.sum())
    assert torch.allclose(masked_loss(logits, legal, target, torch.ones(40)),
                          masked_loss(logits, legal, target))
