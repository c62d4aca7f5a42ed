"""The serve config: a good file becomes session specs; every mistake is one ConfigError that
names the file and the line, never a traceback, and never repeats a secret."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from adapter.serve.config import ConfigError, Limits, loads
from adapter.serve.tomlines import key_lines
from tests.in_process import mjbot_here

ROOT = Path(__file__).resolve().parents[1]
GOOD = """\
[serve]
log_dir = "games"
stop_deadline = 5

[defaults]
games_per_day = 10

[sessions.practice]
kind = "local"
variant = "mcr"
opponents = ["greedy", "rulebased", "greedy"]

[sessions.practice.limits]
backoff_initial = 0.5

[sessions.ladder]
kind = "tenhou"
enabled = false
id = "ID0123ABCD-abcdEFGH"
"""


def test_a_good_file() -> None:
    config = loads(GOOD, "good.toml", environ={})
    assert config.log_dir == "games" and config.stop_deadline == 5.0
    practice, ladder = config.sessions
    assert practice.kind == "local" and practice.enabled and practice.policy == "rulebased"
    assert practice.option("opponents") == ("greedy", "rulebased", "greedy")
    assert practice.limits == Limits(games_per_day=10, backoff_initial=0.5)
    assert not ladder.enabled and ladder.secret == "ID0123ABCD-abcdEFGH"
    public = ladder.public()
    assert "ID0123ABCD" not in repr(public) and "ID0123ABCD" not in repr(ladder)
    assert public["login"] == "ID (hidden)"


def test_a_session_plays_what_the_platform_commands_take() -> None:
    """``nn@FILE`` and ``mc@OPTIONS`` are policies for `mjbot tenhou --policy`, so for a
    session too (the README calls nn@FILE a policy name)."""
    for policy in ("nn@brain/data/nn_riichi_gen4.npz", "mc@playouts=8"):
        text = f"[sessions.a]\nkind = 'local'\npolicy = '{policy}'\n"
        assert loads(text, environ={}).sessions[0].policy == policy


def test_a_changed_option_makes_a_different_spec() -> None:
    a = loads(GOOD, environ={}).sessions[0]
    b = loads(GOOD.replace('"mcr"', '"mass"'), environ={}).sessions[0]
    assert a != b and a == loads(GOOD, environ={}).sessions[0]


@pytest.mark.parametrize("text, line, words", [
    ("[sessions.a]\nkind = 'local'\nvarient = 'riichi'\n", 3, "unknown key 'varient'"),
    ("[sessions.a]\nkind = 'local'\nvariant = 'poker'\n", 3, "must be one of riichi"),
    ("[sessions.a]\nkind = 'local'\npolicy = 'genius'\n", 3, "must be a policy name"),
    ("[sessions.a]\nkind = 'local'\npolicy = 'nn@no/such.npz'\n", 3, "no weights file at"),
    ("[sessions.a]\nkind = 'local'\npolicy = 'mc@playouts=oops'\n", 3, "playouts"),
    ("[sessions.a]\nkind = 'local'\npolicy = 'rb=rulebased'\n", 3, "must be a policy name"),
    ("[sessions.a]\nkind = 'local'\nenabled = 'yes'\n", 3, "must be true or false"),
    ("[sessions.a]\nkind = 'local'\npause = -1\n", 3, "must be at least 0"),
    ("[sessions.a]\nkind = 'local'\nopponents = ['greedy']\n", 3, "list of 3 policy names"),
    ("[sessions.a]\nkind = 'chess'\n", 2, "kind must be one of"),
    ("\n[sessions.a]\nenabled = true\n", 2, "needs kind"),
    ("[sessions.a]\nkind = 'ntpu'\n", 1, "needs server"),
    ("[sessions.a]\nkind = 'ntpu'\nserver = 'nohost'\n", 3, "needs HOST:PORT"),
    # a port out of range says so (it said only "must be host:port")
    ("[sessions.a]\nkind = 'ntpu'\nserver = 'h:99999'\n", 3, "port 99999 is out of range"),
    ("[sessions.a]\nkind = 'local'\n[sessions.a.limits]\nbreaker_failures = 0\n", 4,
     "must be at least 1"),
    ("[sessions.a]\nkind = 'local'\n[sessions.a.limits]\nbackoff_max = 0.1\n"
     "backoff_initial = 1\n", 3, "backoff_max must be at least backoff_initial"),
    ("[sessions.'a b']\nkind = 'local'\n", 1, "session name 'a b'"),
    ("[sessions]\na = 3\n", 2, "[sessions.a] must be a table"),
    ("[serve]\nlog_dir = 'x'\n[servers]\n", 3, "unknown table or key 'servers'"),
    ("[status]\nport = 70000\n", 2, "must be 0..65535"),
    ("[status]\ntrust_forwarded_proto = 'yes'\n", 2, "trust_forwarded_proto"),
    ("[status]\ntrust_forwarded_for = 1\n", 2, "trust_forwarded_for"),
    ("[sessions.a]\nkind = 'local'\nvariant = 'riichi\n", 3, "not valid TOML"),
    ("[sessions.a]\nkind = 'local'\n[sessions.a]\nkind = 'ntpu'\n", 3, "not valid TOML"),
    ("[sessions.t]\nkind = 'tenhou'\ngame_type = 169\n", 3, "Phoenix"),
    ("[sessions.t]\nkind = 'tenhou'\ngame_type = 9\n", 3, "permission"),
    ("[sessions.t]\nkind = 'tenhou'\nid_env = 'NOT_SET_ANYWHERE'\n", 3, "which is not set"),
    ("[sessions.t]\nkind = 'tenhou'\nserver = 'wss://b-ww.mjv.jp'\n", 3,
     'needs transport = "ws"'),
    ("# comment\n\n[sessions.m]  # the mjai one\nkind = 'mjai'\nserver = 'h:1'\n"
     "budget = \"\"\"\nfast\n\"\"\"\n", 6, "must be a number"),
])
def test_mistakes_name_their_line(text: str, line: int, words: str) -> None:
    with pytest.raises(ConfigError) as caught:
        loads(text, "bad.toml", environ={})
    message = str(caught.value)
    assert message.startswith(f"bad.toml, line {line}: "), message
    assert words in message, message


@pytest.mark.parametrize(("text", "environ", "line", "words"), [
    ("[sessions.t]\nkind = 'tenhou'\nid_env = 'TID'\n", {"TID": ""}, 3,
     "names TID, which is empty"),
    ("[sessions.t]\nkind = 'tenhou'\nid = 'ID89abcdef-12345678'\nid_env = 'TID'\n",
     {"TID": ""}, 4, "names TID, which is empty"),
])
def test_an_empty_tenhou_id_is_refused_as_mjbot_tenhou_refuses_it(
        text: str, environ: dict[str, str], line: int, words: str) -> None:
    """``id_env`` naming a variable set to nothing is refused, as ``mjbot tenhou`` refuses an
    empty $MJBOT_TENHOU_ID (a83435f): the session took the file's ``id`` though the
    environment, which wins, said otherwise, or was refused as 'not set'."""
    with pytest.raises(ConfigError) as caught:
        loads(text, "bad.toml", environ=environ)
    message = str(caught.value)
    assert message.startswith(f"bad.toml, line {line}: ") and words in message, message
    assert "not set" not in message


def test_an_unset_id_env_falls_back_to_the_files_id() -> None:
    config = loads("[sessions.t]\nkind = 'tenhou'\nid = 'ID89abcdef-12345678'\n"
                   "id_env = 'TID'\n", environ={})
    assert config.sessions[0].secret == "ID89abcdef-12345678"


def test_a_malformed_tenhou_id_is_not_repeated() -> None:
    with pytest.raises(ConfigError) as caught:
        loads("[sessions.t]\nkind = 'tenhou'\nid = 'ID-my-secret-name'\n", "bad.toml",
              environ={})
    assert "line 3" in str(caught.value) and "my-secret" not in str(caught.value)


def test_the_readmes_placeholder_id_is_named_as_such() -> None:
    """``id = "IDxxxxxxxx-xxxxxxxx"`` copied from the README was refused as "must look like
    IDxxxxxxxx-xxxxxxxx": the placeholder is named as one, a bad ID told the shape in words."""
    with pytest.raises(ConfigError) as caught:
        loads("[sessions.t]\nkind = 'tenhou'\nid = 'IDxxxxxxxx-xxxxxxxx'\n", "bad.toml",
              environ={})
    assert str(caught.value) == (
        "bad.toml, line 3: the Tenhou ID is the placeholder IDxxxxxxxx-xxxxxxxx (the README's "
        "form, not an ID): give your own ID")
    with pytest.raises(ConfigError) as caught:
        loads("[sessions.t]\nkind = 'tenhou'\nid_env = 'TID'\n", "bad.toml",
              environ={"TID": "IDsecret-12345678"})
    assert str(caught.value) == (
        "bad.toml, line 3: the Tenhou ID must be ID, 8 hexadecimal digits, a dash and 8 "
        "letters or digits (IDxxxxxxxx-xxxxxxxx with each x one of those) (value not shown)")


