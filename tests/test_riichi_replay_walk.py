"""A riichi player's replay walk-through on real records (tests/data/shared): what `mjbot
replay` and its exports say must be what the record says happened."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from protocols import events as ev
from replay.formats import mjai_log, mjlog, tenhou6
from tests.shared_data import DATA, MJAI_GAME

ROOT = Path(__file__).resolve().parent.parent


def _replay(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "adapter.cli", "replay", *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)

MJX = DATA / "tenhou" / "mjx_pairs"


def _wins(events: list[object]) -> list[ev.RoundWon]:
    return [e for e in events if isinstance(e, ev.RoundWon)]


@pytest.mark.parametrize("name", ["2010110100gm-00a9-0000-de3472e8.mjlog", "pao-tsumo.mjlog"])
def test_an_open_win_with_a_chi_keeps_its_han_through_an_mjai_export(name: str) -> None:
    """mjai writes a chi as ``pai`` 2m, ``consumed`` 3m 4m; kept in that order our rules saw no
    sequence, and a one-han open hand (E3: a pon of the round wind beside a chi of 234m;
    pao-tsumo E2: open 三色同順) read back at value 0 with no yaku. Every win must keep
    Tenhou's han."""
    record = mjlog.loads((MJX / name).read_text(encoding="utf-8"))
    again = mjai_log.loads(mjai_log.dumps(record))
    theirs, ours = _wins(record.events), _wins(again.events)
    assert [w.value for w in ours] == [w.value for w in theirs]
    assert all(w.yaku for w in ours)
    assert [w.deltas for w in ours] == [w.deltas for w in theirs]



def test_an_mjai_log_cut_inside_a_line_shows_the_hands_before_the_cut(tmp_path: Path) -> None:
    """README: a file cut short shows what came before the cut, mjai logs up to their last
    whole line. A real mjai game cut in the middle of a line was refused as no game log."""
    text = MJAI_GAME.read_text(encoding="utf-8")
    lines = text.splitlines()
    cut = tmp_path / "cut.mjai.jsonl"
    cut.write_text("\n".join(lines[:224]) + "\n" + lines[224][:35], encoding="utf-8")
    done = _replay(str(cut))
    assert done.returncode == 0, done.stderr
    assert "cut short: line 225 ends early" in done.stdout
    assert done.stdout.count("\n- E") == 3  # E1-0, E2-0 and the hand the cut falls in
    assert "unfinished" in done.stdout
    assert "Traceback" not in done.stderr
    # the cut note is the reader's: an export of the game does not write it into start_game
    exported = mjai_log.dumps(mjai_log.loads(cut.read_text(encoding="utf-8")))
    assert "cut" not in json.loads(exported.splitlines()[0])
    # read back, it is a whole file of a game with no end_game: that, not the first cut's note
    assert mjai_log.loads(exported).meta["cut"].startswith("no end_game: ")
    # a broken line in the middle is no cut: refused, one line for mjai among the tried
    broken = tmp_path / "broken.mjai.jsonl"
    broken.write_text("\n".join([*lines[:224], lines[224][:35], *lines[225:]]) + "\n",
                      encoding="utf-8")
    done = _replay(str(broken))
    assert done.returncode == 2
    assert "mjai JSONL: line 225 is not JSON" in done.stderr


@pytest.mark.parametrize("keep", [0.5, 0.99])
def test_a_cut_tenhou6_file_is_refused_in_one_line(tmp_path: Path, keep: float) -> None:
    """A tenhou.net/6 game cut short is one broken document (README); it was refused with
    nine lines, every format's refusal, the tenhou.net/6 one a bare JSON error, and a cut
    inside a name's UTF-8 bytes (99% of double_ron.json) was 'not UTF-8 text' for every
    format. Now: one line saying the file is cut short."""
    data = (DATA / "tenhou" / "convlog_tenhou6_json" / "double_ron.json").read_bytes()
    cut = tmp_path / "double_ron.json"
    cut.write_bytes(data[:int(len(data) * keep)])
    done = _replay(str(cut))
    assert done.returncode == 2
    assert done.stderr.strip().count("\n") == 0, done.stderr
    assert f"{cut}: tenhou.net/6 JSON cut short: the JSON ends at char" in done.stderr
    assert "Traceback" not in done.stderr



