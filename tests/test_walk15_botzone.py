"""A Botzone competitor's walk through the README (walk15): what such a user met, fixed."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from adapter.platforms.botzone import KEEP_RUNNING
from adapter.platforms.botzone_bundle import ROOT, build_botzone_bundle
from adapter.platforms.mjai_bundle import build_mjai_bundle
from tests.in_process import mjbot_here
from tests.test_botzone_bundle import bare_python  # noqa: F401  (the fixture)

DATA = ROOT / "brain/data"


def _renamed(folder: Path, source: str, name: str) -> Path:
    folder.mkdir()
    shutil.copyfile(DATA / source, folder / name)
    return folder


def test_an_mc_bundle_refuses_another_variants_models(tmp_path: Path) -> None:
    """`--models DIR` whose opponents_mcr.npz holds riichi models (renamed) built a zip whose
    every mc decision fell back on Botzone (`mc raised MissingModels`); it is refused when
    built, as a network of another variant is."""
    riichi = _renamed(tmp_path / "r", "opponents_riichi.npz", "opponents_mcr.npz")
    with pytest.raises(FileNotFoundError, match="holds 'riichi' models, not 'mcr'"):
        build_botzone_bundle(tmp_path / "a", policy="mc", models_dir=riichi)
    mcr = _renamed(tmp_path / "m", "opponents_mcr.npz", "opponents_riichi.npz")
    with pytest.raises(FileNotFoundError, match="holds 'mcr' models, not 'riichi'"):
        build_mjai_bundle(tmp_path / "b", policy="mc", models_dir=mcr)
    network = _renamed(tmp_path / "n", "nn_mcr.npz", "opponents_mcr.npz")
    with pytest.raises(FileNotFoundError, match="not opponent models"):
        build_botzone_bundle(tmp_path / "c", policy="mc", models_dir=network)


def test_the_bundle_command_says_so_in_one_line(tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    riichi = _renamed(tmp_path / "r", "opponents_riichi.npz", "opponents_mcr.npz")
    done = mjbot_here(capsys, "bundle", "botzone", "--policy", "mc", "--models", str(riichi),
                      "-o", str(tmp_path / "out"))
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert done.stderr.strip().splitlines() == [
        f"mjbot bundle: an mc bundle needs the MCR opponent models: {riichi}/opponents_mcr.npz "
        "holds 'riichi' models, not 'mcr'"]
    assert not (tmp_path / "out" / "mjbot-botzone.zip").exists()


def test_a_kept_running_bot_reads_a_pretty_printed_json_first_turn() -> None:
    """A JSON turn written over several lines (a test file pretty-printed by hand) piped to the
    kept-running bot, as the upload zip runs by default: its first line alone, ``{``, was
    taken for the turn (`bad input: JSON input does not parse`, PASS, the process ended),
    where the one-shot bot read the same file. Read whole now, and the later turns after it."""
    first = {"requests": ["0 1 1", "1 0 0 0 0 B9 W4 W6 W5 T2 T9 T4 W1 T1 B8 B1 F1 W4",
                          "3 0 DRAW", "3 0 PLAY B4", "2 W2"],
             "responses": ["PASS"] * 4, "data": "", "globaldata": ""}
    text = json.dumps(first, indent=1) + '\n"3 1 PLAY F1"\n3 2 DRAW\n'
    done = subprocess.run([sys.executable, "-m", "adapter.platforms.botzone_main",
                           "--keep-running", "--no-log"], input=text, capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0 and done.stderr == "", done.stderr
    turns = done.stdout.split(KEEP_RUNNING + "\n")
    assert len(turns) == 4 and turns[-1] == "", done.stdout
    answers = [json.loads(turn) for turn in turns[:-1]]
    assert answers[0]["response"].startswith("PLAY ") and answers[0]["debug"] == ""
    assert [a["response"] for a in answers[1:]] == ["PASS", "PASS"]


def test_the_zip_says_it_writes_no_log_where_one_is_asked_for(
        tmp_path: Path, bare_python: str) -> None:  # noqa: F811
    """The upload zip run locally with --log-dir (in Botzone's runtime: numpy and MahjongGB)
    wrote no log and said nothing; it says so once now, and still nothing where no log was
    asked for, as Botzone runs it."""
    bundle = build_botzone_bundle(tmp_path / "dist")
    asked = subprocess.run([bare_python, str(bundle), "--no-keep-running", "--log-dir",
                            str(tmp_path / "logs")], input="1\n0 1 1\n\n\n",
                           capture_output=True, text=True, timeout=60)
    assert asked.returncode == 0 and asked.stdout.split("\n")[0] == "PASS", asked.stderr
    assert asked.stderr.splitlines() == [
        f"mjbot botzone: no game log in {tmp_path / 'logs'}: No module named 'msgpack' (the "
        "upload zip carries no game-log writer; `mjbot botzone --log-dir DIR` writes one)"]
    assert not (tmp_path / "logs").exists()
    plain = subprocess.run([bare_python, str(bundle), "--no-keep-running"],
                           input="1\n0 1 1\n\n\n", capture_output=True, text=True, timeout=60)
    assert plain.returncode == 0 and plain.stderr == "" and plain.stdout.startswith("PASS\n")


@pytest.mark.parametrize(("policy", "said"), [
    ("mc@budget=1", "--policy 'mc@budget=1': the judge's bots keep to Botzone's own time "
                    "limits; no @budget= here"),
    ("rulebased@budget=0.5", "--policy 'rulebased@budget=0.5': the judge's bots keep to "
                             "Botzone's own time limits"),
    ("botzone:python bot.py", "--policy 'botzone:python bot.py' is an outside program; the "
                              "judge seats `mjbot botzone` processes"),
])
def test_the_judges_policy_is_refused_as_its_policies_are(
        policy: str, said: str, capsys: pytest.CaptureFixture[str]) -> None:
    """`--policy mc@budget=1` was told "unknown key 'budget' ...; a seat's own time limit per
    decision is POLICY@budget=SECONDS", what was typed, and an outside program an unknown
    policy, where `--policies` named each for what it is: the same one line now."""
    done = mjbot_here(capsys, "botzone-judge", "--games", "1", "--modes", "keep",
                      "--policy", policy)
    assert done.returncode == 2 and done.stdout == "", done.stdout
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"mjbot botzone-judge: {said}"), lines


@pytest.mark.parametrize("command", [["bundle", "botzone"], ["bench", "botstart"],
                                     ["bench", "botzone"]])
def test_a_policys_budget_key_is_not_told_to_be_written_as_typed(
        command: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A command's --policy takes no @budget= (the bot keeps Botzone's own limits): `mjbot
    bundle botzone --policy mc@budget=1` was refused as "seat 'mc@budget=1': ... a seat's
    own time limit per decision is POLICY@budget=SECONDS", what had been typed, at no seat.
    The policy is named as one now, with mc's own words alone; an arena seat keeps the hint
    (tests/test_cli_bad_values.py)."""
    out = ["-o", str(tmp_path)] if command[0] == "bundle" else []
    done = mjbot_here(capsys, *command, "--policy", "mc@budget=1", *out)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(
        f"mjbot {'bundle' if command[0] == 'bundle' else ' '.join(command)}: policy "
        "'mc@budget=1': mc: unknown key 'budget'"), lines
    assert "POLICY@budget=SECONDS" not in done.stderr


@pytest.mark.parametrize(("policies", "said"), [
    ("mc@budgte=1,rulebased,rulebased,rulebased",
     "policy 'mc@budgte=1': mc: unknown key 'budgte'"),
    ("rulebased,mc@budget=0,rulebased,rulebased",
     "--policies: seat 1 'mc@budget=0': the judge's bots keep to Botzone's own time limits; "
     "no @budget= here"),
    ("rulebased,rulebased,x=rulebased@budget=abc,rulebased",
     "--policies: seat 2 'x=rulebased@budget=abc': the judge's bots keep to Botzone's own "
     "time limits"),
])
def test_the_judges_seats_are_not_told_to_write_a_budget(
        policies: str, said: str, capsys: pytest.CaptureFixture[str]) -> None:
    """The judge's --policies were read as an arena's seats, which take @budget=, before the
    judge refused any: `mc@budgte=1` was told "a seat's own time limit per decision is
    POLICY@budget=SECONDS", and `mc@budget=0` "@budget=SECONDS needs ... seconds above 0";
    the user who wrote what they were told met "no @budget= here". One line each now that
    leads nowhere else."""
    done = mjbot_here(capsys, "botzone-judge", "--games", "1", "--modes", "keep",
                      "--policies", policies)
    assert done.returncode == 2 and done.stdout == "", done.stdout
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"mjbot botzone-judge: {said}"), lines
    assert "@budget=SECONDS" not in done.stderr
