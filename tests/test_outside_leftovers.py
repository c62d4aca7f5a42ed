"""Small leftovers around outside programs and local servers: the NTPU server's clients that
never connect, pipe sizes, policy options after an outside seat's command, start-up banners,
and the interpreter path handed to children."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from adapter.fakes.ntpu_server import MatchNotStarted, run_match
from adapter.local.external import seat as seat_module
from adapter.own_python import ROOT, USER_PATH
from adapter.platforms.botzone import KEEP_RUNNING
from tests.in_process import mjbot_here


def test_ntpu_server_a_client_that_exits_at_once_is_reported_at_once() -> None:
    """A client process that exits before connecting was waited on for the whole accept
    limit (30 s by default) before the one-line error; the server now sees it exit and says
    so, naming the client and its status, without waiting (the limit here is 20 s, and the
    message no longer says it waited)."""
    exits = (sys.executable, "-c", "import sys; sys.exit(3)")
    with pytest.raises(MatchNotStarted) as caught:
        run_match(1, ["greedy"] * 4, transport="tcp", write_log=False, command=exits,
                  accept_timeout=20)
    assert str(caught.value).startswith("only 0 of the four clients connected to 127.0.0.1:")
    assert str(caught.value).endswith(
        "(client 1's process exited with status 3 before connecting)")


def test_ntpu_server_a_client_that_never_connects_is_killed_not_waited_on(
        tmp_path: Path) -> None:
    """A started client that neither connects nor exits: after the accept limit the server
    waited up to 30 s more for it to exit by itself before killing it. It is killed at once
    (it could never be told to stop): this one would exit by itself after 15 s, leaving a
    file; none is left, and its process is gone."""
    pid_file, done_file = tmp_path / "pid", tmp_path / "done"
    script = ("import os, sys, time; open(sys.argv[1], 'w').write(str(os.getpid())); "
              "time.sleep(15); open(sys.argv[2], 'w').write('exited by itself')")
    hangs = (sys.executable, "-c", script, str(pid_file), str(done_file))
    with pytest.raises(MatchNotStarted, match=r"\(waited 3 s for client 1\); its process "
                       r"is running but did not connect"):
        run_match(1, ["greedy"] * 4, transport="tcp", write_log=False, command=hangs,
                  accept_timeout=3)
    assert not done_file.exists()
    if pid_file.exists():  # it got that far within the 3 s: it is gone, and reaped
        with pytest.raises(ProcessLookupError):
            os.kill(int(pid_file.read_text()), 0)


# an outside mjai program that discards what it draws and passes otherwise (as
# tests/mjai_tsumogiri.py, without its usage check), for a file named as a budget would be
_TSUMOGIRI = """import json, sys
seat = None
for line in sys.stdin:
    events = json.loads(line)
    seat = next((e["id"] for e in events if e["type"] == "start_game"), seat)
    last = events[-1]
    answer = {"type": "none"}
    if last["type"] == "tsumo" and last["actor"] == seat:
        answer = {"type": "dahai", "actor": seat, "pai": last["pai"], "tsumogiri": True}
    print(json.dumps(answer), flush=True)
"""


def test_an_outside_seats_command_ending_in_a_quoted_budget_word_plays(
        capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """An outside program whose last word really is ``bot.py@budget=1`` (written quoted):
    the seat checks read ``@budget=`` off every seat name, an outside one's command
    included, found the number ``1'`` and ended ``mjbot arena`` with a ValueError
    traceback. An outside seat's command is its own: the program plays (never crashing)."""
    (tmp_path / "bot.py@budget=1").write_text(_TSUMOGIRI)
    quoted = f"mjai:{sys.executable} '{tmp_path}/bot.py@budget=1'"
    done = mjbot_here(capsys, "arena", "--policies", f"{quoted},greedy,greedy,greedy",
                      "--hands", "1", "--no-log", "--json", str(tmp_path / "r.json"))
    assert done.returncode == 0, done.stderr
    report = json.loads((tmp_path / "r.json").read_text())["external_seats"]
    assert report[quoted]["crashed"] == 0, report


