"""The options of the local table (workers and Ray, the fallback share, outside programs'
limits, our seats' budget) that arena, league and selfplay all take: the same options, the
same defaults and the same order in each command's --help."""

from __future__ import annotations

import pytest

from adapter.cli import build_parser

TABLE_OPTIONS = ["--workers", "--ray", "--max-fallback-share", "--seat-limit",
                 "--connect-wait", "--budget"]
COMMANDS = ["arena", "league", "selfplay"]


def _subparser(command: str):
    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "command")
    choices = sub.choices
    assert isinstance(choices, dict), f"{command}: the parser has no subcommands"
    return choices[command]


def _table_options(command: str) -> list[str]:
    return [s for a in _subparser(command)._actions for s in a.option_strings
            if s in TABLE_OPTIONS]


@pytest.mark.parametrize("command", COMMANDS)
def test_each_table_command_takes_the_table_options_in_one_order(command):
    assert _table_options(command) == TABLE_OPTIONS


@pytest.mark.parametrize("command", COMMANDS)
def test_each_table_command_reads_the_table_options_alike(command):
    extra = ["--out", "data"] if command == "selfplay" else []
    given = build_parser().parse_args([
        command, *extra, "--workers", "2", "--ray", "auto", "--max-fallback-share", "0.25",
        "--seat-limit", "3", "--connect-wait", "7", "--budget", "1.5"])
    assert (given.workers, given.ray, given.max_fallback_share, given.seat_limit,
            given.connect_wait, given.budget) == (2, "auto", 0.25, 3.0, 7.0, 1.5)
    defaults = build_parser().parse_args([command, *extra])
    assert (defaults.workers, defaults.ray, defaults.max_fallback_share, defaults.seat_limit,
            defaults.connect_wait, defaults.budget) == (None, None, 0.01, None, 60.0, None)
