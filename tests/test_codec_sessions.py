"""The one session (adapter/session.py): NTPU and mjai are CodecSessions over their codecs
(the loop is the session's), Tenhou a PlatformSession driving the same steps from its own
loop; a message a codec refuses gets the platform's safe answer and one logged error naming
it."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from adapter.platforms.mjai import MjaiBot, MjaiSettings
from adapter.platforms.ntpu import NtpuBot, NtpuSettings
from adapter.platforms.tenhou import TenhouBot, TenhouSettings
from adapter.session import CodecSession, PlatformSession
from protocols.codec import Codec
from protocols.mjai import MjaiCodec
from protocols.ntpu import NtpuCodec
from protocols.tenhou import format_tag, parse_tag

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


async def test_the_awaited_step_reads_the_same_way() -> None:
    session = NtpuBot(NtpuSettings(write_log=False))
    try:
        assert await session.handle_async("/start MJ 2 mjbot") is None
        assert await session.handle_async("/ready") == "/ready"
        assert session.summary.games == 1 and session.summary.errors == []
    finally:
        session.close()


async def test_tenhou_drives_the_same_session_steps_from_its_own_loop(tmp_path: Path) -> None:
    bot = TenhouBot(TenhouSettings(log_dir=str(tmp_path)))
    try:
        assert isinstance(bot, PlatformSession) and not isinstance(bot, CodecSession)
        assert [format_tag(t) for t in bot.hello()] == bot.codec.greeting()
        replies = await bot.handle("<T999/>", parse_tag("<T999/>"))
        # an unreadable draw with no id in range: left to Tenhou's clock, which discards the
        # drawn tile (TenhouCodec.unread_draw_reply), so nothing is sent; the error is logged
        assert replies == []
        (error,) = bot.summary.errors
        assert "bad tile id" in error and "<T999/>" in error
    finally:
        bot.close()
