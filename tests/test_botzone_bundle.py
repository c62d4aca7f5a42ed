"""The Botzone upload bundle runs under a Python that has only numpy and MahjongGB, and plays
full matches there (keep running, as uploaded)."""

import subprocess

import pytest

from adapter.bench.botstart import bare_runtime
from adapter.fakes.botzone_judge import run_matches
from adapter.platforms.botzone_bundle import build_botzone_bundle


@pytest.fixture(scope="module")
def bare_python(tmp_path_factory):
    """A venv whose site-packages hold numpy and MahjongGB only (linked from ours)."""
    python = bare_runtime(tmp_path_factory.mktemp("botzone-runtime"))  # as bench botstart's
    probe = subprocess.run([python, "-c", "import numpy, MahjongGB\ntry:\n import structlog\n"
                            "except ImportError: print('bare')"], capture_output=True, text=True)
    assert probe.stdout.strip() == "bare", probe.stderr
    return str(python)


@pytest.fixture(scope="module")
def bundle(tmp_path_factory):
    """One upload zip, built as `mjbot botzone-bundle` builds it, for the tests that only read
    or run it (each built its own: ~0.3 s of compiling apiece)."""
    return build_botzone_bundle(tmp_path_factory.mktemp("bundle"))


def test_bundle_holds_main_and_plays_full_matches_in_a_bare_runtime(bundle, bare_python):
    import zipfile
    names = zipfile.ZipFile(bundle).namelist()
    assert "__main__.py" in names and "brain/data/shanten_tables/suit_ids.npy" in names
    assert not any(n.startswith("replay/") for n in names)
    one = subprocess.run([bare_python, str(bundle), "--no-keep-running"], input="1\n0 2 0\n\n",
                         capture_output=True, text=True, timeout=60)
    assert one.returncode == 0 and one.stdout.split("\n")[0] == "PASS", one.stderr
    summary = run_matches(2, ["keep"], seed=11, command=(bare_python, str(bundle)))
    assert summary["verdicts"] == {} and summary["unasked"] == {}
    assert sum(summary["outcomes"].values()) == 2


def test_the_bundle_refuses_a_limit_that_is_no_time_as_mjbot_botzone_does(bundle, bare_python):
    """The zip's own parser took '--later-time-limit -3' (every kept-running turn after the
    first then began past its deadline and was answered by fallback); it shares the options
    of `mjbot botzone` now, so the limit is a usage error naming it, in the bare runtime."""
    for option in ("--time-limit", "--later-time-limit"):
        done = subprocess.run([bare_python, str(bundle), option, "-3"], input="",
                              capture_output=True, text=True, timeout=60)
        assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
        assert f"argument {option}: seconds above 0 (at most 3600), not '-3'" in done.stderr


def test_bundle_ships_compiled_modules_that_the_bare_runtime_loads(bundle, bare_python):
    """zipimport compiles every .py at every start unless the zip holds module.pyc: each
    one-shot Botzone turn paid for that."""
    import zipfile

    from adapter.platforms.botzone_bundle import MODULES

    names = set(zipfile.ZipFile(bundle).namelist())
    sources = [m for m in MODULES if m.endswith(".py")]
    assert all(m + "c" in names for m in sources)
    modules = [m[:-3].replace("/", ".").removesuffix(".__init__") for m in sources]
    code = (f"import sys; sys.path.insert(0, {str(bundle)!r}); import importlib\n"
            f"for name in {modules!r}:\n"
            "    print(importlib.import_module(name).__file__)")
    out = subprocess.run([bare_python, "-I", "-c", code], capture_output=True, text=True,
                         timeout=60)
    assert out.returncode == 0, out.stderr
    files = out.stdout.split()
    assert len(files) == len(modules) and all(f.endswith(".pyc") for f in files), files


def test_bytecode_of_another_python_falls_back_to_the_sources(tmp_path, bundle, bare_python):
    """A Botzone Python of another version sees a foreign magic number and reads the .py."""
    import zipfile

    foreign = tmp_path / "foreign.zip"
    with zipfile.ZipFile(bundle) as src, zipfile.ZipFile(foreign, "w") as dst:
        for item in src.infolist():
            data = src.read(item)
            if item.filename.endswith(".pyc"):
                data = b"\x00\x00\r\n" + data[4:]
            dst.writestr(item, data)
    one = subprocess.run([bare_python, str(foreign), "--no-keep-running"], input="1\n0 2 0\n\n",
                         capture_output=True, text=True, timeout=60)
    assert one.returncode == 0 and one.stdout.split("\n")[0] == "PASS", one.stderr


