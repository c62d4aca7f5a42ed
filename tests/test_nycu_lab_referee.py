"""Records written by the NYCU lab's public Taiwan referee: its SGF game records and its
per-seat command logs import, replay and go into a dataset, every win valued as a win by our
rules; and our fake NTPU server ends a drawn-out hand where that referee does.

The copies in tests/data/shared/ntpu/lab_referee/ always run; the whole folder of
../shared/data/ntpu/lab_referee/ is read too where it is present."""

from __future__ import annotations

import contextlib
import json
import random
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from adapter.local.walls import tile_set
from protocols import events as ev
from protocols import tiles as T
from protocols.tiles import NtpuTiles
from replay import formats
from replay.formats import ntpu_log, nycu_sgf
from replay.log import EventFrame, TxFrame, read_log
from replay.record import GameRecord, RecordError, seat_view
from tests.narrowing import searched
from tests.ntpu_helpers import BotClient, serve
from tests.serve_helpers import mjbot
from tests.shared_data import LAB_REFEREE, SHARED_LAB_REFEREE

ROOT = Path(__file__).resolve().parent.parent
WIN = LAB_REFEREE / "MJServerLog_1795525321.sgf"  # E wins on W's discard; pongs, an added kong
WIN_LOG = LAB_REFEREE / "MJServerLog_1795525321_Player1.log"
DEAL_WIN = LAB_REFEREE / "MJServerLog_1795525365.sgf"  # E[SM-1]
DRAWN = LAB_REFEREE / "MJServerLog_1795525388.sgf"
DRAWN_LOG = LAB_REFEREE / "MJServerLog_1795525388_Player1.log"
COPIES = sorted(LAB_REFEREE.glob("MJServerLog_*"))
SHARED = sorted(SHARED_LAB_REFEREE.glob("MJServerLog_*")) if SHARED_LAB_REFEREE.is_dir() else []
needs_shared = pytest.mark.skipif(
    not SHARED, reason="../shared/data/ntpu/lab_referee/ is absent (a plain clone): only the "
                       "copies in tests/data/shared/ntpu/lab_referee/ are read")
MOVES = (ev.TileDrawn, ev.TileDiscarded, ev.MeldCalled)


def _mjbot(*args: str) -> subprocess.CompletedProcess[str]:
    return mjbot(*args, cwd=ROOT, timeout=120)


def _wall(text: str) -> list[int]:
    return [int(x) for x in re.findall(r"\[(\d+)\]", text.split("SQRWALL", 1)[1].split(";")[0])]


def _ends(events: list[Any]) -> list[Any]:
    return [e for e in events if isinstance(e, ev.RoundWon | ev.RoundDrawn)]


def _seen(events: list[Any]) -> list[Any]:
    """What a seat's view says about the hand, whoever wrote it down (a command log cannot
    tell the others' tsumogiri)."""
    out: list[Any] = []
    for e in events:
        if isinstance(e, ev.RoundStarted):
            out.append(("deal", e.dealer, sorted(e.hand)))
        elif isinstance(e, ev.TileDiscarded):
            out.append(("discard", e.seat, e.tile))
        elif isinstance(e, MOVES):
            out.append(e)
        elif isinstance(e, ev.RoundWon):
            out.append(("win", e.winner, e.from_seat, sorted(e.hand), e.win_tile, e.value,
                        e.deltas, e.yaku))
        elif isinstance(e, ev.RoundDrawn):
            out.append(("draw", e.reason))
    return out


def _check_record(path: Path) -> GameRecord:
    """The file reads (by format detection, as ``mjbot replay`` reads it); every hand ends
    in a win valued by our rules or an exhaustive draw; nothing is read as cut short."""
    loaded = formats.read(path.read_bytes(), path)
    record = loaded.record
    assert record is not None
    assert loaded.name == ("nycu_sgf" if path.suffix == ".sgf" else "ntpu_log")
    starts = sum(isinstance(e, ev.RoundStarted) for e in record.events)
    ends = _ends(record.events)
    assert starts == len(ends) >= 1, path.name
    for end in ends:
        if isinstance(end, ev.RoundWon):
            assert end.value > 0 and end.yaku and not end.detail, (path.name, end)
            assert sum(end.deltas) == 0 and end.deltas[end.winner] > 0
        else:
            assert end.reason == "exhaustive"
    assert not record.meta.get("cut_in_hand")
    return record


