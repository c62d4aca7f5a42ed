"""Where a key sits in a TOML file, so that a config error can name its line.

``tomllib`` gives values without positions; this scan of the text maps every table header and
every ``key = value`` line to its dotted key path. It reads the shapes config files use (bare
and quoted keys, dotted keys, ``[table]`` / ``[[array]]`` headers, multi-line strings and
arrays) and is only ever used to point at a line: a shape it misreads costs a line number in
a message, never a wrong value.
"""

from __future__ import annotations

import re

_BARE = r"[A-Za-z0-9_-]+"
_KEY = rf"(?:{_BARE}|\"(?:[^\"\\]|\\.)*\"|'[^']*')"
_DOTTED = rf"{_KEY}(?:\s*\.\s*{_KEY})*"
_HEADER = re.compile(rf"^\s*(\[\[?)\s*({_DOTTED})\s*\]\]?\s*(#.*)?$")
_ASSIGN = re.compile(rf"^\s*({_DOTTED})\s*=")


def _split(dotted: str) -> tuple[str, ...]:
    parts = re.findall(rf"\s*({_KEY})\s*(?:\.|$)", dotted)
    return tuple(p[1:-1] if p[:1] in "\"'" else p for p in parts)


def key_lines(text: str) -> dict[tuple[str, ...], int]:
    """Dotted key path -> 1-based line number, for table headers and assignments."""
    lines: dict[tuple[str, ...], int] = {}
    implied: set[tuple[str, ...]] = set()  # lines a parent got from a child's header or key
    table: tuple[str, ...] = ()
    depth = 0  # open brackets of a multi-line array or inline table
    quote = ""  # the delimiter of an open multi-line string
    for number, line in enumerate(text.splitlines(), start=1):
        if quote:
            if quote in line:
                quote = ""
            continue
        if depth == 0:
            header = _HEADER.match(line)
            if header:
                table = _split(header.group(2))
                _note(lines, implied, table, number)
                continue
            assign = _ASSIGN.match(line)
            if assign:
                _note(lines, implied, table + _split(assign.group(1)), number)
                line = line[assign.end():]
        depth, quote = _scan_value(line, depth)
    return lines


def _note(lines: dict[tuple[str, ...], int], implied: set[tuple[str, ...]],
          path: tuple[str, ...], number: int) -> None:
    """``path``'s line, and its parents' where they have none yet: ``[sesions.tenhou]`` or
    ``a.b = 1`` defines ``sesions`` or ``a`` there, which an error about it names (a
    misspelt table was reported with the file alone). A parent's own header, later, takes
    its line back (``[s.a.limits]`` above ``[s.a]``: an error about ``s.a`` pointed at the
    sub-table)."""
    if path not in lines or path in implied:
        lines[path] = number
        implied.discard(path)
    for end in range(1, len(path)):
        if path[:end] not in lines:
            lines[path[:end]] = number
            implied.add(path[:end])


def _scan_value(text: str, depth: int) -> tuple[int, str]:
    """Bracket depth after ``text`` and the multi-line string left open, if any."""
    i = 0
    while i < len(text):
        c = text[i]
        if c == "#":
            break
        if text.startswith(('"""', "'''"), i):
            delim = text[i:i + 3]
            end = text.find(delim, i + 3)
            if end < 0:
                return depth, delim
            i = end + 3
            continue
        if c in "\"'":
            end = i + 1
            while end < len(text) and text[end] != c:
                end += 2 if c == '"' and text[end] == "\\" else 1
            i = end + 1
            continue
        if c in "[{":
            depth += 1
        elif c in "]}":
            depth = max(0, depth - 1)
        i += 1
    return depth, ""


def line_of(lines: dict[tuple[str, ...], int], *path: str) -> int | None:
    """The line of ``path``, or of the nearest enclosing table that has one."""
    key = tuple(path)
    while key:
        if key in lines:
            return lines[key]
        key = key[:-1]
    return None
