"""One command naming another takes the name from the parser (adapter.argtypes.command_words,
command_path), not from words written out where it runs or names it: `nn iterate` ran,
recorded in state.json and named its phases as "selfplay", "nn" "train" and "arena" typed in
its own code (a failed training phase said "mjbot nn failed", the group's name alone), and
selfplay's lines said "mjbot selfplay" by hand. A command renamed where it is registered is
renamed in all of them; here the real parser is renamed as a rename would leave it."""

from __future__ import annotations

import argparse
import os
from pathlib import Path

import pytest

from adapter.argtypes import command_words
from adapter.cli import build_parser
from adapter.commands import UserInputError
from adapter.commands.arena import cmd_arena
from adapter.commands.nn import cmd_train
from adapter.commands.selfplay import cmd_selfplay

ROOT = Path(__file__).resolve().parent.parent
ITERATE = ["--variant", "riichi", "--dir", "run", "--rounds", "1", "--selection-seed", "41"]


def _commands(parser: argparse.ArgumentParser) -> argparse._SubParsersAction:  # type: ignore[type-arg]
    (action,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return action


def _rename(commands: argparse._SubParsersAction, words: list[str],  # type: ignore[type-arg]
            new: str) -> None:
    """The command ``words`` registered as ``new`` instead of its last word, as a rename in
    its register() leaves the parser: the name it is chosen by and its prog."""
    *path, last = words
    for word in path:
        commands = _commands(commands.choices[word])
    parser = commands.choices.pop(last)
    parser.prog = f"{parser.prog.rpartition(' ')[0]} {new}"
    commands.choices[new] = parser


def test_the_phases_of_nn_iterate_are_the_commands_the_parser_names() -> None:
    parser = build_parser()
    phases = parser.parse_args(["nn", "iterate", *ITERATE]).phases
    words = {phase: phases.words(phase) for phase in ("selfplay", "train", "select")}
    assert words == {"selfplay": ["selfplay"], "train": ["nn", "train"], "select": ["arena"]}
    handlers = {"selfplay": cmd_selfplay, "train": cmd_train, "select": cmd_arena}
    for phase, said in words.items():
        assert parser.parse_args([*said, *_required(phase)]).handler is handlers[phase]
    renamed = build_parser()
    for old, new in ((["selfplay"], "self-play"), (["nn", "train"], "fit"),
                     (["arena"], "duel")):
        _rename(_commands(renamed), old, new)
    phases = renamed.parse_args(["nn", "iterate", *ITERATE]).phases
    assert [phases.words(p) for p in ("selfplay", "train", "select")] == [
        ["self-play"], ["nn", "fit"], ["duel"]]
    with pytest.raises(LookupError, match="no command runs"):
        command_words(_commands(renamed), _required)


def _required(phase: str) -> list[str]:
    """What the phase's command needs given, to parse."""
    return {"selfplay": ["--out", "d"],
            "train": ["--variant", "riichi", "--data", "d", "--out", "w.npz"],
            "select": []}[phase]


def test_a_failed_phase_is_named_by_its_whole_command(tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """A training phase that failed said "mjbot nn failed (exit 2): ...": the name of the
    command group, not of the command that failed."""
    from adapter.nn_iterate import _mjbot

    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(
        [str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])]))
    phases = build_parser().parse_args(["nn", "iterate", *ITERATE]).phases
    with pytest.raises(UserInputError, match=r"^mjbot nn train failed \(exit 2\): "):
        _mjbot("training", phases.words("train"),
               ["--variant", "riichi", "--data", str(tmp_path / "none"), "--out",
                str(tmp_path / "w.npz")])


def test_selfplay_names_itself_as_the_parser_does(tmp_path: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    parser = build_parser()
    _rename(_commands(parser), ["selfplay"], "self-play")
    run = ["self-play", "--policies", "rulebased,rulebased,rulebased,rulebased", "--hands",
           "1", "--workers", "1", "--no-progress"]
    args = parser.parse_args([*run, "--out", str(tmp_path / "a"), "--stop-after", "0.001"])
    assert args.handler(args) == 1
    assert capsys.readouterr().err.splitlines() == [
        "mjbot self-play: stopped (--stop-after passed) before the first wall set was "
        f"finished: no dataset written in {tmp_path / 'a'}"]
    args = parser.parse_args([*run, "--out", str(tmp_path / "b")])
    assert args.handler(args) == 0
    assert capsys.readouterr().out.startswith("self-play riichi: ")
    assert args.handler(args) == 0
    assert capsys.readouterr().out.startswith(f"self-play riichi: {tmp_path / 'b'} already "
                                              "holds this dataset")


def test_the_dataset_readers_hint_names_selfplay_as_the_parser_does(tmp_path: Path) -> None:
    """The replay layer's hint for a stopped self-play's folder cannot ask the parser (the
    layers point down): this test does, and fails on a rename the hint does not follow."""
    from replay.dataset.progress import PROGRESS
    from replay.dataset.schema import DatasetError
    from replay.dataset.shards import read_manifest

    (tmp_path / PROGRESS).write_text("{}")
    with pytest.raises(DatasetError) as raised:
        read_manifest(tmp_path)
    words = command_words(_commands(build_parser()), cmd_selfplay)
    assert f"the same `mjbot {' '.join(words)}` command again goes on with it" in str(
        raised.value)


def test_the_names_still_typed_out_are_the_parsers() -> None:
    """Where a command's name is still typed out (help texts, the dataset readers' hints,
    docstrings: places with no parser to ask), a rename must reach them too: this fails on
    one, naming the files that type the old name."""
    from adapter.nn_iterate import cmd_iterate

    commands = _commands(build_parser())
    sources = sorted(p for package in ("adapter", "replay", "brain", "protocols")
                     for p in (ROOT / package).rglob("*.py"))
    for handler, typed in ((cmd_selfplay, "selfplay"), (cmd_train, "nn train"),
                           (cmd_arena, "arena"), (cmd_iterate, "nn iterate")):
        places = [str(p.relative_to(ROOT)) for p in sources
                  if f"mjbot {typed}" in p.read_text(encoding="utf-8")]
        assert places, typed
        assert " ".join(command_words(commands, handler)) == typed, (
            f"`mjbot {typed}` is typed out in {places}: rename it there too")
