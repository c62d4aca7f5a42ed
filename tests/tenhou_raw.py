"""A bare Tenhou client over a real loopback socket, for testing the fake server as a client
sees it: it keeps the tags of each read together (what one ``recv`` returned), writes what it is
told in one write, and plays the simplest legal game (it discards every tile it draws and passes
every offer), so that any problem the server counts is the server's. With ``calls`` it pons and
chis whatever it is offered (and discards after the call); with ``again`` it writes each of its
game answers a second time, in a second write that many seconds later (a client that answers
twice)."""

from __future__ import annotations

import asyncio
import contextlib
import re
from collections.abc import Callable
from dataclasses import dataclass, field

from protocols.tenhou import TagStream, auth_reply, meld_ids, parse_tag

DRAW = re.compile(r"^<T(\d+)")
OFFER = re.compile(r'^<([EFGefg]\d+|N) .*\bt="\d+"')
_ECHO = re.compile(r"^<D(\d+)/>$")
_OWN_CALL = re.compile(r'^<N who="0" m="(\d+)"/>$')

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
                   first: list[str] | None = None, calls: bool = False,
                   again: Callable[[], float] | None = None, ready: bool = True) -> GameSeen:
        """Play to the tag with ``owari`` (or until ``stop`` says so after a read); ``first``:
        tags already read, answered first; ``ready`` False: a hand's result is not answered
        with NEXTREADY (the caller does)."""
        seen = GameSeen()
        sent: list[int] = []
        held: list[int] = []
        repeats: set[asyncio.Task[None]] = set()
        while True:
            read = first if first is not None else await self.read()
            first = None
            seen.reads.append(read)
            out: list[str] = []
            over = False
            for text in read:
                if m := DRAW.match(text):
                    held.append(int(m.group(1)))
                    sent.append(int(m.group(1)))
                    out.append(f'<D p="{m.group(1)}"/>')
                elif m := _ECHO.match(text):
                    seen.discards.append((sent.pop(0) if sent else -1, int(m.group(1))))
                    with contextlib.suppress(ValueError):
                        held.remove(int(m.group(1)))
                elif text.startswith(("<INIT ", "<REINIT ")):
                    held = [int(i) for i in parse_tag(text).attrs["hai"].split(",")]
                elif m := _OWN_CALL.match(text):  # ours: its tiles leave the hand, discard
                    meld = meld_ids(int(m.group(1)))
                    for i in meld.ids:
                        if i != meld.called and i in held:
                            held.remove(i)
                    if calls and meld.kind in ("chi", "pon"):
                        tile_id = _after_call(held, meld.ids)
                        sent.append(tile_id)
                        out.append(f'<D p="{tile_id}"/>')
                elif OFFER.match(text):
                    answer = _call(text, held) if calls else None
                    out += [answer] if answer else offer(text) if offer else ["<N/>"]
                elif "owari=" in text:
                    over = True
                elif text.startswith(("<AGARI", "<RYUUKYOKU")) and ready:
                    out.append("<NEXTREADY/>")
            if out:
                await self.write(*out)
                answers = [t for t in out if t.startswith(("<D ", "<N", "<REACH"))]
                if again is not None and answers:
                    task = asyncio.create_task(self._again(again(), answers))
                    repeats.add(task)
                    task.add_done_callback(repeats.discard)
            if over or (stop is not None and stop(seen)):
                for task in list(repeats):
                    with contextlib.suppress(ConnectionError, OSError):
                        await task
                return seen

    async def _again(self, delay: float, answers: list[str]) -> None:
        """The answers once more, in their own write ``delay`` seconds later."""
        await asyncio.sleep(delay)
        with contextlib.suppress(ConnectionError, OSError):
            await self.write(*answers)


def _call(offer: str, held: list[int]) -> str | None:
    """A pon or a chi of the offered tile where the offer and the hand allow one."""
    tag = parse_tag(offer)
    flags = int(tag.attrs.get("t", "0"))
    if tag.name == "N":
        return None
    kind = int(tag.name[1:]) // 4
    by_kind: dict[int, list[int]] = {}
    for i in held:
        by_kind.setdefault(i // 4, []).append(i)
    if flags & 1 and len(by_kind.get(kind, [])) >= 2:
        a, b = by_kind[kind][:2]
        return f'<N type="1" hai0="{a}" hai1="{b}"/>'
    if flags & 4 and kind < 27:
        for pair in ((-2, -1), (-1, 1), (1, 2)):
            kinds = [kind + d for d in pair]
            if all(0 <= k < 27 and k // 9 == kind // 9 and by_kind.get(k) for k in kinds):
                a, b = (by_kind[k][0] for k in kinds)
                return f'<N type="3" hai0="{a}" hai1="{b}"/>'
    return None


def _after_call(held: list[int], meld: tuple[int, ...]) -> int:
    """A discard after a call that is not a swap (kuikae): no kind of the meld, nor the one
    that extends a chi."""
    kinds = {i // 4 for i in meld}
    banned = kinds | {min(kinds) - 1, max(kinds) + 1} if len(kinds) == 3 else kinds
    return next((i for i in held if i // 4 not in banned), held[-1])
