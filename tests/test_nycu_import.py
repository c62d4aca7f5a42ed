"""The NYCU lab's Taiwan 16-tile records: the referee's full-information SGF and one client's
command log, imported, replayed and checked against our Taiwan rules (fixtures:
tests/data/nycu/, made by tests/nycu_fixtures.py)."""

from __future__ import annotations

import contextlib
import dataclasses
import itertools
import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from adapter.local.referee import HandSetup
from protocols import events as ev
from protocols.codec import ProtocolError
from protocols.ntpu import NtpuCodec
from protocols.tiles import NtpuTiles
from replay import formats, replayer
from replay.formats import ntpu_log, nycu_sgf
from replay.record import CutShort, GameRecord, RecordError, seat_view
from tests import nycu_fixtures
from tests.table_helpers import ScriptedSeat, layout_wall, take_when_legal

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "tests" / "data" / "nycu"
SGFS = sorted(DATA.glob("*.sgf"))
RICH = (DATA / "rich.sgf").read_text()
MOVES = (ev.TileDrawn, ev.TileDiscarded, ev.MeldCalled)


def _mjbot(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "adapter.cli", *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)


def _moves(events: list[Any]) -> list[Any]:
    """The moves; an added kong without its giver (the local table names the pong's giver,
    the imports, like the events' contract, do not)."""
    return [dataclasses.replace(e, from_seat=None) if isinstance(e, ev.MeldCalled)
            and e.kind == "added_kan" else e for e in events if isinstance(e, MOVES)]


def _ends(events: list[Any]) -> list[Any]:
    return [e for e in events if isinstance(e, ev.RoundWon | ev.RoundDrawn)]


def _hand_sorted(e: Any) -> Any:
    return (e.winner, e.from_seat, sorted(e.hand), e.win_tile, e.value, e.deltas, e.yaku) \
        if isinstance(e, ev.RoundWon) else e


# --------------------------------------------------------------------------- the SGF


def test_the_rich_hand_has_every_call_and_ends_in_a_self_drawn_win() -> None:
    record = nycu_sgf.loads(RICH)
    kinds = [e.kind for e in record.events if isinstance(e, ev.MeldCalled)]
    assert sorted(kinds) == sorted(["closed_kan", "chi", "pon", "open_kan", "added_kan"])
    replacements = [e for e in record.events if isinstance(e, ev.TileDrawn) and e.replacement]
    assert len(replacements) == 3  # one after each kong
    (win,) = _ends(record.events)
    assert win.winner == 3 and win.from_seat is None and win.value == 7
    # the dealer (seat 0) pays 莊家 on a non-dealer's self-draw: named beside the items
    assert win.yaku == ("門清自摸(3)", "一條龍(4)", "莊家(1, paid by the dealer alone)")
    assert win.deltas == (-5000, -4500, -4500, 14000)
    start = record.events[1]
    assert isinstance(start, ev.RoundStarted) and start.dealer == 0
    assert [len(h) for h in start.hands] == [16] * 4


def test_ron_and_exhaustive_draw_hands() -> None:
    (ron,) = _ends(nycu_sgf.loads((DATA / "ron.sgf").read_text()).events)
    assert ron.from_seat is not None and ron.from_seat != ron.winner and ron.value > 0
    draw_record = nycu_sgf.loads((DATA / "draw.sgf").read_text())
    assert _ends(draw_record.events) == [ev.RoundDrawn("exhaustive")]
    drawn = sum(isinstance(e, ev.TileDrawn) for e in draw_record.events)
    assert 4 * 16 + drawn == 136 - 16  # played to the last tile before the 16 left


