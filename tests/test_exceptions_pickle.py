"""Every exception class of ours survives pickling: a worker process (the arena's and
self-play's pools, Ray) hands an exception back pickled, and a class whose ``__init__``
takes other arguments than it passes to ``Exception.__init__`` could not be re-created
there (UnknownKey: "__init__() missing 1 required positional argument"), a confusing error
in place of the real one."""

from __future__ import annotations

import importlib
import inspect
import pickle
import pkgutil
from typing import Any

import pytest

PACKAGES = ("protocols", "brain", "replay", "adapter")
OPTIONAL = ("torch", "ray")  # extras: a module needing one is left out where it is missing

# a value for each annotation an exception's __init__ takes (a new one: add it here)
SAMPLES: dict[str, Any] = {
    "str": "something wrong",
    "int": 2,
    "float": 1.5,
    "bool": True,
    "object": "raw input",
    "Any": "raw input",
    "list[tuple[str, str]]": [("tenhou6", "not JSON"), ("mjai", "no start_game")],
    "str | None": "tenhou6",
    "float | None": 3.25,
    "tuple[str, str] | None": ("mjlog", "cut short"),
    "dict[str, Any] | None": {"hands": 12},
}
BY_NAME: dict[str, Any] = {"signum": 15}  # where the type alone allows values that are wrong


def _our_exceptions() -> list[type[BaseException]]:
    for package in PACKAGES:
        root = importlib.import_module(package)
        for module in pkgutil.walk_packages(root.__path__, f"{package}."):
            try:
                importlib.import_module(module.name)
            except ImportError as exc:
                if (exc.name or "").split(".")[0] not in OPTIONAL:
                    raise
    found: list[type[BaseException]] = []
    todo = [BaseException]
    while todo:
        for sub in todo.pop().__subclasses__():
            todo.append(sub)
            if sub.__module__.split(".")[0] in PACKAGES and sub not in found:
                found.append(sub)
    return sorted(found, key=lambda c: f"{c.__module__}.{c.__qualname__}")


EXCEPTIONS = _our_exceptions()


def _instance(cls: type[BaseException]) -> BaseException:
    """``cls`` made with a value for every argument its __init__ takes, defaults too."""
    if "__init__" not in {k for c in cls.__mro__ if c.__module__.split(".")[0] in PACKAGES
                          for k in vars(c)}:
        return cls("something wrong")
    params = list(inspect.signature(cls.__init__).parameters.values())[1:]
    missing = [p.annotation for p in params if p.annotation not in SAMPLES]
    assert not missing, f"{cls.__qualname__}: add a sample for {missing}"
    return cls(**{p.name: BY_NAME.get(p.name, SAMPLES[p.annotation]) for p in params})


def test_the_walk_finds_our_exceptions() -> None:
    names = {c.__qualname__ for c in EXCEPTIONS}
    assert {"UnknownKey", "ProtocolError", "TileError", "SeatFault", "UserInputError"} <= names


@pytest.mark.parametrize("cls", EXCEPTIONS, ids=lambda c: f"{c.__module__}.{c.__qualname__}")
def test_each_of_our_exceptions_pickles_round_trip(cls: type[BaseException]) -> None:
    exc = _instance(cls)
    back = pickle.loads(pickle.dumps(exc))
    assert type(back) is cls
    assert str(back) == str(exc) and back.args == exc.args
    assert vars(back) == vars(exc)
