"""The `mjbot` command, run as a real subprocess."""

import json
import subprocess
import sys

import pytest


def run(*args):
    return subprocess.run([sys.executable, "-m", "adapter.cli", *args], capture_output=True,
                          text=True, timeout=120)


def test_help_lists_commands():
    out = run("--help").stdout
    for command in ("shanten", "score", "bench", "demo"):
        assert command in out


def test_version():
    assert run("--version").stdout.startswith("mjbot ")


def test_shanten_prints_number_and_useful_tiles():
    r = run("shanten", "123m456p789s1122z")
    assert r.returncode == 0
    assert r.stdout.splitlines() == ["0", "12z"]
    assert run("shanten", "123m456m789m123p456p11s").stdout.splitlines()[0] == "-1"


def test_bad_hand_is_one_clear_line_no_traceback():
    r = run("shanten", "12q")  # stderr is a pipe here, not a terminal
    assert r.returncode == 2
    assert "Traceback" not in r.stderr
    lines = r.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("mjbot shanten: ")
    assert "bad mpsz '12q'" in lines[0]
    r = run("shanten", "11111m")
    assert r.returncode == 2 and "more than four" in r.stderr
    assert len(r.stderr.splitlines()) == 1


@pytest.mark.parametrize("hand", ["123456789m234p1f", "123456789m234p5p26f"])
def test_a_flower_in_the_shanten_hand_is_refused_not_dropped(hand):
    """`mjbot shanten 123456789m234p1f` dropped the flower without a word and answered "a hand
    of 12 tiles is not 3k+1 or 3k+2" (with a 13th tile, the shanten of the rest): flowers are
    set aside, so the hand is refused in one line that names them."""
    r = run("shanten", hand)
    flowers = hand[hand.rindex("p") + 1:]
    assert r.returncode == 2 and r.stdout == ""
    assert r.stderr.splitlines() == [
        f"mjbot shanten: {hand!r} holds {flowers}: flowers are set aside (MCR, Taiwan; riichi "
        "has none), never part of a hand: give it without them"]


NOT_A_TILE = "is not a digit or a suit letter (tiles are digits then m, p, s, z or f: 123m406p)"


@pytest.mark.parametrize(("hand", "says"), [
    # upper case (as books print tiles) read "trailing '123M456P789S11Z'": the whole hand
    ("123M456P789S11Z", "suits are lower-case m, p, s, z (f: flowers), not 'M'"),
    ("123m456p789s1122", "'1122' at the end has no suit letter (m, p, s, z; f for flowers)"),
    ("m123", "'m' has no digits before it (write 123m, not m123)"),
    ("12x3m", f"'x' {NOT_A_TILE}"),  # read "at '12x3m'": the whole hand again
    ("123m,456p", f"',' {NOT_A_TILE}"),
])
def test_a_mistyped_hand_names_the_mistake(hand: str, says: str) -> None:
    for argv in (["shanten", hand], ["score", hand, "--win", "1m"]):
        r = run(*argv)
        assert r.returncode == 2 and "Traceback" not in r.stderr
        assert r.stderr.splitlines() == [f"mjbot {argv[0]}: bad mpsz {hand!r}: {says}"]


def test_bad_input_with_json_logs_is_one_json_line():
    r = run("--log-json", "shanten", "12q")
    assert r.returncode == 2
    lines = r.stderr.splitlines()
    assert len(lines) == 1, lines  # once: not a JSON line and then the plain message too
    logged = json.loads(lines[0])
    assert logged["event"] == "bad input" and logged["level"] == "error"
    assert "bad mpsz '12q'" in logged["error"] and logged["command"] == "shanten"


@pytest.mark.parametrize(("argv", "command", "error"), [
    # a value refused (one line before), a missing argument and an unknown option (the usage
    # block and a line before), a refusal of the top-level parser's, and a bench's own parser
    (["arena", "--variant", "richi"], "arena", "argument --variant: invalid choice: 'richi'"),
    (["shanten"], "shanten", "the following arguments are required: hand"),
    (["--log-level", "loud", "shanten", "1m"], None, "argument --log-level: unknown log level"),
    (["arena", "--bogus"], "arena", "unrecognized arguments: --bogus"),
    (["bench", "shanten", "--bogus"], "bench shanten", "unrecognized arguments: --bogus"),
    (["dataset", "import", "f", "--out", "d", "--bogus"], "dataset import",
     "unrecognized arguments: --bogus"),
])
def test_a_usage_error_under_json_logs_is_one_json_line(argv, command, error):
    """Under --log-json every error was one JSON line but argparse's, which printed its plain
    usage and message lines to a reader of JSON."""
    r = run("--log-json", *argv)
    assert r.returncode == 2 and r.stdout == ""
    lines = r.stderr.splitlines()
    assert len(lines) == 1, lines
    logged = json.loads(lines[0])
    assert logged["event"] == "bad input" and logged["level"] == "error", logged
    assert logged["command"] == command and logged["error"].startswith(error), logged
    assert logged["usage"].startswith(f"usage: mjbot {command or ''}".strip()), logged