def test_the_wall_is_read_as_the_lab_referee_lays_it_out() -> None:
    """Checked on the file's own text: the dealer's (E's) 17 in a row from the front, the 17th
    its first draw, then 16 to each other seat; draws go on from the front, a kong's
    replacement comes from the rear."""
    wall = [int(x) for x in re.findall(r"\[(\d+)\]", RICH.split("\n", 1)[0].split("SQRWALL")[1])]
    assert len(wall) == 136
    moves = re.findall(r";([ESWN])\[([A-Z]+)(\d+)\]", RICH)
    record = nycu_sgf.loads(RICH)
    tiles = NtpuTiles()
    assert record.events[1].hands == tuple(
        tuple(tiles.to_tile(i) for i in wall[start:start + 16]) for start in (0, 17, 33, 49))
    assert record.events[2] == ev.TileDrawn(0, tiles.to_tile(wall[16]), False)
    draws = [int(i) for seat, code, i in moves if code == "M"]
    after_kong = [int(i) for (_, c0, _), (_, code, i) in itertools.pairwise(moves)
                  if code == "M" and c0 in ("HG", "G", "UG")]
    assert after_kong == [wall[-1], wall[-2], wall[-3]]
    assert [d for d in draws if d not in after_kong] == wall[65:65 + len(draws) - 3]


@pytest.mark.parametrize("path", SGFS, ids=lambda p: p.name)
def test_every_recorded_move_is_legal_under_our_taiwan_rules(path: Path) -> None:
    record = nycu_sgf.loads(path.read_text())
    claims = 0
    for seat in range(4):
        decisions = replayer.derive_decisions(record, seat)
        assert any(d.request.kind == "turn" for d in decisions)
        for d in decisions:
            keys = {replayer.action_key(a) for a in d.legal}
            assert replayer.action_key(d.action) in keys, (seat, d)
            claims += isinstance(d.action, ev.Chi | ev.Pon) or (
                isinstance(d.action, ev.Kan) and d.action.kind == "open_kan")
    calls = [e for e in record.events if isinstance(e, ev.MeldCalled) and e.from_seat is not None
             and e.kind != "added_kan"]
    assert claims == len(calls)  # every call was offered by our rules, none went unchecked
    for win in _ends(record.events):
        if isinstance(win, ev.RoundWon):
            assert win.value > 0 and win.yaku and not win.detail  # scored: a win by our rules


def test_a_dealers_win_on_the_deal_is_one_self_drawn_win_node() -> None:
    wall = layout_wall("taiwan16", ["111222333444555m6m", "1112223334445556p",
                                    "1112223334445556s", "666777888999p1111z"], "6m")
    players = [ScriptedSeat("taiwan16", s, take_when_legal(ev.Win)) for s in range(4)]
    text = nycu_sgf.dumps(nycu_fixtures._play(players, HandSetup(seed=0, wall=wall)))
    assert text.endswith("\n;E[SM161])\n") and text.count(";") == 2
    (win,) = _ends(nycu_sgf.loads(text).events)
    assert win.winner == 0 and win.from_seat is None and win.value > 0


@pytest.mark.parametrize("name", ["rich.sgf", "ron.sgf", "draw.sgf", "match.sgf"])
def test_sgf_text_round_trips(name: str) -> None:
    text = (DATA / name).read_text()
    assert nycu_sgf.dumps(nycu_sgf.loads(text)) == text


def test_deal_nodes_and_comments_read_as_the_wall_deal() -> None:
    explicit = nycu_sgf.loads((DATA / "ron-deal-nodes.sgf").read_text())
    plain = nycu_sgf.loads((DATA / "ron.sgf").read_text())
    assert explicit.events == plain.events


def test_layout_variants_read_the_same() -> None:
    """WALL as well as SQRWALL, the wall as one value, comments with escaped brackets, and
    whitespace anywhere between nodes, properties and values."""
    plain = nycu_sgf.loads(RICH).events
    head, body = RICH.split("\n", 1)
    one_value = re.sub(r"SQRWALL((?:\[\d+\])+)",
                       lambda m: "WALL[" + " ".join(re.findall(r"\d+", m.group(1))) + "]", head)
    commented = body.replace(";S[D250]", ";C[a comment, with \\] and ( ; inside] S[D250]")
    spaced = commented.replace(";", " \n ;  ").replace("[", " [")
    for text in (RICH.replace("SQRWALL", "WALL"), one_value + "\n" + body,
                 head + "\r\n" + spaced, "\ufeff" + RICH):
        assert nycu_sgf.loads(text).events == plain


