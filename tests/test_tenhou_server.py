"""The fake Tenhou server as a client sees it, read off a raw loopback socket: what arrives in
one read, the answers it takes and drops, reconnections, absent seats, the values at the end
of a hand and of a game (checked against real captures in ../shared/protocols/tenhou.md)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from adapter.local.tenhou_server import FakeTenhouServer
from protocols.tenhou import auth_reply, parse_tag
from tests.tenhou_raw import GameSeen, RawClient


@asynccontextmanager
async def _server(**kwargs: object) -> AsyncIterator[tuple[FakeTenhouServer, int]]:
    server = FakeTenhouServer(**{"time_limit": 5.0, **kwargs})  # type: ignore[arg-type]
    port = await server.start_tcp()
    try:
        yield server, port
    finally:
        await server.close()


def _attrs(text: str) -> dict[str, str]:
    return parse_tag(text).attrs


async def _one_game(port: int, **play: object) -> GameSeen:
    client = await RawClient.connect(port)
    try:
        await client.login()
        return await client.play(**play)  # type: ignore[arg-type]
    finally:
        await client.close()


# ---------------------------------------------------------------------- answers (item 3)


async def test_a_second_answer_in_the_same_read_is_dropped() -> None:
    """tenhou-python-bot answers some offers twice in one write: the second answer must not
    be read as the answer to the next request."""
    offers = []

    def twice(text: str) -> list[str]:
        offers.append(text)
        return ["<N/>", "<N/>"]

    async with _server(seed=3) as (server, port):
        seen = await _one_game(port, offer=twice)
        await asyncio.wait_for(server.finished.wait(), 10)
    assert offers, "no offer to answer in this game: pick another seed"
    assert server.stats.illegal == 0, server.stats.problems
    assert server.stats.timeouts == 0, server.stats.problems
    # every discard we sent is the one the server made
    assert seen.discards and all(sent == echoed for sent, echoed in seen.discards), \
        [d for d in seen.discards if d[0] != d[1]][:5]
    dropped = [p for p in server.stats.problems if p.startswith("dropped")]
    assert len(dropped) == len(offers), server.stats.problems


# ---------------------------------------------------------------------- one read (item 5)


async def test_prof_arrives_with_the_final_result_in_one_read() -> None:
    async with _server(seed=2) as (_, port):
        seen = await _one_game(port)
    (read,) = [r for r in seen.reads if any(t.startswith("<PROF") for t in r)]
    names = [parse_tag(t).name for t in read]
    assert names[-2:] in (["PROF", "AGARI"], ["PROF", "RYUUKYOKU"]), names
    assert "owari" in _attrs(read[-1])


async def test_a_reconnect_is_answered_with_go_un_saikai_in_one_read() -> None:
    async with _server(seed=1, absent=10.0) as (server, port):
        client = await RawClient.connect(port)
        go_read = await client.login()
        first = await client.play(stop=lambda s: len(s.discards) >= 3)
        await client.close()
        client = await RawClient.connect(port)
        read = await client.hello()
        assert [parse_tag(t).name for t in read] == ["GO", "UN", "SAIKAI"], read
        un, first_un = _attrs(read[1]), _attrs(go_read[1])
        for key in ("dan", "rate", "sx"):
            assert un[key] == first_un[key], key
        assert [un[f"n{r}"] for r in range(4)] == [first_un[f"n{r}"] for r in range(4)]
        init = _attrs(first.tags("INIT")[0])
        await client.write("<GOK/>")
        reinit = await client.read()
        assert reinit[0].startswith("<REINIT"), reinit
        # the dealer as the client sees it: seat 1 here, the first dealer is to its left
        assert _attrs(read[2])["oya"] == _attrs(reinit[0])["oya"] == init["oya"] == "3"
        seen = await client.play(first=reinit[1:])
        await client.close()
        await asyncio.wait_for(server.finished.wait(), 10)
    assert "owari" in seen.reads[-1][-1]
    assert server.stats.reconnects == 1 and server.stats.games == 1
    assert (server.stats.illegal, server.stats.timeouts) == (0, 0), server.stats.problems


# ---------------------------------------------------------------------- logins (item 5)


async def test_a_client_looping_games_without_a_pause() -> None:
    """A client that logs in again the moment it reads ``owari`` starts a new game each time
    (it once wedged the server: every later login was taken as a reconnection)."""
    games = 20
    async with _server(seed=5, time_limit=2.0) as (server, port):
        start = time.monotonic()
        for _ in range(games):
            seen = await asyncio.wait_for(_one_game(port), 60)
            assert "owari" in seen.reads[-1][-1]
        for _ in range(100):
            if server.stats.games == games:
                break
            await asyncio.sleep(0.05)
    assert server.stats.games == games, (server.stats.games, server.stats.problems[:5])
    assert server.stats.reconnects == 0
    assert (server.stats.illegal, server.stats.timeouts) == (0, 0), server.stats.problems
    assert time.monotonic() - start < 600


async def test_a_client_back_before_the_first_hand_gets_no_reinit() -> None:
    async with _server(seed=1) as (server, port):
        client = await RawClient.connect(port)
        reply = parse_tag((await client.hello())[0])
        await client.write(f'<AUTH val="{auth_reply(reply.attrs["auth"])}"/>', '<PXR V="1"/>',
                           '<JOIN t="0,64,r"/>')
        while not any(t.startswith("<TAIKYOKU") for t in await client.read()):
            pass
        await client.close()  # gone before GOK
        client = await RawClient.connect(port)
        read = await client.hello()
        assert [parse_tag(t).name for t in read] == ["GO", "UN", "SAIKAI"], read
        await client.close()  # and gone again before GOK: nothing waits for it
        client = await RawClient.connect(port)
        read = await client.hello()
        assert [parse_tag(t).name for t in read] == ["GO", "UN", "SAIKAI"], read
        await client.write("<GOK/>", "<NEXTREADY/>")
        seen = await client.play()
        await client.close()
        await asyncio.wait_for(server.finished.wait(), 10)
    assert not seen.tags("REINIT") and seen.tags("INIT")
    assert server.stats.games == 1 and server.stats.reconnects == 2
    assert (server.stats.illegal, server.stats.timeouts) == (0, 0), server.stats.problems


async def test_an_absent_seat_is_played_after_a_short_wait() -> None:
    """A client that drops and never comes back: its seat is played for it after a short
    wait, once, not after a long reconnection grace on every request."""
    async with _server(seed=1) as (server, port):
        client = await RawClient.connect(port)
        await client.login()
        await client.play(stop=lambda s: len(s.discards) >= 2)
        await client.close()
        start = time.monotonic()
        await asyncio.wait_for(server.finished.wait(), 60)
    assert time.monotonic() - start < 30
    assert server.stats.games == 1 and server.stats.absent > 10
    assert (server.stats.illegal, server.stats.timeouts) == (0, 0), server.stats.problems
