"""``HOST:PORT`` as a user types it (``--server``, ``--status``, ``--ray``, a serve config's
``server``, an ``mjai-tcp:`` seat) -> (host, port), by one rule. Text only, standard library
only, and nothing of ours imported: a leaf every caller may import (three parsers accepted
three different sets of texts before, and one rewrote another's message to name itself)."""

from __future__ import annotations

import ipaddress

HINT = "HOST:PORT ([::1]:PORT for IPv6)"


def parse_host_port(text: str, name: str, *, any_port: bool = False) -> tuple[str, int]:
    """``HOST:PORT`` -> (host, port); port 0 (a free one) only where ``any_port`` (a listener
    may take it, a client may not). An IPv6 host is written in brackets (``[::1]:80``); a bare
    one (``::1:80``) is read as such when what precedes the last colon is an IPv6 address.
    ValueError otherwise, ``NAME needs HOST:PORT, got 'TEXT': what was wrong`` (``name`` the
    option or key; empty where the caller names it itself, as the serve config's reader)."""
    def refuse(why: str) -> ValueError:
        return ValueError(f"{name + ' ' if name else ''}needs {HINT}, got {text!r}: {why}")

    host, sep, port = text.rpartition(":")
    if not sep or not port or "]" in port:  # '[::1]' has no port, not a port '1]'
        raise refuse("no port")
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]  # the brackets are no part of the name
    if not host:
        raise refuse("no host")
    if "[" in host or "]" in host:
        raise refuse("unmatched brackets")
    if any(c.isspace() or not c.isprintable() for c in host + port):
        raise refuse("whitespace or a control character in it")
    if "/" in host:  # 'ws://h:80' was looked up as the host name 'ws://h'
        raise refuse("a URL, not a host")
    if ":" in host and not _is_ipv6(host):
        raise refuse(f"{host!r} is no host (an IPv6 one is written [ADDRESS]:PORT)")
    # ASCII digits only ('²' and '١٢' are digits to str.isdigit, not to int()); zeros before
    # the digits are none of them, and no more than five are read (int() has its own limit)
    if not (port.isascii() and port.isdigit()):
        raise refuse(f"port {port!r} is no number")
    digits = port.lstrip("0") or "0"
    low = 0 if any_port else 1
    if len(digits) > 5 or not low <= int(digits) <= 65535:
        raise refuse(f"port {digits} is out of range "
                     f"({'0..65535, 0: a free one' if any_port else '1..65535'})")
    return host, int(digits)


def format_host_port(host: str, port: int) -> str:
    """(host, port) -> the text :func:`parse_host_port` reads back: an IPv6 host bracketed."""
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


def _is_ipv6(host: str) -> bool:
    try:
        ipaddress.IPv6Address(host)
    except ValueError:
        return False
    return True