def test_a_collection_is_one_hand_per_game_tree() -> None:
    record = nycu_sgf.loads((DATA / "match.sgf").read_text())
    assert len(record.hands()) == 2
    assert sum(isinstance(e, ev.GameStarted) for e in record.events) == 1


def test_local_table_hands_round_trip_through_the_sgf() -> None:
    """Hands played at our own table, written as SGF and read back: the same moves, the same
    wins (our values), the same draws."""
    for record in (nycu_fixtures.rich_hand(), *(nycu_fixtures.greedy_hand(s) for s in range(8))):
        back = nycu_sgf.loads(nycu_sgf.dumps(record))
        assert _moves(back.events) == _moves(record.events)
        assert [_hand_sorted(e) for e in _ends(back.events)] == [
            _hand_sorted(e) for e in _ends(record.events)]


def test_the_fixture_files_are_what_the_generator_writes() -> None:
    for name, text in nycu_fixtures.sgf_fixtures().items():
        assert (DATA / name).read_text() == text, name


# --------------------------------------------------------------------------- malformed SGF


def _edit(old: str, new: str, count: int = 1) -> str:
    assert old in RICH
    return RICH.replace(old, new, count)


# what no hand can be read from: the file is refused, naming why
REFUSED = [
    (RICH[:len(RICH) // 2], "game tree 1 ends inside node 1, before its first hand is dealt"),
    (_edit(";E[HG450]", ";E[HG450](;E[D120])"), "a search-tree SGF, not a game record"),
    (_edit("GM[84]", "GM[1]"), r"GM\[1\] is not a mahjong record"),
    (_edit("DEALER[E]", ""), "no DEALER"),
    (_edit("DEALER[E]", "DEALER[X]"), "DEALER must be E, S, W or N"),
    (_edit("[120]", ""), "SQRWALL must list 136 different ids, got 135"),
    (_edit("[150]", "[120]"), "136 different ids, got 136 .135 different"),
    (RICH + "x", "'x' at offset"),
    ("", "an SGF starts with"),
    ("(;GM[84]DEALER[E])", "no deal for E and no WALL"),
]

# a node that cannot be read or does not fit: its hand is read up to it, and damaged there
# (the whole file was refused)
DAMAGED = [
    (RICH[:RICH.index(";W[M253]")] + ")",
     r"node 13 \(;S\[D420\]\): the record stops with 68 tiles left and no win"),
    (_edit(";S[D250]", ";S[D259]"), r"node 6 \(;S\[D259\]\): bad tile id '259'"),
    (_edit(";S[D250]", ";S[X250]"), r"node 6 \(;S\[X250\]\): unknown move code 'X'"),
    (_edit(";S[D250]", ";Q[D250]"), r"node 6 \(;Q\[D250\]\): 'Q' is not a seat"),
    (_edit(";S[D250]", ";S[D120]"), r"node 6 .*S does not hold 120"),
    (_edit(";E[M333]", ";E[M120]"), r"node 3 .*draws 120, the wall's last .* tile is 333"),
    (_edit(";S[M420]", ";W[M420]"), r"node 12 .*W draws, but it is S's draw"),
    (_edit(";S[EL333]", ";W[EL333]"), "only the next seat may chow"),
    (_edit(";S[EL333]", ";S[ER333]"), "holds 0 1s, a chow needs 1"),
    (_edit(";W[P250]", ";W[P373]"), "claims 373, the last discard is 250"),
    (_edit(";W[UG253]", ";E[UG253]"), "E kongs, but it is W's turn"),
    (_edit(";N[SM392]", ";N[SM392]\n;E[D120]"), "a move after the end of the hand"),
    (_edit(";N[SM392]", ";N[H392]"), "neither the last discard"),
    (_edit(";E[HG450]", ";E[HG450]XY[1]"), "unknown property XY"),
    (_edit(";E[HG450]", ";E[HG450]GM[84]"), "GM belongs in the first node"),
]


@pytest.mark.parametrize("text, message", REFUSED, ids=[m for _, m in REFUSED])
def test_malformed_sgf_gets_a_clear_error(text: str, message: str) -> None:
    with pytest.raises(RecordError, match=message):
        nycu_sgf.loads(text)


@pytest.mark.parametrize("text, message", DAMAGED, ids=[m for _, m in DAMAGED])
def test_a_node_that_does_not_fit_damages_its_hand_from_there(text: str, message: str
                                                             ) -> None:
    """One bad tile id (or any node that cannot be read or does not fit the wall and the
    hands) refused the whole file; its hand is now read up to that node, named there in
    ``damaged`` with a notice at its place, as the other readers do."""
    record = nycu_sgf.loads(text)
    ((at, why),) = record.damaged.items()
    assert why.startswith("node ") and re.search(message, why), why
    assert isinstance(record.events[at], ev.PlatformNotice) and why in record.events[at].text
    whole = nycu_sgf.loads(RICH).events
    assert record.events[:at] == whole[:at]  # everything before the node, as read whole


def test_a_collection_error_names_the_hand() -> None:
    """A bad node in the second hand (game tree) damages that hand alone: the first reads
    whole, the note names the game tree and the node."""
    text = (DATA / "match.sgf").read_text()
    second = text.index("(;", 1)
    bad = text[:second] + text[second:].replace("[D", "[X", 1)
    whole, record = nycu_sgf.loads(text), nycu_sgf.loads(bad)
    (why,) = record.damaged.values()
    assert re.fullmatch(r"game tree 2, node \d+ .*unknown move code 'X'.*", why), why
    assert record.hands()[0] == whole.hands()[0] and len(record.hands()) == 2
    first = text[:second].replace("[D", "[X", 1) + text[:second]  # now the first of two
    record = nycu_sgf.loads(first)
    (why,) = record.damaged.values()
    assert why.startswith("game tree 1, node ") and record.hands()[1] == whole.hands()[0]


@pytest.mark.parametrize("name", ["match.sgf", "rich.sgf", "ron-deal-nodes.sgf"])
def test_a_cut_sgf_reads_up_to_its_last_whole_node(name: str) -> None:
    """A cut SGF (a copy broken off) was refused in the ten-line "not a game log we know"
    answer ("property W has no [value]", "cut short inside a value"). Cut anywhere after its
    first hand's deal, it now reads: the whole hands before the cut as they are, the hand it
    ends in up to its last whole node and unfinished (no result), the cut said in the meta;
    cut before that deal, it is refused in one line as cut."""
    text = (DATA / name).read_text()
    whole = nycu_sgf.loads(text)
    n_whole = len(whole.events)
    shown = 0
    for cut in range(text.rindex(")"), 0, -7):
        try:
            record = nycu_sgf.loads(text[:cut])
        except CutShort as exc:
            assert "before its first hand is dealt" in str(exc), exc
            continue
        assert record.meta["cut"].startswith("game tree "), record.meta
        assert not record.damaged, (cut, record.damaged)
        assert whole.events[:len(record.events)] == record.events or \
            _unfinished_prefix(whole.events, record.events), cut
        assert len(record.events) <= n_whole
        shown += 1
    assert shown


def _unfinished_prefix(whole: list[Any], cut: list[Any]) -> bool:
    """``cut`` is ``whole`` up to a point (a hand the cut ends in, without its end)."""
    return all(a == b for a, b in zip(whole, cut, strict=False))


def test_a_cut_sgf_through_the_cli_shows_the_hands_before_the_cut(tmp_path: Path) -> None:
    text = (DATA / "match.sgf").read_text()
    second = text.index("(;", 1)
    path = tmp_path / "cut.sgf"
    path.write_text(text[:text.index(";W[D353]", second) + 3])  # ";W" and no [value]
    r = _mjbot("replay", "--json", str(path))
    assert r.returncode == 0 and "Traceback" not in r.stderr, r.stderr
    summary = json.loads(r.stdout)["summary"]
    first, last = summary["hands"]
    assert first["results"] and not first["unfinished"]
    assert last["unfinished"] and not last["results"]
    assert "the file is cut short: game tree 2 ends inside node " in summary["notes"][0]


def test_writing_a_kong_that_shows_no_tile_is_a_record_error() -> None:
    """A concealed kong whose tiles the platform hid (NTPU shows none of another seat's) has
    no tile to number: a RecordError naming it, not a TypeError from indexing with None."""
    record = nycu_fixtures.rich_hand()
    hidden = [dataclasses.replace(e, tiles=()) if isinstance(e, ev.MeldCalled)
              and e.kind == "closed_kan" else e for e in record.events]
    with pytest.raises(RecordError, match="seat 0's closed kan shows no tile"):
        nycu_sgf.dumps(dataclasses.replace(record, events=hidden))


def test_a_malformed_sgf_through_the_cli_is_one_clear_message(tmp_path: Path) -> None:
    path = tmp_path / "bad.sgf"
    path.write_text(_edit(";S[D250]", ";S[D259]"))
    r = _mjbot("replay", str(path))
    assert r.returncode == 1 and "Traceback" not in r.stderr  # a damaged hand: exit 1
    assert r.stderr.strip() == (
        f"mjbot replay: {path}: hand 1 (E1-0) cannot be followed from event 7 "
        "(PlatformNotice): node 6 (;S[D259]): bad tile id '259'; its moves from there are "
        "not read (a damaged or edited log), the hands after it are")
    path.write_text(_edit("GM[84]", "GM[1]"))  # no hand at all: refused, as it was
    r = _mjbot("replay", str(path))
    assert r.returncode == 2 and "NYCU SGF, by its opening: node 1 (;GM[1]" in r.stderr


_SGF_ALPHABET = st.sampled_from([*"();[]\\ \nESWNMDPGHULRCQ0123456789-,", "GM[84]",
                                 "DEALER[E]", "SQRWALL", ";E[M", ";S[D", "[450]", "HG", "SM"])


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_SGF_ALPHABET, max_size=80).map("".join))
def test_fuzzed_sgf_text_raises_only_record_errors(text: str) -> None:
    with contextlib.suppress(RecordError):
        nycu_sgf.loads(text)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, len(RICH)), st.integers(0, 40), st.text(
    alphabet=st.sampled_from(list("();[]\\ ESWNMDPGHUL0123456789")), max_size=12))
