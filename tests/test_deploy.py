"""deploy/: the systemd units' command lines are valid mjbot commands, the example config loads
and allows only what a fresh install should, and the container copies what exists."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from adapter.cli import build_parser
from adapter.tenhou import TenhouSettings, check_permission, load_config

DEPLOY = Path(__file__).resolve().parents[1] / "deploy"


@pytest.mark.parametrize("unit, command", [("mjbot-ntpu.service", "ntpu"),
                                           ("mjbot-tenhou.service", "tenhou")])
def test_units_run_valid_commands(unit: str, command: str) -> None:
    text = (DEPLOY / unit).read_text()
    (line,) = [x for x in text.splitlines() if x.startswith("ExecStart=")]
    argv = shlex.split(line.split("=", 1)[1])
    assert argv[0].endswith("/mjbot")
    args = build_parser().parse_args(argv[1:])
    assert args.command == command
    assert "MJBOT_LOG_DIR=" in text and "Restart=" in text


def test_example_config_loads_and_asks_for_nothing_it_may_not_have(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MJBOT_TENHOU_ID", raising=False)
    settings = load_config(str(DEPLOY / "mjbot.example.toml"), TenhouSettings())
    assert settings.name == "NoName" and not settings.permission_granted
    assert settings.game_type == 64
    check_permission(settings.game_type, settings.permission_granted)


def test_container_copies_what_exists() -> None:
    text = (DEPLOY / "Containerfile").read_text()
    for source in re.findall(r"^COPY (.+) \./", text, flags=re.M):
        for name in source.split():
            assert (DEPLOY.parent / name).exists(), name
    assert 'ENTRYPOINT ["mjbot"' in text