# --------------------------------------------------------------------------- SGF


def test_the_deal_is_the_dealers_17_in_a_row_then_16_to_each_other_seat() -> None:
    text = WIN.read_text()
    wall = _wall(text)
    tiles = NtpuTiles()
    record = nycu_sgf.loads(text)
    start = record.events[1]
    assert isinstance(start, ev.RoundStarted) and start.dealer == 0
    assert start.hands == tuple(tuple(tiles.to_tile(i) for i in wall[a:a + 16])
                                for a in (0, 17, 33, 49))
    assert record.events[2] == ev.TileDrawn(0, tiles.to_tile(wall[16]), False)
    # the referee's own log for the dealer's seat says the same 17 ids
    init = next(line for line in WIN_LOG.read_text().splitlines() if line.startswith("/initCard"))
    assert [int(i) for i in init.split()[1:]] == wall[:17]
    # the first draw after the deal is the wall's 66th tile: S[M190]
    assert searched(r";E\[D\d+\];S\[M(\d+)\]", text).group(1) == str(wall[65])


def test_a_referee_win_is_valued_as_a_win_by_our_rules() -> None:
    (win,) = _ends(nycu_sgf.loads(WIN.read_text()).events)
    assert isinstance(win, ev.RoundWon)
    assert (win.winner, win.from_seat, win.win_tile) == (0, 2, 4)  # E on W's 5m (id 151)
    assert win.hand == (1, 1, 1, 2, 3, 4, 14, 14)  # 222345m 66p, beside its three calls
    # 1 tai (the dealer's): 1000 + 500 from the discarder
    assert (win.value, win.yaku, win.deltas, win.detail) == (1, ("莊家(1)",),
                                                             (1500, 0, -1500, 0), "")


def test_the_dealers_win_on_the_deal_is_sm_minus_one() -> None:
    text = DEAL_WIN.read_text()
    assert text.rstrip().endswith(";E[SM-1])")
    record = nycu_sgf.loads(text)
    tiles = NtpuTiles()
    _, start, draw, win = record.events
    assert isinstance(start, ev.RoundStarted)
    assert draw == ev.TileDrawn(0, tiles.to_tile(_wall(text)[16]), False)
    assert isinstance(win, ev.RoundWon) and (win.winner, win.from_seat) == (0, None)
    assert win.win_tile == draw.tile and len(win.hand) == 17
    assert "天胡(16)" in win.yaku and win.value >= 16 and win.deltas[0] > 0


@pytest.mark.parametrize("old, new", [(";E[D180]", ";S[SM-1]"), (";E[H151]", ";E[SM-1]"),
                                      (";E[D180]", ";E[H-1]")],
                         ids=["not-the-dealer", "not-the-first-move", "not-a-self-draw"])
def test_sm_minus_one_is_only_the_dealers_first_move(old: str, new: str) -> None:
    text = WIN.read_text()
    assert old in text
    ((_, why),) = nycu_sgf.loads(text.replace(old, new, 1)).damaged.items()  # the hand, there
    assert searched(r"^node \d+ .*(SM-1|bad tile id '-1')", why)


