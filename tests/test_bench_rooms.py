"""`mjbot bench NAME`: one room (adapter/bench), one module per bench that owns its options
and its report. Each bench refuses every other bench's options, prints its figure and writes
``--json FILE``; the benches are imported only when one is asked for, so `mjbot`'s start (a
Botzone one-shot turn) stays as light as before."""

from __future__ import annotations

import argparse
import asyncio
import gc
import gzip
import json
import os
import socket
import struct
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from adapter.bench.viewstop import export
from adapter.commands.bench import BENCHES, bench_parser
from tests.in_process import mjbot_here

ROOT = Path(__file__).resolve().parent.parent


Run = Callable[..., subprocess.CompletedProcess[str]]


@pytest.fixture
def bench_here(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> Run:
    """``mjbot ARGS`` in the test process, from the checkout (the data paths are relative
    to it): these tests start no signal and need no process of the bench's own, and each
    child paid ~0.3 s of CPU for Python's start and mjbot's imports."""
    monkeypatch.chdir(ROOT)
    return lambda *args: mjbot_here(capsys, *args)


def _options() -> dict[str, set[str]]:
    """Each bench's option strings, read from its own parser."""
    sub = next(a for a in bench_parser()._actions
               if isinstance(a, argparse._SubParsersAction))
    return {name: {o for o in p._option_string_actions if o.startswith("--")}
            for name, p in sub.choices.items()}


def test_every_bench_module_is_a_bench_and_every_bench_has_a_module() -> None:
    modules = {p.stem for p in (ROOT / "adapter" / "bench").glob("*.py")} - {"__init__",
                                                                             "common"}
    assert set(BENCHES.values()) == modules
    assert set(_options()) == set(BENCHES)  # each name registered by the module it names
    for name, options in _options().items():
        assert "--json" in options, name


@pytest.mark.parametrize("name", sorted(BENCHES))
def test_each_bench_refuses_every_other_benchs_options(name: str,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    options = _options()
    own = options[name]
    others = sorted(set().union(*options.values()) - own)
    assert others  # every bench lacks some option another one has
    for option in others:
        with pytest.raises(SystemExit) as exc:
            bench_parser([name]).parse_args([name, option, "1"])
        assert exc.value.code == 2
        assert f"unrecognized arguments: {option}" in capsys.readouterr().err, option


def test_the_mjbot_parser_imports_no_bench() -> None:
    code = ("import sys, adapter.cli; adapter.cli.build_parser(); "
            "print([m for m in sys.modules if m.startswith('adapter.bench') or m == 'numpy'])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         cwd=ROOT, check=True).stdout.strip()
    assert out == "[]"


def test_bench_help_lists_every_bench(bench_here: Run) -> None:
    r = bench_here("bench", "-h")
    assert r.returncode == 0, r.stderr
    for name in BENCHES:
        assert f"\n    {name}" in r.stdout, name


def test_bench_help_lists_every_bench_where_python_has_no_resource_module() -> None:
    """Windows' Python has no ``resource`` (Unix's rusage): the botzone bench imported it at
    its top, and `mjbot bench -h`, which imports every bench to list them, ended in a
    traceback there. Here the module is made unimportable, as it is on Windows."""
    code = ("import sys\nsys.modules['resource'] = None  # what Windows' Python lacks\n"
            "from adapter.cli import main\nsys.exit(main(['bench', '-h']))\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       cwd=ROOT, timeout=120)
    assert r.returncode == 0 and "Traceback" not in r.stderr, r.stderr
    assert "\n    botzone" in r.stdout, r.stdout


def test_bench_log_prints_its_figure_and_writes_json(tmp_path: Path, bench_here: Run) -> None:
    out = tmp_path / "log.json"
    r = bench_here("bench", "log", "--frames", "200", "--json", str(out))
    assert r.returncode == 0, r.stderr
    result = json.loads(out.read_text())
    assert result["frames"] == 200 and result["ratio_vs_json_lines"] > 0
    assert f"ratio           {result['ratio_vs_json_lines']:>9} x" in r.stdout


def test_a_json_file_that_cannot_be_written_is_refused_before_the_bench_runs(
        tmp_path: Path, bench_here: Run) -> None:
    r = bench_here("bench", "arena", "--json", str(tmp_path / "no-such-folder" / "out.json"))
    assert r.returncode == 2 and r.stdout == ""
    assert r.stderr.strip() == (f"mjbot bench arena: --json {tmp_path}/no-such-folder/out.json: no "
                                f"folder {tmp_path}/no-such-folder")
    r = bench_here("bench", "log", "--json", str(tmp_path))
    assert r.returncode == 2 and r.stderr.strip() == f"mjbot bench log: --json {tmp_path}: is a " \
                                                     "folder"
    # a folder that is there but a file that cannot be made in it: the bench ran, printed
    # its table, and only then failed to write
    unwritable = tmp_path / ("x" * 300 + ".json")
    r = bench_here("bench", "log", "--frames", "4", "--json", str(unwritable))
    assert r.returncode == 2 and r.stdout == ""
    assert r.stderr.strip() == f"mjbot bench log: --json {unwritable}: File name too long"
    assert list(tmp_path.iterdir()) == []


def test_bench_serve_writes_its_json_on_a_short_loopback_run(tmp_path: Path,
                                                            bench_here: Run) -> None:
    """The serve load bench as `mjbot bench serve`: the fake Tenhou server, the status server
    and the load process on loopback, a half-second warm-up and two half-second phases."""
    out = tmp_path / "serve.json"
    r = bench_here("bench", "serve", "--seconds", "0.5", "--warmup", "0.5", "--practice", "0",
                   "--rate", "20", "--probe-rate", "5", "--json", str(out))
    assert r.returncode == 0, r.stderr
    result = json.loads(out.read_text())
    assert result["seconds"] == 0.5 and result["practice_sessions"] == 0
    assert result["load"]["requests"] > 0 and result["load"]["answered"] > 0
    assert set(result["decisions"]) == {"tenhou", "local"}
    assert result["decisions"]["tenhou"]["with_load"]["count"] > 0
    assert r.stdout.startswith("status server load: ")
    assert "tenhou (serve process), with load" in r.stdout
    fallbacks = result["fallbacks"]["tenhou"]
    assert result["policy"] == "rulebased" and fallbacks["fallbacks"] == 0
    assert fallbacks["decisions"] >= result["decisions"]["tenhou"]["with_load"]["count"]
    assert (f"fallbacks (rulebased): tenhou (serve process) 0 of {fallbacks['decisions']}, "
            "practice (workers) 0 of 0\n") in r.stdout
    # the ratio against the reference phase of the same run (it printed none), as written
    ratios = result["p99_ratio_with_vs_without_load"]
    assert set(ratios) == {"tenhou", "local", "loop_lag"} and ratios["local"] is None
    assert ratios["tenhou"] == round(result["decisions"]["tenhou"]["with_load"]["p99_ms"]
                                     / result["decisions"]["tenhou"]["without_load"]["p99_ms"],
                                     2)
    lag = "-" if ratios["loop_lag"] is None else f"{ratios['loop_lag']:g}x"
    assert (f"p99 with load / without: tenhou {ratios['tenhou']:g}x, practice -, event loop "
            f"lag {lag}\n") in r.stdout


@pytest.mark.parametrize("option,error", [
    (("--seconds", "0"), "--seconds 0: seconds in (0, 600]"),
    (("--rate", "nan"), "--rate nan: requests per second, at least 0 and finite"),
    (("--rate", "inf"), "--rate inf: requests per second, at least 0 and finite"),
    (("--rate", "-1"), "--rate -1: requests per second, at least 0 and finite"),
    (("--probe-rate", "nan"), "--probe-rate nan: requests per second, at least 0 and finite"),
    (("--probe-rate", "inf"), "--probe-rate inf: requests per second, at least 0 and finite"),
    (("--warmup", "-2"), "--warmup -2: seconds in [0, 600]"),
    (("--viewer", "501"), "--viewer 501: 0..500 clients"),
])
def test_bench_serve_refuses_a_bad_option_in_one_line(option: tuple[str, str],
                                                      error: str, bench_here: Run) -> None:
    """A rate of nan or inf passed the check (nan < 0 is false) and was the load process's
    ValueError and the bench's JSONDecodeError, tracebacks both; and a bad option was
    answered with the whole list of constraints (`--rate -1`: "--viewer must be 0..500,
    --seconds in (0, 600], ..."), not the option that was wrong."""
    r = bench_here("bench", "serve", "--warmup", "0.5", "--practice", "0", *option)
    assert r.returncode == 2 and "Traceback" not in r.stderr, r.stderr[-500:]
    assert r.stderr.strip() == f"mjbot bench serve: {error}"


def test_a_bench_over_its_fallback_share_exits_1_with_one_line(tmp_path: Path,
                                                              bench_here: Run) -> None:
    """bench mc --soak (as bench arena and bench mjai) ends with fallback_verdict, which
    names the command: the bench's own namespace had none, so a share over the threshold
    was an AttributeError traceback instead of its one line."""
    out = tmp_path / "mc.json"
    r = bench_here("bench", "mc", "--positions", "1", "--seconds", "0.05", "--budgets", "0.05",
                   "--soak", "1", "--limit", "0.001", "--json", str(out))
    assert r.returncode == 1 and "Traceback" not in r.stderr, r.stderr
    assert r.stderr.splitlines()[-1].startswith("mjbot bench mc: policy mc fell back in ")
    assert json.loads(out.read_text())["soak"]["fallbacks"]["mc"]["fallbacks"] > 0


def test_a_bench_writes_its_json_when_the_reader_of_the_table_has_gone(tmp_path: Path) -> None:
    """`mjbot bench log --json FILE | true`: the table's reader is gone before the figure is
    printed; the JSON file was written after the print, so the closed pipe cost the run it."""
    out = tmp_path / "log.json"
    r = subprocess.run(f"{sys.executable} -m adapter.cli bench log --frames 200 --json {out}"
                       " | true", shell=True, cwd=ROOT, capture_output=True, text=True,
                       timeout=120, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert "Traceback" not in r.stderr, r.stderr
    assert json.loads(out.read_text())["frames"] == 200


@pytest.mark.parametrize("args", [
    ("review", "--playouts", "-5"),
    ("commentary", "tests/data/botzone_judge_log.json", "--policies", "mc", "--playouts", "-3"),
    ("mc", "--positions", "1", "--seconds", "0.05", "--budgets", "0.05", "--compare",
     "--reference", "-4"),
])
def test_a_negative_count_of_playouts_is_refused_in_one_line(args: tuple[str, ...],
                                                             bench_here: Run) -> None:
    """These reached mc's config, whose ValueError was a traceback after the bench had run."""
    r = bench_here("bench", *args)
    assert r.returncode == 2 and "Traceback" not in r.stderr, r.stderr[-500:]
    assert r.stderr.splitlines()[-1].endswith(f"a whole number of at least 1, not '{args[-1]}'")


@pytest.mark.parametrize("batch", ["-3", "0"])
def test_bench_shanten_refuses_an_empty_or_negative_batch(batch: str, bench_here: Run) -> None:
    """-3 was numpy's ValueError (a traceback); 0 measured nothing and printed
    "batched 0 hands/s" and a ratio of 0.0 as if figures."""
    r = bench_here("bench", "shanten", "--hands", "50", "--seconds", "0.05", "--batch", batch)
    assert r.returncode == 2 and "Traceback" not in r.stderr and r.stdout == "", r.stderr[-500:]
    assert r.stderr.splitlines()[-1].endswith(f"--batch: a whole number of at least 1, not "
                                              f"'{batch}'")


MC = ("mc", "--positions", "1", "--seconds", "0.05", "--budgets", "0.05")


@pytest.mark.parametrize("args,error", [
    ((*MC, "--soak", "1", "--limit", "-1"), "--limit: seconds above 0 (at most 3600), not '-1'"),
    ((*MC, "--soak", "1", "--limit", "nan"), "--limit: seconds above 0 (at most 3600), not "
                                             "'nan'"),
    ((*MC, "--calibrate", "-1"), "--calibrate: a whole number of at least 0, not '-1'"),
    (("botzone", "--late-turns", "-3"), "--late-turns: a whole number of at least 0, not '-3'"),
])
def test_a_count_or_limit_that_measures_nothing_is_refused(args: tuple[str, ...],
                                                           error: str, bench_here: Run) -> None:
    """These ran as if meant: a soak whose every decision was late, an empty calibration
    table of 0.0%, a whole Botzone bench with no late turn timed."""
    r = bench_here("bench", *args)
    assert r.returncode == 2 and "Traceback" not in r.stderr and r.stdout == "", r.stderr[-500:]
    assert r.stderr.splitlines()[-1].endswith(error)


def test_bench_mc_refuses_models_it_cannot_read(tmp_path: Path, bench_here: Run) -> None:
    """--models DIR without the variant's weights ran with flat opponents and left out the
    decisions (and --soak, --compare) with exit 0; a file that is no weights was numpy's
    ValueError traceback."""
    r = bench_here("bench", *MC, "--soak", "2", "--models", str(tmp_path))
    assert r.returncode == 2 and r.stdout == "" and "Traceback" not in r.stderr, r.stderr
    assert r.stderr.strip() == (f"mjbot bench mc: --models {tmp_path}: mc: no opponent models "
                                f"for 'riichi' at {tmp_path}/opponents_riichi.npz")
    (tmp_path / "opponents_riichi.npz").write_text("not weights")
    r = bench_here("bench", *MC, "--models", str(tmp_path))
    assert r.returncode == 2 and r.stdout == "" and "Traceback" not in r.stderr, r.stderr
    assert len(r.stderr.splitlines()) == 1
    assert "opponents_riichi.npz is not opponent model weights" in r.stderr
    r = bench_here("bench", *MC, "--models", str(ROOT / "brain" / "data"))  # the shipped ones
    assert r.returncode == 0 and "budget 0.05 s" in r.stdout, r.stderr


def test_bench_arena_of_one_other_variant_claims_no_riichi_figure_and_rates_vs_tsumogiri(
        tmp_path: Path, bench_here: Run) -> None:
    """`bench arena --variant mass` printed "target: >= 200 riichi hands/s ...; reached 0.0"
    and wrote 0.0: a figure for a table it never played. Its rows are the rates of every
    policy against the tsumogiri table, each played with no fallback (one wall set a run:
    --units 1; the same command checked both, in test_arena.py and here, before)."""
    out = tmp_path / "arena.json"
    r = bench_here("bench", "arena", "--variant", "mass", "--repeats", "1", "--units", "1",
                   "--json", str(out))
    assert r.returncode == 0, r.stderr
    assert "riichi" not in r.stdout
    result = json.loads(out.read_text())
    assert result["riichi_greedy_hands_per_s"] is None
    assert {row["variant"] for row in result["rows"]} == {"mass"}
    rows = {row["policy"]: row for row in result["rows"]}
    assert set(rows) == {"tsumogiri", "greedy", "rulebased"}
    assert all(row["hands"] == 4 for row in rows.values())  # one 4-hand mass game a run
    assert rows["tsumogiri"]["ratio_vs_tsumogiri"] == 1.0
    assert all(row["hands_per_s"] > 0 and row["logged_hands_per_s"] > 0 for row in rows.values())
    for name, f in result["fallbacks"].items():  # every policy measured played its own answers
        assert f["decisions"] > 0 and f["fallbacks"] == 0, name


def test_the_repeats_help_says_what_the_benches_do(bench_here: Run) -> None:
    """bench botzone's --repeats said "the best counts" of timings it takes the median of;
    bench arena's said "runs of the same walls" where each run plays walls of its own."""
    r = bench_here("bench", "botzone", "-h")
    assert "their median counts" in " ".join(r.stdout.split())
    r = bench_here("bench", "arena", "-h")
    assert "runs, each on walls of its own, the best counts" in " ".join(r.stdout.split())


def test_bench_commentary_refuses_an_empty_list_of_policies(bench_here: Run) -> None:
    """`--policies ,,` measured nothing and printed the anchors' row alone, exit 0."""
    r = bench_here("bench", "commentary", "tests/data/botzone_judge_log.json", "--policies",
                   ",,")
    assert r.returncode == 2 and r.stdout == "" and "Traceback" not in r.stderr, r.stderr
    assert r.stderr.startswith("mjbot bench commentary: --policies ',,': no ranking named (known: ")


def test_bench_serve_refuses_two_loads(bench_here: Run) -> None:
    """`--viewer N --rate R`: the viewer load ran, the rate was ignored yet written into the
    JSON as the run's rate."""
    r = bench_here("bench", "serve", "--viewer", "2", "--rate", "50", "--seconds", "0.5",
                   "--warmup", "0", "--practice", "0")
    assert r.returncode == 2 and r.stdout == "" and "Traceback" not in r.stderr, r.stderr
    assert r.stderr.strip() == "mjbot bench serve: --rate and --viewer are two loads: give one"


def test_bench_botzone_says_whose_keep_running_turns_it_timed(tmp_path: Path,
                                                             bench_here: Run) -> None:
    """The keep-running figures are the match's rulebased bots' whatever --policy is; with
    --policy mc they read as mc's sub-millisecond turns. One keep-running match of the
    four (--matches 1): whose turns they are does not depend on how many were played."""
    out = tmp_path / "botzone.json"
    r = bench_here("bench", "botzone", "--policy", "tsumogiri", "--repeats", "1", "--matches", "1",
                   "--json", str(out))
    assert r.returncode == 0, r.stderr[-500:]
    result = json.loads(out.read_text())
    assert result["policy"] == "tsumogiri" and result["keep_running_policy"] == "rulebased"
    assert result["keep_running_turns"] > 0
    line = next(x for x in r.stdout.splitlines() if "keep running" in x)
    assert line.endswith(f"over {result['keep_running_turns']} turns (the match's rulebased "
                         "bots, not tsumogiri)")
    # the match's bots said no fallback (and said so in the table)
    assert result["keep_running_fallbacks"]["fallbacks"] == 0
    assert "  keep running   fallbacks 0\n" in r.stdout
    # the bot's start (made, no turn read), installed and zipped, against the reference
    starts, ratios = result["start_seconds"], result["start_ratio_vs_python_start"]
    cpus, cpu_ratios = result["start_cpu_seconds"], result["start_cpu_ratio_vs_python_start"]
    assert (f"  start          {starts['installed']:>8.3f} s   the installed command made, no "
            f"turn read ({ratios['installed']}x python + numpy; CPU {cpus['installed']:.3f} s, "
            f"{cpu_ratios['installed']}x)\n") in r.stdout
    assert (f"  start, zip     {starts['zip']:>8.3f} s   the upload zip's, compiled "
            f"({ratios['zip']}x; CPU {cpus['zip']:.3f} s, {cpu_ratios['zip']}x)\n") in r.stdout


async def test_bench_serve_never_leaves_its_fake_server_behind(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The fake Tenhou server (100000 games) is started first: a bench that failed after it
    and before its phases (the viewer's practice game did not finish, the status port could
    not be listened on, a Ctrl-C while they start) left that server running for ever. Here
    the bench is cancelled at its first wait, the status server's start. The real server is
    started; the stdlib's Popen is only wrapped to know its process."""
    from adapter.bench import serve as bench

    started: list[subprocess.Popen[Any]] = []

    def popen(*args: Any, **kwargs: Any) -> subprocess.Popen[Any]:
        process = subprocess.Popen(*args, **kwargs)
        started.append(process)
        return process

    monkeypatch.setattr(bench, "subprocess", SimpleNamespace(Popen=popen,
                                                             DEVNULL=subprocess.DEVNULL))
    running = asyncio.ensure_future(bench._bench(None, 1.0, 0, 0.0))
    while not started and not running.done():
        await asyncio.sleep(0)
    running.cancel()
    with pytest.raises(asyncio.CancelledError):
        await running
    (fake,) = started
    try:
        assert fake.poll() is not None  # killed and reaped by the bench
    finally:
        if fake.poll() is None:  # never left behind by the test either
            fake.kill()
            fake.wait()


def test_bench_botzone_counts_the_keep_running_bots_fallbacks(tmp_path: Path) -> None:
    """The keep-running bots ran with stderr to /dev/null, the only place a later turn says
    that the brain answered in the policy's place: a match whose bots fell back at every
    decision was timed as the policy's and the bench passed. Here four real bots play a
    policy whose weights are no network (every decision falls back)."""
    from adapter.bench.botzone import keep_running_match, keep_running_verdict

    garbage = tmp_path / "garbage.npz"
    garbage.write_text("not weights")
    match = keep_running_match(4, policy=f"nn@{garbage}", matches=1)
    said = match["fallbacks"]
    assert said["turns"] == sum(len(t) for t in match["seconds"]) > 0
    assert said["fallbacks"] > 4, said
    assert said["first_fallback"].startswith("nn raised MissingNetwork: ")
    result = {"keep_running_policy": f"nn@{garbage}", "keep_running_fallbacks": said}
    assert keep_running_verdict(result) == (
        f"the keep-running match's nn@{garbage} bots fell back {said['fallbacks']} times in "
        f"{said['turns']} turns; first: {said['first_fallback']}")


def test_bench_serve_counts_fallbacks_and_fails_a_policy_that_never_played(
        tmp_path: Path, bench_here: Run, monkeypatch: pytest.MonkeyPatch) -> None:
    """The decision times were reported whatever answered: a session whose policy fell back
    at every decision (here mc, whose opponent models load but fail every estimate) was
    printed as the serve process's decision latency, exit 0. Both runs in the test process
    (the mc policy reads MJBOT_MC as it is built, and the bench's fake server and load
    processes inherit it): the bench's own processes are what it starts, not its start."""
    from tests.test_fallbacks import _broken_models

    out = tmp_path / "serve.json"
    monkeypatch.setenv("MJBOT_MC", _broken_models(tmp_path))
    r = bench_here("bench", "serve", "--seconds", "0.5", "--warmup", "0.5", "--practice", "0",
                   "--rate", "20", "--probe-rate", "5", "--policy", "mc", "--json", str(out))
    assert r.returncode == 1 and "Traceback" not in r.stderr, r.stderr[-500:]
    result = json.loads(out.read_text())
    tenhou = result["fallbacks"]["tenhou"]
    assert result["policy"] == "mc" and tenhou["decisions"] > 0
    # every answer the policy was asked for; the session also reports its forced ones
    assert tenhou["fallbacks"] > tenhou["decisions"] / 2 and tenhou["first_fallback"]
    assert (f"fallbacks (mc): tenhou (serve process) {tenhou['fallbacks']} of "
            f"{tenhou['decisions']} (first: ") in r.stdout
    assert r.stderr.splitlines()[-1].startswith(
        f"mjbot bench serve: policy mc in the tenhou session fell back in {tenhou['fallbacks']} "
        f"of {tenhou['decisions']} decisions (")
    # the threshold is the other benches' option
    r = bench_here("bench", "serve", "--seconds", "0.5", "--warmup", "0", "--practice", "0",
                   "--rate", "10", "--probe-rate", "0", "--policy", "mc",
                   "--max-fallback-share", "1")
    assert r.returncode == 0, r.stderr[-500:]


@pytest.mark.parametrize("cold", [[], ["--cold"]])
def test_bench_games_reads_each_header_once(tmp_path: Path, bench_here: Run,
                                            cold: list[str]) -> None:
    """The game-list bench: the first filter reads every log's header, the second none, the
    one after new logs only theirs, and the ratio is the warm filter's over the reference's;
    ``--cold`` drops the logs from the page cache before each."""
    out = tmp_path / "games.json"
    r = bench_here("bench", "games", "--logs", "40", "--new", "5", "--sources", "2",
                   "--json", str(out), *cold)
    assert r.returncode == 0, r.stderr
    result = json.loads(out.read_text())
    assert result["cold"] is bool(cold)
    assert (result["headers_read_first"], result["headers_read_second"],
            result["headers_read_after_new"]) == (40, 0, 5)
    assert result["memory_entries"] == 40 + 3 * 5  # three rounds of new logs
    assert result["ratio_warm_vs_reference"] > 0
    assert f"ratio warm / ref {result['ratio_warm_vs_reference']:>8} x" in r.stdout
    # every figure in one column, --new 5 too (it stood two places left of the others)
    lines = r.stdout.splitlines()[1:]
    assert len({line.index(" s ") for line in lines if " s " in line}) == 1, r.stdout


def test_bench_games_memory_per_log_counts_the_path_the_index_keeps(tmp_path: Path) -> None:
    """The index keeps each log's path (the walk's, made as it reads the folder) and its
    version's numbers: the bench's bytes a log count them, so the same logs under a folder
    200 characters longer cost about 200 bytes more a log. It measured paths made before its
    trace began, and said 288 bytes a log, "path included", for what holds about 500."""
    from adapter.bench.games import _bytes_per_log
    from replay.log import Footer, GameLogWriter
    from tests.log_samples import sample_hand, sample_header, write_steps

    sample = tmp_path / "sample.mjlog.msgpack"
    writer = GameLogWriter(sample, sample_header())
    write_steps(writer, sample_hand(0))
    writer.close(Footer({"hands": 1}, (23000, 31000, 23000, 23000)))
    per_log = []
    for folder in ("short", "long" + "x" * 196):
        day = tmp_path / folder / "2026-01-01"
        day.mkdir(parents=True)
        for n in range(50):
            (day / f"{n:06}-g{n}.mjlog.msgpack").write_bytes(sample.read_bytes())
        per_log.append(_bytes_per_log(tmp_path / folder))
    assert per_log[1] - per_log[0] >= 190, per_log


@pytest.fixture
def view_heap() -> Iterator[None]:
    """What the suite's process holds already moved out of the cycle collector's walks
    (``gc.freeze``) while the view bench runs in it: the bench times full collections and
    forces them (``--stall-seconds``), and each walked every object the tests before had
    left in this worker (20 s more CPU for these four tests beside 3 million objects), where
    `mjbot bench view` run as a command walks its own imports and the games it opened. The
    bench's objects, made after, are walked as ever."""
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()


def test_bench_view_measures_a_long_log_against_a_short_one(tmp_path: Path, view_heap: None,
                                                            bench_here: Run) -> None:
    """The viewer bench: one local-table game written into a short and a long log, each
    opened and stepped through hand by hand, every step also built at once as the
    reference (the same number of steps), and the per-hand ratios long / short printed."""
    out = tmp_path / "view.json"
    r = bench_here("bench", "view", "--hands", "12", "--short", "6", "--stall-seconds", "0",
                   "--json", str(out))
    assert r.returncode == 0, r.stderr
    result = json.loads(out.read_text())
    short, long = result["short"], result["long"]
    per_game = result["hands_per_game"]
    assert short["hands"] == per_game * max(1, round(6 / per_game))
    assert long["hands"] == per_game * max(1, round(12 / per_game))
    assert long["bytes"] > short["bytes"] and long["steps"] > short["steps"]
    ratio = result["ratios_long_vs_short"]
    assert set(ratio) == {"open_s", "read_s", "outline_s", "collection_s", "every_hand_s",
                          "before_build_s"}
    assert all(v > 0 for v in ratio.values())
    assert f"{ratio['open_s']:>7} x" in r.stdout and "reference: every step" in r.stdout


def test_bench_view_divides_times_under_a_millisecond_as_measured(
        view_heap: None, monkeypatch: pytest.MonkeyPatch) -> None:
    """A step that takes some microseconds (a collection of a heap whose imports are frozen,
    as in the suite; a short transcript's outline) was rounded to the millisecond (the
    collection to 0.1 ms) before the long/short ratio was taken: both under half, the ratio
    was 0 x (the suite's failure), the short one's alone, 500000 x (`--source` a one-hand
    Tenhou transcript, --hands 2 --short 1). Here the bench's clock reads 40 µs for every
    step, in the long file and the short one: per hand, the long one's cost is half."""
    from adapter.bench import view

    ticks = iter(range(10**6))
    monkeypatch.setattr(view, "time", SimpleNamespace(perf_counter=lambda: 4e-5 * next(ticks)))
    result = view.bench_view(12, 6, "riichi")
    assert (result["short"]["hands"], result["long"]["hands"]) == (6, 12)
    assert result["short"]["collection_s"] == result["long"]["collection_s"] == 4e-5
    assert set(result["ratios_long_vs_short"].values()) == {0.5}


def test_bench_view_watches_the_serve_loop_without_and_with_the_game_held(
        tmp_path: Path, view_heap: None, bench_here: Run) -> None:
    """``--stall-seconds S``: the status server's event loop (the viewer's, on a loopback port)
    watched for S seconds, then as long again once a client opened the long game (kept by the
    viewer's cache), with full collections forced meanwhile: both phases' worst lag and
    longest collection in the JSON and one printed line. A bad --collect-every is one line."""
    out = tmp_path / "view.json"
    r = bench_here("bench", "view", "--hands", "12", "--short", "6", "--stall-seconds", "1",
                   "--collect-every", "0.2", "--json", str(out))
    assert r.returncode == 0, r.stderr
    stall = json.loads(out.read_text())["serve_stall"]
    assert (stall["seconds"], stall["collect_every_s"]) == (1, 0.2)
    for phase in ("without_game", "with_game"):
        assert stall[phase]["samples"] > 0 and stall[phase]["collections"] >= 1, stall
        assert stall[phase]["longest_collection_ms"] > 0, stall
    assert (f"worst lag {stall['without_game']['worst_lag_ms']:.1f} ms without the game held, "
            f"{stall['with_game']['worst_lag_ms']:.1f} ms with the long one held") in r.stdout
    bad = bench_here("bench", "view", "--collect-every", "0")
    assert bad.returncode == 2 and "Traceback" not in bad.stderr
    assert bad.stderr.strip() == ("mjbot bench view: argument --collect-every: seconds above 0 "
                                  "(at most 3600), not '0'")


def test_bench_view_repeats_a_transcript_given_as_its_source(tmp_path: Path, view_heap: None,
                                                             bench_here: Run) -> None:
    """``--source FILE``: a Tenhou client transcript's text written again and again (first.log
    holds one hand); a file no reader takes is one line, exit 2."""
    out = tmp_path / "view.json"
    source = "tests/data/shared/tenhou/dnovikoff_protocol_captures/first.log"
    r = bench_here("bench", "view", "--source", source, "--hands", "6", "--short", "2",
                   "--stall-seconds", "0", "--json", str(out))
    assert r.returncode == 0, r.stderr
    result = json.loads(out.read_text())
    assert result["format"] == "Tenhou client transcript" and result["hands_per_game"] == 1
    assert (result["short"]["hands"], result["long"]["hands"]) == (2, 6)
    bad = tmp_path / "notes.txt"
    bad.write_text("no game here\n")
    refused = bench_here("bench", "view", "--source", str(bad))
    assert refused.returncode == 2 and "Traceback" not in refused.stderr
    assert refused.stderr.strip() == f"mjbot bench view: --source {bad}: no reader takes it"
    missing = bench_here("bench", "view", "--source", str(tmp_path / "gone.log"))
    assert missing.returncode == 2 and "Traceback" not in missing.stderr
    assert missing.stderr.strip() == (f"mjbot bench view: --source {tmp_path / 'gone.log'}: "
                                      "No such file or directory")


def test_bench_view_takes_a_compressed_source(tmp_path: Path, view_heap: None,
                                              bench_here: Run) -> None:
    """``--source`` a finished log as serve's log upkeep leaves it (gzip): a game log gave a
    traceback (its gzip bytes split into msgpack frames), and a gzipped transcript a "long"
    file of one copy, its gzip bytes written again and again but only the first member read
    (a ratio of 1 measuring nothing). Both are unpacked first now."""
    from replay import logzip
    from tests.viewer_fixtures import practice_game

    log = logzip.compress(practice_game(tmp_path / "logs"))
    out = tmp_path / "view.json"
    r = bench_here("bench", "view", "--source", str(log), "--hands", "2", "--short", "1",
                   "--stall-seconds", "0", "--json", str(out))
    assert r.returncode == 0 and "Traceback" not in r.stderr, r.stderr
    result = json.loads(out.read_text())
    assert result["format"] == "mjbot msgpack log" and result["hands_per_game"] >= 1
    transcript = tmp_path / "kokushi.log.gz"
    transcript.write_bytes(gzip.compress(
        (ROOT / "tests/data/shared/tenhou/dnovikoff_protocol_captures/kokushi.log").read_bytes()))
    # two copies long (one read, before: 16 hands), the fewest that show every member read
    r = bench_here("bench", "view", "--source", str(transcript), "--hands", "32",
                   "--short", "16", "--stall-seconds", "0", "--json", str(out))
    assert r.returncode == 0, r.stderr
    result = json.loads(out.read_text())
    assert result["hands_per_game"] == 16
    assert (result["short"]["hands"], result["long"]["hands"]) == (16, 32)


def test_bench_viewstop_times_the_stop_with_and_without_exports_in_flight(
        tmp_path: Path, bench_here: Run) -> None:
    """`mjbot view` stopped by SIGTERM, each kind of stop timed in turn in the same run:
    each run's time, exit status (0) and what the exports were answered, the medians and
    their ratio, in the JSON and printed."""
    out = tmp_path / "viewstop.json"
    r = bench_here("bench", "viewstop", "--games", "2", "--runs", "1", "--after", "0.1",
                   "--json", str(out))
    assert r.returncode == 0, r.stderr
    result = json.loads(out.read_text())
    assert [x["status"] for x in result["idle"] + result["exporting"]] == [0, 0]
    assert result["idle"][0]["exports"] == {}
    assert set(result["exporting"][0]["exports"]) == {"tenhou6", "mjai"}
    assert all(v in (200, 503) or str(v).startswith("dropped (")
               for v in result["exporting"][0]["exports"].values())
    assert result["ratio"] > 0 and f"ratio {result['ratio']} x" in r.stdout


def test_bench_viewstop_says_an_export_dropped_before_its_answer() -> None:
    """A stop that comes before `mjbot view` read an export's request (a short --after) resets
    its connection: the export is counted as dropped, where the bench's thread died with a
    traceback on stderr and the export was missing from the results."""
    with socket.create_server(("127.0.0.1", 0)) as server:
        def reset() -> None:
            conn, _ = server.accept()
            conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            conn.close()  # (linger 0: a reset, as a server stopping mid-accept sends)

        closer = threading.Thread(target=reset)
        closer.start()
        answers: dict[str, int | str] = {}
        export(f"http://127.0.0.1:{server.getsockname()[1]}/games/x/export/mjai", answers,
               "mjai")
        closer.join(10)
    assert list(answers) == ["mjai"] and str(answers["mjai"]).startswith("dropped ("), answers


def test_bench_idleread_reads_in_the_thread_then_by_the_child(
        tmp_path: Path, bench_here: Run) -> None:
    """The serve-like run: a quiet phase, then every listed log read whole in the viewer's
    thread (none by the child: the reference), then again (new versions) by the child; each
    phase's decisions per second and loop lag, and the ratios against the quiet phase, in
    the JSON and printed."""
    out = tmp_path / "idleread.json"
    r = bench_here("bench", "idleread", "--logs", "2", "--games", "1", "--seconds", "0.5",
                   "--limit", "60", "--json", str(out))
    assert r.returncode == 0, r.stderr
    result = json.loads(out.read_text())
    assert (result["thread"]["read"], result["thread"]["by_child"]) == (2, 0)
    assert (result["child"]["read"], result["child"]["by_child"]) == (2, 2)
    assert result["quiet"]["decisions"] > 0 and result["quiet_after"]["decisions"] > 0
    assert result["child_ratio"] is not None
    assert f"child {result['child_ratio']} x" in r.stdout
    # the session's info lines (its logins, each game logged) went to stderr unless
    # --log-level was given; quiet as `bench serve`'s
    assert r.stderr == "", r.stderr[:2000]
