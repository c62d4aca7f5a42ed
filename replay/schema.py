"""The explicit on-disk schema of events, decision requests and actions.

Each object becomes a msgpack map ``{"type": <class name>, <field>: <value>, ...}`` with only
plain values (ints, strings, lists, maps), never pickle, so a log can be read by any language and
survives refactors of our classes. Field names are those of :mod:`protocols.events` (a contract:
fields are added, never renamed); on reading, missing fields take their defaults and unknown
ones are rejected with :class:`SchemaError`, which names what was wrong. A game log is read
leniently (``ignored``): what a newer mjbot added, a type (:class:`UnknownType`) or a field, is
told apart from damage by its name (and, in replay/log.py, by the build that wrote it), so
that a log it wrote is read by an older one.
"""

from __future__ import annotations

import dataclasses
import re
from collections import Counter
from typing import Any

from protocols import events as ev

SCHEMA_VERSION = 1

# type name -> (class, field names, fields holding a frozenset, fields holding nested tuples)
_TYPES: dict[str, type] = {
    cls.__name__: cls for cls in (*ev.EVENT_TYPES, *ev.ACTION_TYPES, ev.DecisionRequest)
}
_FIELDS: dict[type, tuple[str, ...]] = {
    cls: tuple(f.name for f in dataclasses.fields(cls)) for cls in _TYPES.values()
}
_SET_FIELDS = {"offered"}
_NESTED_TUPLE_FIELDS = {"hands"}
_DICT_FIELDS = {"rules"}
# the names a writer gives: a class name, a field name (and, in replay/log.py, a frame kind
# or a header field: the same rule). Anything else where one is expected is damage, never a
# newer version's addition
_TYPE_NAME = re.compile(r"[A-Z][A-Za-z0-9]{0,63}")
FIELD_NAME = re.compile(r"[a-z][a-z0-9_]{0,63}")


class SchemaError(ValueError):
    """A stored object does not match the schema (unknown type, unknown field, bad value)."""


class UnknownType(SchemaError):
    """A type this version does not know, named as our classes are: one a newer mjbot added
    (or one ours forgot: :func:`encode` refuses to write those, so our own logs never hold
    one)."""

    def __init__(self, name: str) -> None:
        super().__init__(f"unknown object type {name!r}")
        self.name = name

    def __reduce__(self) -> tuple[Any, ...]:  # pickle would call __init__(the message) alone
        return (type(self), (self.name,))


def encode(obj: Any) -> dict[str, Any]:
    """An event, request or action as a plain map."""
    cls = type(obj)
    names = _FIELDS.get(cls)
    if names is None:
        raise SchemaError(f"cannot encode {cls.__name__}: not an event, request or action")
    out: dict[str, Any] = {"type": cls.__name__}
    for name in names:
        value = getattr(obj, name)
        if isinstance(value, frozenset):
            value = sorted(value)
        elif isinstance(value, tuple):
            value = [list(v) if isinstance(v, tuple) else v for v in value]
        out[name] = value
    return out


def decode(data: Any, ignored: Counter[str] | None = None) -> Any:
    """The object a map from :func:`encode` stands for. With ``ignored`` (a game log's
    reader), a field this version does not know, named as ours are, is left out and counted
    there as ``Type.field``; without it, it is an error."""
    if not isinstance(data, dict):
        raise SchemaError(f"expected a map with a 'type', got {type(data).__name__}")
    name = data.get("type")
    cls = _TYPES.get(name) if isinstance(name, str) else None
    if cls is None:
        if isinstance(name, str) and _TYPE_NAME.fullmatch(name):
            raise UnknownType(name)
        raise SchemaError(f"unknown object type {name!r}")
    names = _FIELDS[cls]
    kwargs: dict[str, Any] = {}
    for key, value in data.items():
        if key == "type":
            continue
        if key not in names:
            if ignored is None or not isinstance(key, str) or not FIELD_NAME.fullmatch(key):
                raise SchemaError(f"{name} has no field {key!r}")
            ignored[f"{name}.{key}"] += 1
            continue
        kwargs[key] = _field_value(key, value)
    try:
        return cls(**kwargs)
    except TypeError as exc:
        raise SchemaError(f"{name}: {exc}") from None


def _field_value(key: str, value: Any) -> Any:
    if key in _DICT_FIELDS:
        if not isinstance(value, dict):
            raise SchemaError(f"field {key!r} must be a map")
        return value
    if isinstance(value, list):
        if key in _SET_FIELDS:
            return frozenset(value)
        if key in _NESTED_TUPLE_FIELDS:
            return tuple(tuple(v) if isinstance(v, list) else v for v in value)
        return tuple(value)
    return value


def encode_many(objs: list[Any] | tuple[Any, ...]) -> list[dict[str, Any]]:
    return [encode(o) for o in objs]


def decode_many(data: Any, ignored: Counter[str] | None = None) -> list[Any]:
    if not isinstance(data, list):
        raise SchemaError(f"expected a list of objects, got {type(data).__name__}")
    return [decode(d, ignored) for d in data]
