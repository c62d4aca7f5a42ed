"""Leftovers of the mjai walk (walk12): review figures over the decisions with a choice, an nn
upload without its weights, runtime lines under --log-json, a non-JSON mjai stdin line."""

from __future__ import annotations

import json
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import Any

from adapter.local.arena import ArenaConfig, run_arena
from adapter.platforms.botzone_bundle import NN_WEIGHTS, build_botzone_bundle, carried_as
from adapter.platforms.mjai_bundle import NN_WEIGHTS as MJAI_WEIGHTS
from adapter.platforms.mjai_bundle import build_mjai_bundle
from replay import replayer
from replay.log import TxFrame, read_log
from replay.review.evaluators import McEvaluator
from replay.review.game import format_review, review
from replay.review.html import render
from tests.serve_helpers import free_port
from tests.test_mjai_app_harness import _check, _requests

PY = sys.executable


def _one_log(folder: Path, pattern: str) -> Path:
    (found,) = sorted(folder.rglob(pattern))
    return found


def test_one_game_logged_by_mjai_and_by_the_table_reviews_alike(tmp_path):
    """One game, seat 0 played by `mjbot mjai --server` at an mjai-tcp seat: its own mjai log
    holds every offer only a pass answers (the server asks on every discard), the table's log
    none of them; both hold the riichi's forced discards. Rated over all of them, the mjai
    log's figures were diluted (113 decisions against 30 for seed 5's first game); rated over
    the decisions with a choice, the two logs give the same review, and the forced ones are a
    count of their own."""
    port = free_port()
    clients = subprocess.Popen(
        [PY, "-c", "import subprocess, sys\nfor _ in range(4):\n    subprocess.run(sys.argv[1:])",
         PY, "-m", "adapter.cli", "--log-level", "error", "mjai", "--server",
         f"127.0.0.1:{port}", "--log-dir", str(tmp_path / "mjai")])
    try:
        config = ArenaConfig("riichi", (f"mjai-tcp:127.0.0.1:{port}", "rulebased", "rulebased",
                                        "rulebased"), hands=1, seed=5, seat_limit=30,
                             log_dir=str(tmp_path / "table"))
        run_arena(config)
    finally:
        clients.wait(timeout=60)
    mjai = replayer.load(_one_log(tmp_path / "mjai", "*-seat0.mjlog.msgpack"), 0)
    table = replayer.load(_one_log(tmp_path / "table", "*-u0-0.mjlog.msgpack"), 0)
    # the replayer keeps every decision each log holds: the mjai log's pass-only offers too
    assert len(mjai.decisions) > len(table.decisions)
    results = [review(rep, McEvaluator(playouts=4)) for rep in (mjai, table)]
    figures = [{k: r[k] for k in ("decisions", "valued", "agree", "total_loss",
                                  "loss_per_decision", "rating", "errors")}
               for r in results]
    assert figures[0] == figures[1] and figures[0]["decisions"] > 0, figures
    rows = [[(r["round"], r["kind"], r["hand"], r["played"], r["best"], r["loss"])
             for r in res["rows"]] for res in results]
    assert rows[0] == rows[1]
    for rep, res in zip((mjai, table), results, strict=True):
        assert res["decisions"] + res["forced_decisions"] == len(rep.decisions)
        assert all(len(d.legal) > 1 for d in rep.decisions
                   if d.index in {r["event_index"] for r in res["rows"]})
        text = format_review(res)
        assert f"decisions {res['decisions']} (and {res['forced_decisions']} forced" in text
        assert f"<td>{res['forced_decisions']}</td>" in render(res)
    assert results[0]["forced_decisions"] > results[1]["forced_decisions"] > 0
    # replay's per-hand time is the thinking time of the decisions with a choice; its count
    # of decisions is every one the log holds
    for rep, res in zip((mjai, table), results, strict=True):
        hands = replayer.summarize(rep)["hands"]
        assert sum(h["decisions"] for h in hands) == len(rep.decisions)
        assert sum(h["forced"] for h in hands) == res["forced_decisions"]
        assert "forced, not timed), median" in replayer.format_summary(replayer.summarize(rep))


# ------------------------------------------------- an nn upload without its weights file


def _without(zip_path: Path, member: str, out: Path) -> Path:
    """``zip_path`` less ``member`` (an unzip or copy that left the file out)."""
    with zipfile.ZipFile(zip_path) as src, zipfile.ZipFile(out, "w") as dst:
        assert member in src.namelist()
        for info in src.infolist():
            if info.filename != member:
                dst.writestr(info, src.read(info))
    return out