@pytest.mark.parametrize(("argv", "command"), [
    (["dataset", "import", "no-such.log", "--out", "{tmp}/d"], "dataset import"),
    (["models", "eval", "--variant", "riichi", "--styles", "rulebased"], "models eval"),
    (["bench", "arena", "--json", "{tmp}/no-such-folder/out.json"], "bench arena"),
])
def test_a_nested_commands_refusal_names_it_as_its_usage_error_does(argv, command, tmp_path):
    """A nested command's own refusal named the outer command alone (`mjbot dataset: ...`,
    JSON ``"command": "dataset"``) where its usage errors said `mjbot dataset import`: a
    user grepping the log for one command's errors missed half of them. Both now name the
    whole path, plain and under --log-json, from one rule (adapter.argtypes.command_path)."""
    argv = [a.replace("{tmp}", str(tmp_path)) for a in argv]
    usage = run(*argv, "--bogus")
    assert usage.stderr.splitlines()[-1].startswith(f"mjbot {command}: error: "), usage.stderr
    refused = run(*argv)
    assert refused.returncode == 2 and "Traceback" not in refused.stderr, refused.stderr
    (line,) = refused.stderr.splitlines()
    assert line.startswith(f"mjbot {command}: ") and ": error:" not in line, line
    for extra in ([], ["--bogus"]):
        logged = run("--log-json", *argv, *extra)
        (json_line,) = logged.stderr.splitlines()
        assert json.loads(json_line)["command"] == command, json_line


@pytest.mark.parametrize(("argv", "command"), [
    (["arena", "--bogus"], "arena"),
    (["dataset", "import", "f", "--out", "d", "--bogus", "x"], "dataset import"),
    (["--bogus"], None),
])
def test_an_unknown_option_is_refused_by_its_commands_parser(argv, command):
    """An option no parser took, after a command: the top parser refused it with mjbot's
    usage line (`mjbot: error: ...`), which does not say whose options to read. The
    command's own usage and name now (the top's only where no command was given)."""
    r = run(*argv)
    assert r.returncode == 2 and "Traceback" not in r.stderr
    prog = f"mjbot {command}" if command else "mjbot"
    assert r.stderr.startswith(f"usage: {prog} ["), r.stderr
    extra = " ".join(argv[argv.index("--bogus"):])
    assert r.stderr.splitlines()[-1] == f"{prog}: error: unrecognized arguments: {extra}"


@pytest.mark.parametrize(("argv", "prog", "extra"), [
    (["--bogus", "arena"], "mjbot", "--bogus"),
    (["dataset", "--bogus", "import", "f", "--out", "d"], "mjbot dataset", "--bogus"),
    (["dataset", "--bogus", "import", "f", "--out", "d", "--more"], "mjbot dataset import",
     "--more"),
])
def test_an_unknown_option_before_a_command_is_refused_by_the_parser_it_was_given_to(
        argv, prog, extra):
    """An option no parser took given before the command (`mjbot --bogus arena`) was said to
    be the command's (`mjbot arena: error: unrecognized arguments: --bogus`, the arena's
    usage, and `"command": "arena"` under --log-json), which the user had not given it to:
    the arena's options were read for one that was never there. The parser it was given to
    refuses it (mjbot's own, `"command": null`)."""
    r = run(*argv)
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert r.stderr.startswith(f"usage: {prog} ["), r.stderr
    assert r.stderr.splitlines()[-1] == f"{prog}: error: unrecognized arguments: {extra}"
    if prog == "mjbot":
        logged = json.loads(run("--log-json", *argv).stderr)
        assert logged["command"] is None and logged["usage"].startswith("usage: mjbot ["), logged


def test_a_usage_error_before_json_logs_were_asked_for_stays_plain():
    """--log-json not yet read where the error came (here taken for --log-level's missing
    value), or not given: argparse's lines, as before."""
    r = run("--log-level", "--log-json", "shanten", "1m")
    assert r.returncode == 2
    assert r.stderr.splitlines() == ["mjbot: argument --log-level: expected one argument"]
    r = run("shanten")
    assert r.returncode == 2 and r.stderr.splitlines() == [
        "usage: mjbot shanten [-h] hand",
        "mjbot shanten: error: the following arguments are required: hand"]


def test_every_command_group_is_registered():
    out = run("--help").stdout
    for command in ("shanten", "score", "demo", "bench", "botzone", "botzone-judge", "bundle",
                    "ntpu", "ntpu-server", "tenhou", "tenhou-server", "mjai", "arena", "replay"):
        assert command in out, command


def test_score_command():
    r = run("score", "123456789m234p55s", "--variant", "mcr", "--win", "5s", "--ron-from", "3")
    assert r.returncode == 0 and "清龙 16" in r.stdout
    r = run("score", "123m456p789s234s99m", "--win", "9m", "--ron-from", "1")
    assert r.returncode == 1 and "not a winning hand" in r.stdout  # no yaku


def test_bench_json_reports_ratios():
    r = run("bench", "shanten", "--json", "-", "--hands", "300", "--batch", "2000",
            "--seconds", "0.05")
    assert r.returncode == 0, r.stderr
    data = json.loads(r.stdout)
    for key in ("single_calls_per_s", "mahjong_calls_per_s", "single_ratio_vs_mahjong",
                "batched_hands_per_s"):
        assert data[key] > 0


