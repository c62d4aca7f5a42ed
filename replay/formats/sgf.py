"""SGF text (Smart Game Format, FF[4]) to game trees of nodes: the syntax only.

What the properties mean is the game's business (:mod:`replay.formats.nycu_sgf` for the NYCU lab's
mahjong records). Collections of several trees are read; a tree that branches is refused, since
a game record has one line of play and a branching file is a search tree. Errors are
:class:`~replay.record.RecordError` naming the offset or the node, with ``label`` (the format's
name) first. A file cut short (a copy broken off) is no error: the nodes read whole before the
cut are kept, and where the text ended is said (:func:`parse_trees`).
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


class _Cut(Exception):
    """The text ended inside a node (a property with no value yet, a value not closed)."""


def parse_trees(text: str, label: str = "sgf") -> tuple[list[list[Node]], str | None]:
    """The game trees of an SGF collection, each a list of nodes, and None; or, of a file
    cut short, the trees before the cut, the nodes of the cut one read whole (a last
    node the text ends inside, or a first node it ends right after, whose properties may
    go on, is left out), and where the text ended. A tree that branches (a search tree of
    the lab's players, ``;(;E[...])``) is refused: it is no game record."""
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
                return _cut(trees, nodes, inside=False)
            if text[i] == ";":
                try:
                    node, i = _node(text, i, len(nodes) + 1, label)
                except _Cut:
                    return _cut(trees, nodes, inside=True)
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
    return trees, None


def _cut(trees: list[list[Node]], nodes: list[Node], inside: bool
         ) -> tuple[list[list[Node]], str]:
    """The trees of a file cut in tree ``len(trees) + 1``, of whose nodes ``nodes`` were read
    whole (``inside``: the text ended inside the next one), and where the text ended."""
    tree = len(trees) + 1
    after = f" (after {nodes[-1].text})" if nodes else ""
    said = (f"game tree {tree} ends inside node {len(nodes) + 1}{after}" if inside
            else f"game tree {tree} ends after node {len(nodes)}{after}, with no ')'" if nodes
            else f"game tree {tree} ends before its first node")
    if not inside and len(nodes) == 1:
        nodes = []  # a first node's properties may go on past the cut (a wall half read)
    return [*trees, nodes] if nodes else trees, said


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
            value, i = _value(text, i)
            values.append(value)
            i = _skip(text, i)
        if not values:
            if i >= len(text):
                raise _Cut
            raise RecordError(f"{label}: node {number} at offset {start}: property {name} "
                              f"has no [value]")
        props.append((name, tuple(values)))
    snippet = " ".join(text[start:i].split())
    if len(snippet) > _SNIPPET:
        snippet = snippet[:_SNIPPET - 3] + "..."
    return Node(number, start, snippet, tuple(props)), i


def _value(text: str, i: int) -> tuple[str, int]:
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
    raise _Cut
