"""The one session loop (adapter/session.py) under the line-based platforms: NTPU and mjai
are CodecSessions over their codecs, and a line their codec refuses gets the platform's safe
answer and one logged error naming the line, through the same steps."""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest

from adapter.platforms.mjai import MjaiBot, MjaiSettings
from adapter.platforms.ntpu import NtpuBot, NtpuSettings
from adapter.session import CodecSession
from protocols.codec import Codec
from protocols.mjai import MjaiCodec
from protocols.ntpu import NtpuCodec

SESSIONS: dict[str, Callable[[], CodecSession]] = {
    "ntpu": lambda: NtpuBot(NtpuSettings(write_log=False)),
    "mjai": lambda: MjaiBot(MjaiSettings(write_log=False)),
}


@pytest.mark.parametrize("platform", sorted(SESSIONS))
def test_line_platforms_run_the_one_session_over_their_codec(platform: str) -> None:
    session = SESSIONS[platform]()
    try:
        assert isinstance(session, CodecSession)
        assert isinstance(session.codec, Codec)
        assert isinstance(session.codec, {"ntpu": NtpuCodec, "mjai": MjaiCodec}[platform])
        assert session.platform == platform
        assert session.state.variant == session.codec.variant
    finally:
        session.close()


@pytest.mark.parametrize(("platform", "line", "safe", "named"), [
    ("ntpu", "/ask throw", "/pass", "before /start"),
    ("ntpu", "/teleport 3", None, "unknown command"),
    ("mjai", json.dumps({"type": "teleport"}), '{"type": "none"}', "unknown type"),
    ("mjai", "{not json", '{"type": "none"}', "not JSON"),
])
def test_a_refused_line_gets_the_safe_answer_and_one_error(platform: str, line: str,
                                                           safe: str | None,
                                                           named: str) -> None:
    session = SESSIONS[platform]()
    try:
        assert session.handle(line) == safe
        (error,) = session.summary.errors
        assert named in error and "\n" not in error
        assert session.summary.decisions == 0
    finally:
        session.close()


@pytest.mark.asyncio
async def test_the_awaited_step_reads_the_same_way() -> None:
    session = NtpuBot(NtpuSettings(write_log=False))
    try:
        assert await session.handle_async("/start MJ 2 mjbot") is None
        assert await session.handle_async("/ready") == "/ready"
        assert session.summary.games == 1 and session.summary.errors == []
    finally:
        session.close()
