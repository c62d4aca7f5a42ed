"""Opponent models per style (issue 26 section 2): every (decision, opponent) pair carries the
policy its observed seat played, `mjbot models eval --by-style` groups the figures by it, and
`mjbot models train --exclude-styles` leaves a style's pairs out of training."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from adapter.local.arena import ArenaConfig
from adapter.local.selfplay import SelfPlayConfig, run_selfplay
from adapter.opponent_sets import STYLE_EVAL_SEED, style_set_dir
from brain.opponents.models import OpponentModels
from replay.dataset.shards import read_manifest, read_shard, shard_paths
from replay.learning.opponents import data as D
from replay.learning.opponents.evaluate import evaluate, paired_figures, style_figures
from replay.learning.opponents.metrics import (
    auc,
    bootstrap_auc_ci,
    bootstrap_auc_diff_ci,
    bootstrap_aucs,
    bootstrap_ci,
)
from replay.learning.opponents.train import quick_config, train
from tests.in_process import mjbot_here

MIXED = ("style:open", "rulebased", "style:defensive", "rulebased")


@pytest.fixture(scope="module")
def sets(tmp_path_factory) -> dict[str, Path]:
    """A mixed table (three policies, twelve seatings) and two one-style tables."""
    root = tmp_path_factory.mktemp("styles")
    out = {}
    for name, policies, hands in (("mixed", MIXED, 12), ("open", ("style:open",) * 4, 6),
                                  ("rulebased", ("rulebased",) * 4, 6)):
        run_selfplay(SelfPlayConfig(ArenaConfig("riichi", policies, hands, 61), str(root / name)))
        out[name] = root / name
    return out


def observed_policies(d: Path) -> list[str]:
    """The policy of every pair's observed seat, read straight from the shards: per decision
    the three other seats in order after the viewer, named through h_players and the
    manifest's policy list."""
    manifest = read_manifest(d)
    names = manifest["policies"]
    out = []
    for path, size in shard_paths(d, manifest):
        rows = read_shard(path, ["seat", "hand_index", "h_players"], expected_bytes=size)
        for seat, hand in zip(rows["seat"], rows["hand_index"], strict=True):
            players = rows["h_players"][hand]
            out += [names[players[(int(seat) + k) % 4]] for k in (1, 2, 3)]
    return out


def test_every_pair_names_the_policy_its_observed_seat_played(sets) -> None:
    data = D.load([sets["mixed"]], "riichi")
    expected = observed_policies(sets["mixed"])
    assert [data.policies[i] for i in data.opponent] == expected
    assert data.pair_counts() == dict(Counter(expected))
    assert set(data.pair_counts()) == set(MIXED)
    for style in MIXED:
        assert int(data.pairs_of(style).sum()) == expected.count(style)
    assert not data.pairs_of("greedy").any()


def test_pairs_keep_their_policy_across_datasets_with_other_policy_lists(sets) -> None:
    """Each manifest indexes its own sorted policy list; the loaded pairs use one list."""
    data = D.load([sets["open"], sets["mixed"], sets["rulebased"]], "riichi")
    expected = (observed_policies(sets["open"]) + observed_policies(sets["mixed"])
                + observed_policies(sets["rulebased"]))
    assert [data.policies[i] for i in data.opponent] == expected
    sub = data.take(np.nonzero(data.pairs_of("style:defensive"))[0])
    assert sub.pair_counts() == {"style:defensive": expected.count("style:defensive")}


def test_a_style_grouped_out_of_mixed_data_scores_as_its_own_set(sets, tmp_path, capsys) -> None:
    """`--by-style --data` over two one-style sets gives each style the figures of its set
    read alone, and the counts of its pairs."""
    code = mjbot_here(capsys, "models", "eval", "--variant", "riichi", "--by-style", "--data",
                      str(sets["open"]), str(sets["rulebased"]), "--bootstrap", "20", "--json")
    assert code.returncode == 0, code.stderr
    rows = json.loads(code.stdout)["by_style"]
    assert set(rows) == {"rulebased", "style:open"}
    models = OpponentModels.load("riichi")
    for style, name in (("style:open", "open"), ("rulebased", "rulebased")):
        alone = D.load([sets[name]], "riichi", kinds="all")
        assert rows[style]["pairs"] == len(alone.tenpai) == len(observed_policies(sets[name]))
        ref = evaluate(models, alone)
        for key in ("tenpai_auc", "wait_auc", "deal_in_auc", "value_mae"):
            assert rows[style][key] == pytest.approx(ref[key], rel=1e-9), (style, key)
            lo, hi = rows[style]["ci95"][key]
            assert lo <= hi
        assert rows[style]["walls"] == len(np.unique(alone.hand))


