"""deploy/: the systemd unit runs a valid `mjbot serve`, the example config loads with every
platform present, only local-table practice enabled and nothing it may not have, and the
container copies what exists and starts the tournament process."""

from __future__ import annotations

import json
import re
import shlex
import stat
import subprocess
from pathlib import Path

import pytest

from adapter.cli import build_parser
from adapter.serve.config import KINDS, load
from tests.narrowing import searched

DEPLOY = Path(__file__).resolve().parents[1] / "deploy"


def test_unit_runs_serve_with_the_config() -> None:
    text = (DEPLOY / "mjbot.service").read_text()
    (line,) = [x for x in text.splitlines() if x.startswith("ExecStart=")]
    argv = shlex.split(line.split("=", 1)[1])
    assert argv[0].endswith("/mjbot")
    args = build_parser().parse_args(argv[1:])
    assert args.command == "serve" and args.config == "/etc/mjbot/mjbot.toml"
    assert "ExecReload=/bin/kill -HUP $MAINPID" in text and "KillSignal=SIGTERM" in text
    # the stop's SIGTERM to the serve process alone, which stops its workers in order: sent to
    # the whole control group (the default), it killed the policy workers and their fork
    # server at once, and the hands the sessions were finishing were played on fallbacks
    assert re.search(r"^KillMode=mixed$", text, flags=re.M)
    config = load(DEPLOY / "mjbot.example.toml", environ={})
    stop = int(searched(r"TimeoutStopSec=(\d+)", text).group(1))
    assert stop > config.stop_deadline
    # the status server's connection cap stays below the open-file limit (a quarter of it)
    files = int(searched(r"^LimitNOFILE=(\d+)$", text, flags=re.M).group(1))
    assert config.status.max_connections <= files // 4


def test_unit_does_not_restart_a_config_it_cannot_use(tmp_path: Path) -> None:
    """A config mistake is exit 2; with Restart=on-failure alone systemd started serve again
    every RestartSec for ever, each time the same one-line error, which the loop buried."""
    import subprocess
    import sys

    text = (DEPLOY / "mjbot.service").read_text()
    assert re.search(r"^Restart=on-failure$", text, flags=re.M)
    kept = re.search(r"^RestartPreventExitStatus=(.+)$", text, flags=re.M)
    assert kept is not None
    bad = tmp_path / "mjbot.toml"
    bad.write_text('[sessions.p]\nkind = "local"\npolicy = "nosuch"\n')
    done = subprocess.run([sys.executable, "-m", "adapter.cli", "serve", str(bad), "--status",
                           "127.0.0.1:0", "--log-dir", str(tmp_path / "logs")],
                          capture_output=True, text=True, timeout=60,
                          cwd=Path(__file__).resolve().parents[1])
    assert done.returncode == 2 and "line 3" in done.stderr, done.stderr
    assert str(done.returncode) in kept.group(1).split()


def test_example_config_covers_every_platform_and_enables_only_practice(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MJBOT_TENHOU_ID", raising=False)
    config = load(DEPLOY / "mjbot.example.toml", environ={})
    kinds = {s.kind for s in config.sessions}
    assert kinds == set(KINDS)
    enabled = [s for s in config.sessions if s.enabled]
    assert enabled and all(s.kind == "local" for s in enabled)
    assert config.status.host == "127.0.0.1" and not config.status.token
    (tenhou,) = [s for s in config.sessions if s.kind == "tenhou"]
    assert tenhou.secret == "" and tenhou.option("game_type") == 64
    assert tenhou.option("permission_granted") is False


def test_container_copies_what_exists_and_serves() -> None:
    text = (DEPLOY / "Containerfile").read_text()
    for source in re.findall(r"^COPY (.+) \S+$", text, flags=re.M):
        for name in source.split():
            assert (DEPLOY.parent / name).exists(), name
    assert 'ENTRYPOINT ["mjbot"' in text
    cmd = searched(r"^CMD (\[.*\])$", text, flags=re.M).group(1)
    args = build_parser().parse_args(json.loads(cmd))
    assert args.command == "serve" and args.status == "0.0.0.0:8750"


def test_the_container_recipe_keeps_its_token_where_the_user_can_read_it(
        tmp_path: Path) -> None:
    """deploy/README.md's `podman run` passed `-e MJBOT_STATUS_TOKEN=$(openssl rand -hex 16)`:
    a token shown nowhere, so the user could not open the dashboard. The recipe now keeps it
    in a file of mode 600 (the unit's EnvironmentFile lines) that `podman run --env-file`
    reads, made once and kept; the README's command prints it. Run here but for podman."""
    text = (DEPLOY / "README.md").read_text()
    block = searched(r"```\n\s*(podman build[^`]*?)```", text).group(1)
    block = re.sub(r"\\\n\s*", "", block)  # a line continued
    lines = [line.strip() for line in block.splitlines() if line.strip()]
    (run,) = [shlex.split(line) for line in lines if line.startswith("podman run")]
    assert not any("$(" in arg for arg in run), run  # no value made inline and never shown
    env_file = run[run.index("--env-file") + 1]
    steps = "\n".join(line for line in lines if not line.startswith("podman"))
    kept = tmp_path / env_file

    def made() -> str:
        subprocess.run(["bash", "-euc", steps], cwd=tmp_path, check=True, timeout=30)
        return kept.read_text()

    first = made()
    assert made() == first  # a second run keeps the token (a browser's cookie stays good)
    assert stat.S_IMODE(kept.stat().st_mode) == 0o600
    token = searched(r"^MJBOT_STATUS_TOKEN=([0-9a-f]{32})$", first, flags=re.M).group(1)
    show = searched(r"\(`(sed -n [^`]+)`\)", text).group(1)
    shown = subprocess.run(["bash", "-euc", show], cwd=tmp_path, check=True, timeout=30,
                           capture_output=True, text=True).stdout
    assert shown.strip() == token
    # the Containerfile's header says the same recipe
    header = (DEPLOY / "Containerfile").read_text()
    for line in lines[1:]:
        assert f"#   {line}" in header, line