def test_an_mjai_nn_upload_without_its_weights_says_so_once(tmp_path):
    """It played rulebased with a fallback line at every decision (64 in the harness's game),
    each advising `mjbot nn train`: one line now, before the game, advising to rebuild."""
    built = build_mjai_bundle(tmp_path / "dist", policy="nn")
    folder = tmp_path / "workspace"
    with zipfile.ZipFile(built) as zf:
        zf.extractall(folder)
    (folder / MJAI_WEIGHTS).unlink()
    requests = _requests(0)
    text = "".join(json.dumps(r, separators=(",", ":")) + "\n" for r in requests)
    done = subprocess.run([PY, "-I", "-u", "bot.py", "0"], cwd=folder, input=text,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    _check(0, requests, done.stdout.splitlines())  # every answer as the referee wants it
    assert done.stderr.splitlines() == [
        "mjbot: this nn upload cannot read its network (no network weights for 'riichi' "
        f"({MJAI_WEIGHTS})): playing rulebased; unzip the whole zip here, or build it "
        "again with mjbot bundle mjai --policy nn"], done.stderr[-2000:]


def test_a_botzone_nn_zip_without_its_weights_says_so_once(tmp_path):
    built = build_botzone_bundle(tmp_path / "dist", policy="nn")
    bundle = _without(built, carried_as(NN_WEIGHTS), tmp_path / "no-weights.zip")
    turn = ("3\n0 0 0\nPASS\n1 0 0 0 0 W1 W2 W3 B4 B5 B6 T7 T8 T9 F1 F1 J1 J3\nPASS\n"
            "2 W5\n\n")
    done = subprocess.run([PY, "-I", str(bundle), "--no-keep-running", "--no-log"],
                          input=turn, capture_output=True, text=True, timeout=60,
                          cwd=tmp_path)
    assert done.returncode == 0 and done.stdout.split()[0] == "PLAY", done.stderr
    assert "fallback" not in done.stdout + done.stderr and "nn train" not in done.stderr
    assert done.stderr.splitlines() == [
        "mjbot-botzone: this nn zip cannot read its network (no network weights for 'mcr' "
        "(brain/data/nn_mcr.npz)): playing rulebased; build it again with mjbot bundle "
        "botzone --policy nn"], done.stderr


# ------------------------------------------------------- runtime lines under --log-json


def _stderr_of(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([PY, "-m", "adapter.cli", *args], capture_output=True, text=True,
                          timeout=120, stdin=subprocess.DEVNULL)


def _json_lines(text: str) -> list[dict[str, Any]]:
    """Every line of ``text`` as JSON (a plain line fails here, naming itself)."""
    out = []
    for line in text.splitlines():
        try:
            out.append(json.loads(line))
        except ValueError:
            raise AssertionError(f"not a JSON line under --log-json: {line!r}") from None
    return out


def test_runtime_lines_are_json_under_log_json():
    """'cannot connect' (mjai, ntpu), the mjai-tcp seat's wait and 'no mjai client
    connected' were plain text among JSON log lines; without --log-json they stay plain."""
    port = free_port()  # nothing listens there
    for command in ("mjai", "ntpu"):
        done = _stderr_of("--log-json", command, "--server", f"127.0.0.1:{port}",
                          "--connect-timeout", "0.5", "--no-log")
        assert done.returncode == 1, done.stderr
        (line,) = [x for x in _json_lines(done.stderr) if x.get("event") == "run failed"]
        assert line["command"] == command and line["level"] == "error"
        assert line["error"].startswith(f"cannot connect to 127.0.0.1:{port}")
        plain = _stderr_of(command, "--server", f"127.0.0.1:{port}", "--connect-timeout",
                           "0.5", "--no-log")
        assert plain.stderr.startswith(f"mjbot {command}: cannot connect to 127.0.0.1:{port}")
    seats = f"mjai-tcp:127.0.0.1:{port},rulebased,rulebased,rulebased"
    done = _stderr_of("--log-json", "arena", "--policies", seats, "--hands", "1",
                      "--connect-wait", "1.5", "--no-log")
    assert done.returncode == 1, done.stderr
    lines = _json_lines(done.stderr)
    assert {"waiting for an mjai client", "run failed"} <= {x["event"] for x in lines}, lines
    assert any(x.get("error", "").startswith("no mjai client connected") for x in lines)


# ------------------------------------------------- a non-JSON line on mjbot mjai's stdin


def test_a_non_json_mjai_line_is_counted_as_an_answer_and_an_error(tmp_path):
    """The line was answered (none) but left out of the session's answers: answers 1 for
    two lines answered. Now counted, and its answer logged as the others are."""
    requests = _requests(0)
    lines = [json.dumps(r, separators=(",", ":")) for r in requests]
    lines.insert(3, "not json")
    done = subprocess.run([PY, "-m", "adapter.cli", "--log-json", "mjai", "0", "--log-dir",
                           str(tmp_path)], input="".join(f"{x}\n" for x in lines),
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    answers = done.stdout.splitlines()
    assert len(answers) == len(lines) and json.loads(answers[3]) == {"type": "none"}
    (over,) = [x for x in _json_lines(done.stderr) if x["event"] == "mjai: session over"]
    assert over["answers"] == len(lines) and over["errors"] == 1, over
    log = read_log(_one_log(tmp_path, "*.mjlog.msgpack"))
    sent = [f for f in log.frames if isinstance(f, TxFrame)]
    assert len(sent) == len(lines)
    assert replayer.load(log.path, 0).decisions  # the log reads as before