def test_a_cut_or_damaged_lab_record_shows_its_hand_up_to_there(tmp_path: Path) -> None:
    """A lab record cut short (a copy broken off after ";W") was "not a game log we know"
    in ten lines ("property W has no [value]"), and one bad tile id refused the file: the
    first reads up to its last whole node, unfinished, exit 0; the second up to the bad
    node, named there, exit 1."""
    text = WIN.read_text()
    cut = tmp_path / "cut.sgf"
    cut.write_text(text[:text.rindex(";W[") + 2])
    run = _mjbot("replay", "--json", str(cut))
    assert run.returncode == 0 and not run.stderr, run.stderr
    summary = json.loads(run.stdout)["summary"]
    (hand,) = summary["hands"]
    assert hand["unfinished"] and not hand["results"] and hand["calls"]
    (note,) = summary["notes"]
    assert searched(r"^the file is cut short: game tree 1 ends inside node \d+ \(after ;\w\[",
                    note)
    bad = tmp_path / "bad.sgf"
    at = text.index(";S[D", text.index(";S[D") + 1)  # S's second discard
    bad.write_text(text[:at] + ";S[D999]" + text[text.index("]", at) + 1:])
    run = _mjbot("replay", "--json", str(bad))
    assert run.returncode == 1, run.stderr
    (hand,) = json.loads(run.stdout)["summary"]["hands"]
    assert hand["damaged"] and hand["discards"]["1"]  # S's first discard is shown
    assert searched(r"cannot be followed from event \d+ \(PlatformNotice\): node \d+ "
                    r"\(;S\[D999\]\): bad tile id '999'", run.stderr)


def test_a_drawn_out_hand_ends_right_after_the_draw_that_leaves_16() -> None:
    text = DRAWN.read_text()
    record = nycu_sgf.loads(text)
    assert _ends(record.events) == [ev.RoundDrawn("exhaustive")]
    draws = [e for e in record.events if isinstance(e, ev.TileDrawn)]
    assert 4 * 16 + len(draws) == 136 - 16
    moves = [e for e in record.events if isinstance(e, MOVES)]
    assert moves[-1] == draws[-1] and draws[-1].seat == 3  # N[M362], no discard after it
    # one node fewer is a record cut short, not a drawn hand: read so far, and named
    cut = text.rstrip().removesuffix(";N[M362])") + ")"
    ((_, why),) = nycu_sgf.loads(cut).damaged.items()
    assert searched(r"17 tiles left and no win .*cut short", why)


def test_our_fixtures_lay_the_wall_out_as_the_referee() -> None:
    """tests/data/nycu/ (written by tests/nycu_fixtures.py from our own table) deals as the
    real records do: the dealer's 17th is the wall's 17th tile."""
    for path in sorted((ROOT / "tests" / "data" / "nycu").glob("*.sgf")):
        text = path.read_text()
        for tree in text.split("(;")[1:]:
            wall = _wall(tree)
            dealer = "ESWN".index(searched(r"DEALER\[(\w)\]", tree).group(1))
            record = nycu_sgf.loads("(;" + tree)
            first = next(e for e in record.events if isinstance(e, ev.TileDrawn))
            assert first.seat == dealer
            assert first.tile == NtpuTiles().to_tile(wall[16]), path.name


# --------------------------------------------------------------------------- command logs


def test_a_referee_seat_log_is_that_seats_view_of_the_sgf() -> None:
    """The referee's per-seat log: ``getCommand: [...]`` lines are the replies it got, the
    game reads as the SGF of the same game seen from seat 1, the win valued alike."""
    text = WIN_LOG.read_text()
    record = ntpu_log.loads(text)
    assert record.meta["sent"] == text.count("getCommand:") and record.meta["skipped"] == 0
    full = nycu_sgf.loads(WIN.read_text())
    assert _seen(record.events) == _seen(seat_view(full, 0))
    (win,) = _ends(record.events)
    assert win.value == 1 and win.deltas == (1500, 0, -1500, 0) and not win.detail


def test_a_seat_log_that_stops_at_the_wall_is_a_drawn_hand() -> None:
    record = ntpu_log.loads(DRAWN_LOG.read_text())
    assert not record.meta["cut_in_hand"]
    assert _ends(record.events) == [ev.RoundDrawn("exhaustive")]
    # the last draw (N's, unannounced to seat 1) is counted, as the SGF has it
    assert _seen(record.events) == _seen(seat_view(nycu_sgf.loads(DRAWN.read_text()), 0))
    # cut earlier, the same log is a hand cut short
    lines = DRAWN_LOG.read_text().splitlines()
    cut = ntpu_log.loads("\n".join(lines[:-8]) + "\n")
    assert cut.meta["cut_in_hand"] and not _ends(cut.events)