def test_mutated_records_raise_only_record_errors(at: int, cut: int, insert: str) -> None:
    try:
        record = nycu_sgf.loads(RICH[:at] + insert + RICH[at + cut:])
    except RecordError:
        return
    assert isinstance(record, GameRecord)  # a harmless edit (a comment, a space) still reads


_NODE_EDITS = st.sampled_from(["seat", "code", "id", "drop", "swap"])


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(_NODE_EDITS, st.integers(1, 10_000), st.integers(0, 10_000)),
                min_size=1, max_size=3))
def test_records_with_edited_moves_raise_only_record_errors(
        edits: list[tuple[str, int, int]]) -> None:
    """Moves given to the wrong seat, other codes, other ids, dropped or swapped: the move
    checks must catch what does not add up, with their own error."""
    nodes = RICH.split("\n;")
    ids = re.findall(r"\d{3}", RICH)
    for edit, a, b in edits:
        i = 1 + a % (len(nodes) - 1)
        if edit == "seat":
            nodes[i] = "ESWNQ"[b % 5] + nodes[i][1:]
        elif edit == "code":
            nodes[i] = re.sub(r"\[[A-Z]+", "[" + (*nycu_sgf.CODES, "X")[b % 12], nodes[i],
                              count=1)
        elif edit == "id":
            nodes[i] = re.sub(r"\d{3}\]", ids[b % len(ids)] + "]", nodes[i], count=1)
        elif edit == "drop" and len(nodes) > 2:
            del nodes[i]
        else:
            j = 1 + b % (len(nodes) - 1)
            nodes[i], nodes[j] = nodes[j], nodes[i]
    with contextlib.suppress(RecordError):
        nycu_sgf.loads("\n;".join(nodes))


