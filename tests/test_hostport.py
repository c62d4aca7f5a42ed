"""One HOST:PORT rule for every address a user types: --server, --status, --ray, a serve
config's server, an mjai-tcp seat. Three parsers took three sets of texts before ('[]:80'
listened on every interface for --status, ' h:80' was looked up as the name ' h', 'h:²'
was a traceback for --ray)."""

from __future__ import annotations

import ipaddress
import re
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from adapter.hostport import format_host_port, parse_host_port
from adapter.serve.config import ConfigError, loads

ROOT = Path(__file__).resolve().parent.parent


def model(text: str, any_port: bool) -> tuple[str, int] | None:
    """The rule, written another way: a regular expression for the shape, then the host's
    and the port's own checks."""
    shape = re.fullmatch(r"(?:\[(?P<b>[^\[\]]*)\]|(?P<h>[^\[\]]*)):(?P<p>[0-9]+)", text)
    if shape is None:
        return None
    host = shape["b"] if shape["b"] is not None else shape["h"]
    if not host or "/" in host or any(c.isspace() or not c.isprintable() for c in host):
        return None
    if ":" in host:
        try:
            ipaddress.IPv6Address(host)
        except ValueError:
            return None
    digits = shape["p"].lstrip("0") or "0"
    if len(digits) > 5 or not (0 if any_port else 1) <= int(digits) <= 65535:
        return None
    return host, int(digits)


def parsed(text: str, any_port: bool) -> tuple[str, int] | None:
    try:
        return parse_host_port(text, "--x", any_port=any_port)
    except ValueError as exc:
        assert str(exc).startswith("--x needs HOST:PORT") and "\n" not in str(exc)
        return None


ALPHABET = st.sampled_from([*"h1809f:.[] /\t\u00b2\u0661é", "::", "::1", "[::1]"])
PIECES = st.lists(ALPHABET, max_size=8).map("".join)
PORTS = st.lists(st.sampled_from(list("0019865 \u00b2")), max_size=7).map("".join)
TEXTS = st.one_of(PIECES, st.builds(lambda h, p: f"{h}:{p}", PIECES, PORTS))


@given(TEXTS, st.booleans())
def test_the_parser_agrees_with_the_model(text: str, any_port: bool) -> None:
    assert parsed(text, any_port) == model(text, any_port)


NAMES = st.from_regex(r"[a-z0-9]([a-z0-9.-]{0,20}[a-z0-9])?", fullmatch=True)
HOSTS = st.one_of(NAMES, st.ip_addresses().map(str), st.just("héllo.example"))


@given(HOSTS, st.integers(1, 65535))
def test_format_then_parse_gives_back_host_and_port(host: str, port: int) -> None:
    text = format_host_port(host, port)
    assert parse_host_port(text, "--x") == (host, port)
    assert model(text, False) == (host, port)


@pytest.mark.parametrize(("text", "why"), [
    ("[]:8080", "no host"),  # --status and mjai-tcp took it as '' (every interface)
    (" h:80", "whitespace"),  # looked up as the host name ' h'
    ("h :80", "whitespace"),
    ("[::1:80", "unmatched brackets"),  # --status and mjai-tcp took it as ::1
    ("[[::1]]:80", "unmatched brackets"),
    ("ws://h:80", "a URL, not a host"),  # the host name 'ws://h'
    ("h:80:90", "'h:80' is no host"),  # the host name 'h:80'
    ("2001:db8::1", "'2001:db8:' is no host"),  # no port: '2001:db8:' port 1
])
def test_what_each_parser_took_and_none_does_now(text: str, why: str) -> None:
    for any_port in (False, True):
        with pytest.raises(ValueError, match=re.escape(why)):
            parse_host_port(text, "--x", any_port=any_port)


def test_what_users_typed_before_is_read_as_before() -> None:
    assert parse_host_port("::1:2000", "--x") == ("::1", 2000)  # a bare IPv6 host
    assert parse_host_port("[::1]:2000", "--x") == ("::1", 2000)
    assert parse_host_port("h:000000080", "--x") == ("h", 80)  # --status refused it
    assert parse_host_port("[::1]:0", "--x", any_port=True) == ("::1", 0)
    with pytest.raises(ValueError, match=r"port 0 is out of range \(1..65535\)"):
        parse_host_port("h:0", "--x")


def test_the_config_names_its_key_once() -> None:
    """The config's check rewrote --server's message by string surgery; it now names the key
    (with its line) once, and says what was wrong as every other caller does."""
    for server, why in (("nohost", "no port"), ("h:99999", "port 99999 is out of range"),
                        (" h:80", "whitespace")):
        with pytest.raises(ConfigError) as caught:
            loads(f"[sessions.a]\nkind = 'ntpu'\nserver = '{server}'\n", "c.toml", {})
        said = str(caught.value)
        assert said.startswith(f"c.toml, line 3: sessions.a.server needs HOST:PORT ([::1]:PORT "
                               f"for IPv6), got {server!r}: {why}"), said
        assert said.count("server") == 1, said


@pytest.mark.parametrize(("args", "said"), [
    (["mjai", "--server", "[]:1"], "--server needs HOST:PORT"),
    (["serve", "CONFIG", "--status", "[]:0"], "--status needs HOST:PORT"),
    (["arena", "--ray", "127.0.0.1:\u00b2", "--hands", "1"], "--ray needs HOST:PORT"),
    (["arena", "--policies", "mjai-tcp:[]:5000,rulebased,rulebased,rulebased"],
     "mjai-tcp needs HOST:PORT"),
])
def test_each_place_a_user_types_one_says_which(args: list[str], said: str,
                                                tmp_path: Path) -> None:
    """A real run of each: one line naming the option, never a traceback ('--ray h:²' was
    int()'s "invalid literal" and a traceback)."""
    config = tmp_path / "serve.toml"
    config.write_text("[sessions.a]\nkind = 'local'\n")
    args = [str(config) if a == "CONFIG" else a for a in args]
    done = subprocess.run([sys.executable, "-m", "adapter.cli", *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=120,
                          stdin=subprocess.DEVNULL)
    assert done.returncode != 0 and said in done.stderr, done.stderr
    assert "Traceback" not in done.stderr and done.stderr.count("\n") == 1, done.stderr