def _capture(log: str) -> str:
    """The referee's seat log as the lab's client prints it on stderr (its GameBridge):
    ``[ << ]`` / ``[ >> ]`` lines, a received line's own newline left in, and its debug
    output between (two lines before each reply here)."""
    out = ["MeowCaTS client 1.0, connecting to 127.0.0.1:12345", "config: MahjongBaseConfigInfo"]
    for line in log.splitlines():
        reply = re.fullmatch(r"getCommand: \[(.*)\]", line)
        if reply:
            out += ["RemainTile:", "RemainTile.remainDrawCount = 55", f"[ >> ] {reply.group(1)}"]
        else:
            out += [f"[ << ] {line}\r", ""]
    return "\n".join(out) + "\n"


def test_debug_lines_of_a_client_capture_are_skipped_and_counted(tmp_path: Path) -> None:
    text = DRAWN_LOG.read_text()
    capture = _capture(text)
    replies = text.count("getCommand:")
    record = ntpu_log.loads(capture)
    assert record.events == ntpu_log.loads(text).events
    assert record.meta["skipped"] == 2 + 2 * replies and record.meta["sent"] == replies
    assert record.meta["skipped_lines"][0] == "line 1: MeowCaTS client 1.0, connecting to " \
                                              "127.0.0.1:12345"
    path = tmp_path / "client.log"
    path.write_text(capture)
    r = _mjbot("replay", str(path), "--json")
    assert r.returncode == 0, r.stderr
    notes = json.loads(r.stdout)["summary"]["notes"]
    assert any(n.startswith(f"{2 + 2 * replies} lines that are no protocol line were skipped")
               for n in notes), notes


# --------------------------------------------------------------------------- the CLI


def _replay_and_import(paths: list[Path], out: Path) -> None:
    """Every record through `mjbot replay --json` (one run for them all: a list of results,
    in the order given) and `mjbot dataset import`."""
    assert len(paths) > 1
    r = _mjbot("replay", *map(str, paths), "--json")
    assert r.returncode == 0, r.stderr
    results = json.loads(r.stdout)
    assert len(results) == len(paths)
    for path, result in zip(paths, results, strict=True):
        record = _check_record(path)
        summary = result["summary"]
        assert summary["decisions"] > 0 and len(summary["hands"]) == sum(
            isinstance(e, ev.RoundStarted) for e in record.events), path.name
        assert not any("ends inside a hand" in n for n in summary["notes"]), path.name
    r = _mjbot("dataset", "import", *map(str, paths), "--out", str(out), "--json")
    assert r.returncode == 0, r.stderr
    files = json.loads(r.stdout)["import"]["files"]
    games = [f for f in files if "left_out" not in f]
    assert sorted(f["file"] for f in games) == sorted(p.name for p in paths if p.suffix == ".sgf")
    assert all(f["skipped_decisions"] == 0 and f["decisions"] > 0 for f in games)
    assert all(f["left_out"].startswith("one seat's view") for f in files if "left_out" in f)


def test_the_copied_records_replay_and_import(tmp_path: Path) -> None:
    assert len(COPIES) == 5
    _replay_and_import(COPIES, tmp_path / "ds")


@needs_shared
def test_every_record_of_the_lab_referee_replays_and_imports(tmp_path: Path) -> None:
    _replay_and_import(SHARED, tmp_path / "ds")


def test_a_command_log_alone_is_still_no_dataset(tmp_path: Path) -> None:
    r = _mjbot("dataset", "import", str(WIN_LOG), "--out", str(tmp_path / "one"))
    assert r.returncode == 2 and "one seat's view only" in r.stderr


# --------------------------------------------------------------------------- the fake server