def test_the_default_zip_told_to_play_mc_says_it_carries_no_opponent_models(
        bundle, bare_python, tmp_path):
    """Only an mc zip carries the opponent models (ef14e7c): the default zip told `--policy mc`
    (as every zip played it while all carried them) fell back at every decision, a note on
    stderr each turn, the answers rulebased's. It is refused in one line before a turn is
    read, saying how to build a zip that carries them. Started as Botzone starts it (no
    --policy), a zip whose mc reads no models still answers, by its fallback: an exit there
    would lose the game."""
    turn = ("3\n0 0 0\nPASS\n1 0 0 0 0 W1 W2 W3 B4 B5 B6 T7 T8 T9 F1 F1 J1 J3\nPASS\n"
            "2 W5\n\n")  # our draw: a decision mc is asked
    for policy in ("mc", "mc@playouts=2"):
        done = subprocess.run([bare_python, str(bundle), "--no-keep-running", "--policy",
                               policy], input=turn, capture_output=True, text=True, timeout=60)
        assert done.returncode == 2 and done.stdout == "", (done.stdout, done.stderr)
        assert done.stderr.count("\n") == 1 and "fallback" not in done.stderr, done.stderr
        assert f"argument --policy: {policy}: no opponent models for 'mcr'" in done.stderr
        assert "mjbot bundle botzone --policy mc" in done.stderr
    elsewhere = build_botzone_bundle(tmp_path, policy="mc",
                                     mc_options=f"models={tmp_path / 'none'}")
    done = subprocess.run([bare_python, str(elsewhere), "--no-keep-running"], input=turn,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and done.stdout.startswith("PLAY "), done.stderr


def test_a_zip_told_a_policy_it_cannot_play_says_what_is_wrong_in_one_line(
        bundle, bare_python, tmp_path):
    """The default zip told `--policy nn` (it carries no network), `nn@FILE`, `mc@` options
    mc refuses or a name no policy has ended its first turn in a traceback (a
    ModuleNotFoundError, mc's UnknownKey, a ValueError). Each is one line naming what is
    wrong and how to build the zip that plays it, exit 2, before a turn is read. An nn zip
    plays nn, and started as Botzone starts it (no --policy) the default zip still answers."""
    turn = ("3\n0 0 0\nPASS\n1 0 0 0 0 W1 W2 W3 B4 B5 B6 T7 T8 T9 F1 F1 J1 J3\nPASS\n"
            "2 W5\n\n")  # our draw: a decision the policy is asked

    def run(zip_path, *args):
        return subprocess.run([bare_python, str(zip_path), "--no-keep-running", "--no-log",
                               *args], input=turn, capture_output=True, text=True, timeout=60,
                              cwd=tmp_path)

    for policy, words in (
            ("nn", "nn: this zip carries no network (`mjbot bundle botzone --policy nn"),
            (f"nn@{tmp_path / 'gen1.npz'}", "this zip carries no network"),
            ("mc@bogus=1", "mc@bogus=1: unknown key 'bogus' in 'bogus=1'"),
            ("mc@playouts=many", "playouts needs an int, got 'many' (mc@ takes KEY=VALUE"),
            ("best", "best: no policy of that name (known: greedy, mc, nn, rulebased")):
        done = run(bundle, "--policy", policy)
        assert done.returncode == 2 and done.stdout == "", (policy, done.stdout, done.stderr)
        assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr, done.stderr
        assert f"mjbot-botzone: argument --policy: {policy}: " in done.stderr
        assert words in done.stderr, done.stderr
    assert run(bundle).stdout.startswith("PLAY ")
    network = build_botzone_bundle(tmp_path / "nn", policy="nn")
    assert run(network, "--policy", "nn").stdout.startswith("PLAY ")
    missing = run(network, "--policy", f"nn@{tmp_path / 'gen1.npz'}")
    assert missing.returncode == 2 and missing.stdout == "", missing.stderr
    assert f"no weights file at {tmp_path / 'gen1.npz'}" in missing.stderr


def test_a_python_without_numpy_or_mahjonggb_is_told_what_the_bot_needs(bundle):
    """A local test run under a Python that lacks them (-S: no site-packages at all) gets one
    line naming both and how to install them, not a ModuleNotFoundError traceback."""
    import sys

    done = subprocess.run([sys.executable, "-S", str(bundle), "--no-keep-running"],
                          input="1\n0 2 0\n\n", capture_output=True, text=True, timeout=60)
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
    assert "needs numpy and MahjongGB (pip install numpy PyMahjongGB)" in done.stderr


def test_a_python_older_than_3_10_is_told_so_in_one_line(bundle):
    """Botzone's \"Python 3\" is not said to be a given version, and the zip's sources need
    3.10 (a Python 3.9 with numpy and MahjongGB ended the turn in an ImportError traceback,
    typing.TypeGuard, found by hand). Now the zip says which Python it needs and which it got,
    in one line. The older Python is this one with its version_info set back: the zip's own
    __main__ reads it."""
    import sys

    older = ("import runpy, sys\nsys.version_info = (3, 9, 18, 'final', 0)\n"
             f"sys.argv = [{str(bundle)!r}, '--no-keep-running']\n"
             f"runpy.run_path({str(bundle)!r}, run_name='__main__')")
    done = subprocess.run([sys.executable, "-c", older], input="1\n0 2 0\n\n",
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 1 and done.stdout == "", done.stderr
    assert done.stderr == "mjbot: this bot needs Python 3.10 or later, not 3.9.18\n"


def test_mc_options_a_bundle_would_not_read_are_refused(tmp_path, capsys):
    """`--mc-options` become the bundled bot's MJBOT_MC, read by mc alone: a bundle of another
    policy took them (a typo included) and played that policy on Botzone without a word. A
    usage error names the bad key, or the missing --policy mc; no zip is written."""
    from tests.in_process import mjbot_here

    for options, policy, said in (("bogus=1", "mc", "unknown key 'bogus'"),
                                  ("seconds=1.5", "rulebased", "add --policy mc")):
        done = mjbot_here(capsys, "bundle", "botzone", "--policy", policy, "--mc-options",
                          options, "-o", str(tmp_path / policy))
        assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
        assert said in done.stderr and len(done.stderr.strip().splitlines()) == 1, done.stderr
        assert not (tmp_path / policy / "mjbot-botzone.zip").exists()
    done = mjbot_here(capsys, "bundle", "botzone", "--policy", "mc", "--mc-options",
                      "seconds=1.5", "-o", str(tmp_path / "mc"))
    assert done.returncode == 0 and (tmp_path / "mc" / "mjbot-botzone.zip").is_file()


def test_mc_options_naming_a_models_folder_of_this_machine_are_refused(tmp_path, capsys):
    """`mjbot bundle ... --policy mc --mc-options models=DIR` built a zip whose mc looked for
    its opponent models in DIR on the platform, where there is no DIR: it fell back at every
    decision there. Refused in one line pointing at --models DIR (which carries them in the
    zip), for both platforms; no zip is written. The bench, which builds its zip from
    MJBOT_MC and runs it here, still builds one with models=DIR."""
    from tests.in_process import mjbot_here

    folder = tmp_path / "models"
    folder.mkdir()
    for platform in ("botzone", "mjai"):
        out = tmp_path / platform
        done = mjbot_here(capsys, "bundle", platform, "--policy", "mc", "--mc-options",
                          f"playouts=2,models={folder}", "-o", str(out))
        assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
        assert len(done.stderr.strip().splitlines()) == 1, done.stderr
        assert f"models={folder} is a folder of this machine" in done.stderr
        assert f"give it as --models {folder}, which carries the models in the zip" \
            in done.stderr
        assert not out.exists() or not any(out.iterdir())
    built = build_botzone_bundle(tmp_path / "bench", policy="mc",
                                 mc_options=f"playouts=2,models={folder}")
    assert built.is_file()


def turn_modules(bare_python, bundle, *args):
    """The modules a one-shot turn of ``bundle`` imported, run as Botzone runs it (the zip as
    the script, a late-game request of the official judge's log on stdin)."""
    import json

    from adapter.bench.botzone import _history
    from tests.shared_data import BOTZONE_JUDGE_LOG  # ../shared's judge log, copied: a clone has it

    log = json.loads(BOTZONE_JUDGE_LOG.read_text())
    requests, responses = _history(log, "0")
    n = max(i for i, r in enumerate(requests) if r.startswith("2 ")) + 1  # our last draw
    lines = [str(n), *[x for i in range(n) for x in (requests[i], responses[i])][:2 * n - 1]]
    code = ("import runpy, sys\n"
            f"sys.argv = [{str(bundle)!r}, *{list(args)!r}]\n"
            "try:\n"
            f"    runpy.run_path({str(bundle)!r}, run_name='__main__')\n"
            "finally:\n"
            "    print(' '.join(sorted(sys.modules)), file=sys.stderr)\n")
    done = subprocess.run([bare_python, "-c", code], input="\n".join([*lines, "", ""]) + "\n",
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and done.stdout.startswith("PLAY "), done.stderr
    return set(done.stderr.split("\n")[-2].split())


def test_a_one_shot_turn_imports_no_zipfile_nor_pathlib(bundle, bare_python):
    """Every one-shot Botzone turn is a process start: the zip's turn imported zipfile (the
    shanten tables were an .npz inside the zip, and the bot imported it at its top for one
    exception type) and with it pathlib: 33 M of the 362 M instructions a turn spent beyond
    Python and numpy (valgrind). The tables now ride as .npy members read through the import
    system."""
    modules = turn_modules(bare_python, bundle, "--no-keep-running")
    assert "brain.shanten" in modules  # the turn did read the tables
    assert not {"zipfile", "pathlib"} & modules, {"zipfile", "pathlib"} & modules


def test_a_turn_started_as_botzone_starts_it_builds_no_option_parser(bundle, bare_python):
    """Botzone starts the zip with no options, every one-shot turn; building the option parser
    anyway (argparse, which imports shutil, bz2 and lzma to size its help) was 20 M of the
    ~325 M instructions such a turn spent beyond Python and numpy (valgrind). With no options
    the turn takes turn_defaults(), what the parser gives for none (checked below)."""
    modules = turn_modules(bare_python, bundle)
    assert "brain.shanten" in modules
    assert not {"argparse", "shutil"} & modules, {"argparse", "shutil"} & modules


def test_the_defaults_without_a_parser_are_the_parsers():
    import argparse

    from adapter.platforms.botzone_options import add_turn_options, turn_defaults

    for keep_running, policy in ((False, "rulebased"), (True, "mc")):
        parser = argparse.ArgumentParser()
        add_turn_options(parser, keep_running, policy)
        assert vars(parser.parse_args([])) == turn_defaults(keep_running, policy)


TABLES_CHECK = """
import sys
sys.path.insert(0, sys.argv[1])
import numpy as np
from brain import shanten_tables
tables = shanten_tables.load_tables()
with np.load(sys.argv[2]) as shipped:
    same = all(tables[k].dtype == shipped[k].dtype and tables[k].shape == shipped[k].shape
               and tables[k].tobytes() == shipped[k].tobytes() for k in shanten_tables.STORED)
print(shanten_tables.__file__.startswith(sys.argv[1]), same)
"""


def test_the_zips_tables_are_the_shipped_ones_and_a_damaged_member_is_one_line(
        bundle, bare_python, tmp_path):
    """The tables ride as one .npy per array, read through zipimport, which checks no CRC: a
    member missing or cut short was rebuilt without a word (seconds of every one-shot turn),
    and one of the right shape but other content (another build's, a flipped byte) was read
    as it was, a wrong shanten. Now the bundle carries their CRC-32, and a member that does
    not match it is one line on stderr; the tables come from the cache or a build."""
    import zipfile

    from brain.shanten_tables import SHIPPED

    env = {"HOME": str(tmp_path), "PATH": "/usr/bin:/bin"}  # no cache of ours: built, once
    intact = subprocess.run([bare_python, "-c", TABLES_CHECK, str(bundle), SHIPPED],
                            capture_output=True, text=True, timeout=60, env=env)
    assert intact.stdout.split() == ["True", "True"] and intact.stderr == "", intact.stderr
    member = "brain/data/shanten_tables/suit_ids.npy"
    for damage in ("missing", "cut short", "a flipped byte", "a damaged stream"):
        damaged = tmp_path / f"{damage}.zip"
        with zipfile.ZipFile(bundle) as zin, zipfile.ZipFile(damaged, "w") as zout:
            for info in zin.infolist():
                data = zin.read(info)
                if info.filename == member and damage == "missing":
                    continue
                if info.filename == member and damage != "a damaged stream":
                    data = data[:len(data) // 2] if damage == "cut short" else (
                        data[:-100] + bytes([data[-100] ^ 1]) + data[-99:])
                zout.writestr(info, data)
        if damage == "a damaged stream":  # the zip's deflated bytes, as a bad copy leaves them
            with zipfile.ZipFile(damaged) as zf:
                at = zf.getinfo(member).header_offset
            raw = bytearray(damaged.read_bytes())
            at += 30 + int.from_bytes(raw[at + 26:at + 28], "little") + int.from_bytes(
                raw[at + 28:at + 30], "little")  # past the local header: the member's data
            raw[at] ^= 0xFF
            damaged.write_bytes(bytes(raw))
        done = subprocess.run([bare_python, str(damaged), "--no-keep-running"],
                              input="1\n0 2 0\n\n", capture_output=True, text=True,
                              timeout=120, env=env)
        assert done.returncode == 0 and done.stdout.split("\n")[0] == "PASS", done.stderr
        lines = done.stderr.splitlines()
        assert len(lines) == 1 and "shanten tables" in lines[0] and "damaged" in lines[0], (
            damage, done.stderr)
        assert ("suit_ids.npy missing" in lines[0]) == (damage == "missing"), lines[0]