# --------------------------------------------------------------------------- CLI


def test_replay_an_sgf_from_any_seat() -> None:
    r = _mjbot("replay", str(DATA / "rich.sgf"), "--seat", "3", "--json")
    assert r.returncode == 0, r.stderr
    summary = json.loads(r.stdout)["summary"]
    assert summary["source"] == "nycu_sgf" and summary["variant"] == "taiwan16"
    assert summary["seat"] == 3 and summary["decisions"] > 0
    (result,) = summary["hands"][0]["results"]
    assert result["winner"] == 3 and result["self_draw"] and result["value"] == 7
    (ron,) = _ends(nycu_sgf.loads((DATA / "ron.sgf").read_text()).events)
    r = _mjbot("replay", str(DATA / "ron.sgf"), "--policy", "greedy")
    assert r.returncode == 0, r.stderr
    assert f"WIN     seat {ron.winner} ron from seat {ron.from_seat}" in r.stdout
    assert "policy greedy vs recorded play, seat 0" in r.stdout


def test_detection_finds_the_new_formats() -> None:
    for path, name in ((DATA / "rich.sgf", "nycu_sgf"), (DATA / "client1.log", "ntpu_log")):
        assert formats.read(path.read_bytes(), path).name == name


# --------------------------------------------------------------------------- command logs