def _first_drawn_hand(tmp_path: Path) -> tuple[Path, list[BotClient]]:
    """A one-hand match of our bots at the fake server that ends in an exhaustive draw: the
    first seed that gives one (chosen by what happens, so a policy change picks another)."""
    for seed in range(40):
        clients = [BotClient() for _ in range(4)]
        result = serve(clients, hands=1, log_dir=tmp_path / str(seed), seed=seed)
        assert result.log_path is not None
        events = [f.event for f in read_log(result.log_path).frames
                  if isinstance(f, EventFrame)]
        if any(isinstance(e, ev.RoundDrawn) for e in events):
            for stats in result.stats:
                assert (stats.illegal, stats.timeouts) == (0, 0), stats.problems
            return Path(result.log_path), clients
    raise AssertionError("no drawn hand in 40 seeds")


def test_the_fake_server_ends_a_drawn_hand_right_after_the_draw_that_leaves_16(
        tmp_path: Path) -> None:
    log_path, clients = _first_drawn_hand(tmp_path)
    events = [f.event for f in read_log(log_path).frames if isinstance(f, EventFrame)]
    moves = [e for e in events if isinstance(e, MOVES)]
    draws = [e for e in moves if isinstance(e, ev.TileDrawn)]
    assert 4 * 16 + len(draws) == 136 - 16
    assert moves[-1] == draws[-1]  # no discard after the last draw
    # on the wire: the last drawer gets its /mo, then /exit; never /ask throw
    sent = [str(f.raw) for f in read_log(log_path).frames if isinstance(f, TxFrame)]
    drawer = draws[-1].seat + 1  # hand 0: client i sits at seat i
    mine = [line.split("> ", 1)[1] for line in sent if line.startswith(f"{drawer}> ")]
    last_mo = max(i for i, line in enumerate(mine) if line.startswith("/mo"))
    assert [line.split()[0] for line in mine[last_mo + 1:]] in (["/exit", "/close"],
                                                                ["/ask", "/exit", "/close"])
    assert "/ask throw" not in mine[last_mo + 1:]
    for client in clients:
        assert client.bot.summary.errors == []
    # the hand, written as the lab's SGF, reads back as the referee's own drawn records do
    record = GameRecord("taiwan16", "local", events)
    back = nycu_sgf.loads(nycu_sgf.dumps(record))
    assert _ends(back.events) == [ev.RoundDrawn("exhaustive")]
    assert [e for e in back.events if isinstance(e, MOVES)][-1] == draws[-1]


_LOG_PIECES = st.sampled_from([
    "\n", " ", "[ << ]", "[ >> ]", "[<<]", "getCommand: [", "]", "/start MJ 1 ", "/start MJ 2 me",
    "/initGame East East 1 1 0", "/initCard ", "/draw ", "/mo ", "/throw ", "/eat ", "/pong ",
    "/gong ", "/hu ", "/hu", "/ask throw", "/ask pong", "/pass", "/exit", "/close", "-1 ",
    "1 ", "0 ", "4 ", "123 ", "180 ", "262 ", "999 ", "debug: x", "#"])


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_LOG_PIECES, max_size=60).map("".join))
def test_fuzzed_command_logs_raise_only_record_errors(text: str) -> None:
    with contextlib.suppress(RecordError):
        ntpu_log.loads(text)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, 10_000), st.integers(0, 3), st.sampled_from(
    ["", "debug line\n", "[ << ] \n", "getCommand: []\n", "/throw 2 999\n", "/draw 123\n"]))
def test_edited_referee_seat_logs_raise_only_record_errors(at: int, cut: int, insert: str) -> None:
    lines = DRAWN_LOG.read_text().splitlines(keepends=True)
    i = at % len(lines)
    try:
        record = ntpu_log.loads("".join(lines[:i]) + insert + "".join(lines[i + cut:]))
    except RecordError:
        return
    assert record.events and isinstance(record.events[0], ev.GameStarted)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from([DRAWN, DEAL_WIN, WIN]), st.integers(0, 10_000), st.integers(0, 12),
       st.sampled_from(["", ";E[SM-1]", ";N[M362]", ";S[D-1]", ";W[SM-1]", ")", "(;", "[-1]",
                        ";E[M123]", ";N[D362]"]))
