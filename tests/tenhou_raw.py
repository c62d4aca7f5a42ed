"""A bare Tenhou client over a real loopback socket, for testing the fake server as a client
sees it: it keeps the tags of each read together (what one ``recv`` returned), writes what it is
told in one write, and plays the simplest legal game (it discards every tile it draws and passes
every offer), so that any problem the server counts is the server's."""

from __future__ import annotations

import asyncio
import contextlib
import re
from collections.abc import Callable
from dataclasses import dataclass, field

from protocols.tenhou import TagStream, auth_reply, parse_tag

_DRAW = re.compile(r"^<T(\d+)")
_OFFER = re.compile(r'^<([EFGefg]\d+|N) .*\bt="\d+"')
_ECHO = re.compile(r"^<D(\d+)/>$")

# what the client writes for an offer: the texts of one write (default: one pass)
OfferAnswer = Callable[[str], list[str]]


@dataclass
class GameSeen:
    """What one game looked like from the client's side."""

    reads: list[list[str]] = field(default_factory=list)  # the tags of each read, in order
    discards: list[tuple[int, int]] = field(default_factory=list)  # (sent id, echoed id)

    def tags(self, name: str) -> list[str]:
        return [t for read in self.reads for t in read if t.startswith(f"<{name} ")
                or t.startswith(f"<{name}/")]


class RawClient:
    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader, self.writer = reader, writer
        self.stream = TagStream()

    @classmethod
    async def connect(cls, port: int) -> RawClient:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        return cls(reader, writer)

    async def write(self, *texts: str) -> None:
        """All ``texts`` in one write (one segment on the wire)."""
        self.writer.write(b"".join(t.encode() + b"\0" for t in texts))
        await self.writer.drain()

    async def read(self, timeout: float = 20.0) -> list[str]:
        """The complete tags of one read of the socket (at least one)."""
        while True:
            data = await asyncio.wait_for(self.reader.read(65536), timeout)
            if not data:
                raise ConnectionError("closed by the server")
            tags = list(self.stream.feed(data))
            if tags:
                return tags

    async def close(self) -> None:
        self.writer.close()
        with contextlib.suppress(ConnectionError, OSError):
            await self.writer.wait_closed()

    async def hello(self, name: str = "NoName") -> list[str]:
        await self.write(f'<HELO name="{name}" tid="f0" sx="M"/>')
        return await self.read()

    async def login(self, name: str = "NoName") -> list[str]:
        """HELO, AUTH, PXR, JOIN and the REJOIN loop; returns the read with GO."""
        reply = parse_tag((await self.hello(name))[0])
        assert reply.name == "HELO", reply
        await self.write(f'<AUTH val="{auth_reply(reply.attrs["auth"])}"/>', '<PXR V="1"/>')
        assert (await self.read())[0].startswith("<LN")
        await self.write('<JOIN t="0,64"/>')
        while True:
            read = await self.read()
            if read[0].startswith("<REJOIN"):
                await self.write(f'<JOIN t="{parse_tag(read[0]).attrs["t"]},r"/>'
                                 .replace(",r,r", ",r"))
                continue
            assert read[0].startswith("<GO "), read
            await self.write("<GOK/>", "<NEXTREADY/>")
            return read

    async def play(self, offer: OfferAnswer | None = None,
                   stop: Callable[[GameSeen], bool] | None = None,
                   first: list[str] | None = None) -> GameSeen:
        """Play to the tag with ``owari`` (or until ``stop`` says so after a read); ``first``:
        tags already read, answered first."""
        seen = GameSeen()
        sent: list[int] = []
        while True:
            read = first if first is not None else await self.read()
            first = None
            seen.reads.append(read)
            out: list[str] = []
            over = False
            for text in read:
                if m := _DRAW.match(text):
                    sent.append(int(m.group(1)))
                    out.append(f'<D p="{m.group(1)}"/>')
                elif m := _ECHO.match(text):
                    seen.discards.append((sent.pop(0) if sent else -1, int(m.group(1))))
                elif _OFFER.match(text):
                    out += offer(text) if offer else ["<N/>"]
                elif "owari=" in text:
                    over = True
                elif text.startswith(("<AGARI", "<RYUUKYOKU")):
                    out.append("<NEXTREADY/>")
            if out:
                await self.write(*out)
            if over or (stop is not None and stop(seen)):
                return seen
