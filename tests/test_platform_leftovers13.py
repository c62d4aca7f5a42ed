"""Platform leftovers (left13): each test runs the real command or component the user meets."""

from __future__ import annotations

import asyncio
import contextlib
import io
import socket
import struct
import subprocess
import sys
import zipfile
from pathlib import Path

import numpy as np
import pytest
from structlog.testing import capture_logs

from adapter.bench.botstart import ENV, bare_runtime, late_turn
from adapter.platforms.botzone_bundle import build_botzone_bundle
from adapter.platforms.tenhou import TenhouBot, TenhouSettings, run
from brain.shipped import DATA, Packed, pack_arrays
from protocols import events as ev
from replay import replayer
from replay.yaku_names import english
from tests.shared_data import LAB_REFEREE
from tests.table_helpers import events_of, layout_wall, play_hand, take_when_legal
from tests.test_tenhou_client import _ScriptedServer

HAND = "111 112 113 121 122 123 131 132 133 141 142 143 151 152 153 161"


@pytest.mark.parametrize("owed", ["/ready", "/mo 171\n/ask throw", "/exit\n/ready"])
def test_ntpu_stdio_whose_referee_stops_reading_exits_1_saying_so(tmp_path: Path,
                                                                   owed: str) -> None:
    """`mjbot ntpu --stdio` whose referee closed its end of our stdout (EPIPE on a reply):
    a lost ``/ready`` answer ended the session as the input's end does (exit 0, as after a
    finished match) and a lost ``/throw`` said only "[Errno 32] Broken pipe". Both now exit 1
    with one line saying the referee went away, and the game's log says it was cut, also
    between two hands (it read as a game played to its end)."""
    proc = subprocess.Popen([sys.executable, "-m", "adapter.cli", "ntpu", "--stdio",
                             "--log-dir", str(tmp_path)], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
    try:
        proc.stdin.write(f"/ready\n/start MJ 2 mjbot\n/initGame east east 1 1 0\n"
                         f"/initCard {HAND}\n")
        proc.stdin.flush()
        assert proc.stdout.readline() == "/ready\n"
        proc.stdout.close()  # the referee stops reading, and sends one more line owing a reply
        proc.stdin.write(owed + "\n")
        proc.stdin.flush()
        code = proc.wait(30)  # stdin stays open: only the failed reply can end the session
        err = proc.stderr.read()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert code == 1, err[-2000:]
    said = [line for line in err.splitlines() if line.startswith("mjbot ntpu:")]
    assert said == ["mjbot ntpu: the referee went away: it stopped reading our replies "
                    "(stdout: Broken pipe)"]
    assert "Traceback" not in err and "Exception ignored" not in err
    (path,) = list(tmp_path.rglob("*.mjlog.msgpack"))
    assert replayer.summarize(replayer.load(str(path)))["unfinished"]


def test_replay_of_an_ntpu_log_says_how_its_seats_match_ntpus(tmp_path: Path) -> None:
    """NTPU numbers its seats 1..4 and our client's log file names keep its number
    (``...-seat2``, from ``/start MJ 2``); `mjbot replay` counts from 0 as for every platform
    and showed that game as ``seat 1`` with nothing to say the two differ. The replay now
    says it beside the seat: ``seat 1 (NTPU seat 2: ...)``, the file's number. The file names
    are unchanged (logs already written keep reading as before)."""
    done = subprocess.run([sys.executable, "-m", "adapter.cli", "ntpu", "--stdio",
                           "--log-dir", str(tmp_path)],
                          input=f"/start MJ 2 mjbot\n/initGame east east 1 1 0\n"
                                f"/initCard {HAND}\n/exit\n/close\n",
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr[-2000:]
    (path,) = list(tmp_path.rglob("*.mjlog.msgpack"))
    assert path.name.endswith("-seat2.mjlog.msgpack")  # NTPU's own number, as before
    shown = subprocess.run([sys.executable, "-m", "adapter.cli", "replay", str(path)],
                           capture_output=True, text=True, timeout=60)
    assert shown.returncode == 0, shown.stderr[-2000:]
    assert shown.stdout.splitlines()[0] == (
        f"{path}  [ntpu, taiwan16] seat 1 (NTPU seat 2: NTPU counts from 1, replay from 0)  "
        "- / - / - / -")


def test_replay_of_the_lab_referees_player_log_names_its_ntpu_seat() -> None:
    """A real NTPU command log the lab referee wrote for its player 1 (../shared/data): seat 0
    in the replay, which now says it is NTPU seat 1 (tests/data/shared holds a copy)."""
    summary = replayer.summarize(replayer.load(LAB_REFEREE / "MJServerLog_1795525321_Player1.log"))
    assert (summary["seat"], summary["platform_seat"]) == (0, 1)
    assert " seat 0 (NTPU seat 1: " in replayer.format_summary(summary).splitlines()[0]


def test_score_of_a_non_dealers_self_draw_shows_the_dealers_extra_tai() -> None:
    """Taiwan: on a non-dealer's self-draw the dealer pays 莊家, one tai more than the others
    (../shared/rules/taiwan16.md: "dealer wins, or pays"). `mjbot score` showed the payment in
    the deltas but a value line without it (value 7, the dealer paying 8 tai's worth); it now
    names it beside the items, and the dealer's payment is what value and items say."""
    done = subprocess.run([sys.executable, "-m", "adapter.cli", "score", "--variant",
                           "taiwan16", "--win", "9s", "--seat", "1", "--dealer", "0",
                           "123456789m123p11s789s"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    value, deltas = done.stdout.splitlines()
    assert value == "value 7: 門清自摸 3, 一條龍 4, 莊家 1 paid by the dealer alone"
    assert deltas == f"deltas {[-(1000 + 500 * 8), 3 * 1000 + 500 * 22, -4500, -4500]}"


def test_a_non_dealers_self_draw_at_the_table_names_the_dealers_extra_tai() -> None:
    """The local table's win (what `mjbot replay` shows of a Taiwan game, the viewer and the
    ntpu-server's log too): its items name the dealer's extra tai that its deltas hold; a
    dealer's own win and a win on another seat's discard are as they were."""
    # seat 1: 123m456m789m123p456p + 7p waits on 7p alone; every seat throws what it draws,
    # and seat 1's second draw is the 7p (its first would be 地胡): 門清自摸 3 + 一條龍 4 = 7
    # tai, the dealer paying 8
    wall = layout_wall("taiwan16", [
        "1234567z22s33s44s55s6s", "123m456m789m123p456p7p", "2345678m2345678s8s9s",
        "999m888p99s3z4z5z6z7z7s7s8s"], draws="1z2z3z4z1z7p")
    _, seats = play_hand("taiwan16", wall, {1: take_when_legal(ev.Win)})
    (win,) = events_of(seats[0], ev.RoundWon)
    assert (win.winner, win.from_seat, win.value) == (1, None, 7)
    assert win.yaku == ("門清自摸(3)", "一條龍(4)", "莊家(1, paid by the dealer alone)")
    assert [english(item, "taiwan16") for item in win.yaku] == [
        "Concealed Self-Draw", "Pure Straight", "Dealer"]  # the viewer's names still found
    assert win.deltas == (-(1000 + 500 * 8), 3 * 1000 + 500 * 22, -4500, -4500)


async def test_tenhou_bye_after_the_hand_is_logged_as_said_only_once_it_went(
        tmp_path: Path) -> None:
    """A stop asked for in a hand (serve's stop: BYE once the hand is over), and the server
    resets the line right after the hand's end: the BYE cannot go. The client logged
    "stopped after the hand, said BYE" (and noted it in the game log) when it decided to say
    it, before the send; it now says so only once the BYE has gone, and here that it was not
    sent. The same stop on a line that stays up still logs it as said."""
    for reset in (True, False):
        folder = tmp_path / str(reset)
        bot_box: list[TenhouBot] = []
        got: list[str] = []

        async def client(reader: asyncio.StreamReader, writer: asyncio.StreamWriter,
                         reset: bool = reset, bot_box: list[TenhouBot] = bot_box,
                         got: list[str] = got) -> None:
            server = _ScriptedServer(reader, writer)
            try:
                await server.log_in_to_a_game()
                hand = {0, 4, 8, 36, 40, 44, 72, 76, 80, 108, 112, 116, 124}
                await server.send('<INIT seed="0,0,0,1,4,20" ten="250,250,250,250" oya="0" '
                                  f'hai="{",".join(map(str, sorted(hand)))}"/>')
                await server.our_turn(5, hand)
                (bot,) = bot_box
                bot.stop_requested = True
                assert bot.leave_after_hand()  # the hand is in play: BYE at its end
                writer.write(b'<RYUUKYOKU ba="0,0" sc="250,0,250,0,250,0,250,0" />\0')
                if reset:  # in the same step: the reset is there before the client reads
                    sock = writer.get_extra_info("socket")
                    sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER,
                                    struct.pack("ii", 1, 0))
                    writer.transport.abort()
                    return
                await server.expect("BYE")
                got.append("BYE")
            finally:
                writer.close()

        listener = await asyncio.start_server(client, "127.0.0.1", 0)
        port = listener.sockets[0].getsockname()[1]
        settings = TenhouSettings(server=f"127.0.0.1:{port}", log_dir=str(folder), budget=1.0,
                                  reconnect_tries=0)
        bot = TenhouBot(settings)
        bot_box.append(bot)
        with capture_logs() as logs:
            async with listener:
                with contextlib.suppress(ConnectionError):
                    await asyncio.wait_for(run(settings, bot), 60)
        events = [entry["event"] for entry in logs]
        assert bot.left
        said = "tenhou: stopped after the hand, said BYE" in events
        assert said is not reset, events
        assert ("tenhou: stopped after the hand, BYE not sent" in events) is reset, events
        assert got == ([] if reset else ["BYE"])


@pytest.mark.parametrize("policy, reader", [("mc", "brain.opponents.models"),
                                            ("nn", "brain.nn.network")])
def test_an_mc_or_nn_botzone_turn_imports_no_zipfile(tmp_path: Path, policy: str,
                                                     reader: str) -> None:
    """The ``mc`` and ``nn`` zips carried their weights as ``.npz`` files, a zip each: np.load
    imported zipfile (with shutil, bz2, lzma) in every one-shot turn, and the loaders imported
    it at their top for one exception type. The zip now carries each as plain ``.npy``
    records (brain/shipped.py) and the loaders import zipfile only to match an error: the
    turn, run as Botzone runs it, imports none, and answers."""
    python = bare_runtime(tmp_path / "runtime")
    zipped = build_botzone_bundle(tmp_path / "zip", policy=policy)
    with zipfile.ZipFile(zipped) as zf:
        weights = [n for n in zf.namelist() if n.startswith("brain/data/")
                   and not n.startswith("brain/data/shanten_tables/")]
    assert weights == [f"brain/data/{'opponents' if policy == 'mc' else 'nn'}_mcr.arrays"]
    # -X importtime: an mc turn whose playout thread is abandoned at its deadline ends with
    # os._exit (adapter/platforms/botzone.end_process), before any code at exit could list them
    done = subprocess.run([python, "-X", "importtime", str(zipped), "--no-keep-running"],
                          input=late_turn(4), capture_output=True, text=True, timeout=120,
                          env=ENV)
    assert done.returncode == 0 and done.stdout.startswith("PLAY "), done.stderr[-2000:]
    modules = {line.rsplit("|", 1)[1].strip() for line in done.stderr.splitlines()
               if line.startswith("import time:")}
    assert reader in modules and "brain.shanten" in modules, modules
    assert "zipfile" not in modules
    assert "mjbot botzone:" not in done.stderr  # no note: the weights were read, no fallback


@pytest.mark.parametrize("name", ["opponents_mcr.npz", "nn_mcr.npz"])
def test_packed_weights_read_back_as_their_npz_and_a_damaged_one_is_named(name: str) -> None:
    """What the zip carries reads back as the .npz held it, array for array; a damaged member
    (zipimport checks no CRC) is a ValueError naming it, not weights read wrong."""
    path = DATA / name
    data = pack_arrays(path)
    with np.load(path, allow_pickle=False) as npz:
        want = {k: npz[k] for k in npz.files}
    got = Packed(data, "brain/data/x.arrays").arrays()
    assert list(got) == list(want)
    assert all(np.array_equal(got[k], want[k]) and got[k].dtype == want[k].dtype for k in want)
    damaged = bytearray(data)
    damaged[-5] ^= 0xFF
    with pytest.raises(ValueError, match=r"brain/data/x.arrays is damaged"):
        Packed(bytes(damaged), "brain/data/x.arrays").arrays()


@pytest.mark.parametrize("policy, member", [("mc", "brain/data/opponents_mcr.arrays"),
                                            ("nn", "brain/data/nn_mcr.arrays")])
def test_a_botzone_zip_whose_weights_are_damaged_says_so_and_to_rebuild_it(
        tmp_path: Path, policy: str, member: str) -> None:
    """A Botzone zip whose packed weights were damaged (zipimport checks no CRC): Packed's
    "is damaged ...: rebuild the bundle" was swallowed by the loaders, whose turn said the
    member "is not opponent models (the .npz that `mjbot models train` writes)" or "is not a
    weights file (... `mjbot nn train` writes)": retrain, where the bundle wanted rebuilding.
    The mc turn's fallback now says what Packed says; the nn zip, which reads its network once
    before the game (left15), says it in that one line, the advice to rebuild once."""
    python = bare_runtime(tmp_path / "runtime")
    built = build_botzone_bundle(tmp_path / "zip", policy=policy)
    damaged = tmp_path / "damaged.zip"
    with zipfile.ZipFile(built) as zin, zipfile.ZipFile(damaged, "w") as zout:
        for info in zin.infolist():
            data = zin.read(info)
            if info.filename == member:
                data = data[:-5] + bytes([data[-5] ^ 0xFF]) + data[-4:]
            zout.writestr(info, data)
    done = subprocess.run([python, str(damaged), "--no-keep-running", "--no-log"],
                          input=late_turn(4), capture_output=True, text=True, timeout=120,
                          env=ENV)
    assert done.returncode == 0 and done.stdout.startswith("PLAY "), done.stderr[-2000:]
    if policy == "mc":
        (note,) = [line for line in done.stderr.splitlines()
                   if line.startswith("mjbot botzone:")]
        assert f"{member} is damaged (" in note and "rebuild the bundle" in note, note
    else:  # one line before the game, then rulebased: no fallback note at a decision
        assert done.stderr.splitlines() == [
            "mjbot-botzone: this nn zip cannot read its network "
            f"({member} is damaged (its CRC-32 does not match)): playing rulebased; build it "
            "again with mjbot bundle botzone --policy nn"], done.stderr[-2000:]
        note = done.stderr
    assert "writes)" not in note, note


def test_packed_weights_damaged_in_their_head_are_named_damaged_too() -> None:
    """The CRC-32 covered the records, not the head before them (the names, and the head's
    own .npy header): a byte flipped there read the arrays under another name (the loader
    then said "opponent model: tenpai.x_mean missing") or escaped as numpy's header parser's
    TokenError. Every byte of the head, flipped, is now refused as damaged, by name."""
    data = pack_arrays(DATA / "opponents_mcr.npz")
    f = io.BytesIO(data)
    np.load(f, allow_pickle=False)  # the head: its .npy header, then the names
    head = f.tell()
    for i in range(head):
        for bit in (0x01, 0x20, 0xFF):
            damaged = bytearray(data)
            damaged[i] ^= bit
            with pytest.raises(ValueError, match=r"brain/data/x.arrays is damaged"):
                Packed(bytes(damaged), "brain/data/x.arrays").arrays()
    for cut in (0, 3, 10, head, len(data) - 1):
        with pytest.raises(ValueError, match=r"brain/data/x.arrays is damaged"):
            Packed(data[:cut], "brain/data/x.arrays").arrays()
