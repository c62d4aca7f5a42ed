"""A small, varied game log for the log tests and the SIGKILL writer subprocess."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import msgpack

from protocols import events as ev
from protocols.tiles import parse_mpsz
from replay.log import GameLogWriter, Header


def sample_header() -> Header:
    return Header(platform="tenhou", variant="riichi", seat=1, policy="greedy",
                  policy_config={"depth": 2, "weights": [1.0, 0.5]}, game_id="2026112101gm-0001",
                  started="2026-11-21T10:00:00", mjbot_version="0.1.0",
                  extra={"lobby": 0, "type": 64})


def sample_hand(hand_no: int) -> list[tuple[str, object]]:
    """(method, argument) pairs that a session would write for one short hand."""
    hand = tuple(parse_mpsz("123m456p789s11z234m"))
    steps: list[tuple[str, object]] = [
        ("rx", f'<INIT seed="{hand_no},0,0,1,2,3" ten="250,250,250,250" oya="0"/>'.encode()),
        ("event", ev.RoundStarted(round_wind=0, dealer=0, scores=(25000,) * 4,
                                  dora_indicators=(parse_mpsz("5z")[0],), hand=hand,
                                  round_number=hand_no)),
        ("rx", b"<T36/>"),
        ("event", ev.TileDrawn(seat=1, tile=parse_mpsz("0m")[0])),
        ("decision", (ev.DecisionRequest("turn", frozenset({"riichi", "discard"}), 12.5),
                      (ev.Discard(hand[0]), ev.Discard(hand[9], riichi=True)),
                      ev.Discard(hand[9], riichi=True), "greedy",
                      ((ev.Discard(hand[9], riichi=True), 0.75), (ev.Discard(hand[0]), 0.25)),
                      0.0123, "")),
        ("tx", '<REACH hai="108"/>'),
        ("event", ev.RiichiDeclared(seat=1)),
        ("event", ev.MeldCalled(seat=2, kind="pon", tiles=tuple(parse_mpsz("555z")),
                                called=parse_mpsz("5z")[0], from_seat=1)),
        ("decision", (ev.DecisionRequest("claim", None, None, parse_mpsz("7p")[0], 0),
                      (ev.Pass(), ev.Chi(tuple(parse_mpsz("68p")))), ev.Pass(), "greedy", (),
                      0.001, "timeout")),
        ("event", ev.RoundWon(winner=1, from_seat=None, hand=(*hand, hand[0]),
                              win_tile=hand[0], value=3, deltas=(-2000, 6000, -2000, -2000),
                              yaku=("立直(1飜)",), ura_dora_indicators=(0,), detail="30符3飜")),
    ]
    return steps


def write_steps(writer: GameLogWriter, steps: list[tuple[str, object]]) -> None:
    for method, arg in steps:
        if method == "decision":
            assert isinstance(arg, tuple), arg  # GameLogWriter.decision's arguments
            writer.decision(*arg)
        else:
            getattr(writer, method)(arg)


def log_frames(path: Path) -> list[dict[str, Any]]:
    """A game log's frames as the plain maps it holds, for a test to rewrite."""
    unpacker = msgpack.Unpacker(raw=False, strict_map_key=False, max_buffer_size=0)
    unpacker.feed(path.read_bytes())
    return list(unpacker)


def write_frames(path: Path, frames: list[dict[str, Any]]) -> Path:
    """``frames`` (plain maps) written to ``path`` as a game log holds them."""
    path.write_bytes(b"".join(msgpack.packb(f, use_bin_type=True) for f in frames))
    return path
