"""`mjbot league`: a round-robin of duplicate arenas, run as the user runs it (a subprocess)
where the process is part of what is checked (a signal, a reader gone); the runs about
--out's files and the figures call its entry point in this process."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from adapter.commands.league import arena_file, difference, pairings
from tests.in_process import mjbot_here
from tests.serve_helpers import free_port
from tests.serve_helpers import mjbot as _mjbot
from tests.stop_helpers import stop_by_signal, stopped_by_deadline

MEMBERS = "rulebased,greedy,style:closed"


def test_pairings_once_per_pair_or_both_ways():
    assert pairings(["a", "b", "c"], False) == [("a", "b"), ("a", "c"), ("b", "c")]
    assert pairings(["a", "b"], True) == [("a", "b"), ("b", "a")]


def test_league_writes_the_table_and_every_pair(tmp_path, capsys):
    out = tmp_path / "league.json"
    r = mjbot_here(capsys, "league", "--members", MEMBERS, "--hands", "30", "--seed", "4",
                   "--json", str(out), "--workers", "2")
    assert r.returncode == 0, r.stderr
    assert "Traceback" not in r.stderr
    data = json.loads(out.read_text())
    assert set(data["arenas"]) == {"rulebased vs 3x greedy", "rulebased vs 3x style:closed",
                                   "greedy vs 3x style:closed"}
    members = MEMBERS.split(",")
    for hero, field in pairings(members, False):
        arena = data["arenas"][f"{hero} vs 3x {field}"]
        assert arena["policies_seated"] == [hero, field, field, field]
        assert arena["units"] >= 2 and arena["referee_errors"] == 0
        cell, back = data["table"][hero][field], data["table"][field][hero]
        value, ci = difference(arena, hero, field)
        assert cell["points_per_hand"] == value and cell["ci95"] == ci
        assert back["points_per_hand"] == -value
        assert ci[0] is not None and ci[1] is not None and ci[0] <= value <= ci[1]
        assert 1.0 <= cell["avg_rank"] <= 4.0 and 1.0 <= back["avg_rank"] <= 4.0
        assert cell["seats"] == 1 and back["seats"] == 3
    assert set(data["fallbacks"]) == set(members)
    assert all(f["decisions"] > 0 and f["fallbacks"] == 0 for f in data["fallbacks"].values())
    # the printed table: a row per member, every cell with its interval, then the ranks
    text = r.stdout.split("league riichi: row minus column")[1]
    assert "average rank" in text
    for m in members:
        row = next(line for line in text.splitlines() if line.startswith(m + " "))
        assert row.count("[") == len(members) - 1
        # the mean column is in the JSON too (it was only printed)
        others = [data["table"][m][o]["points_per_hand"] for o in members if o != m]
        assert data["means"][m] == sum(others) / len(others)
        assert row.split()[-1] == f"{data['means'][m]:+z.1f}"


def test_league_both_ways_and_resume_from_out(tmp_path, capsys):
    out = tmp_path / "arenas"
    args = ("league", "--variant", "taiwan16", "--members", "rulebased,style:value",
            "--hands", "8", "--seed", "2", "--both", "--out", str(out))
    first = mjbot_here(capsys, *args, "--json", str(tmp_path / "a.json"))
    assert first.returncode == 0, first.stderr
    files = sorted(out.glob("*.json"))
    assert len(files) == 2
    data = json.loads((tmp_path / "a.json").read_text())
    assert data["arenas_played"] == 2
    assert data["table"]["style:value"]["rulebased"]["arena"] == "style:value vs 3x rulebased"
    assert "avg_rank" in data["table"]["rulebased"]["style:value"]  # None: taiwan16 is unranked
    stamps = [f.stat().st_mtime_ns for f in files]
    again = mjbot_here(capsys, *args, "--json", str(tmp_path / "b.json"))
    assert again.returncode == 0, again.stderr
    assert again.stdout.count("kept from --out") == 2
    assert [f.stat().st_mtime_ns for f in files] == stamps
    kept = json.loads((tmp_path / "b.json").read_text())
    assert kept["arenas_played"] == 0 and kept["table"] == data["table"]
    # other options must not reuse those arenas
    other = mjbot_here(capsys, *[("16" if a == "8" else a) for a in args])
    assert other.returncode == 2
    assert "played with other options (hands 8 (now 16))" in other.stderr
    assert "Traceback" not in other.stderr


def test_an_arena_kept_in_out_is_not_reused_once_its_weights_file_changed(tmp_path, capsys):
    """The seat's name, nn@FILE, stays the same when the file is retrained in place: the
    kept figure would then belong to other weights."""
    import shutil

    weights = tmp_path / "mine.npz"
    shutil.copy("brain/data/nn_riichi_gen3.npz", weights)
    args = ("league", "--members", f"rulebased,nn@{weights}", "--hands", "4", "--seed", "3",
            "--out", str(tmp_path / "arenas"))
    assert mjbot_here(capsys, *args).returncode == 0
    again = mjbot_here(capsys, *args)
    assert again.returncode == 0 and "kept from --out" in again.stdout, again.stderr
    shutil.copy("brain/data/nn_riichi_gen4.npz", weights)
    changed = mjbot_here(capsys, *args)
    assert changed.returncode == 2 and "Traceback" not in changed.stderr
    assert "played with other options (weights_sha256" in changed.stderr


def test_a_damaged_arena_file_is_named_with_the_stale_ones(tmp_path, capsys):
    """A kept file that is no arena file (damaged, or hand-edited) was refused at once, alone,
    though the rest were stale too: its author removed it, reran, and was refused again on
    the others. Every file this league cannot reuse is named in the one line."""
    out = tmp_path / "arenas"
    args = ("league", "--members", "rulebased,greedy,tsumogiri", "--seed", "3", "--workers",
            "1", "--out", str(out), "--hands")
    assert mjbot_here(capsys, *args, "4").returncode == 0
    damaged = arena_file(out, "rulebased", "greedy")
    damaged.write_text("{bad")
    r = mjbot_here(capsys, *args, "5")  # the others are stale
    assert r.returncode == 2 and "Traceback" not in r.stderr and r.stdout == "", r.stderr
    (line,) = r.stderr.strip().splitlines()
    assert line.startswith("mjbot league: 3 arenas kept in --out cannot be reused: "), line
    assert f"{damaged}: not a league arena file (" in line
    for hero, field in (("rulebased", "tsumogiri"), ("greedy", "tsumogiri")):
        assert f"{arena_file(out, hero, field)}: played with other options (hands 4" in line


def test_league_refuses_bad_members_in_one_line(tmp_path, monkeypatch, capsys):
    """The command's entry point in this process (a refusal starts no game, so four Python
    starts bought nothing: 2 s of the file); an exception escaping it fails the test, as a
    traceback would."""
    monkeypatch.chdir(tmp_path)
    for members, words in (("rulebased", "two or more"), ("rulebased,nope", "unknown policy"),
                           ("greedy,greedy", "more than once"),
                           ("rulebased,botzone:./x", "plays mcr, not riichi")):
        r = mjbot_here(capsys, "league", "--members", members, "--hands", "4")
        code, out, err = r.returncode, r.stdout, r.stderr
        assert code == 2, (members, out)
        assert "Traceback" not in err and len(err.strip().splitlines()) == 1
        assert words in err, err


def test_a_listening_member_seated_three_times_is_refused_before_any_game(capsys):
    """An mjai-tcp member listens at one address for one bot; as the field of an arena (A
    against three B) the league seated it three times there, and the run waited
    --connect-wait for a second client (which a client run in a loop never is) and ended
    with 'no mjai client connected'. It is refused in one line before anything listens,
    saying where it may sit; as the first member, without --both, it is only ever the one
    seat (its arenas then wait for its bot as an arena does)."""
    address = f"127.0.0.1:{free_port()}"
    for members, both in ((f"rulebased,mjai-tcp:{address}", []),
                          (f"t=mjai-tcp:{address},rulebased", ["--both"])):
        r = mjbot_here(capsys, "league", "--members", members, "--hands", "4",
                       "--connect-wait", "0.5", *both)
        assert r.returncode == 2, (members, r.stdout, r.stderr)
        assert "Traceback" not in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr
        assert "three seats" in r.stderr and "first" in r.stderr, r.stderr
        assert "waiting for an mjai client" not in r.stderr
    r = mjbot_here(capsys, "league", "--members", f"mjai-tcp:{address},rulebased", "--hands",
                   "4", "--connect-wait", "0.5")
    assert r.returncode == 1 and "no mjai client connected" in r.stderr, r.stderr


# ---------------------------------------------------------------------- stopped early

_LONG = ["league", "--members", MEMBERS, "--hands", "400000", "--seed", "4", "--workers", "2"]


def test_stop_after_plays_no_more_arenas_and_keeps_no_cut_one(tmp_path):
    out, figures = tmp_path / "arenas", tmp_path / "l.json"
    r = stopped_by_deadline(lambda seconds: _mjbot(
        *_LONG, "--stop-after", f"{seconds:g}", "--out", str(out), "--json", str(figures)))
    assert r.returncode == 0, r.stderr
    data = json.loads(figures.read_text())
    assert data["stopped"] == {"reason": "time", "arena": "rulebased vs 3x greedy",
                               "not_played": ["rulebased vs 3x style:closed",
                                              "greedy vs 3x style:closed"]}
    cut = data["arenas"]["rulebased vs 3x greedy"]
    assert 1 <= cut["stopped"]["units_done"] < cut["stopped"]["units_planned"]
    assert data["table"]["rulebased"]["greedy"]["points_per_hand"] == difference(
        cut, "rulebased", "greedy")[0]
    assert set(data["table"]["style:closed"]) == set() and "style:closed" not in data[
        "table"]["greedy"]
    assert list(out.iterdir()) == []  # a cut arena is not kept: a rerun plays it whole
    assert "stopped early: the first" in r.stdout and "not played" in r.stdout
    assert "2 arena(s) not played, rulebased vs 3x greedy cut short" in r.stdout


def test_arenas_kept_in_out_count_after_the_deadline(tmp_path, capsys):
    out = tmp_path / "arenas"
    args = ["league", "--variant", "taiwan16", "--members", "rulebased,style:value",
            "--seed", "2", "--both", "--out", str(out)]
    assert mjbot_here(capsys, *args, "--hands", "8").returncode == 0
    again = mjbot_here(capsys, *args, "--hands", "8", "--stop-after", "0.001", "--json",
                   str(tmp_path / "a.json"))
    assert again.returncode == 0, again.stderr
    assert "stopped" not in json.loads((tmp_path / "a.json").read_text())  # nothing to play
    # as a long league left them: the first pair's arena missing, the second one kept
    first, second = (arena_file(out, "rulebased", "style:value"),
                     arena_file(out, "style:value", "rulebased"))
    first.unlink()
    kept = json.loads(second.read_text())
    kept["league"]["hands"] = 400000
    second.write_text(json.dumps(kept))
    # one worker plays a wall set to its end once it started it, and the league starts one
    # at once here (the first arena, its file gone, is the only one to play): 2 s, not 6,
    # cut the arena after its first wall set however loaded the machine (a pool's cut
    # abandons the units under way, and test_stop_after_plays_... keeps its 6 s)
    cut = mjbot_here(capsys, *args, "--hands", "400000", "--stop-after", "2", "--json",
                     str(tmp_path / "b.json"))
    assert cut.returncode == 0, cut.stderr
    data = json.loads((tmp_path / "b.json").read_text())
    assert data["stopped"] == {"reason": "time", "arena": "rulebased vs 3x style:value",
                               "not_played": []}
    assert data["arenas_kept"] == 1 and data["arenas_played"] == 1
    assert data["arenas"]["style:value vs 3x rulebased"] == kept["arena"]
    assert data["table"]["style:value"]["rulebased"]["arena"] == "style:value vs 3x rulebased"
    assert "a rerun with the same --out plays what is missing" in cut.stdout
    assert sorted(out.iterdir()) == [second]


def test_sigterm_stops_a_league_with_its_table_so_far(tmp_path):
    figures = tmp_path / "l.json"
    status, stdout = stop_by_signal([*_LONG, "--json", str(figures)], signal.SIGTERM, after=6)
    assert status == 128 + signal.SIGTERM
    data = json.loads(figures.read_text())
    assert data["stopped"]["reason"] == "SIGTERM"
    assert data["stopped"]["arena"] == "rulebased vs 3x greedy"
    assert data["arenas"]["rulebased vs 3x greedy"]["stopped"]["reason"] == "SIGTERM"
    assert "stopped early (SIGTERM)" in stdout


def test_a_reader_that_stops_early_does_not_cost_the_json_file(tmp_path):
    """`mjbot league ... --json FILE | head`: the table was printed first, the reader had
    gone, and the broken pipe ended the command (141) before FILE was written: the league's
    figures were lost. FILE is written first now, as arena does (commands.report)."""
    out = tmp_path / "league.json"
    root = Path(__file__).resolve().parent.parent
    proc = subprocess.Popen([sys.executable, "-m", "adapter.cli", "league", "--members",
                             "rulebased,greedy", "--hands", "8", "--seed", "3", "--json",
                             str(out)], cwd=root,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()  # the reader is gone before the arena's line and the table
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=120) == 141, err
    assert "Traceback" not in err
    data = json.loads(out.read_text())
    assert set(data["arenas"]) == {"rulebased vs 3x greedy"}
    assert set(data["means"]) == {"rulebased", "greedy"}


def test_an_outside_members_faults_are_printed_and_pooled_over_its_arenas(tmp_path, capsys):
    """A league printed nothing of an outside program's late, crashed, garbage and illegal
    answers: the arena's line per program was left out of the league's text and JSON, so a
    bot that printed a debug line on stdout in every game (garbage, its answer still played,
    so no fallback) looked clean. The league now prints the arena's line for each outside
    member, its counts pooled over the arenas it played, and keeps them under
    ``external_seats``."""
    from tests.test_external_seats import MJAI_CHATTY

    bot = tmp_path / "chatty.py"
    bot.write_text(MJAI_CHATTY)
    out = tmp_path / "league.json"
    r = mjbot_here(capsys, "league", "--members",
                   f"chatty=mjai:{sys.executable} {bot} buffered,rulebased,greedy",
                   "--hands", "4", "--seed", "3", "--json", str(out), "--seat-limit", "30")
    assert r.returncode == 0, r.stderr
    data = json.loads(out.read_text())
    arenas = [a for a in data["arenas"].values() if "chatty" in a["external_seats"]]
    assert len(arenas) == 2  # chatty against three rulebased, and against three greedy
    garbage = sum(a["external_seats"]["chatty"]["garbage"] for a in arenas)
    assert garbage == sum(a["games"] for a in arenas)  # the debug line, once a game
    pooled = data["external_seats"]
    assert set(pooled) == {"chatty"}
    assert pooled["chatty"]["garbage"] == garbage and pooled["chatty"]["illegal"] == 0
    assert pooled["chatty"]["first_fault"].startswith("garbage")
    assert (f"chatty (outside program): late 0, crashed 0, garbage {garbage}, illegal 0, "
            "restarts 0; first: garbage") in r.stdout


def test_an_arena_kept_in_out_is_not_reused_once_its_outside_program_changed(tmp_path, capsys):
    """An outside member is named by its command, which stays the same when its author
    edits the program: a rerun with the same --out printed the old program's figures as
    'kept from --out'. The files its command names are now part of the options kept with
    the arena, so an edited program is refused as other options are.

    Every arena the program sits in is refused at once, before a game is played: the first
    alone was named, so its author removed that file, reran, and was refused on the next."""
    from tests.test_external_seats import MJAI_CHATTY

    bot = tmp_path / "bot.py"
    bot.write_text(MJAI_CHATTY)
    seat = f"mine=mjai:{sys.executable} {bot} buffered"
    out = tmp_path / "arenas"
    args = ("league", "--members", f"{seat},rulebased,greedy", "--hands", "4", "--seed", "3",
            "--out", str(out))
    assert mjbot_here(capsys, *args).returncode == 0
    again = mjbot_here(capsys, *args)
    assert again.returncode == 0 and "kept from --out" in again.stdout, again.stderr
    bot.write_text(MJAI_CHATTY + "# a better bot\n")
    kept = {p: p.stat().st_mtime_ns for p in out.iterdir()}
    changed = mjbot_here(capsys, *args)
    assert changed.returncode == 2 and "Traceback" not in changed.stderr
    (line,) = changed.stderr.strip().splitlines()
    assert line.startswith("mjbot league: 2 arenas kept in --out cannot be reused: "), line
    for field in ("rulebased", "greedy"):
        assert f"{arena_file(out, seat, field)}: played with other options (programs_sha256" \
            in line, line
    assert line.endswith("; remove them to play those arenas again, or use another --out")
    assert str(arena_file(out, "rulebased", "greedy")) not in line  # still good: kept
    assert changed.stdout == "" and {p: p.stat().st_mtime_ns for p in out.iterdir()} == kept


UNREADABLE = Path("/proc/sys/vm/compact_memory")  # write-only, even for root


@pytest.mark.skipif(not UNREADABLE.is_file(), reason="no write-only sysctl file here")
def test_a_file_its_command_names_that_cannot_be_read_is_no_traceback(tmp_path, capsys):
    """An outside member whose command names a file this user can run but not read (an
    execute-only binary) ended the league in a PermissionError traceback before its first
    game, --out or not: the file was hashed to tell an edited program. Such a file is now
    told by its size and modification time; the league plays and its arena is kept."""
    from tests.test_external_seats import MJAI_CHATTY

    bot = tmp_path / "bot.py"
    bot.write_text(MJAI_CHATTY)
    args = ("league", "--members",
            f"mine=mjai:{sys.executable} {bot} buffered {UNREADABLE},rulebased",
            "--hands", "4", "--seed", "3", "--out", str(tmp_path / "arenas"))
    first = mjbot_here(capsys, *args)
    assert first.returncode == 0 and "Traceback" not in first.stderr, first.stderr
    again = mjbot_here(capsys, *args)
    assert again.returncode == 0 and "kept from --out" in again.stdout, again.stderr


def test_a_program_found_on_path_is_told_when_it_changed(tmp_path, capsys, monkeypatch):
    """An outside member started by a bare name (``mjai:mybot``: a bot installed on PATH,
    e.g. a compiled one) was looked for in the current folder, where it is not, so after its
    author rebuilt it a rerun with the same --out printed the old program's figures as kept.
    The program is now found as it is started, on PATH, and its bytes are in the options."""
    from tests.test_external_seats import MJAI_CHATTY

    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    bot = bin_dir / "mybot"
    bot.write_text(f"#!{sys.executable}\n" + MJAI_CHATTY)
    bot.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}:{os.environ.get('PATH', '')}")
    monkeypatch.chdir(tmp_path)
    args = ("league", "--members", "mine=mjai:mybot buffered,rulebased", "--hands", "4",
            "--seed", "3", "--out", str(tmp_path / "arenas"))
    assert mjbot_here(capsys, *args).returncode == 0
    bot.write_text(f"#!{sys.executable}\n" + MJAI_CHATTY + "# a better bot\n")
    changed = mjbot_here(capsys, *args)
    assert changed.returncode == 2 and "Traceback" not in changed.stderr, changed.stderr
    assert "played with other options (programs_sha256" in changed.stderr, changed.stderr


def test_an_older_mjbots_arena_with_an_outside_program_says_why_it_is_not_kept(
        tmp_path, capsys, monkeypatch):
    """A league --out an mjbot before f75ae3f wrote (tests/data/upgrade/league_63b119a: no
    hash of the outside program), rerun with the same command after an upgrade: the arena
    without the program is kept; the one with it was refused as 'played with other options
    (programs_sha256 None (now {...}))', though no option changed. It is refused in one line
    that says why: that mjbot kept no hash, so an edit since cannot be told. (The arena
    without the program is not named, and, every kept file read before a game is played,
    nothing is printed or played before the refusal.)"""
    root = Path(__file__).resolve().parent.parent
    monkeypatch.chdir(root)  # the command names the program relative to the checkout
    out = tmp_path / "arenas"
    shutil.copytree(root / "tests" / "data" / "upgrade" / "league_63b119a", out)
    bot = "bot=mjai:python3 tests/mjai_tsumogiri.py --policy=tsumogiri"
    r = mjbot_here(capsys, "league", "--variant", "riichi", "--members",
                   f"rulebased,greedy,{bot}", "--hands", "4", "--seed", "5", "--workers", "1",
                   "--out", str(out))
    assert r.returncode == 2 and "Traceback" not in r.stderr, r.stderr
    assert r.stdout == "", r.stdout
    (line,) = r.stderr.strip().splitlines()
    assert line == (f"mjbot league: {out}/rulebased-1ee0855a--vs-3x--bot-c32cfbcf.json: "
                    "played by an older mjbot, which kept no hash of the outside program "
                    f"({bot}): whether it was edited since cannot be told; remove the file "
                    "to play that arena again, or use another --out"), line


def test_arenas_an_older_mjbot_kept_with_a_length_their_variant_ignores_are_kept(
        tmp_path, capsys):
    """An mjbot before 406c4c8 took `league --variant mcr --length south` and kept its
    arenas in --out with length "south" (mcr games all the same). That --length is now
    refused, and without it each kept arena was refused as 'played with other options
    (length 'south' (now 'east'))': no command reused them. A variant whose game has a set
    length is not compared on it; a riichi league still is."""
    out = tmp_path / "arenas"
    args = ("league", "--variant", "mcr", "--members", "rulebased,greedy", "--hands", "2",
            "--seed", "2", "--out", str(out))
    assert mjbot_here(capsys, *args).returncode == 0
    (kept,) = out.glob("*.json")
    data = json.loads(kept.read_text())
    assert data["league"]["length"] == "east"
    data["league"]["length"] = "south"  # as `--length south` was kept
    kept.write_text(json.dumps(data, indent=2) + "\n")
    again = mjbot_here(capsys, *args)
    assert again.returncode == 0, again.stderr
    assert again.stdout.count("kept from --out") == 1
    riichi = ("league", "--members", "greedy,tsumogiri", "--hands", "1", "--out",
              str(tmp_path / "riichi"))
    assert mjbot_here(capsys, *riichi).returncode == 0
    (kept,) = (tmp_path / "riichi").glob("*.json")
    data = json.loads(kept.read_text())
    data["league"]["length"] = "south"
    kept.write_text(json.dumps(data, indent=2) + "\n")
    other = mjbot_here(capsys, *riichi)
    assert other.returncode == 2 and "length 'south' (now 'east')" in other.stderr, other.stderr