def test_a_game_cut_inside_a_hand_exports_to_tenhou6_and_reads_back_the_same() -> None:
    """A record cut short (an mjlog capture that stopped inside its third hand) exported to
    tenhou.net/6 wrote the unfinished hand with an empty result, which our own reader then
    refused with a misleading 'seat 1 calls ... where it should draw'. It reads back as the
    same moves, the last hand unfinished and no game end."""
    text = (DATA / "tenhou" / "dnovikoff_mjlog" / "example.xml").read_text(encoding="utf-8")
    record = mjlog.loads(text[:len(text) // 2])
    assert record.meta.get("cut") and not isinstance(record.events[-1], ev.GameEnded)
    again = tenhou6.loads(tenhou6.dumps(record))
    assert again.events[1:] == record.events[1:]
    assert len(again.hands()) == 3


def test_tenhous_all_noten_draw_is_an_exhaustive_draw() -> None:
    """Tenhou's logs write an exhaustive draw with nobody ready as ``["全員不聴"]`` (every seat
    ready: 全員聴牌), no deltas. It read as a draw of reason '全員不聴', which the mjai
    export wrote as ``"reason":"全員不聴"`` (no mjai reader knows it, and its tenpai flags
    were left out). One of our own games with Tenhou's word (tests/data/riichiwalk)."""
    path = Path(__file__).resolve().parent / "data" / "riichiwalk" / "all_noten_draw.tenhou6.json"
    text = path.read_text(encoding="utf-8")
    record = tenhou6.loads(text)
    draws = [e for e in record.events if isinstance(e, ev.RoundDrawn)]
    assert [(d.reason, d.tenpai) for d in draws] == [("exhaustive", ())]
    ryukyoku = [json.loads(x) for x in mjai_log.dumps(record).splitlines()
                if '"ryukyoku"' in x]
    assert ryukyoku[0].get("reason") is None
    assert ryukyoku[0]["tenpais"] == [False] * 4
    assert json.loads(tenhou6.dumps(record)) == json.loads(text)


def test_a_liable_seat_is_named_with_the_win_it_pays_for() -> None:
    """pao.xml, E2-1: seat 2's 大三元 by tsumo, all 32,300 paid by seat 0, who fed the third
    dragon set (Tenhou's paoWho). Replay showed the deltas and never why seat 0 paid alone."""
    done = _replay(str(DATA / "tenhou" / "dnovikoff_mjlog" / "pao.xml"))
    assert done.returncode == 0, done.stderr
    wins = [line for line in done.stdout.splitlines() if line.strip().startswith("WIN")]
    assert wins[-1].endswith("(役満8000-16000点)  pao: seat 0 liable")
    assert all("pao" not in line for line in wins[:-1])
    data = json.loads(_replay(str(DATA / "tenhou" / "dnovikoff_mjlog" / "pao.xml"),
                              "--json").stdout)
    last = data["summary"]["hands"][-1]["results"][-1]
    assert (last["pao"], last["deltas"]) == (0, [-32300, 0, 32300, 0])


def test_the_riichi_sticks_a_hand_starts_with_are_shown() -> None:
    """bye.xml, E2-1: one riichi stick left by the drawn hand before, and seat 1's dealer
    mangan is paid 13,300 (12,000, 300 for the honba, 1,000 for the stick). Replay showed the
    honba in 'E2-1' but never the stick, so the 1,000 could not be told from the deltas."""
    path = str(DATA / "tenhou" / "dnovikoff_mjlog" / "bye.xml")
    done = _replay(path)
    heads = [line for line in done.stdout.splitlines() if line.startswith("- ")]
    assert heads[2] == "- E2-1 dealer 1  sticks 1  scores [18000, 24000, 36000, 21000]"
    assert heads[0] == "- E1-0 dealer 0  scores [25000, 25000, 25000, 25000]"  # none: no word
    hands = json.loads(_replay(path, "--json").stdout)["summary"]["hands"]
    assert [h["sticks"] for h in hands] == [0, 0, 1, 0, 2, 2, 0]
    assert hands[2]["results"][0]["deltas"] == [0, 13300, 0, -12300]


def test_a_tenhou6_file_of_one_object_per_line_cut_short_shows_its_whole_lines(
        tmp_path: Path) -> None:
    """mjx writes tenhou.net/6 as one object per line, one hand each: no one document, so a
    cut in its third line leaves two whole hands to read, as an mjai log cut inside a line
    does (README). It was refused whole as 'one document: nothing before the cut can be
    read'. Shown with a cut note and no game end; an export does not write the note, and a
    cut in the first line is still refused in one line."""
    data = (MJX / "2010110100gm-00a9-0000-de3472e8.tenhou6.json").read_text(encoding="utf-8")
    lines = data.splitlines()
    cut = tmp_path / "cut.tenhou6.json"
    cut.write_text("\n".join(lines[:2]) + "\n" + lines[2][:300], encoding="utf-8")
    done = _replay(str(cut))
    assert done.returncode == 0, done.stderr
    assert "the file is cut short: line 3 ends early" in done.stdout
    assert done.stdout.count("\n- E") == 2 and "final scores" not in done.stdout
    record = tenhou6.loads(cut.read_text(encoding="utf-8"))
    whole = tenhou6.loads(data)
    assert record.events == whole.events[:len(record.events)]
    assert not isinstance(record.events[-1], ev.GameEnded)
    exported = tenhou6.dumps(record)
    assert all("cut" not in json.loads(x) for x in exported.splitlines())
    # the moves read back (tenhou.net/6 has no word for a game cut between two hands, so
    # the export reads back as a game that ended there)
    assert tenhou6.loads(exported).events[:len(record.events)] == record.events
    cut.write_text(lines[0][:300], encoding="utf-8")
    first = _replay(str(cut))
    assert first.returncode == 2 and "tenhou.net/6 JSON cut short" in first.stderr


def test_an_mjai_log_cut_at_the_end_of_a_line_says_it_is_cut(tmp_path: Path) -> None:
    """A log whose writer stopped between two lines (the usual cut: lines are written whole)
    has no broken line, and read as a game that ended there: no note, between two hands not
    even 'unfinished', and dataset import ranked it. The end_game a game log closes with is
    missing: that is the note. A whole log has none; a kyoku without a start_game (a
    snippet, not a game's log) needs none."""
    lines = MJAI_GAME.read_text(encoding="utf-8").splitlines()
    first_end = next(n for n, x in enumerate(lines) if '"end_kyoku"' in x)
    cut = tmp_path / "cut.mjai.jsonl"
    cut.write_text("\n".join(lines[:first_end + 1]) + "\n", encoding="utf-8")
    done = _replay(str(cut))
    assert done.returncode == 0, done.stderr
    assert f"the file is cut short: no end_game: the log ends at line {first_end + 1}" \
        in done.stdout
    assert "final scores" not in done.stdout
    assert mjai_log.loads(MJAI_GAME.read_text(encoding="utf-8")).meta.get("cut") is None
    snippet = "\n".join(lines[1:first_end + 1])
    assert mjai_log.loads(snippet).meta.get("cut") is None