def test_edited_referee_sgfs_raise_only_record_errors(path: Path, at: int, cut: int,
                                                      insert: str) -> None:
    text = path.read_text()
    i = at % len(text)
    with contextlib.suppress(RecordError):
        nycu_sgf.loads(text[:i] + insert + text[i + cut:])


# N (seat 3) waits on 6s/9s; everyone throws what it draws and passes every claim, so the draws
# go round in turn and the 56th, the draw that leaves 16 tiles, is N's: the one 6s in the live
# wall. The other 6s/9s lie in the last 16.
LAST_DRAWER_HAND = "123m456m789m123p55s78s"


def _last_tile_wall() -> tuple[int, ...]:
    waits = {T.parse_mpsz("6s")[0], T.parse_mpsz("9s")[0]}
    rest = tile_set("taiwan16")
    north = T.parse_mpsz(LAST_DRAWER_HAND)
    for tile in north:
        rest.remove(tile)
    special = [t for t in rest if t in waits]
    plain = [t for t in rest if t not in waits]
    random.Random(27).shuffle(plain)
    hands, plain = plain[:48], plain[48:]
    wall = (*hands, *north, *plain[:55], special[0], *plain[55:], *special[1:])
    assert len(wall) == 136 and wall.index(special[0]) == 4 * 16 + 55
    return wall


class TsumogiriBot(BotClient):
    """Throws what it drew (the dealer: its 17th), passes every offer; on its own turn it
    answers ``/ask hu`` with ``win_own`` (``/hu`` or ``/pass``)."""

    def __init__(self, win_own: str = "/pass") -> None:
        super().__init__()
        self.win_own = win_own
        self.drawn: int | None = None

    def answer(self, line: str, reply: str | None) -> list[str]:
        parts = line.split()
        if parts[0] == "/initCard" and len(parts) == 18:
            self.drawn = int(parts[-1])
        elif parts[0] in ("/mo", "/draw"):
            self.drawn = int(parts[1])
        elif parts[0] == "/throw":
            self.drawn = None
        if line == "/ask throw":
            return [f"/throw {self.drawn}"]
        if line == "/ask hu" and self.drawn is not None:
            return [self.win_own]
        return ["/pass"] if line.startswith("/ask") else super().answer(line, reply)


@pytest.mark.parametrize("north", ["/hu", "/pass"])
def test_the_last_drawer_may_only_win_at_the_fake_server(tmp_path: Path, north: str) -> None:
    clients = [TsumogiriBot() for _ in range(3)] + [TsumogiriBot(north)]
    result = serve(clients, hands=1, log_dir=tmp_path, walls=[_last_tile_wall()])
    assert result.log_path is not None
    for stats in result.stats:
        assert (stats.illegal, stats.timeouts, stats.late, stats.unasked) == (0, 0, 0, 0), \
            stats.problems
    events = [f.event for f in read_log(result.log_path).frames if isinstance(f, EventFrame)]
    draws = [e for e in events if isinstance(e, ev.TileDrawn)]
    assert len(draws) == 56 and draws[-1] == ev.TileDrawn(3, T.parse_mpsz("6s")[0], False)
    (end,) = _ends(events)
    if north == "/hu":
        assert isinstance(end, ev.RoundWon) and (end.winner, end.from_seat) == (3, None)
        assert "海底撈月(1)" in end.yaku
    else:
        assert end == ev.RoundDrawn("exhaustive")
    sent = [str(f.raw).split("> ", 1)[1] for f in read_log(result.log_path).frames
            if isinstance(f, TxFrame) and str(f.raw).startswith("4> ")]
    last_mo = max(i for i, line in enumerate(sent) if line.startswith("/mo"))
    assert sent[last_mo + 1] == "/ask hu"  # asked to win, never to throw
    assert "/ask throw" not in sent[last_mo:] and "/ask gong" not in sent[last_mo:]
    after = [line.split()[0] for line in sent[last_mo + 2:]]
    assert after == (["/hu", "/exit", "/close"] if north == "/hu" else ["/exit", "/close"])
    if north == "/hu":
        assert sent[last_mo + 2].startswith(f"/hu 4 {sent[last_mo].split()[1]} ")