def test_style_figures_of_the_mixed_table_count_only_that_styles_pairs(sets) -> None:
    data = D.load([sets["mixed"]], "riichi", kinds="all")
    expected = Counter(observed_policies(sets["mixed"]))
    models = OpponentModels.load("riichi")
    for style in MIXED:
        part = data.take(np.nonzero(data.pairs_of(style))[0])
        row = style_figures(models, part, bootstrap=10)
        assert row["pairs"] == expected[style]
        assert row["ready_pairs"] == int(part.tenpai.sum())
    assert style_figures(models, data.take(np.zeros(0, np.int64)))["pairs"] == 0


def test_leaving_a_style_out_drops_only_its_pairs(sets) -> None:
    full = D.load([sets["mixed"]], "riichi")
    loo = D.load([sets["mixed"]], "riichi", exclude=["style:open"])
    counts = full.pair_counts()
    assert loo.pair_counts() == {k: v for k, v in counts.items() if k != "style:open"}
    assert loo.decisions == full.decisions
    keep = ~full.pairs_of("style:open")
    assert np.array_equal(loo.x, full.x[keep]) and np.array_equal(loo.tenpai, full.tenpai[keep])
    assert int(loo.tenpai.sum()) == len(loo.k_pair)  # ready pairs keep their per-kind rows


def test_cli_builds_one_set_per_style_in_all_four_seats_and_reuses_it(tmp_path, capsys) -> None:
    keep = tmp_path / "sets"
    args = ("models", "eval", "--variant", "riichi", "--by-style", "--styles",
            "greedy,style:value", "--hands", "4", "--bootstrap", "0", "--keep-sets", str(keep),
            "--json")
    first = mjbot_here(capsys, *args)
    assert first.returncode == 0, first.stderr
    r = json.loads(first.stdout)
    assert r["sets"]["selfplay_seed"] == STYLE_EVAL_SEED and r["sets"]["hands_per_style"] == 4
    for style in ("greedy", "style:value"):
        d = style_set_dir(keep, style, 4, STYLE_EVAL_SEED)
        assert read_manifest(d)["config"]["policies_seated"] == [style] * 4
        assert r["by_style"][style]["pairs"] == len(observed_policies(d))
        assert isinstance(r["by_style"][style]["tenpai_auc"], float)
    stamp = (style_set_dir(keep, "greedy", 4, STYLE_EVAL_SEED) / "manifest.json").stat()
    again = mjbot_here(capsys, *args)
    assert again.returncode == 0 and json.loads(again.stdout)["by_style"] == r["by_style"]
    assert (style_set_dir(keep, "greedy", 4, STYLE_EVAL_SEED) / "manifest.json"
            ).stat().st_mtime_ns == stamp.st_mtime_ns


@pytest.mark.parametrize(("args", "message"), [
    (("--by-style", "--styles", "rulebased,style:fast"),
     "mjbot models eval: unknown policy 'style:fast' (known: "),
    (("--by-style", "--styles", "rulebased,,greedy"),
     "mjbot models eval: --styles has an empty name: 'rulebased,,greedy'"),
    (("--styles", "rulebased"),
     "mjbot models eval: --styles, --seed, --keep-sets and --versus go with --by-style"),
    (("--by-style", "--versus", "no-such-weights.npz"),
     "mjbot models eval: --versus no-such-weights.npz: "),
])
def test_cli_refuses_bad_style_arguments_in_one_line(args, message, capsys) -> None:
    """The command's entry point in this process: a refusal plays and reads nothing, so a
    Python start each bought nothing (0.5 s apiece); an exception escaping it fails the test,
    as a traceback would."""
    r = mjbot_here(capsys, "models", "eval", "--variant", "riichi", "--hands", "2", *args)
    code, err = r.returncode, r.stderr
    assert code == 2 and len(err.strip().splitlines()) == 1, err
    assert err.startswith(message) and "Traceback" not in err


def test_cli_refuses_a_style_the_data_does_not_hold_in_one_line(sets, capsys) -> None:
    r = mjbot_here(capsys, "models", "eval", "--variant", "riichi", "--by-style", "--data",
                   str(sets["open"]), "--styles", "style:open,mc")
    assert r.returncode == 2 and r.stderr.strip().splitlines() == [
        "mjbot models eval: no pairs of mc in --data (its observed policies: style:open)"]


def test_cli_train_refuses_to_leave_out_a_style_nobody_played(sets, tmp_path, capsys) -> None:
    r = mjbot_here(capsys, "models", "train", "--variant", "riichi", "--data", str(sets["open"]),
                   "--exclude-styles", "style:closed", "--out", str(tmp_path / "m.npz"))
    assert r.returncode == 2 and r.stderr.strip().splitlines() == [
        "mjbot models train: cannot leave out style:closed: no seat of the data plays it (its "
        "policies: style:open)"]
    assert not (tmp_path / "m.npz").exists()