def test_tenhou_id_and_status_token_from_the_environment() -> None:
    text = ("[status]\ntoken_env = 'TOK'\n[sessions.t]\nkind = 'tenhou'\n"
            "id_env = 'TID'\n")
    config = loads(text, environ={"TOK": "s3cret", "TID": "ID89abcdef-12345678"})
    assert config.status.token == "s3cret" and "s3cret" not in repr(config)
    assert config.sessions[0].secret == "ID89abcdef-12345678"


def test_key_lines_reads_the_shapes_config_files_use() -> None:
    text = ('a = 1\n[t."quoted key"]\nb.c = [\n  1,\n  2,\n]\nd = """\n[not.a.table]\n"""\n'
            "[[arr]]\ne = 'x' # c\n")
    lines = key_lines(text)
    assert lines[("a",)] == 1 and lines[("t", "quoted key")] == 2
    assert lines[("t", "quoted key", "b", "c")] == 3 and lines[("t", "quoted key", "d")] == 7
    assert ("not", "a", "table") not in lines and lines[("arr", "e")] == 11


def test_a_misspelt_table_is_reported_with_its_line() -> None:
    """[sesions.tenhou] deep in a long file: the message said the file, not the line (a dotted
    header defines its parent table without a line of its own), where a misspelt key says
    both."""
    text = ("[serve]\nlog_dir = 'logs'\n\n[sessions.a]\nkind = 'local'\n\n"
            "[sesions.tenhou]\nkind = 'tenhou'\n")
    with pytest.raises(ConfigError) as caught:
        loads(text, "mjbot.toml", environ={})
    assert str(caught.value).startswith("mjbot.toml, line 7: unknown table or key 'sesions'")
    with pytest.raises(ConfigError) as caught:
        loads("x = 1\nstatus.port = 'eighty'\n", "mjbot.toml", environ={})
    assert str(caught.value).startswith("mjbot.toml, line 1: unknown table or key 'x'")
    with pytest.raises(ConfigError) as caught:
        loads("\nstatus.port = 'eighty'\n", "mjbot.toml", environ={})
    assert str(caught.value).startswith("mjbot.toml, line 2: status.port must be")


