"""The argparse types that take a number of seconds or a share within bounds: each edge
taken or refused as its option says, and every refusal one line naming what it takes."""

from __future__ import annotations

import argparse

import pytest

from adapter.argtypes import positive_seconds
from adapter.commands import _share
from adapter.commands.tenhou import _absent_seconds

CASES = [
    # (type, taken: text -> value, refused, the refusal's words)
    (positive_seconds, {"1e-9": 1e-9, "2.5": 2.5, "3600": 3600.0, " 7 ": 7.0},
     ["0", "-0", "-1", "3600.001", "nan", "inf", "-inf", "", "soon", "1,5"],
     "seconds above 0 (at most 3600)"),
    (_share, {"0": 0.0, "-0": 0.0, "0.01": 0.01, "1": 1.0, "1e-3": 0.001},
     ["-0.001", "1.0001", "nan", "inf", "", "a", "50%"], "a share between 0 and 1"),
    (_absent_seconds, {"0": 0.0, "1.5": 1.5, "3600": 3600.0},
     ["-1e-9", "3600.5", "nan", "inf", "-inf", "", "later"], "seconds from 0 to 3600"),
]


@pytest.mark.parametrize(("kind", "taken", "refused", "words"), CASES,
                         ids=["positive_seconds", "share", "absent_seconds"])
def test_bounded_numbers_take_their_edges_and_refuse_past_them(kind, taken, refused, words):
    for text, value in taken.items():
        got = kind(text)
        assert got == value and type(got) is float, text
    for text in refused:
        with pytest.raises(argparse.ArgumentTypeError) as refusal:
            kind(text)
        assert str(refusal.value) == f"{words}, not {text!r}"