def test_cli_train_leaves_a_style_out_and_says_so(sets, tmp_path, capsys) -> None:
    out = tmp_path / "m.npz"
    r = mjbot_here(capsys, "models", "train", "--variant", "riichi", "--data", str(sets["mixed"]),
                   "--exclude-styles", "style:open", "--epochs", "1", "--out", str(out), "--json")
    assert r.returncode == 0, r.stderr
    summary = json.loads(r.stdout)
    assert "style:open" not in summary["opponent_pairs"]
    assert summary["excluded_policies"] == ["style:open"]
    meta = OpponentModels.from_file(out).meta
    assert meta["excluded_policies"] == ["style:open"]
    assert meta["opponent_pairs"] == summary["opponent_pairs"]


@pytest.mark.parametrize("shape", [(400,), (300, 34)])
def test_the_ranked_bootstrap_gives_the_resampling_bootstraps_interval(shape) -> None:
    """bootstrap_auc_ci reweighs rows instead of resampling them; with the same seed it must
    draw the same walls and land on the same interval, ties and rare positives included."""
    rng = np.random.default_rng(4)
    scores = np.round(rng.random(shape), 1)  # many ties
    labels = rng.random(shape) < scores * 0.1
    other = np.round(rng.random(shape), 1)  # a second model, for the paired difference
    # every row with a positive in group 1 of three: the resamples without it lack a class
    # (the two groupings drawn at random gave none such, so the skipping went untested)
    lonely = np.where(labels.reshape(shape[0], -1).any(axis=1), 1, np.arange(shape[0]) % 2 * 2)
    assert None in bootstrap_aucs(scores, labels, lonely, 60, 9)

    def difference(r: np.ndarray) -> float | None:
        a, b = auc(scores[r], labels[r]), auc(other[r], labels[r])
        return None if a is None or b is None else a - b

    for groups in (rng.integers(0, 40, shape[0]), rng.integers(0, 3, shape[0]), lonely):
        slow = bootstrap_ci(lambda r: auc(scores[r], labels[r]), groups, 60, 9)
        fast = bootstrap_auc_ci(scores, labels, groups, 60, 9)
        assert slow is not None and fast is not None
        assert fast == pytest.approx(slow, abs=1e-12)
        slow_diff = bootstrap_ci(difference, groups, 60, 9)
        fast_diff = bootstrap_auc_diff_ci(scores, other, labels, groups, 60, 9)
        assert slow_diff is not None and fast_diff == pytest.approx(slow_diff, abs=1e-12)
    assert bootstrap_auc_ci(scores, labels, np.zeros(shape[0]), 10) is None


def test_versus_reads_a_second_model_on_the_same_pairs(sets, tmp_path, capsys) -> None:
    """`--by-style --versus FILE`: FILE's figures on the same pairs and the differences; a
    model against itself differs by exactly zero on every resample."""
    other_path = tmp_path / "quick.npz"
    train(D.load([sets["mixed"]], "riichi", max_decisions=3000, seed=1),
          quick_config(seed=0, epochs=1)).save(other_path)
    shipped = OpponentModels.load("riichi")
    quick = OpponentModels.from_file(other_path)
    data = D.load([sets["open"]], "riichi", kinds="all")
    ours, theirs = evaluate(shipped, data), evaluate(quick, data)
    row = paired_figures(shipped, quick, data, bootstrap=20)
    for key in ("tenpai_auc", "wait_auc", "deal_in_auc", "value_mae"):
        assert row[key] == pytest.approx(theirs[key], rel=1e-9)
        assert row["diff"][key] == pytest.approx(ours[key] - theirs[key], rel=1e-9, abs=1e-12)
        assert row["diff_ci95"][key] is not None
    same = paired_figures(shipped, shipped, data, bootstrap=20)
    assert all(same["diff"][k] == 0 and same["diff_ci95"][k] == (0.0, 0.0)
               for k in ("tenpai_auc", "wait_auc", "deal_in_auc", "value_mae"))
    r = mjbot_here(capsys, "models", "eval", "--variant", "riichi", "--by-style", "--data",
                   str(sets["open"]), "--versus", str(other_path), "--bootstrap", "20", "--json")
    assert r.returncode == 0, r.stderr
    report = json.loads(r.stdout)
    assert report["versus"]["file"] == str(other_path)
    cli = report["by_style"]["style:open"]["versus"]
    assert cli["diff"]["wait_auc"] == pytest.approx(row["diff"]["wait_auc"], rel=1e-9)
    assert cli["diff_ci95"]["wait_auc"] == pytest.approx(list(row["diff_ci95"]["wait_auc"]))
    text = mjbot_here(capsys, "models", "eval", "--variant", "riichi", "--by-style", "--data",
                      str(sets["open"]), "--versus", str(other_path), "--bootstrap", "20")
    assert text.returncode == 0, text.stderr  # the text shows the comparison too
    assert f"versus {other_path} on the same pairs" in text.stdout
    assert f"ours - versus: {cli['diff']['tenpai_auc']:+z.3f}" in text.stdout