def test_a_budget_after_an_outside_seats_command_is_refused_in_one_line(
        capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """``mjai:python bot.py@budget=1``: the ``@budget=`` went into the program's last word,
    so the program (here, the file "bot.py@budget=1" does not exist) crashed at every game,
    the whole arena long. It is refused before any game, in one line saying where an
    outside seat's limit comes from, under a label too (a program whose last word really
    ends so is written quoted: the test above), whatever follows it (a float our own seats
    take, 1e-1, or a bad one, 2s, went into the program's word as before)."""
    bot = tmp_path / "bot.py"
    bot.write_text(_TSUMOGIRI)
    for seat in (f"mjai:{sys.executable} {bot}@budget=1", f"tg=mjai:{sys.executable} {bot} "
                 "@budget=0.5", f"mjai:{sys.executable} {bot}@budget=1e-1",
                 f"mjai:{sys.executable} {bot}@budget=2s"):
        done = mjbot_here(capsys, "arena", "--policies", f"{seat},greedy,greedy,greedy",
                          "--hands", "1", "--no-log")
        assert done.returncode == 2, done.stderr
        (line,) = done.stderr.strip().splitlines()
        assert "@budget= is for our own seats; an outside seat's time limit is its " \
            "platform's, or --seat-limit SECONDS" in line, line
        assert not done.stdout


def _plain_env(**extra: str) -> dict[str, str]:
    """This process's environment without what would put our checkout on a child's path."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", USER_PATH, "PYTHONNOUSERSITE", "PYTHONHOME")}
    return {**env, **extra}


def test_own_python_starts_a_python_whose_path_holds_an_equals_sign(tmp_path: Path) -> None:
    """Our own children are started as ``env PYTHONPATH=... PYTHON -P ...``: with a Python
    at ``.../a=b/python`` env read its path as one more variable and ran ``-P`` (exit 127,
    "No such file or directory"), so every judge, server and bench failed to start its
    bots. The interpreter here is this one's, reached through such a folder."""
    folder = tmp_path / "a=b"
    folder.mkdir()
    python = folder / "python3"
    python.symlink_to(os.path.realpath(sys.executable))
    code = (f"import sys, subprocess; sys.path.insert(0, {ROOT!r}); "
            "from adapter.own_python import own_python; "
            "child = 'import sys; print(sys.executable, sys.argv[1:])'; "
            "done = subprocess.run(own_python('-c', child, 'two words', ''), "
            "capture_output=True, text=True); print(done.returncode, done.stdout, done.stderr)")
    done = subprocess.run([str(python), "-c", code], capture_output=True, text=True,
                          timeout=60, env=_plain_env(), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split("\n")[0] == f"0 {python} ['two words', '']"


def test_own_python_keeps_a_user_site_install_behind_the_standard_library(
        tmp_path: Path) -> None:
    """mjbot installed with ``pip install --user``: its root is the user's site-packages,
    which own_python put first on the child's PYTHONPATH, ahead of the standard library, so
    anything else there named as a standard module (an old backport) shadowed it in every
    child. The real case: our own_python.py in a user site (PYTHONUSERBASE) beside a
    ``colorsys.py`` of its own; the parent imports the standard one, and so does the child."""
    base = os.path.realpath(sys.executable)
    env = _plain_env(PYTHONUSERBASE=str(tmp_path / "userbase"))
    where = subprocess.run([base, "-c", "import site; print(site.ENABLE_USER_SITE, "
                            "site.getusersitepackages())"], capture_output=True, text=True,
                           timeout=60, env=env, check=True).stdout.split()
    if where[0] != "True":
        pytest.skip(f"{base} has no user site")
    user_site = Path(where[1])
    (user_site / "adapter").mkdir(parents=True)
    (user_site / "adapter" / "__init__.py").write_text("")
    for module in ("own_python.py", "secret_env.py"):  # and what own_python imports
        shutil.copy(Path(ROOT) / "adapter" / module, user_site / "adapter")
    (user_site / "colorsys.py").write_text("raise SystemExit('the user site colorsys')\n")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    code = ("import colorsys, subprocess, adapter.own_python as o; "
            "print(o.__file__, colorsys.__file__); "
            "child = 'import colorsys; print(colorsys.__file__)'; "
            "done = subprocess.run(o.own_python('-c', child), capture_output=True, text=True); "
            "print(done.returncode, done.stdout.strip(), done.stderr.strip())")
    done = subprocess.run([base, "-c", code], capture_output=True, text=True, timeout=60,
                          env=env, cwd=elsewhere)
    assert done.returncode == 0, done.stderr
    ours, parents = done.stdout.split("\n")[0].split()
    assert ours == str(user_site / "adapter" / "own_python.py")
    assert done.stdout.split("\n")[1].strip() == f"0 {parents}", done.stdout


# an mjai program that says who it is on stdout as it starts, then loads (argv[1] seconds)
_BANNER = """import sys, time
print("MyBot 1.0: loading the model...", flush=True)
time.sleep(float(sys.argv[1]))
""" + _TSUMOGIRI


# An NTPU player (argv[2:]) started and loaded before the banner (its load, however long the
# machine takes, is the seat's start-up allowance's, 30 s, not BANNER_GRACE's), then a load of
# exactly argv[1] seconds after the banner, then the seat's lines relayed to it and back
_LOADED_FIRST = """import subprocess, sys, threading, time
player = subprocess.Popen(sys.argv[2:], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                          text=True, bufsize=1)
player.stdin.write("/ready\\n")
player.stdin.flush()
assert player.stdout.readline().split() == ["/ready"]  # loaded
print("MyBot 1.0 loading", flush=True)
time.sleep(float(sys.argv[1]))


def feed():
    try:
        for line in sys.stdin:
            player.stdin.write(line)
            player.stdin.flush()
        player.stdin.close()
    except (BrokenPipeError, ValueError):  # the player has ended
        pass


threading.Thread(target=feed, daemon=True).start()
for line in player.stdout:
    sys.stdout.write(line)
    sys.stdout.flush()
sys.exit(player.wait())
"""


def _arena_report(capsys: pytest.CaptureFixture[str], tmp_path: Path, seat: str,
                  *more: str) -> dict[str, Any]:
    done = mjbot_here(capsys, "arena", "--policies", f"{seat},greedy,greedy,greedy",
                      "--hands", "1", "--no-log", "--json", str(tmp_path / "r.json"), *more)
    assert done.returncode == 0, done.stderr
    report: dict[str, Any] = json.loads((tmp_path / "r.json").read_text())
    return report


def test_an_mjai_program_that_prints_a_banner_and_loads_slowly_loses_nothing(
        capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """A program that prints a banner on stdout as it starts: the banner was read as the
    answer to start_game (garbage), and while the program was still loading, its real
    answer (none) came after the first decision's line was sent, so it was read as that
    decision's answer (a pass where a discard goes: illegal, a decision lost), and so on
    until the stray-line skip caught up: faults and fallbacks every game. Start-up output
    before the first answer is skipped, uncounted; the program plays every decision."""
    bot = tmp_path / "banner.py"
    bot.write_text(_BANNER)
    # 0.1 s of loading a game (it was 0.5: 2 s of sleep in four games); the real answer comes
    # after the banner either way, which is the case (any load under BANNER_GRACE)
    seat = f"mjai:{sys.executable} {bot} 0.1"
    report = _arena_report(capsys, tmp_path, seat)
    faults = report["external_seats"][seat]
    assert faults["garbage"] == faults["illegal"] == faults["late"] == 0, faults
    assert report["policies"][seat]["fallbacks"] == 0


def test_an_mjai_program_whose_first_answer_is_not_json_is_counted_garbage_and_plays_on(
        capsys: pytest.CaptureFixture[str], tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The other side of skipping start-up output: a program whose answer to start_game
    really is not JSON (it writes 'ok' to every line) is waited on for BANNER_GRACE more
    seconds, not its whole start-up limit (30 s a game, which the suite paid four times a
    garbage bot), then its line is the answer: counted garbage, never late, as every later
    'ok' is, and the seat is played safe each time without leaving the game."""
    # a grace of 0.5 s, not 2: the bot sends nothing more within any grace, so its line is
    # the answer once the grace is out, whatever its length
    monkeypatch.setattr(seat_module, "BANNER_GRACE", 0.5)
    bot = tmp_path / "ok.py"
    bot.write_text("import sys\nfor line in sys.stdin:\n    print('ok', flush=True)\n")
    seat = f"mjai:{sys.executable} {bot}"
    report = _arena_report(capsys, tmp_path, seat, "--seat-limit", "30",
                           "--max-fallback-share", "1")
    faults = report["external_seats"][seat]
    games = 4  # one wall set, four seatings
    assert faults["late"] == faults["crashed"] == 0, faults
    assert faults["garbage"] > games, faults  # start_game's answer and every decision's
    assert faults["first_fault"] == "garbage: an answer that is not JSON", faults


def _full_pipe() -> tuple[int, int]:
    """A pipe as large as this process may make one (past 1 MiB only with CAP_SYS_RESOURCE
    or a raised fs.pipe-max-size), filled to its last byte, its writer closed: the read
    end, non-blocking, and how many bytes it holds."""
    import fcntl

    read, write = os.pipe()
    for size in (4 << 20, 2 << 20, 1 << 20):
        try:
            fcntl.fcntl(write, fcntl.F_SETPIPE_SZ, size)
            break
        except PermissionError:
            continue
    os.set_blocking(write, False)
    held = 0
    try:
        while True:
            held += os.write(write, bytes([65 + held // 65536 % 26]) * 65536)
    except BlockingIOError:
        pass
    os.close(write)
    os.set_blocking(read, False)
    return read, held


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="F_SETPIPE_SZ is Linux's")
def test_what_an_exited_program_left_in_a_large_pipe_is_read_whole(tmp_path: Path) -> None:
    """The keeper's last read of a program's stderr and the Botzone judge's of an exited
    bot's pipes were bounded by 16 reads of 64 KiB, on the belief that a pipe holds at most
    1 MiB; a program may make its pipe larger (F_SETPIPE_SZ, as far as fs.pipe-max-size
    allows it, or further with CAP_SYS_RESOURCE), and the rest, its last words, was left
    unread. The bound is now the pipe's own size (F_GETPIPE_SZ). Here the pipe is as large
    as this process may make it (1 MiB without privileges: passes either way there)."""
    from adapter.fakes.botzone_judge import _read_now
    from adapter.local.external.keeper import KEPT_TAIL, Kept, _drain, pipe_size, read_kept

    read, held = _full_pipe()
    try:
        assert pipe_size(read) == held
        chunks = list(_read_now(read, pipe_size(read)))
        assert sum(len(c) for c in chunks) == held
    finally:
        os.close(read)
    read, held = _full_pipe()
    kept_file = os.open(tmp_path / "kept", os.O_RDWR | os.O_CREAT)
    try:
        kept = Kept(kept_file)
        _drain(read, kept)
        assert kept.written == held
        last = bytes([65 + (held - 1) // 65536 % 26]) * 65536
        assert read_kept(kept_file)[0].endswith(last[-KEPT_TAIL:])
    finally:
        os.close(read)
        os.close(kept_file)


def test_an_ntpu_program_that_prints_a_banner_and_loads_slowly_loses_nothing(
        capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """The NTPU seat's first line is ``/ready``: a banner was read as its reply (garbage),
    and the real ``/ready`` of a program still loading as the reply to the first ``/ask``
    (a decision lost), and so on: 12 fallbacks in one arena's four games here. What the
    program prints before its reply that is no line of the protocol (all begin with "/")
    is skipped, uncounted.

    The load after the banner is the program's own 0.1 s a game (0.5 s was 2 s of sleep in
    four games), whatever the machine's load: it started ``python -m adapter.cli`` after its
    banner, which at a load of 12.7 took past BANNER_GRACE (2 s) and failed the test. The
    player is loaded first now (it answers a ``/ready`` of the program's own: the event),
    then the banner, the 0.1 s, and the seat's lines relayed to it (_LOADED_FIRST)."""
    bot = tmp_path / "loaded_first.py"
    bot.write_text(_LOADED_FIRST)
    seat = (f"ntpu:{sys.executable} {bot} 0.1 {sys.executable} -m adapter.cli --log-level "
            "error ntpu --stdio --no-log --policy greedy")
    report = _arena_report(capsys, tmp_path, seat, "--variant", "taiwan16")
    faults = report["external_seats"][seat]
    assert faults["garbage"] == faults["illegal"] == faults["late"] == 0, faults
    assert report["policies"][seat]["fallbacks"] == 0


@pytest.mark.parametrize(("kind", "variant"), [("mjai", "riichi"), ("botzone-keep-json", "mcr")])
def test_json_nested_past_the_parsers_depth_is_a_programs_garbage(
        capsys: pytest.CaptureFixture[str], tmp_path: Path, kind: str, variant: str,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A program answering with JSON nested deeper than Python's parser goes (100,000 "["):
    json.loads raised RecursionError, no decode error, and every game the program sat in
    ended as a referee error with a traceback, the program's faults 0. It is garbage, not
    JSON (protocols.codec.load_json, as our own clients read such input). The mjai seat
    reads its start_game answer as start-up noise, then waits BANNER_GRACE for an answer
    this program never sends (it writes only when asked): 0.05 s here, in this process's
    arena, since any grace gives the same garbage (its real length is the test above's);
    the 1 s seat limit it was cut to cost 4 s of waiting (four games)."""
    monkeypatch.setattr(seat_module, "BANNER_GRACE", 0.05)
    bot = tmp_path / "deep.py"
    end = f"    print({KEEP_RUNNING!r})\n" if kind.startswith("botzone") else ""  # its turn's end
    bot.write_text("import sys\nfor line in sys.stdin:\n    print('[' * 100000)\n" + end
                   + "    sys.stdout.flush()\n")
    seat = f"{kind}:{sys.executable} {bot}"
    report = _arena_report(capsys, tmp_path, seat, "--variant", variant, "--seat-limit", "1",
                           "--max-fallback-share", "1")
    assert report["referee_errors"] == 0, report
    assert report["external_seats"][seat]["garbage"] > 0, report