LOG = (DATA / "client1.log").read_text()


def _games(events: list[Any]) -> list[list[Any]]:
    out: list[list[Any]] = []
    for e in events:
        if isinstance(e, ev.GameStarted):
            out.append([])
        out[-1].append(e)
    return out


def _seen(events: list[Any]) -> list[Any]:
    """What a seat's view says about the moves, whoever wrote it down."""
    out: list[Any] = []
    for e in events:
        if isinstance(e, ev.RoundStarted):
            out.append(("deal", e.dealer, sorted(e.hand)))
        elif isinstance(e, ev.TileDiscarded):  # a command log cannot tell others' tsumogiri
            out.append(("discard", e.seat, e.tile))
        elif isinstance(e, MOVES):
            out.append(e)
        elif isinstance(e, ev.RoundWon):
            out.append(("win", e.winner, e.from_seat, sorted(e.hand), e.win_tile))
        elif isinstance(e, ev.RoundDrawn):
            out.append(("draw",))
    return out


def test_command_log_is_the_seats_view_of_the_match() -> None:
    """client1.log is one client's lines from the match that match.sgf records in full: each
    game of the log reads as the SGF hand seen from the seat the client had in it."""
    record = ntpu_log.loads(LOG)
    full = nycu_sgf.loads((DATA / "match.sgf").read_text())
    games = _games(record.events)
    assert [g[0].seat for g in games] == [0, 3]  # the server rotates the clients
    for game, hand in zip(games, full.hands(), strict=True):
        seat = game[0].seat
        view = seat_view(GameRecord("taiwan16", "x", hand), seat)
        assert _seen(game) == _seen(view)