def test_a_deal_written_as_the_clients_nodes_reads_as_the_wall_deal() -> None:
    """The lab's client writes its own dealt ids as ``M`` nodes in /initCard order; the
    dealer's 17 read as the wall's deal in any order, its 17th (the wall's) as the draw."""
    text = WIN.read_text()
    wall = _wall(text)
    plain = nycu_sgf.loads(text).events
    head, moves = text.split(";E[D180]", 1)
    others = [(seat, wall[a:a + 16]) for seat, a in (("S", 17), ("W", 33), ("N", 49))]
    for dealt in (wall[:17], sorted(wall[:17]), wall[16:17] + wall[:16]):
        nodes = "".join(f";E[M{i}]" for i in dealt) + "".join(
            f";{seat}[M{i}]" for seat, ids in others for i in ids)
        events = nycu_sgf.loads(head + nodes + ";E[D180]" + moves).events
        assert [sorted(h) for h in events[1].hands] == [sorted(h) for h in plain[1].hands]
        assert events[2:] == plain[2:]


def test_writing_a_hand_without_the_dealers_17th_is_a_clear_error() -> None:
    events = nycu_sgf.loads(WIN.read_text()).events
    cut = GameRecord("taiwan16", "local", [*events[:2], ev.RoundDrawn("abortive")])
    with pytest.raises(RecordError, match="hand 1: the dealer never draws its 17th tile"):
        nycu_sgf.dumps(cut)


# --------------------------------------------------------------------------- lab wording


def _kinds(line: str) -> str:
    """A line with each tile id as its kind (``S R``): the lab referee numbers a tile's
    copies by wall position, our server by the order it deals them."""
    return " ".join(f"k{t[:2]}" if t.isdigit() and len(t) == 3 else t for t in line.split(" "))


@pytest.mark.parametrize("log", [p for p in [*COPIES, *SHARED] if p.name.endswith(".log")],
                         ids=lambda p: f"{p.parent.parent.name}/{p.name}")
def test_the_fake_servers_lab_wording_is_the_lab_referees_line_for_line(log: Path) -> None:
    """What the fake server's ``lab`` wording sends seat 1 for a lab game (its SGF's events)
    is the lab referee's own log of that seat, line for line (the asks and the replies are
    the server's dialogue, not the encoder's, and are left out); the ``spec`` wording is not."""
    from adapter.fakes.ntpu_lines import NtpuLines
    from replay.record import view_event

    full = nycu_sgf.loads(log.with_name(log.name.replace("_Player1.log", ".sgf")).read_text())
    expected = [line for line in log.read_text().splitlines()
                if line and not line.startswith(("getCommand:", "/ask"))]
    for wording in ("lab", "spec"):
        lines = NtpuLines(NtpuTiles(), seed=0, wording=wording)
        sent = [lines.start_line(0, "mjbot")]
        for e in full.events:
            lines.before_event(e)
            sent += lines.lines_for(0, view_event(e, 0, "taiwan16"))
        same = [_kinds(a) for a in sent] == [_kinds(b) for b in expected]
        assert same == (wording == "lab"), (wording, sent, expected)


def test_our_client_plays_the_fake_server_in_the_lab_wording(tmp_path: Path) -> None:
    """``mjbot ntpu-server --wording lab``'s lines, read by our own clients on loopback: the
    match is played with no error, no illegal or late reply, in the lab's words."""
    clients = [BotClient() for _ in range(4)]
    result = serve(clients, hands=4, log_dir=tmp_path, wording="lab")
    for stats in result.stats:
        assert (stats.illegal, stats.timeouts, stats.late) == (0, 0, 0), stats.problems
    for client in clients:
        assert client.bot.summary.errors == []
        assert client.bot.summary.hands == 4
        words = {line.split()[0] for line in client.seen}
        assert "/draw" in words and "/mo" not in words
        assert all(line.split()[1:3] == ["East", "East"] for line in client.seen
                   if line.startswith("/initGame"))
