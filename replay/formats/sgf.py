"""SGF text (Smart Game Format, FF[4]) to game trees of nodes: the syntax only.

What the properties mean is the game's business (:mod:`replay.formats.nycu_sgf` for the NYCU lab's
mahjong records). Collections of several trees are read; a tree that branches is refused, since
a game record has one line of play and a branching file is a search tree. Errors are
:class:`~replay.record.RecordError` naming the offset or the node, with ``label`` (the format's
name) first.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from replay.record import RecordError

_NAME = re.compile(r"[A-Za-z]+")
_SNIPPET = 40  # characters of a node's text in an error message


@dataclass(frozen=True)
class Node:
    """One ``;`` node: ``number`` counts from 1 within its tree, ``offset`` is its ``;``."""

    number: int
    offset: int
    text: str
    properties: tuple[tuple[str, tuple[str, ...]], ...]


def parse_trees(text: str, label: str = "sgf") -> list[list[Node]]:
    """The game trees of an SGF collection, each a list of nodes. A tree that branches (a
    search tree of the lab's players, ``;(;E[...])``) is refused: it is no game record."""
    trees: list[list[Node]] = []
    i, n = _skip(text, 0), len(text)
    if not text.startswith("(", i):
        raise RecordError(f"{label}: an SGF starts with '(;', this starts with "
                          f"{text[i:i + 10]!r}")
    while i < n:
        if text[i] != "(":
            raise RecordError(f"{label}: {text[i]!r} at offset {i}, between game trees")
        i = _skip(text, i + 1)
        nodes: list[Node] = []
        while True:
            if i >= n:
                where = f"after node {nodes[-1].number}" if nodes else "at its start"
                raise RecordError(f"{label}: cut short: game tree {len(trees) + 1} has no ')' "
                                  f"({where})")
            if text[i] == ";":
                node, i = _node(text, i, len(nodes) + 1, label)
                nodes.append(node)
            elif text[i] == ")":
                i += 1
                break
            elif text[i] == "(":
                raise RecordError(f"{label}: a search-tree SGF, not a game record (a branch "
                                  f"at offset {i}, after node {len(nodes)})")
            else:
                raise RecordError(f"{label}: unexpected {text[i]!r} at offset {i} (after "
                                  f"node {len(nodes)})")
            i = _skip(text, i)
        if not nodes:
            raise RecordError(f"{label}: game tree {len(trees) + 1} has no node")
        trees.append(nodes)
        i = _skip(text, i)
    return trees


def _skip(text: str, i: int) -> int:
    while i < len(text) and text[i].isspace():
        i += 1
    return i


def _node(text: str, start: int, number: int, label: str) -> tuple[Node, int]:
    """The node whose ``;`` is at ``start``, and the offset after it."""
    props: list[tuple[str, tuple[str, ...]]] = []
    i = _skip(text, start + 1)
    while i < len(text) and text[i] not in ";()":
        m = _NAME.match(text, i)
        if m is None:
            raise RecordError(f"{label}: node {number} at offset {start}: unexpected "
                              f"{text[i]!r} where a property name should be")
        name, i = m.group(), _skip(text, m.end())
        values: list[str] = []
        while i < len(text) and text[i] == "[":
            value, i = _value(text, i, number, start, label)
            values.append(value)
            i = _skip(text, i)
        if not values:
            raise RecordError(f"{label}: node {number} at offset {start}: property {name} "
                              f"has no [value]")
        props.append((name, tuple(values)))
    snippet = " ".join(text[start:i].split())
    if len(snippet) > _SNIPPET:
        snippet = snippet[:_SNIPPET - 3] + "..."
    return Node(number, start, snippet, tuple(props)), i


def _value(text: str, i: int, number: int, start: int, label: str) -> tuple[str, int]:
    """A ``[...]`` value from offset ``i`` (``\\`` escapes the next character)."""
    out: list[str] = []
    i += 1
    while i < len(text):
        c = text[i]
        if c == "]":
            return "".join(out), i + 1
        if c == "\\" and i + 1 < len(text):
            i += 1
            if text[i] != "\n":  # an escaped newline is a soft line break
                out.append(text[i])
        else:
            out.append(c)
        i += 1
    raise RecordError(f"{label}: cut short inside a value of node {number} (offset {start})")