def test_command_log_kinds_of_lines() -> None:
    record = ntpu_log.loads(LOG)
    assert record.meta["sent"] == LOG.count("[ >> ]")
    # bare server lines (no markers, no replies) read the same
    bare = "\n".join(line.removeprefix("[ << ] ") for line in LOG.splitlines()
                     if not line.startswith("[ >> ]"))
    assert ntpu_log.loads(bare).events == record.events
    tight = LOG.replace("[ << ] ", "[<<]").replace("[ >> ] ", "[>>] ")
    assert ntpu_log.loads(tight).events == record.events


def test_replay_a_command_log() -> None:
    r = _mjbot("replay", str(DATA / "client1.log"), "--json", "--seat", "2")
    assert r.returncode == 0, r.stderr
    summary = json.loads(r.stdout)["summary"]
    assert summary["source"] == "ntpu_log" and summary["seat"] == 0
    assert any("seat changes between games" in n for n in summary["notes"])
    assert any("seat 2 cannot be shown" in n for n in summary["notes"])
    assert len(summary["hands"]) == 2 and summary["decisions"] > 0
    rep = replayer.load(DATA / "client1.log")
    for d in rep.decisions:
        assert replayer.action_key(d.action) in {replayer.action_key(a) for a in d.legal}


@pytest.mark.parametrize("text, message", [
    ("[ << ] /start MJ 1 me\n[ << ] /initGame east east 1 1 0\n[ << ] /mo 999\n",
     r"line 3: .*bad tile id"),
    ("[ << ] /initGame east east 1 1 0\n", r"line 1: a game message before /start"),
    ("[ >> ] /pass\n", "no /start line"),
    ("[ << ] /start MJ 9 me\n", "line 1: seat must be 1..4"),
])
def test_malformed_command_log_gets_a_clear_error(text: str, message: str) -> None:
    with pytest.raises(RecordError, match=message):
        ntpu_log.loads(text)


def test_a_command_log_cut_inside_a_hand_replays_with_a_note(tmp_path: Path) -> None:
    cut = LOG[:LOG.index("/hu ")].rsplit("\n", 2)[0] + "\n"
    path = tmp_path / "cut.log"
    path.write_text(cut)
    rep = replayer.load(path)
    assert any("ends inside a hand" in n for n in rep.notes)


def _codec_reads(*lines: str) -> str:
    """"" when the NTPU codec reads every line, else its error (these lines were once
    beyond it: a test asserts they are read now, never skips)."""
    codec = NtpuCodec()
    try:
        for line in lines:
            codec.feed(line)
    except ProtocolError as exc:
        return str(exc)
    return ""


DEAL = "111 112 113 121 122 123 131 132 133 141 142 143 151 152 153 161 162"


def test_draw_is_read_as_mo_in_a_command_log() -> None:
    assert _codec_reads("/start MJ 2 me", "/initGame east east 1 1 0",
                        f"/initCard {DEAL[:-4]}", "/draw 163") == ""
    renamed = LOG.replace("/mo ", "/draw ")
    assert renamed != LOG
    assert ntpu_log.loads(renamed).events == ntpu_log.loads(LOG).events


def test_a_dealers_win_on_the_deal_in_a_command_log() -> None:
    assert _codec_reads("/start MJ 1 me", "/initGame east east 1 1 0", f"/initCard {DEAL}",
                        f"/hu 1 -1 {DEAL}") == ""
    text = (f"[ << ] /start MJ 1 me\n[ << ] /initGame east east 1 1 0\n"
            f"[ << ] /initCard {DEAL}\n[ << ] /ask hu\n[ >> ] /hu\n"
            f"[ << ] /hu 1 -1 {DEAL}\n[ << ] /exit\n")
    ends = _ends(ntpu_log.loads(text).events)
    assert len(ends) == 1 and isinstance(ends[0], ev.RoundWon)
    assert ends[0].winner == 0 and ends[0].from_seat is None
