"""The one codec contract (protocols/codec.py), held by all four platform codecs: each is a
Codec, reads malformed input into a ProtocolError that carries the input, writes its answers
as the wire type it declares, and never lets anything but a ProtocolError out of ``feed``."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from protocols import botzone, mjai, ntpu, tenhou
from protocols import events as ev
from protocols import tiles as T
from protocols.botzone import BotzoneCodec
from protocols.codec import (
    RAW_SHOWN,
    Codec,
    EncodeError,
    MalformedMessage,
    ProtocolError,
    UnexpectedMessage,
    UnsupportedMessage,
)
from protocols.mjai import MjaiCodec
from protocols.ntpu import NtpuCodec
from protocols.tenhou import TenhouCodec, split_tags
from tests.test_ntpu_codec import _codec as ntpu_dealt
from tests.test_tenhou_codec import _seated as tenhou_dealt

BOTZONE_HAND = "W1 W2 W3 W4 W5 W6 W7 W8 W9 B1 B1 B2 B3"
MJAI_TEHAI = ["1m", "2m", "3m", "4m", "5m", "6m", "7m", "8m", "9m", "1p", "1p", "2p", "3p"]


def botzone_dealt() -> BotzoneCodec:
    codec = BotzoneCodec()
    codec.feed("0 0 0")
    codec.feed(f"1 0 0 0 0 {BOTZONE_HAND}")
    codec.feed("2 T5")
    return codec


def mjai_dealt() -> MjaiCodec:
    codec = MjaiCodec()
    codec.feed(json.dumps({"type": "start_game", "id": 0, "names": ["a", "b", "c", "d"]}))
    codec.feed(json.dumps({
        "type": "start_kyoku", "bakaze": "E", "kyoku": 1, "honba": 0, "kyotaku": 0, "oya": 0,
        "dora_marker": "1s", "scores": [25000] * 4, "tehais": [MJAI_TEHAI] + [["?"] * 13] * 3}))
    codec.feed(json.dumps({"type": "tsumo", "actor": 0, "pai": "5s"}))
    return codec


# Each codec, dealt a hand and on its own turn, with a tile of that hand it can discard, and
# a few lines it must refuse (with the error class the refusal is).
CASES: dict[str, tuple[Callable[[], Codec], int, list[tuple[str, type[ProtocolError]]]]] = {
    "botzone": (botzone_dealt, T.from_botzone("T5"), [
        ("9 1 2", UnsupportedMessage), ("3 7 PLAY W1", MalformedMessage),
        ("3 1 PLAY X9", MalformedMessage), ("3 2 PENG W1", UnexpectedMessage),
        ("3 1 JUMP", UnsupportedMessage), ("", MalformedMessage)]),
    "ntpu": (lambda: ntpu_dealt(seat=1, dealer=1, hand="121 122 142 143 152 220 241 260 270 "
                                                       "342 351 370 383 390 462 463 111"),
             T.parse_mpsz("1m")[0], [
        ("/teleport 1", UnsupportedMessage), ("/throw 9 111", MalformedMessage),
        ("/throw 2 121", UnexpectedMessage), ("/mo", MalformedMessage),
        ("/ask dance", UnsupportedMessage), ("   ", MalformedMessage)]),
    "tenhou": (lambda: _tenhou_on_turn(), T.from_tenhou_id(113), [
        ("<NOSUCHTAG/>", UnsupportedMessage), ("not a tag", MalformedMessage),
        ('<N who="7" m="1"/>', MalformedMessage), ("<D0/>", UnexpectedMessage),
        ('<INIT seed="1,2"/>', MalformedMessage)]),
    "mjai": (mjai_dealt, T.parse_mpsz("5s")[0], [
        ('{"type": "teleport"}', UnsupportedMessage), ("{not json", MalformedMessage),
        ('[1, 2]', MalformedMessage), ('{"type": "dahai", "actor": 9, "pai": "1m"}',
                                        MalformedMessage),
        ('{"type": "tsumo", "actor": 1, "pai": "10m"}', MalformedMessage)]),
}


def _tenhou_on_turn() -> TenhouCodec:
    codec = tenhou_dealt(oya=0)
    codec.feed('<T113 t="0"/>')
    return codec


@pytest.mark.parametrize("name", sorted(CASES))
def test_each_codec_is_a_codec_constructible_with_defaults(name: str) -> None:
    cls = {"botzone": BotzoneCodec, "ntpu": NtpuCodec, "tenhou": TenhouCodec,
           "mjai": MjaiCodec}[name]
    codec = cls()
    assert isinstance(codec, Codec)
    assert codec.platform == name
    assert codec.variant == {"botzone": "mcr", "ntpu": "taiwan16"}.get(name, "riichi")
    assert codec.wire is str
    assert all(isinstance(g, codec.wire) for g in codec.greeting())


@pytest.mark.parametrize("name", sorted(CASES))
def test_malformed_input_raises_a_protocol_error_carrying_it(name: str) -> None:
    make, _, bad = CASES[name]
    for text, kind in bad:
        codec = make()
        with pytest.raises(ProtocolError) as info:
            codec.feed(text)
        exc = info.value
        assert type(exc) is kind, (text, exc)
        assert isinstance(exc, ValueError)  # older `except ValueError` guards still hold
        assert isinstance(exc.raw, str)
        # the raw is the input (Tenhou: the tag as read; mjai: the object as JSON)
        assert exc.raw.strip() == text.strip() or (name in ("tenhou", "mjai") and exc.raw), \
            (text, exc.raw)
        assert exc.message and "\n" not in str(exc)


@pytest.mark.parametrize("name", sorted(CASES))
def test_encode_of_pass_and_discard_returns_the_declared_wire_type(name: str) -> None:
    make, tile, _ = CASES[name]
    codec = make()
    turn = ev.DecisionRequest("turn")
    passed = codec.encode(ev.Pass(), ev.DecisionRequest("claim", tile=0, from_seat=1))
    discarded = codec.encode(ev.Discard(tile), turn)
    assert isinstance(passed, codec.wire) and passed
    assert isinstance(discarded, codec.wire) and discarded
    expected = {"botzone": ("PASS", "PLAY T5"), "ntpu": ("/pass", "/throw 111"),
                "tenhou": ("<N/>", '<D p="113"/>'),
                "mjai": ('{"type": "none"}',
                         '{"type": "dahai", "actor": 0, "pai": "5s", "tsumogiri": true}')}
    assert (passed, discarded) == expected[name]


@pytest.mark.parametrize("name", sorted(CASES))
def test_an_answer_the_platform_has_not_is_an_encode_error(name: str) -> None:
    make, _, _ = CASES[name]
    codec = make()
    with pytest.raises(EncodeError) as info:
        codec.encode(ev.Discard(T.parse_mpsz("7z")[0]), ev.DecisionRequest("turn")) \
            if name in ("ntpu", "tenhou") else codec.encode(object())
    assert info.value.raw


def test_protocol_error_keeps_the_whole_input_and_shows_its_start() -> None:
    raw = "x" * (RAW_SHOWN * 3)
    exc = MalformedMessage("too long", raw)
    assert exc.raw == raw and exc.message == "too long"
    assert str(exc) == f"too long: {raw[:RAW_SHOWN]!r}"
    assert ProtocolError("m", {"type": "x"}).raw == '{"type": "x"}'
    assert ProtocolError("m", b"<Z/>").raw == "<Z/>"


def test_the_per_codec_error_classes_are_gone() -> None:
    for module, name in ((botzone, "BotzoneError"), (ntpu, "NtpuError"),
                         (tenhou, "TenhouError"), (mjai, "MjaiError")):
        assert not hasattr(module, name)


def test_tenhou_greets_first_and_its_encode_splits_into_the_tags() -> None:
    assert TenhouCodec().greeting() == ['<HELO name="NoName" tid="f0" sx="M"/>']
    assert TenhouCodec(websocket=True).greeting() == ['<HELO name="NoName" sx="M"/>']
    codec = _tenhou_on_turn()
    text = codec.encode(ev.Discard(T.from_tenhou_id(113), riichi=True))
    assert text == '<REACH hai="113"/><D p="113"/>'
    assert split_tags(text) == codec.reply_tags(ev.Discard(T.from_tenhou_id(113), riichi=True))


def test_mjai_encodes_an_added_kan_through_the_contract() -> None:
    codec = mjai_dealt()
    codec.feed(json.dumps({"type": "dahai", "actor": 0, "pai": "9m", "tsumogiri": False}))
    codec.feed(json.dumps({"type": "tsumo", "actor": 1, "pai": "?"}))
    codec.feed(json.dumps({"type": "dahai", "actor": 1, "pai": "1p", "tsumogiri": True}))
    codec.feed(json.dumps({"type": "pon", "actor": 0, "target": 1, "pai": "1p",
                           "consumed": ["1p", "1p"]}))
    answer = json.loads(codec.encode(ev.Kan("added_kan", (T.parse_mpsz("1p")[0],))))
    assert answer == {"type": "kakan", "actor": 0, "pai": "1p", "consumed": ["1p", "1p", "1p"]}
    fresh = mjai_dealt()
    with pytest.raises(EncodeError, match="no pon"):
        fresh.encode(ev.Kan("added_kan", (T.parse_mpsz("1p")[0],)))


# ---------------------------------------------------------------------- fuzzing feed


def _feed_only_protocol_errors(codec: Codec, message: Any) -> None:
    try:
        codec.feed(message)
    except ProtocolError as exc:
        assert exc.raw is not None and "\n" not in str(exc)


_BOTZONE_TOKENS = ["0", "1", "2", "3", "4", "-1", "9", "PLAY", "PENG", "CHI", "GANG", "BUGANG",
                   "BUHUA", "DRAW", "W1", "B9", "T5", "F4", "J3", "H8", "Z1", "W0", "", "W"]


@settings(max_examples=500, deadline=None)
@given(st.lists(st.lists(st.sampled_from(_BOTZONE_TOKENS), max_size=8), max_size=12))
def test_fuzz_botzone_request_soup_raises_only_protocol_errors(lines: list[list[str]]) -> None:
    codec = botzone_dealt()
    for tokens in lines:
        _feed_only_protocol_errors(codec, " ".join(tokens))


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=80))
def test_fuzz_botzone_any_text_raises_only_protocol_errors(text: str) -> None:
    _feed_only_protocol_errors(botzone_dealt(), text)


_MJAI_TYPES = ["start_game", "start_kyoku", "tsumo", "dahai", "chi", "pon", "daiminkan",
               "kakan", "ankan", "dora", "reach", "reach_accepted", "hora", "ryukyoku",
               "end_kyoku", "end_game", "none", "error", "hello", "nosuch"]
_JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 200) | st.sampled_from(
        ["1m", "5mr", "E", "P", "?", "10z", "", "x"]),
    lambda inner: st.lists(inner, max_size=14) | st.dictionaries(st.text(max_size=3), inner,
                                                                 max_size=3),
    max_leaves=20)
_MJAI_FIELDS = ["actor", "target", "pai", "consumed", "tehais", "bakaze", "oya", "scores",
                "dora_marker", "kyoku", "id", "names", "deltas", "tsumogiri"]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(_MJAI_TYPES),
                          st.dictionaries(st.sampled_from(_MJAI_FIELDS), _JSON_VALUES,
                                          max_size=6)), max_size=10))
def test_fuzz_mjai_messages_raise_only_protocol_errors(
        messages: list[tuple[str, dict[str, Any]]]) -> None:
    codec = mjai_dealt()
    for kind, fields in messages:
        _feed_only_protocol_errors(codec, json.dumps({"type": kind, **fields}))


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=80) | _JSON_VALUES.map(json.dumps))
def test_fuzz_mjai_any_text_raises_only_protocol_errors(text: str) -> None:
    _feed_only_protocol_errors(mjai_dealt(), text)


def test_json_nested_too_deeply_for_the_parser_is_a_protocol_error() -> None:
    """json raises RecursionError, not a decode error, on deep nesting: the codecs that read
    JSON text report it as malformed input like any other."""
    deep = "[" * 100_000 + "]" * 100_000
    with pytest.raises(ProtocolError, match="nested too deeply"):
        MjaiCodec().feed(deep)
    with pytest.raises(ProtocolError, match="nested too deeply"):
        tenhou.tag_from_json('{"tag": ' + deep + "}")