def test_demo_runs():
    r = run("demo")
    assert r.returncode == 0 and "taiwan16" in r.stdout and "mcr" in r.stdout


def test_demo_twice_in_one_process_prints_the_same(capsys):
    """The demo hands are a module constant: running the demo must not consume their options
    (it popped seat and from_seat, so a second run scored the riichi ron as a self-draw)."""
    from adapter.cli import build_parser

    # the handler itself, not main(): main() configures structlog onto this test's captured
    # stderr, which is closed once the test ends, and every later in-process log would fail
    args = build_parser().parse_args(["demo"])
    assert args.handler(args) == 0
    first = capsys.readouterr().out
    assert args.handler(args) == 0
    assert capsys.readouterr().out == first


def test_main_in_process_binds_logging_to_this_tests_stderr(capsys):
    """The first half of a pair (they run in file order): main() in-process configures
    structlog onto this test's captured stderr, closed when the test ends ..."""
    from adapter.cli import main

    assert main(["--log-json", "demo"]) == 0
    assert "demo finished" in capsys.readouterr().err


def test_and_the_next_test_still_logs(capsys):
    """... and tests/conftest.py gives the next test its logging back, so this line is
    written, not 'I/O operation on closed file'."""
    import structlog

    structlog.get_logger("mjbot.test").info("logging still works after main() in-process")
    assert "logging still works after main() in-process" in capsys.readouterr().out


def test_a_websocket_servers_first_line_is_ours_not_the_librarys():
    """`mjbot tenhou-server --transport ws` printed the websockets library's own "server
    listening on ..." before its own port line, so a user (or script) reading the first line
    for the port got the library's. The library is told from WARNING (all at debug)."""
    proc = subprocess.Popen([sys.executable, "-m", "adapter.cli", "tenhou-server", "--transport",
                             "ws", "--port", "0", "--games", "1", "--no-log"],
                            stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True)
    assert proc.stderr is not None
    try:
        first = proc.stderr.readline()
    finally:
        proc.kill()
        proc.wait(timeout=30)
    assert first.startswith("mjbot tenhou-server: waiting for 1 client(s) per table on "), first


def test_a_riichi_score_shows_its_fu_and_limit():
    """The deltas of a riichi hand follow from han and fu, but `mjbot score` printed the han
    alone: 3 han tsumo paying 2000 all could not be checked by hand."""
    r = run("score", "123456789m234p55s", "--win", "5s")
    assert r.returncode == 0
    assert r.stdout.splitlines() == ["value 3: Menzen Tsumo 1, Ittsu 2 (30 fu)",
                                     "deltas [6000, -2000, -2000, -2000]"]
    r = run("score", "123456789m234p55s", "--win", "5s", "--riichi", "--dora", "4s",
            "--ron-from", "2", "--seat", "1")
    assert r.stdout.splitlines()[0] == "value 5: Riichi 1, Ittsu 2, Dora 2 (40 fu, mangan)"
    mcr = run("score", "123456789m234p55s", "--variant", "mcr", "--win", "5s")
    assert "fu" not in mcr.stdout  # fan alone make an MCR value


def test_a_double_yakuman_score_shows_no_fu():
    """A yakuman is paid by its limit, not by fu: one yakuman printed "(yakuman)", but two
    printed "(60 fu, 2x yakuman)", a fu that counts for nothing."""
    one = run("score", "11223344556677z", "--win", "7z")
    assert one.stdout.splitlines()[0] == "value 13: Tsuu Iisou 13 (yakuman)"
    two = run("score", "111999m111999p11s", "--win", "1s")
    assert two.returncode == 0
    assert two.stdout.splitlines()[0] == \
        "value 26: Chinroutou 13, Suu Ankou Tanki 13 (2x yakuman)", two.stdout


@pytest.mark.parametrize(("argv", "says"), [
    # a flower in the hand: riichi's scorer raised TileError, the others HandError
    (["123456789m234p51f", "--win", "1f"],
     "'123456789m234p51f' holds a flower (1f-8f): flowers are set aside, never part of a "
     "winning hand"),
    (["123456789m234p1f2f", "--win", "1m", "--variant", "mcr"],
     "'123456789m234p1f2f' holds a flower (1f-8f): flowers are set aside, never part of a "
     "winning hand"),
    (["123456789m234p55s", "--win", "5s", "--dora", "1f"], "--dora 1f: a flower is no dora "
                                                             "indicator"),
    # a red five twice: riichi's scorer raised ValueError (no such copy)
    (["123456789m234p00s", "--win", "0s"],
     "'123456789m234p00s' holds two red fives of one suit: riichi has one of each"),
])
def test_a_hand_no_table_deals_is_one_line_not_a_traceback(argv: list[str], says: str) -> None:
    r = run("score", *argv)
    assert r.returncode == 2 and "Traceback" not in r.stderr, r.stderr
    assert r.stderr.splitlines() == [f"mjbot score: {says}"]
