"""Tenhou client transcripts (``Send:`` / ``Get:`` lines) read by ``mjbot replay``, the viewer
and ``dataset import``, checked against what each capture itself says: the hands it dealt,
our draws and discards, every result's score changes (AGARI / RYUUKYOKU ``sc``) and the final
scores (``owari``). The captures: tests/data/shared/tenhou/dnovikoff_protocol_captures (a copy
kept in the repository), and ../shared's where it is beside the project."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from brain.state import TableState
from protocols import events as ev
from protocols.tenhou import parse_tag, tag_to_json
from replay import formats, replayer, timeline
from replay.dataset import schema as S
from replay.dataset.imports import import_files
from replay.formats import tenhou_client
from replay.record import RecordError
from tests.in_process import mjbot_here
from tests.shared_data import SHARED_TENHOU_CAPTURES as SHARED_CAPTURES
from tests.shared_data import TENHOU_CAPTURES

REFUSED = {"sanma.log": "three-player (sanma)", "f5182_2018-01-22_12_36_49.log": "no game in it"}
CAPTURES = sorted(TENHOU_CAPTURES.glob("*.log"))
GAMES = [p for p in CAPTURES if p.name not in REFUSED]
FIRST = TENHOU_CAPTURES / "first.log"  # logged in with an ID, cut inside its first hand
WHOLE = TENHOU_CAPTURES / "82093_2018-01-17_11_03_35.log"  # a whole game, owari and all
ID = "ID1A2B3C4D-5E6F7A8B"


def _shared_captures() -> list[Path]:
    return sorted(SHARED_CAPTURES.glob("*.log")) if SHARED_CAPTURES.is_dir() else []


def _attrs(tag: str) -> dict[str, str]:
    return dict(re.findall(r'(\w+)="([^"]*)"', tag))


def _capture_facts(text: str) -> dict[str, Any]:
    """What the capture says, read straight off its lines (not through the codec): the deals,
    per result the score changes by absolute seat (seat 0: the game's first dealer), each
    game's scores after its last result (``sc``: score plus change), the owari, and our draws
    and discards (a REINIT's own river counted as drawn and discarded, as it is replayed)."""
    facts: dict[str, Any] = {"deals": 0, "results": [], "after": [], "owari": [],
                             "draws": 0, "discards": 0}
    first_dealer = 0
    after: list[int] | None = None

    def game_over() -> None:
        nonlocal after
        if after is not None:
            facts["after"].append(after)
        after = None

    for line in text.splitlines():
        if line.startswith("Send:") and "<BYE" in line:
            game_over()  # the client left: its game stops here
        if not line.startswith("Get:"):
            continue
        for tag in re.findall(r"<[^<>]*>", line):
            name = re.match(r"<\s*([A-Za-z]+)", tag)
            if name is None:
                continue
            a = _attrs(tag)
            if name.group(1) in ("INIT", "REINIT"):
                facts["deals"] += 1
                first_dealer = (int(a["oya"]) - int(a["seed"].split(",")[0]) % 4) % 4
                own_river = [x for x in a.get("kawa0", "").split(",") if x and x != "255"]
                facts["draws"] += len(own_river)
                facts["discards"] += len(own_river)
            elif name.group(1) == "TAIKYOKU":
                game_over()  # a new game began over one still open
            elif re.fullmatch(r"<T\d+.*", tag):
                facts["draws"] += 1
            elif re.fullmatch(r"<[Dd]\d+.*", tag):
                facts["discards"] += 1
            if name.group(1) in ("AGARI", "RYUUKYOKU"):
                sc = [int(float(x)) for x in a["sc"].split(",")]
                deltas, scores = [0] * 4, [0] * 4
                for r in range(4):
                    seat = (r - first_dealer) % 4
                    deltas[seat] = sc[2 * r + 1] * 100
                    scores[seat] = (sc[2 * r] + sc[2 * r + 1]) * 100
                facts["results"].append(deltas)
                after = scores
                if "owari" in a:
                    ow = a["owari"].split(",")
                    final = [0] * 4
                    for r in range(4):
                        final[(r - first_dealer) % 4] = int(float(ow[2 * r])) * 100
                    facts["owari"].append(final)
                    game_over()
    game_over()
    return facts


def _scores_after_each_game(events: list[Any]) -> list[list[int]]:
    """Each game's scores after its last result, as the record's table state has them."""
    out: list[list[int]] = []
    state: TableState | None = None
    scored = False

    def game_over() -> None:
        if state is not None and scored:
            out.append(list(state.scores))

    for e in events:
        if isinstance(e, ev.GameStarted):
            game_over()
            state, scored = TableState("riichi", e.seat), False
        elif isinstance(e, ev.GameEnded):
            game_over()
            state = None
        elif state is not None:
            state.apply(e)
            scored = scored or isinstance(e, ev.RoundWon | ev.RoundDrawn)
    game_over()
    return out


def _check_against_capture(path: Path) -> None:
    loaded = formats.read(path.read_bytes(), path)
    assert loaded.name == "tenhou_client" and loaded.record is not None
    record = loaded.record
    facts = _capture_facts(path.read_text(encoding="utf-8"))
    events = record.events
    assert sum(isinstance(e, ev.RoundStarted) for e in events) == facts["deals"]
    results = [list(e.deltas) for e in events if isinstance(e, ev.RoundWon | ev.RoundDrawn)]
    assert results == facts["results"]
    assert [list(e.scores) for e in events if isinstance(e, ev.GameEnded)] == facts["owari"]
    assert _scores_after_each_game(events) == facts["after"]
    seat = None
    draws = discards = 0
    for e in events:
        if isinstance(e, ev.GameStarted):
            seat = e.seat
        elif isinstance(e, ev.TileDrawn) and e.seat == seat:
            assert e.tile is not None  # our own draws are known
            draws += 1
        elif isinstance(e, ev.TileDiscarded) and e.seat == seat:
            discards += 1
        elif isinstance(e, ev.TileDrawn):
            assert e.tile is None  # the others' are counted, not shown
    assert (draws, discards) == (facts["draws"], facts["discards"])
    assert record.meta["view_seat"] == next(e.seat for e in events
                                            if isinstance(e, ev.GameStarted))


@pytest.mark.parametrize("path", GAMES, ids=lambda p: p.name)
def test_a_capture_reads_as_the_capture_says(path: Path) -> None:
    _check_against_capture(path)


@pytest.mark.parametrize("path", _shared_captures() or [None], ids=lambda p: getattr(p, "name",
                                                                                     "none"))
def test_the_shared_captures_read_as_they_say(path: Path | None) -> None:
    if path is None:
        pytest.skip(f"no {SHARED_CAPTURES} beside the project (a plain clone): the copies in "
                    "tests/data are read by test_a_capture_reads_as_the_capture_says")
    if path.name in REFUSED:
        with pytest.raises(formats.UnknownFormat) as refusal:
            formats.read(path.read_bytes(), path)
        assert REFUSED[path.name] in str(refusal.value)
        return
    _check_against_capture(path)


def test_the_whole_game_ends_on_the_owari_and_replays_its_hands() -> None:
    rep = replayer.load(WHOLE)
    summary = replayer.summarize(rep)
    assert rep.source == "tenhou_client" and rep.seat == 0
    # owari="121,-38.0,383,48.0,138,-26.0,358,16.0", TAIKYOKU oya="0": seats as written
    assert summary["final_scores"] == [12100, 38300, 13800, 35800]
    assert len(summary["hands"]) == 8 and not any(h["unfinished"] for h in summary["hands"])
    assert summary["notes"] == []
    assert summary["decisions"] > 8 * 10  # every hand's own turns at least
    hand = summary["hands"][0]  # INIT seed="0,0,0,2,5,81": East 1, our deal
    assert hand["round"] == "E1" and hand["dealer"] == 0 and hand["hand"] == "189m147p4569s236z"


@pytest.mark.parametrize("name, why", sorted(REFUSED.items()))
def test_a_sanma_or_gameless_transcript_is_refused_in_one_line(name: str, why: str) -> None:
    path = TENHOU_CAPTURES / name
    with pytest.raises(formats.UnknownFormat) as refusal:
        formats.read(path.read_bytes(), path)
    message = str(refusal.value)
    assert "\n" not in message and message.startswith("Tenhou client transcript: ")
    assert why in message


def test_a_cut_transcript_reads_up_to_the_cut_with_a_note() -> None:
    rep = replayer.load(FIRST)
    summary = replayer.summarize(rep)
    (hand,) = summary["hands"]
    assert hand["unfinished"] and hand["discards"][str(rep.seat)]
    assert summary["final_scores"] is None
    assert any("cut short" in n and "inside a hand" in n for n in summary["notes"])
    # the whole game cut in its fifth hand, inside a Get line's second tag
    lines = WHOLE.read_text(encoding="utf-8").splitlines()
    at = next(i for i, line in enumerate(lines) if "<INIT" in line and 'seed="4,' in line)
    cut = "\n".join([*lines[:at + 30], lines[at + 30][:lines[at + 30].index("/>") + 4]])
    record = tenhou_client.loads(cut)
    assert sum(isinstance(e, ev.RoundStarted) for e in record.events) == 5
    assert "ends inside a message" in record.meta["cut"]
    assert not any(isinstance(e, ev.GameEnded) for e in record.events)


def test_the_login_id_is_never_shown(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """The HELO name is an ID (a credential): not in replay's text or JSON, the viewer's
    outline, an error notice quoting a server message that echoes it, or a refusal."""
    text = FIRST.read_text(encoding="utf-8").replace("IDDEADBEAF-xxxxxxxx", ID)
    lines = text.splitlines()
    # a server message that names the ID (mangled: the codec cannot read it), then junk
    lines.insert(12, f'Get: <CHAT uname="{ID}" text="hi"/> <UNKNOWN who="{ID}"/>')
    lines.insert(13, f"debug: logged in as {ID}")
    path = tmp_path / "mine.log"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    shown = mjbot_here(capsys, "replay", str(path))
    as_json = mjbot_here(capsys, "replay", str(path), "--json")
    assert shown.returncode == 0 and as_json.returncode == 0, shown.stderr
    assert "could not be read" in shown.stdout and "unknown tag" in as_json.stdout
    outline = json.dumps(timeline.build(formats.read(path.read_bytes(), path)).outline(),
                         ensure_ascii=False)
    gameless = tmp_path / "lobby.log"
    gameless.write_text("\n".join(lines[:8]) + "\nnoise\n", encoding="utf-8")
    refused = mjbot_here(capsys, "replay", str(gameless))
    assert refused.returncode == 2 and "no game in it" in refused.stderr
    # no transcript's mark (its first line mangled): every format's reason, none quoting it
    unmarked = tmp_path / "unmarked.log"
    unmarked.write_text("Snd" + "\n".join(lines[:8])[4:] + "\n", encoding="utf-8")
    tried = mjbot_here(capsys, "replay", str(unmarked))
    assert tried.returncode == 2 and "NTPU command log: " in tried.stderr
    assert 'line 1: Snd: <HELO name="***"' in tried.stderr
    for out in (shown.stdout, shown.stderr, as_json.stdout, outline, refused.stderr,
                tried.stderr):
        assert ID not in out and "1A2B3C4D" not in out


def test_the_viewer_and_replay_show_the_transcript(capsys: pytest.CaptureFixture[str]) -> None:
    shown = mjbot_here(capsys, "replay", str(WHOLE))
    assert shown.returncode == 0
    assert "[tenhou_client, riichi] seat 0" in shown.stdout
    t = timeline.build(formats.read(WHOLE.read_bytes(), WHOLE))
    assert t.meta["our_seat"] == 0 and not t.meta["full_information"]
    assert t.meta["final_scores"] == [12100, 38300, 13800, 35800] and len(t.hands) == 8


async def test_the_viewer_lists_and_steps_through_a_transcript() -> None:
    """`mjbot view FILE`'s routes: the transcript is listed and shown from its seat, its
    hand known and the others' hidden, with the owari's final scores."""
    from aiohttp.test_utils import TestClient, TestServer

    from adapter.serve.status import StatusServer

    client = TestClient(TestServer(StatusServer(roots=[], imports=[str(WHOLE)]).app()))
    await client.start_server()
    try:
        games = (await (await client.get("/api/games")).json())["games"]
        assert [g["id"] for g in games] == [f"0~{WHOLE.name}"]
        outline = await (await client.get(f"/api/games/0~{WHOLE.name}")).json()
        assert outline["our_seat"] == 0 and not outline["full_information"]
        assert outline["final_scores"] == [12100, 38300, 13800, 35800]
        steps = (await (await client.get(
            f"/api/games/0~{WHOLE.name}/hands/0")).json())["steps"]
        seats = steps[0]["seats"]
        assert seats[0]["hand"] and all(seats[s]["hand"] is None for s in (1, 2, 3))
    finally:
        await client.close()


def test_dataset_import_names_a_transcript_as_one_seat_view(tmp_path: Path) -> None:
    with pytest.raises(S.DatasetError, match="Tenhou client transcript shows one seat's view"):
        import_files([WHOLE], tmp_path / "out")


def test_kokushi_games_the_client_left_stop_there() -> None:
    rep = replayer.load(TENHOU_CAPTURES / "kokushi.log")
    summary = replayer.summarize(rep)
    starts = [e for e in rep.events if isinstance(e, ev.GameStarted)]
    assert len(starts) == 10 and rep.record is not None and rep.record.meta["left"] == 10
    assert any("left (BYE)" in n for n in summary["notes"])
    assert not any(isinstance(e, ev.GameEnded) for e in rep.events)


def test_a_game_left_at_its_first_hand_is_not_read_as_a_dropped_line() -> None:
    """kokushi.log (a real capture): nine games the client left (BYE) in their first hand,
    each followed by the next game's E1-0 with dealer 0. ``mjbot replay`` read each as "line
    dropped: the hand goes on below, as the server gave it back" (``resumed_below``) beside
    its own notice that the game stops there: only a hand the server told anew (REINIT)
    goes on below, not a new game's hand of the same round, honba and dealer."""
    summary = replayer.summarize(replayer.load(TENHOU_CAPTURES / "kokushi.log"))
    hands = summary["hands"]
    assert not any(h["resumed_below"] for h in hands), [h["round"] for h in hands]
    assert [i for i, h in enumerate(hands) if h["unfinished"]] == [*range(9), 15]
    text = replayer.format_summary(summary)
    assert "line dropped" not in text
    # each of the ten a hand the client left, not one whose result a dropped line lost
    assert text.count("unfinished (the client left the game in this hand)") == 10
    assert "which goes on with the next hand" not in text


def test_each_game_marks_the_seat_it_was_played_from() -> None:
    """kokushi.log's games seat the client where TAIKYOKU's oya puts it (oya="3": seat 1,
    oya="2": seat 2). The text marked the first game's seat in every hand, so that seat 0's
    discards read as ours beside our own hand; each hand marks the seat its game was played
    from, and its JSON names it where it is not the first game's."""
    path = TENHOU_CAPTURES / "kokushi.log"
    firsts = [int(m) for m in re.findall(r'<TAIKYOKU oya="(\d)"', path.read_text())]
    summary = replayer.summarize(replayer.load(path))
    seats = [h.get("seat", summary["seat"]) for h in summary["hands"]
             if h["round"] == "E1" and h["honba"] == 0]  # each game's first hand
    assert seats == [(4 - oya) % 4 for oya in firsts] and len(set(seats)) == 3
    text = replayer.format_summary(summary)
    for block in text.split("\n- ")[1:]:
        marked = [line for line in block.splitlines() if line.startswith("   *seat")]
        players = next((line for line in block.splitlines() if "players" in line), None)
        own = int(marked[0].split()[1].removeprefix("seat")) if marked else None
        assert len(marked) == 1 and own is not None
        if players is not None:  # the client is NoName among the COMs
            assert players.split("players ")[1].split(" / ")[own] == "NoName"


# --------------------------------------------------------------------------- our client

TCP_JUNK = ("<BOGUS a=\"1\"/>", '<N who="1" m="70000"/>', "<E999/>", "hello")
WS_JUNK = ('{"tag": "BOGUS"}', "not json", '{"tag": "E999"}')


@pytest.mark.parametrize("transport, drop, junk", [("tcp", None, ()), ("tcp", 120, TCP_JUNK),
                                                   ("ws", 200, WS_JUNK)])
async def test_our_clients_own_transcript_reads_as_its_game_log(
        tmp_path: Path, transport: str, drop: int | None, junk: tuple[str, ...]) -> None:
    """A game of our client against the fake server (a dropped line resumed, bad tags), its
    log's raw frames written as a transcript: read back, the same events as it logged, its
    notices too (an unreadable message's 'error:' notice says where, so it is counted)."""
    from replay.log import EventFrame, RxFrame, TxFrame, read_log
    from tests.narrowing import text_of
    from tests.test_tenhou_client import _game

    await _game(tmp_path, transport, drop=drop, junk=junk)
    (path,) = (tmp_path / "client").rglob("*.mjlog.msgpack")
    log = read_log(path)
    lines = [f"{'Get' if isinstance(f, RxFrame) else 'Send'}: {text_of(f.raw)}" for f in log.frames
             if isinstance(f, RxFrame | TxFrame)]
    record = tenhou_client.loads("\n".join(lines) + "\n")
    logged = [f.event for f in log.frames if isinstance(f, EventFrame)]

    def split(events: list[Any]) -> tuple[list[Any], list[Any], int]:
        notices = [e.text for e in events if isinstance(e, ev.PlatformNotice)]
        errors = [t for t in notices if t.startswith("error:")]
        return ([e for e in events if not isinstance(e, ev.PlatformNotice)],
                [t for t in notices if t not in errors], len(errors))

    assert split(record.events) == split(logged)
    assert record.meta["errors"] == len(junk)
    assert "cut" not in record.meta  # the game ended


# --------------------------------------------------------------------------- fuzz

def _as_json(text: str) -> str:
    """A transcript's Get: tags as the WebSocket client gets them (JSON objects)."""
    out = []
    for line in text.splitlines():
        if line.startswith("Get:"):
            line = "Get: " + " ".join(json.dumps(tag_to_json(parse_tag(t)))
                                      for t in re.findall(r"<[^<>]*>", line))
        out.append(line)
    return "\n".join(out) + "\n"


_SMALL = [(TENHOU_CAPTURES / n).read_text(encoding="utf-8") for n in ("first.log", "second.log")]
_SMALL.append(_as_json(_SMALL[1]))


def test_the_json_form_reads_as_the_tags_do() -> None:
    tags, as_json = tenhou_client.loads(_SMALL[1]), tenhou_client.loads(_SMALL[2])
    assert as_json.events == tags.events and as_json.meta == tags.meta


def _mangle(text: str, how: str, at: int, span: int, other: int) -> str:
    lines = text.splitlines(keepends=True)
    if not lines:
        return text
    i, j = at % len(lines), other % len(lines)
    if how == "cut":
        return text[:at % (len(text) + 1)]
    if how == "drop":
        return "".join(lines[:i] + lines[i + 1 + span % 3:])
    if how == "swap":
        lines[i], lines[j] = lines[j], lines[i]
        return "".join(lines)
    if how == "repeat":
        return "".join(lines[:i + 1] + lines[i:i + 1 + span % 3] + lines[i + 1:])
    line = lines[i]
    k = at % (len(line) + 1)
    if how == "delete":
        lines[i] = line[:k] + line[k + 1 + span % 12:]
    else:  # a character replaced by one of the tags' own
        lines[i] = line[:k] + '<>"/=, 0a9Z'[span % 11] + line[k + 1:]
    return "".join(lines)


@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(range(len(_SMALL))),
       st.lists(st.tuples(st.sampled_from(["cut", "drop", "swap", "repeat", "delete",
                                           "replace"]),
                          st.integers(0, 5000), st.integers(0, 40), st.integers(0, 5000)),
                min_size=1, max_size=4))
def test_a_mangled_transcript_is_read_or_refused_never_a_traceback(
        which: int, changes: list[tuple[str, int, int, int]]) -> None:
    text = _SMALL[which].replace("IDDEADBEAF-xxxxxxxx", ID)
    for how, at, span, other in changes:
        text = _mangle(text, how, at, span, other)
    try:
        loaded = formats.read(text.encode(), "fuzz.log")
    except RecordError as exc:
        assert ID not in str(exc)
        return
    if loaded.record is None or loaded.name != "tenhou_client":
        return
    rep = replayer.from_seat_record(loaded.record, None, "fuzz.log")
    summary = replayer.summarize(rep)
    timeline.build(loaded)
    assert ID not in json.dumps(summary, ensure_ascii=False)


def test_a_long_transcript_reads_in_linear_time() -> None:
    """Each Get: line asked whether any line after it held anything by slicing the rest of
    the file: a day's transcript (200k lines) took minutes, quadratic in its length; read
    once, the same lines take a second or two. Counted in the CPU seconds this process
    spent (``time.process_time``), not on the wall clock: a loaded machine that keeps the
    process off its cores does not make the read look quadratic."""
    import time

    text = WHOLE.read_text(encoding="utf-8") + "Get: <KA/>\n" * 200_000
    began = time.process_time()
    record = tenhou_client.loads(text)
    took = time.process_time() - began
    assert record.meta["received"] > 200_000
    assert took < 15, f"{took:.1f} s of CPU for 200k lines"



def test_an_unreadable_message_quoting_the_id_in_its_reason_does_not_show_it(
        capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """A message the codec cannot read because the ID stands where a number should (a
    line garbled into another, a server echoing the name) is an 'error:' notice: its raw
    text was masked, but the codec's reason quotes the bad value itself ("invalid literal
    for int() with base 10: 'ID...'") and went out as it was, in replay's text and JSON."""
    lines = FIRST.read_text(encoding="utf-8").replace("IDDEADBEAF-xxxxxxxx", ID).splitlines()
    at = next(i for i, line in enumerate(lines) if "<INIT" in line) + 1
    lines.insert(at, f'Get: <N who="1" m="{ID}"/> <DORA hai="{ID}"/>')
    path = tmp_path / "garbled.log"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    shown = mjbot_here(capsys, "replay", str(path))
    as_json = mjbot_here(capsys, "replay", str(path), "--json")
    assert shown.returncode == 0 and as_json.returncode == 0, shown.stderr
    assert "2 message(s) could not be read" in shown.stdout
    assert "malformed <N>" in as_json.stdout and "malformed <DORA>" in as_json.stdout
    for out in (shown.stdout, shown.stderr, as_json.stdout, as_json.stderr):
        assert "1A2B3C4D" not in out and "5E6F7A8B" not in out


def test_a_refusal_cut_inside_the_login_id_shows_none_of_it(
        capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """A client's log with a time before each line is no transcript: every format's reason
    is said, and the NTPU reader's quotes its first line cut at 60 characters, here inside
    the ID. Masked after the cut, the ID's first half ("ID1A2B3C4D-...") was shown whole,
    since neither the ID nor its shape matched what was left of it."""
    lines = FIRST.read_text(encoding="utf-8").replace("IDDEADBEAF-xxxxxxxx", ID).splitlines()
    stamped = tmp_path / "client.log"
    stamped.write_text("".join(f"2018-01-20 12:00:00.000 [debug] {line}\n" for line in lines),
                       encoding="utf-8")
    tried = mjbot_here(capsys, "replay", str(stamped))
    assert tried.returncode == 2 and "NTPU command log: " in tried.stderr
    assert '[debug] Send: <HELO name="***...' in tried.stderr
    assert ID[:4] not in tried.stderr and ID[:4] not in tried.stdout


def test_the_mjai_export_of_a_transcript_shows_the_hand_at_its_seat(
        capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """`replay --export mjai` of a transcript played from seat 3 wrote that seat's hand as
    seat 0's (the others `?`) with no `id`, so the file read back refused ('no start_game or
    start_kyoku'). Now the hand is at its seat, `id` names it, and the file reads back from
    that seat with the same start, no ID in it."""
    path = tmp_path / "mine.log"
    path.write_text(FIRST.read_text(encoding="utf-8").replace("IDDEADBEAF-xxxxxxxx", ID),
                    encoding="utf-8")
    out = tmp_path / "first.mjai"
    done = mjbot_here(capsys, "replay", str(path), "--export", "mjai", "-o", str(out))
    assert done.returncode == 0, done.stderr
    text = out.read_text(encoding="utf-8")
    assert ID not in text and "1A2B3C4D" not in text
    start_game, start_kyoku = (json.loads(line) for line in text.splitlines()[:2])
    assert start_game["type"] == "start_game" and start_game["id"] == 3
    original = replayer.summarize(replayer.load(path))["hands"][0]["hand"]
    tehais = start_kyoku["tehais"]
    assert all(t == "?" for t in tehais[0] + tehais[1] + tehais[2]) and "?" not in tehais[3]
    back = replayer.load(out)
    assert back.seat == 3
    assert replayer.summarize(back)["hands"][0]["hand"] == original == "78m369p306899s55z"


async def test_the_viewer_lists_a_transcript_in_a_folder(tmp_path: Path) -> None:
    """`mjbot view FOLDER` left a Tenhou client transcript in the folder out of its list (its
    first bytes, `Send:`, were not taken for a game's), so the list was empty; a transcript
    named on its own was listed. Both forms, tags and WebSocket JSON, are listed now."""
    from aiohttp.test_utils import TestClient, TestServer

    from adapter.serve.status import StatusServer

    folder = tmp_path / "captures"
    folder.mkdir()
    (folder / "tags.log").write_bytes(WHOLE.read_bytes())
    (folder / "json.log").write_text(_SMALL[2], encoding="utf-8")
    (folder / "notes.txt").write_text("Sent the logs to a friend.\n", encoding="utf-8")
    client = TestClient(TestServer(StatusServer(roots=[str(folder)], imports=[]).app()))
    await client.start_server()
    try:
        games = (await (await client.get("/api/games")).json())["games"]
        assert sorted(g["id"] for g in games) == ["0~json.log", "0~tags.log"]
        outline = await (await client.get("/api/games/0~tags.log")).json()
        assert outline["our_seat"] == 0 and outline["final_scores"] == [12100, 38300, 13800,
                                                                          35800]
    finally:
        await client.close()


def test_a_draw_that_paid_nobody_is_all_four_ready_where_the_dealer_keeps_the_deal() -> None:
    """An exhaustive draw that shows no hand and pays nothing had every seat ready or none,
    and was read as none either way ('tenpai []'). Tenhou's dealer keeps the deal after an
    exhaustive draw only when ready, so the next hand tells which: kokushi.log's E2-1 draw
    (ba="1,0", nothing paid) is followed by E3-2, the dealer not ready, none ready; the same
    capture with E2-2 next (the dealer kept the deal) reads all four ready. A draw the
    transcript ends at stays none."""
    lines = (TENHOU_CAPTURES / "kokushi.log").read_text(encoding="utf-8").splitlines()
    at = lines.index('Get: <RYUUKYOKU ba="1,0" sc="280,0,240,0,240,0,240,0" />')
    follow = lines[at + 2]
    assert follow.startswith('Get: <INIT seed="2,2,0,5,3,115"')

    def drawn(text: str) -> ev.RoundDrawn:
        record = tenhou_client.loads(text)
        draws = [e for e in record.events if isinstance(e, ev.RoundDrawn)]
        return draws[-1]

    moved = "\n".join(lines[:at + 3]) + "\n"
    assert drawn(moved) == ev.RoundDrawn("exhaustive", (0, 0, 0, 0), ())
    kept = "\n".join([*lines[:at + 2], follow.replace('seed="2,2,', 'seed="1,2,')]) + "\n"
    assert drawn(kept) == ev.RoundDrawn("exhaustive", (0, 0, 0, 0), (0, 1, 2, 3))
    ends = "\n".join(lines[:at + 1]) + "\n"
    assert drawn(ends) == ev.RoundDrawn("exhaustive", (0, 0, 0, 0), ())