def test_a_table_defined_after_its_sub_table_keeps_its_own_line() -> None:
    """[sessions.a.limits] above [sessions.a] (TOML allows either order): the sub-table's
    header now gives its parents a line (efc0a33), and that line took the place of the
    parent's own header, so 'session a needs kind' pointed at [sessions.a.limits], line 1,
    not at [sessions.a], line 5, where it had pointed before."""
    text = ("[sessions.a.limits]\ngames_per_day = 3\n\n\n"
            "[sessions.a]\nvariant = 'riichi'\n")
    assert key_lines(text)[("sessions", "a")] == 5
    assert key_lines(text)[("sessions",)] == 1  # no header of its own: its first mention
    with pytest.raises(ConfigError) as caught:
        loads(text, "mjbot.toml", environ={})
    assert str(caught.value).startswith("mjbot.toml, line 5: session 'a' needs kind")


def test_a_proxy_in_front_without_a_token_is_warned_of(tmp_path: Path) -> None:
    """The deploy notes' nginx in front (trust_forwarded_proto / _for on) and no token: nginx
    sends serve 'Host: 127.0.0.1:8750' unless told otherwise, a loopback name, so serve
    answered every request through the proxy, the dashboard and every game log to whoever
    reaches it, and nothing said so. Now a warning line, at --check as at start and reload."""
    from adapter.serve.config import config_warnings

    for key in ("trust_forwarded_proto", "trust_forwarded_for"):
        text = f"[status]\n{key} = true\ntoken_env = 'TEAM_TOKEN'\n"
        notes = config_warnings(loads(text, "mjbot.toml", environ={}))
        assert [n for n in notes if key in n and "$TEAM_TOKEN" in n
                and "whoever reaches the proxy" in n], notes
        assert not config_warnings(loads(text, "mjbot.toml", environ={"TEAM_TOKEN": "t0k"}))
    assert not config_warnings(loads("[status]\n", "mjbot.toml", environ={}))
    config = tmp_path / "mjbot.toml"
    config.write_text("[status]\ntrust_forwarded_for = true\n")
    out = subprocess.run([sys.executable, "-m", "adapter.cli", "serve", "--check", str(config)],
                         capture_output=True, text=True, cwd=ROOT, timeout=60,
                         env={k: v for k, v in os.environ.items() if k != "MJBOT_STATUS_TOKEN"})
    assert out.returncode == 0 and "whoever reaches the proxy" in out.stderr


def test_the_command_reports_a_bad_file_in_one_line(tmp_path: Path) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text("[sessions.a]\nkind = 'local'\nvariant = 3\n")
    out = subprocess.run([sys.executable, "-m", "adapter.cli", "serve", str(bad)],
                         capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert out.returncode == 2
    assert out.stderr.strip().splitlines() == [
        f"mjbot serve: {bad}, line 3: sessions.a.variant must be one of riichi, mcr, "
        "taiwan16, mass"]
    missing = subprocess.run([sys.executable, "-m", "adapter.cli", "serve",
                              str(tmp_path / "none.toml")], capture_output=True, text=True,
                             cwd=ROOT, timeout=60)
    assert missing.returncode == 2 and "cannot read" in missing.stderr
    assert "Traceback" not in missing.stderr + out.stderr


def test_a_missing_token_is_asked_for_in_the_variable_the_config_names(tmp_path: Path) -> None:
    """[status] token_env names the team's variable; serve on 0.0.0.0 without it said "set a
    token in $MJBOT_STATUS_TOKEN", which the operator may well have set (and set again, and
    again): it now names the variable it reads."""
    config = tmp_path / "mjbot.toml"
    config.write_text("[status]\nhost = '0.0.0.0'\ntoken_env = 'TEAM_TOKEN'\n")
    env = {k: v for k, v in os.environ.items() if k != "TEAM_TOKEN"}
    out = subprocess.run([sys.executable, "-m", "adapter.cli", "serve", "--check", str(config)],
                         capture_output=True, text=True, cwd=ROOT, timeout=60,
                         env={**env, "MJBOT_STATUS_TOKEN": "set-but-not-read"})
    assert out.returncode == 2 and "Traceback" not in out.stderr
    assert out.stderr.strip().splitlines() == [
        "mjbot serve: the status server on 0.0.0.0 would be reachable from other machines: "
        "set a token in $TEAM_TOKEN (the variable [status] token_env names), or listen on "
        "127.0.0.1"]
    default = tmp_path / "default.toml"
    default.write_text("[status]\nhost = '0.0.0.0'\n")
    out = subprocess.run([sys.executable, "-m", "adapter.cli", "serve", "--check", str(default)],
                         capture_output=True, text=True, cwd=ROOT, timeout=60,
                         env={k: v for k, v in env.items() if k != "MJBOT_STATUS_TOKEN"})
    assert out.returncode == 2 and "set a token in $MJBOT_STATUS_TOKEN (or the" in out.stderr


def test_a_budget_too_tight_for_mc_is_said_at_check_start_and_reload(tmp_path: Path) -> None:
    """`mjbot mjai --policy mc --budget 0.25` warns that mc gets a tenth of it (0.025 s a
    decision, after the 0.25 s margin); the same session in serve said nothing, and in the
    soak it played on fallbacks (246 in its first minute: "mc missed its 0.025s budget").
    `serve --check`, serve's start and a SIGHUP that brings such a budget now say so, naming
    the session; a budget that leaves room, or a policy that does not think, says nothing."""
    import json
    import signal

    from tests.serve_helpers import ROOMY, ServeProcess, free_port

    port = free_port()  # nothing listens: the mjai session waits in its backoff
    session = f'[sessions.table]\nkind = "mjai"\npolicy = "mc"\nserver = "127.0.0.1:{port}"\n'
    others = ('[sessions.fast]\nkind = "mjai"\npolicy = "greedy"\nbudget = 0.1\n'
              f'server = "127.0.0.1:{port}"\n[sessions.drill]\nkind = "local"\n'
              'opponents = ["mc", "greedy", "greedy"]\nbudget = 0.2\nenabled = false\n')
    config = tmp_path / "serve.toml"
    config.write_text(ROOMY + session + "budget = 0.25\n" + others)
    out = subprocess.run([sys.executable, "-m", "adapter.cli", "--log-json", "serve",
                          "--check", str(config)], capture_output=True, text=True, cwd=ROOT,
                         timeout=60)
    assert out.returncode == 0, out.stderr
    warned = [json.loads(x)["event"] for x in out.stderr.splitlines()]
    assert warned == ["serve: session 'table': budget = 0.25 leaves a policy that thinks (mc) "
                      "only a tenth of it, 0.025 s a decision, after the 0.25 s margin kept "
                      "back for sending the answer: it falls back where it needs more; give "
                      "more than 0.278 s"]

    def tight(entry: dict[str, object]) -> bool:
        return str(entry.get("event", "")).startswith("serve: session 'table': budget =")

    config.write_text(ROOMY + session + "budget = 1.0\n" + others)
    serve = ServeProcess(config, tmp_path / "logs")
    try:
        config.write_text(ROOMY + session + "budget = 0.2\n" + others)
        serve.signal(signal.SIGHUP)
        serve.wait_for(lambda e: e.get("event") == "serve: config reloaded")
        said = [e["event"] for e in serve.lines if tight(e)]
        assert len(said) == 1 and "budget = 0.2 " in said[0], said  # the reload's, not start's
    finally:
        serve.close()
    assert not any("'fast'" in line or "'drill'" in line for line in serve.raw), serve.raw


def test_an_ntpu_sessions_tight_budget_is_judged_on_ntpus_margin() -> None:
    """`mjbot ntpu --policy mc --budget 0.3` warns (its client keeps 0.3 s back, so mc gets a
    tenth of the budget, 0.03 s); serve's NTPU session of the same budget was judged on the
    brain's 0.25 s margin and said nothing, though it plays on that same 0.3 s margin."""
    from adapter.serve.config import tight_budgets

    text = ('[sessions.lab]\nkind = "ntpu"\npolicy = "mc"\nserver = "127.0.0.1:1"\n'
            'budget = 0.3\n')
    notes = tight_budgets(loads(text, environ={}))
    assert len(notes) == 1 and "0.03 s a decision, after the 0.3 s margin" in notes[0], notes
    roomy = text.replace("budget = 0.3", "budget = 0.34")
    assert tight_budgets(loads(roomy, environ={})) == []


@pytest.mark.parametrize("text, count", [("", "0 sessions"), (
    '[sessions.drill]\nkind = "local"\nenabled = false\n'
    'opponents = ["greedy", "greedy", "greedy"]\n', "1 session")])
def test_checking_a_config_that_runs_no_session_says_so(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str, count: str) -> None:
    """`mjbot serve --check` of an empty config (or one whose sessions are all disabled)
    said "0 sessions, enabled: none", exit 0, and nothing more, where serve itself warns
    that only the status server runs. --check now gives the same warning line; the config
    is valid (a status page and viewer alone), so the exit status stays 0."""
    import json

    config = tmp_path / "serve.toml"
    config.write_text(text)
    run = mjbot_here(capsys, "--log-json", "serve", "--check", str(config))
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == f"{config}: {count}, enabled: none"
    assert [json.loads(x)["event"] for x in run.stderr.splitlines()] == [
        "serve: no session is enabled; only the status server runs"]
    example = mjbot_here(capsys, "--log-json", "serve", "--check",
                         str(ROOT / "deploy" / "mjbot.example.toml"))
    assert example.returncode == 0 and example.stderr == "", example.stderr


def test_a_practice_option_its_variant_does_not_use_is_a_warning(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The riichi practice block copied with `variant = "mcr"` kept `length = "east"`, and
    `hands` given to a riichi session, were taken in silence (arena, league and selfplay now
    refuse --length with such a variant). serve warns of each, naming the session and what
    its variant's game is, at --check (and at start and on a reload); the session still
    runs, exit 0. What each variant uses, and a disabled session, says nothing."""
    import json

    config = tmp_path / "serve.toml"
    config.write_text(
        '[sessions.copied]\nkind = "local"\nvariant = "mcr"\nlength = "east"\nhands = 8\n'
        '[sessions.riichi]\nkind = "local"\nlength = "south"\nhands = 4\n'
        '[sessions.taiwan]\nkind = "local"\nvariant = "taiwan16"\nhands = 8\n'
        '[sessions.off]\nkind = "local"\nvariant = "mass"\nlength = "south"\nenabled = false\n')
    run = mjbot_here(capsys, "--log-json", "serve", "--check", str(config))
    assert run.returncode == 0, run.stderr
    assert [json.loads(x)["event"] for x in run.stderr.splitlines()] == [
        "serve: session 'copied': length = 'east' is a riichi game's length, not used: a "
        "game of mcr is one hand (one Botzone match)",
        "serve: session 'copied': hands = 8 is a taiwan16 or mass game's, not used: a game "
        "of mcr is one hand (one Botzone match)",
        "serve: session 'riichi': hands = 4 is a taiwan16 or mass game's, not used: a game "
        "of riichi is as long as its length (east, south) and the scores say"]
