"""Tenhou client: ``mjbot tenhou`` over TCP (NUL-framed tags) or WebSocket (JSON tags).

The session (../shared/protocols/tenhou.md): HELO (anonymous "NoName" or an ID from the
environment / config file), AUTH where a legacy server asks, PXR, JOIN and the REJOIN loop while
queueing, GOK and NEXTREADY, the hands (every offer answered, riichi as REACH then D), a
keep-alive ``<Z/>`` every ~15 s, and after the last game BYE. A dropped connection in a game is
taken up again with the same HELO: the server answers GO / SAIKAI / REINIT and the game goes on
in the same log; a TAIKYOKU while a game is still open (a game resumed by REINIT that the
server then left unfinished for us) closes that log as abandoned and opens the new game's, the
GO / UN before it included. The connection is read all the time (adapter/thinking/inbox.py): while
the brain thinks (a slow policy in a worker process, adapter/thinking/thinker.py), a ``<Z/>`` from
the server is answered at once (Tenhou itself sends none; the fake server's keep-alive probe does)
and everything else waits its turn. Tags we cannot read are logged with the reason and, where an
answer is owed, answered safely (a pass, or a discard of the drawn tile); the connection is kept.

Tenhou's operator asks bot authors to get permission first (tenhou.md): games against humans
need ``permission_granted`` (the ``--permission-granted`` flag or the config file), and the
Phoenix lobby is refused whatever the config says. The ID never reaches a log.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
import logging
import re
import time
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import structlog

from adapter import secret_env
from adapter.hostport import format_host_port, parse_host_port
from adapter.session import (
    PlatformSession,
    SessionSummary,
    SilentLine,
    Stopped,
    dropped_line,
    idle_limited,
    think_and_log,
    until_signalled,
)
from adapter.tasks import cancel_and_wait
from adapter.thinking.inbox import Inbox
from adapter.ws_log import ScrubbedLog
from brain.brain import Brain, safest_action
from brain.rules import rules_for
from brain.state import TableState
from protocols import events as ev
from protocols.codec import RAW_SHOWN, ProtocolError
from protocols.tenhou import (
    JOUKYUU,
    TEST_GAME,
    TOKUJOU,
    VS_HUMANS,
    GameFound,
    GameOver,
    Helo,
    LoggedIn,
    PlayerBack,
    PlayerLeft,
    Rejoin,
    Resumed,
    Tag,
    TagStream,
    TenhouCodec,
    auth_reply,
    enter_lobby,
    format_tag,
    join,
    offer_flags,
    parse_tag,
    split_tags,
    tag_from_json,
    tag_to_json,
)
from replay.log import Footer, GameLogWriter, Header, Scrubber

log = structlog.get_logger("mjbot.tenhou")

DEFAULT_TCP_SERVER = "133.242.10.78:10080"  # b.mjv.jp
DEFAULT_WS_URL = "wss://b-ww.mjv.jp"
ORIGIN = "https://tenhou.net"
ID_ENV = "MJBOT_TENHOU_ID"
ANONYMOUS = "NoName"
DEFAULT_BUDGET = 2.0
# seconds of silence from the server in a game after which the line is taken for dead: in a
# game Tenhou tells every seat's draw and discard to all (the captures: a message every turn,
# several between two of our 15 s keep-alives), so the longest quiet is one player's clock or
# the pause between hands, seconds; eight keep-alive periods is far past either, and short
# enough that a reconnect finds the game still on (Tenhou plays for an absent seat)
IDLE_LIMIT = 120.0


class PermissionRefused(ValueError):
    """A game the bot must not join (Tenhou's policy on bots)."""


def check_permission(game_type: int, permission_granted: bool) -> None:
    """Raise PermissionRefused for the Phoenix lobby, and for games against humans unless
    the operator's permission is stated in the config."""
    if game_type & (JOUKYUU | TOKUJOU) == (JOUKYUU | TOKUJOU):
        raise PermissionRefused(
            f"game type {game_type} is the Phoenix (鳳凰) lobby: Tenhou's operator does not "
            "want bots there, so mjbot never joins it")
    if game_type & VS_HUMANS and not permission_granted:
        raise PermissionRefused(
            f"game type {game_type} plays against humans: Tenhou's operator asks bot authors "
            "for permission first (support@c-egg.com); once given, say so with "
            "--permission-granted or permission_granted = true in the config file")


@dataclass
class TenhouSettings:
    server: str = DEFAULT_TCP_SERVER  # host:port (tcp) or a ws:// / wss:// URL
    transport: str = "tcp"
    name: str = ANONYMOUS  # "NoName" or an ID "IDxxxxxxxx-xxxxxxxx" (a secret)
    lobby: int = 0
    game_type: int = TEST_GAME
    games: int = 1
    permission_granted: bool = False
    policy: str = "rulebased"
    budget: float = DEFAULT_BUDGET
    keepalive: float = 15.0
    reconnect_tries: int = 5
    reconnect_delay: float = 1.0
    connect_timeout: float = 10.0
    login_timeout: float = 30.0  # Tenhou answers a HELO at once: silence past this is a dead line
    # silence in a game past this is a dead line (None: waited for ever); not in the lobby,
    # where the wait for a table has no bound and Tenhou owes us nothing (see IDLE_LIMIT)
    idle_limit: float | None = IDLE_LIMIT
    log_dir: str | None = None
    write_log: bool = True

    @property
    def secrets(self) -> list[str]:
        return [self.name] if self.name != ANONYMOUS else []


def load_config(path: str | None, settings: TenhouSettings) -> TenhouSettings:
    """The ID and the permission statement: ``$MJBOT_TENHOU_ID`` and / or a TOML file with a
    ``[tenhou]`` table (``id``, ``permission_granted``, ``lobby``, ``game_type``)."""
    values: dict[str, Any] = {}
    if path is not None:
        try:
            document = tomllib.loads(Path(path).read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
            # not UTF-8 is as much the file's fault: said with its name, as the others are
            raise ValueError(f"config file {path}: {exc}") from None
        if "tenhou" not in document:  # a misspelt [tenhuo], keys above any table, serve's
            # file: its ID was ignored and the session logged in anonymously, without a word
            found = ", ".join(sorted(document)) or "nothing"
            raise ValueError(f"config file {path} has no [tenhou] table (it holds: {found}); "
                             f"the ID and the rest go in [tenhou]: {', '.join(CONFIG_KEYS)}")
        values = document["tenhou"]
        if not isinstance(values, dict):
            raise ValueError(f"config file {path}: [tenhou] must be a table")
        _check_config_values(path, values)
    out = settings
    # the environment wins over the file; the source is named in an error, never the value
    environ = secret_env.environ()  # os.environ may hold it no more (secret_env.withheld)
    ident, source = ((environ[ID_ENV], f"${ID_ENV}") if ID_ENV in environ
                     else (values.get("id"), f"config file {path}: id"))
    if ident is not None:
        if ident == "":  # set but empty (an unset variable expanded, a template left blank):
            # anonymous play is leaving the ID out, not this, which read as "no ID given"
            raise ValueError(f"the Tenhou ID ({source}) is empty: give the ID, or leave it "
                             f"out to log in anonymously")
        why = id_refusal(ident)
        if why is not None:
            raise ValueError(f"the Tenhou ID ({source}) {why}")
        out = dataclasses.replace(out, name=ident)
    if values.get("permission_granted") is True:
        out = dataclasses.replace(out, permission_granted=True)
    for key in ("lobby", "game_type"):
        if isinstance(values.get(key), int):
            out = dataclasses.replace(out, **{key: values[key]})
    return out


ID_SHAPE = re.compile(r"ID[0-9A-Fa-f]{8}-[0-9A-Za-z]{8}")
ID_PLACEHOLDER = "IDxxxxxxxx-xxxxxxxx"  # the README's and the help's form, not an ID


def id_refusal(ident: object) -> str | None:
    """Why ``ident`` is no Tenhou ID (None: it is one), in words that never quote it (a
    secret). The README's placeholder copied as it is was told it "must look like
    IDxxxxxxxx-xxxxxxxx", which it does: the shape is said in words, the placeholder named."""
    if isinstance(ident, str) and ID_SHAPE.fullmatch(ident):
        return None
    if ident == ID_PLACEHOLDER:
        return (f"is the placeholder {ID_PLACEHOLDER} (the README's form, not an ID): "
                "give your own ID")
    return ("must be ID, 8 hexadecimal digits, a dash and 8 letters or digits "
            f"({ID_PLACEHOLDER} with each x one of those)")


CONFIG_KEYS = {"id": str, "permission_granted": bool, "lobby": int, "game_type": int}


def _check_config_values(path: str, values: dict[str, Any]) -> None:
    """A misspelt key or a value of the wrong type is refused, naming the key (never the
    value: ``id`` is a secret): quietly ignored, ``lobyy = 1234`` would join lobby 0."""
    for key, value in values.items():
        kind = CONFIG_KEYS.get(key)
        if kind is None:
            raise ValueError(f"config file {path}: unknown key {key!r} in [tenhou] (known: "
                             f"{', '.join(CONFIG_KEYS)})")
        wrong = not isinstance(value, kind) or (kind is int and isinstance(value, bool))
        if wrong or (kind is int and value < 0):
            words = {str: "a string", bool: "true or false", int: "a whole number >= 0"}
            raise ValueError(f"config file {path}: [tenhou] {key} must be {words[kind]}")


# ---------------------------------------------------------------------- the session logic


class TenhouBot(PlatformSession):
    """One session (codec, table, brain, logs: adapter/session.py); what is Tenhou's own:
    ``handle`` takes one received tag (or the text that failed to parse) and returns the
    tags to send, ``keepalive`` answers a keep-alive ahead of the tags waiting for a
    decision, and the login, the lobby queue and a game resumed after a reconnect."""

    codec: TenhouCodec

    def __init__(self, settings: TenhouSettings) -> None:
        self.settings = settings
        super().__init__(TenhouCodec(settings.name, websocket=settings.transport == "ws"),
                         Brain("riichi", settings.policy, limit=settings.budget),
                         settings.budget)
        self.holding = False  # frames since a GO in a game: a resume's or a new game's?
        # the last message, if we could not read it (an ERR refusing the login, say): named
        # when the server then closes the line, as the reason we cannot read for ourselves
        self.last_unread: str | None = None
        self.scrub = Scrubber(settings.secrets)  # what a server's text may echo of the ID
        self.in_game = False
        self.queueing = False
        # a JOIN sent on this line that no GO has answered yet: Tenhou sends LN again and again
        # in the lobby, also while we queue, and only the login's LN asks for a JOIN
        self.joined = False
        # this line's login is in the lobby we join (lobby 0, or one entered with a CHAT):
        # a JOIN for lobby 7994 sent from lobby 0, without the CHAT, is not how a client joins
        self.in_lobby = False
        # this line's login answered (LN, or the GO of a game resumed: anything past its HELO):
        # until then the server owes us its next message at once, and silence is a dead line
        self.logged_in = False
        self.game_hands = 0
        self.leaving = False  # a stop was asked for: BYE when the hand in play is over
        self.left = False  # BYE said on a stop: the session is over, the game unfinished
        # a stop's BYE decided, not sent yet: (log event, game-log notice or None) to say once
        # it has gone (see bye_sent); it was logged as said before the send, also where the
        # line broke under it
        self.bye_to_say: tuple[str, str | None] | None = None
        self.farewell = ""  # what a stop did, said in the closing line (a table, a queue left)
        self.refused: PermissionRefused | None = None  # seated in a refused game: BYE, then it

    # ------------------------------------------------------------------ frames

    @property
    def frame_log(self) -> GameLogWriter | None:
        """Where raw frames go now: the game's log, or None to keep them pending (no game,
        or a GO in a game that a SAIKAI or a TAIKYOKU will give to the old or a new log)."""
        return None if self.holding else self.game_log

    def tx(self, tags: list[Tag]) -> None:
        for tag in tags:
            if tag.name != "Z" or self.frame_log is not None:
                self.pending.tx(self.frame_log, format_tag(tag))

    def hello(self) -> list[Tag]:
        log.info("tenhou: login", anonymous=self.settings.name == ANONYMOUS)
        self.joined = False  # a new line: the server forgot any queue we were in
        self.in_lobby = False  # and the lobby we had entered
        self.logged_in = False
        return split_tags("".join(self.codec.greeting()))

    # ------------------------------------------------------------------ tags in

    def keepalive(self, raw: str, tag: Tag | None) -> list[Tag]:
        """A ``<Z/>`` from the server, logged and answered with ours now; [] for any other."""
        if tag is None or tag.name != "Z":
            return []
        self.pending.rx(self.frame_log, raw)
        return [Tag("Z")]

    async def handle(self, raw: str, tag: Tag | None) -> list[Tag]:
        if tag is not None and tag.name == "GO" and self.game_log is not None:
            self.holding = True
        self.pending.rx(self.frame_log, raw)
        # scrubbed before it is cut: an ID cut in two at the cut is no longer the ID the
        # scrubber looks for, and its first part would pass
        text = self.scrub(raw)[:RAW_SHOWN]
        self.last_unread = text  # until it is read
        if tag is None:
            self.error(f"not a tag: {text!r}")
            return self._safe_reply(raw)
        try:
            items = self.codec.feed(tag)
        except ProtocolError as exc:  # its message is cut as well: quoted anew, scrubbed first
            self.error(f"{exc.message}: {self.scrub(exc.raw)[:RAW_SHOWN]!r}")
            return self._safe_reply(raw)
        self.last_unread = None
        out: list[Tag] = []
        hand_over = game_over = False
        past_login = self.logged_in  # this line's login was answered before this message
        for item in items:
            if not isinstance(item, Helo):  # past the login: LN, or a game resumed
                self.logged_in = True
            if isinstance(item, ev.DecisionRequest):
                out += await self._decide(item)
            elif isinstance(item, Helo):
                if item.auth:
                    try:
                        out.append(Tag("AUTH", {"val": auth_reply(item.auth)}))
                    except ProtocolError as exc:
                        self.error(str(exc))
                out.append(Tag("PXR", {"V": "1" if self.settings.name == ANONYMOUS else "9"}))
            elif isinstance(item, LoggedIn):
                if self.in_game and not past_login:
                    self._game_lost()
                    if self.leaving:  # a stop asked for in the lost game: no game to finish,
                        out += self._leave_lobby()  # and none to join
                        continue
                out += self._join()
            elif isinstance(item, Rejoin):
                out.append(join(self.settings.lobby, self.settings.game_type, rejoin=item.t))
            elif isinstance(item, GameFound):
                try:
                    self._check_found(item)
                except PermissionRefused as exc:  # the session ended without a BYE
                    self.refused = exc  # raised once the BYE is sent (see _play)
                    return [*out, Tag("BYE")]
                out.append(Tag("GOK"))
            elif isinstance(item, Resumed):
                self._release_held()
                self._notice("the server resumed our game (SAIKAI)")
            elif isinstance(item, PlayerLeft | PlayerBack | GameOver):
                self._notice(str(item))  # a sentence (the class's __str__), not a repr
            elif isinstance(item, ev.GameStarted):
                self._start_game(item)
                out.append(Tag("NEXTREADY"))
            elif isinstance(item, ev.GameEnded) and item.abandoned:
                self._abandon_game(item)
            else:
                self.apply(item)
                hand_over = hand_over or isinstance(item, ev.RoundWon | ev.RoundDrawn)
                if isinstance(item, ev.GameEnded):
                    game_over = True
        if game_over:
            out += self._end_game()
        elif hand_over:
            out += self._leave() if self.leaving else [Tag("NEXTREADY")]
        return out

    def leave_after_hand(self) -> bool:
        """A stop was asked for: once the hand in play is over, say BYE instead of NEXTREADY
        (Tenhou has no other way to leave between hands) and end the session. True when a
        hand is in play, so the session ends by itself; False: nothing to finish, the caller
        ends it now (cancelling :func:`run`, which says BYE)."""
        self.leaving = True
        return self.state.round_active

    def _leave(self) -> list[Tag]:
        self.left = True
        self.bye_to_say = ("tenhou: stopped after the hand, said BYE",
                           "stop asked for: left after the hand (BYE), no next hand")
        return [Tag("BYE")]

    def _leave_lobby(self) -> list[Tag]:
        """A stop was asked for while the game was in play, and the game was lost while the
        line was down: the session ends here. A JOIN queued for a new game that the stop's
        deadline then cut (a BYE at a table just sat at), and kept the stop waiting for it."""
        self.left = True
        self.bye_to_say = ("tenhou: stop asked for, the game lost while the line was down: "
                           "said BYE", None)
        return [Tag("BYE")]

    def bye_sent(self, error: BaseException | None = None) -> None:
        """The replies that carried a stop's BYE were sent (``error``: their send failed):
        what the stop did is said now, as it went."""
        if self.bye_to_say is None:
            return
        said, notice = self.bye_to_say
        self.bye_to_say = None
        if error is None:
            log.info(said, hands=self.game_hands)
            if notice:
                self._notice(notice)
            return
        why = str(error) or type(error).__name__
        where = "after the hand" if notice else "in the lobby"
        log.warning(f"tenhou: stopped {where}, BYE not sent", error=why)
        if notice:
            self._notice(f"stop asked for: BYE after the hand not sent ({why}), no next hand")

    def _safe_reply(self, raw: str) -> list[Tag]:
        """An answer owed to a message we could not read (:meth:`TenhouCodec.unreadable`:
        our draw, a discard of the id it still names, or none, left to Tenhou's clock; an
        offer, a pass); Tenhou plays for us only once its clock runs out. The events it
        still tells (our draw) are applied, and logged, as a re-read of the log finds them."""
        events, reply = self.codec.unreadable(raw)
        for event in events:
            self.apply(event)
        if self._unread_win(raw, events):
            log.info("tenhou: a draw we could not read offers a win our rules accept: taken")
            return self.codec.reply_tags(ev.Win(), ev.DecisionRequest("turn"))
        return reply

    def _unread_win(self, raw: str, events: list[object]) -> bool:
        """Our unreadable draw (its id still read, new to us) offers a self-drawn win (``t``
        bit 16) that our rules accept for the hand as we know it: the win is the answer,
        where a discard of the drawn tile threw it away (and left the hand furiten)."""
        drawn = any(isinstance(e, ev.TileDrawn) and e.seat == self.state.seat for e in events)
        if not drawn or not offer_flags(raw) & 16:
            return False
        request = ev.DecisionRequest("turn", offered=frozenset({"discard", "win"}))
        return any(isinstance(a, ev.Win)
                   for a in rules_for("riichi").legal_actions(self.state, request))

    def error(self, message: str, **context: Any) -> None:
        """As every session's, with the ID scrubbed: the message may quote a server's text,
        and a server may echo the ID (the game log is scrubbed on its own; stderr was not)."""
        super().error(self.scrub(message), **context)

    def _notice(self, text: str) -> None:
        log.info("tenhou: " + text)
        if self.game_log is not None:
            self.game_log.event(ev.PlatformNotice(text))

    def _join(self) -> list[Tag]:
        if self.in_game or self.joined or self.summary.games >= self.settings.games:
            return []
        self.queueing = self.joined = True
        enter = [] if self.in_lobby or not self.settings.lobby else \
            [enter_lobby(self.settings.lobby)]
        self.in_lobby = True
        return [*enter, join(self.settings.lobby, self.settings.game_type)]

    def _check_found(self, found: GameFound) -> None:
        """The server put us at a table: refuse to play one we were not allowed to join."""
        try:
            check_permission(found.game_type, self.settings.permission_granted)
        except PermissionRefused as exc:
            self.error(f"the server seated us in a refused game: {exc}")
            raise
        self.queueing = self.joined = False
        self.in_game = True

    # ------------------------------------------------------------------ games and events

    def _release_held(self) -> None:
        """The frames held since a GO belong to the game still open (a resume)."""
        self.holding = False
        if self.game_log is not None:
            self.pending.flush_into(self.game_log)

    def _start_game(self, started: ev.GameStarted) -> None:
        self.holding = False  # the frames since GO open the new game's log
        self.state = TableState("riichi", started.seat)
        self.game_hands = 0
        if self.settings.write_log:
            header = Header(platform="tenhou", variant="riichi", seat=started.seat,
                            policy=self.brain.name, policy_config={"budget": self.settings.budget},
                            # a game resumed with no TAIKYOKU (a new process after a
                            # serve reload) has no log id: GO's gpid names it (it was
                            # "tenhou-game", the same for every such game)
                            game_id=self.codec.log_id or (f"tenhou-{self.codec.gpid}"
                                                          if self.codec.gpid
                                                          else "tenhou-game"),
                            extra={"game_type": self.codec.game_type,
                                   "transport": self.settings.transport})
            self.open_log(self.settings.log_dir, header, secrets=self.settings.secrets)
        self.apply(started)

    def apply(self, event: Any) -> None:
        if isinstance(event, ev.RoundWon | ev.RoundDrawn):
            self.summary.hands += 1
            self.game_hands += 1
        super().apply(event)

    def _abandon_game(self, ended: ev.GameEnded) -> None:
        """A game the server left unfinished for us (it began another): its log is closed as
        abandoned; it counts as no game played, and the session goes on at the new table. The
        end is written as a notice, not as a GameEnded: the log holds no tag that ended the
        game (the TAIKYOKU opens the next log), so the log re-parses to its own events."""
        self.state.apply(ended)
        if self.game_log is not None:
            self.game_log.event(ev.PlatformNotice(
                f"abandoned: the server began a new game; last known scores {ended.scores}"))
            path = self.close_log(Footer({"hands": self.game_hands, "abandoned": True,
                                          "errors": self.summary.error_count}, ended.scores))
            log.warning("tenhou: game abandoned by the server", path=str(path))

    def _game_lost(self) -> None:
        """Back on a new line in a game, the server logged us in to the lobby (LN) where it
        gives a game back with GO: it has no game for us any more (ours ended, or was ended,
        while we were away). The client waited in that lobby for ever, sure it was in a game,
        and joined none. The game's log is closed as abandoned (it counts as no game played)
        and the session goes on from the lobby: a new game where games remain."""
        self._release_held()
        self._notice("the server gave no game back after the reconnect (LN, not GO): ours "
                     "went on without us")
        self.in_game = False
        self.codec.forget_game()
        scores = tuple(self.state.scores)  # the last known
        self.state = TableState("riichi", self.state.seat)  # no hand in play any more
        path = self.close_log(Footer({"hands": self.game_hands, "abandoned": True,
                                      "errors": self.summary.error_count}, scores))
        log.warning("tenhou: game lost while the line was down", path=str(path))

    def _end_game(self) -> list[Tag]:
        self.summary.games += 1
        self.in_game = False
        self._release_held()
        path = self.close_log(Footer({"hands": self.game_hands,
                                      "errors": self.summary.error_count},
                                     tuple(self.state.scores)))
        if path is not None:
            log.info("tenhou: game logged", path=str(path))
        self.game_logged(path, self.state.scores)
        if self.summary.games >= self.settings.games:
            self.summary.finished = True
            return [Tag("BYE")]
        if self.leaving:
            return self._leave()
        return self._join()

    # ------------------------------------------------------------------ decisions

    async def _decide(self, request: ev.DecisionRequest) -> list[Tag]:
        answer = await think_and_log(self.thinker, self.state, request, self.settings.budget,
                                     self.summary, self.game_log, "tenhou")
        try:
            return self.codec.reply_tags(answer.action, request)
        except ValueError as exc:
            self.error(f"cannot encode {answer.action!r}: {exc}")
            try:
                return self.codec.reply_tags(safest_action(self.state, list(answer.legal)),
                                             request)
            except ValueError:
                return self.codec.safe_reply(request)

    def finish_game(self) -> None:
        """The session ends: a game still open is logged as unfinished."""
        self._release_held()
        result = self.cut_game({"hands": self.game_hands}, cut=True)
        if self.leaving:  # a stop asked for through leave_after_hand (stop_requested: cut_game)
            result["stopped"] = True
        self.close_log(Footer(result))


# ---------------------------------------------------------------------- transports


class _Tcp:
    def __init__(self, server: str) -> None:
        if "://" in server:  # a URL: say which transport takes one
            raise ValueError(f"--server for --transport tcp is host:port, not {server!r} (a "
                             "ws:// or wss:// URL needs --transport ws)")
        self.host, self.port = parse_host_port(server, "--server")
        self.stream = TagStream()
        self.writer: asyncio.StreamWriter | None = None

    async def connect(self) -> None:
        self.reader, self.writer = await asyncio.open_connection(self.host, self.port)
        self.stream = TagStream()

    async def send(self, tag: Tag) -> None:
        assert self.writer is not None
        self.writer.write(format_tag(tag).encode() + b"\0")
        try:
            await self.writer.drain()
        except OSError as exc:  # ETIMEDOUT, EHOSTUNREACH...: not ConnectionErrors, same end
            raise dropped_line(exc) from None

    async def receive(self) -> list[tuple[str, Tag | None]]:
        try:
            data = await self.reader.read(65536)
        except OSError as exc:
            raise dropped_line(exc) from None
        if not data:
            raise ConnectionError("the server closed the connection")
        out: list[tuple[str, Tag | None]] = []
        for text in self.stream.feed(data):
            try:
                out.append((text, parse_tag(text)))
            except ProtocolError:
                out.append((text, None))
        return out

    @property
    def connected(self) -> bool:
        return self.writer is not None

    async def close(self) -> None:
        if self.writer is not None:
            self.writer.close()
            with contextlib.suppress(ConnectionError, OSError):
                await self.writer.wait_closed()
            self.writer = None


class _WebSocket:
    def __init__(self, url: str, scrub: Scrubber | None = None) -> None:
        if not url.startswith(("ws://", "wss://")):
            if "://" in url:
                raise ValueError(f"--server for --transport ws is a ws:// or wss:// URL or "
                                 f"host:port, not {url!r}")
            # a bare host:port is a plain ws:// address (an IPv6 host bracketed in it)
            url = "ws://" + format_host_port(*parse_host_port(url, "--server"))
        self.url = url
        self.connection: Any = None
        self.scrub = scrub or Scrubber()

    async def connect(self) -> None:
        from websockets.asyncio.client import connect
        from websockets.exceptions import InvalidHandshake
        from websockets.typing import Origin

        try:
            self.connection = await connect(
                self.url, origin=Origin(ORIGIN), open_timeout=10,
                logger=ScrubbedLog(logging.getLogger("websockets.client"), self.scrub.masked,
                                   self.scrub))
        except InvalidHandshake as exc:  # a line that is up but no WebSocket server's: as a
            # refused connection (tried again, then one line), not a traceback
            raise OSError(f"no WebSocket handshake at {self.url}: {exc}") from None

    async def send(self, tag: Tag) -> None:
        import websockets

        text = "<Z/>" if tag.name == "Z" else json.dumps(tag_to_json(tag))
        try:
            await self.connection.send(text)
        except websockets.ConnectionClosed:
            raise ConnectionError("the server closed the connection") from None

    async def receive(self) -> list[tuple[str, Tag | None]]:
        import websockets

        try:
            message = await self.connection.recv()
        except websockets.ConnectionClosed:
            raise ConnectionError("the server closed the connection") from None
        text = message if isinstance(message, str) else message.decode("utf-8", "replace")
        try:
            tag = parse_tag(text) if text.lstrip().startswith("<") else tag_from_json(text)
        except ProtocolError:
            return [(text, None)]
        return [(text, tag)]

    @property
    def connected(self) -> bool:
        return self.connection is not None

    async def close(self) -> None:
        if self.connection is not None:
            with contextlib.suppress(Exception):
                await self.connection.close()
            self.connection = None


# the line to Tenhou: both say connected, connect, send, receive and close alike
Transport = _Tcp | _WebSocket


def transport_for(settings: TenhouSettings) -> Transport:
    if settings.transport == "ws":
        server = DEFAULT_WS_URL if settings.server == DEFAULT_TCP_SERVER else settings.server
        return _WebSocket(server, Scrubber(settings.secrets))
    if settings.transport != "tcp":
        raise ValueError(f"--transport is tcp or ws, not {settings.transport!r}")
    return _Tcp(settings.server)


# ---------------------------------------------------------------------- running


async def run(settings: TenhouSettings, bot: TenhouBot | None = None) -> SessionSummary:
    """Play ``settings.games`` games; reconnect when the line drops in a game. ``bot``: one the
    caller made, to read its summary and table while it plays (the serve supervisor)."""
    check_permission(settings.game_type, settings.permission_granted)
    bot = bot or TenhouBot(settings)
    transport = transport_for(settings)
    try:
        return await _session(transport, bot, settings)
    except asyncio.CancelledError:
        # stopped (Ctrl-C, SIGTERM): leave the table properly before the line closes
        if transport.connected:
            bot.tx([Tag("BYE")])
            failed = ""  # a BYE that did not go: said, not "left ... with BYE" all the same
            try:
                await asyncio.wait_for(transport.send(Tag("BYE")), 2)
            except TimeoutError:
                failed = "not sent in 2 s"
            except Exception as exc:  # the line broke under it (a reset, a closed socket)
                failed = f"not sent: {str(exc) or type(exc).__name__}"
            # where it was left: "left the table" was said of a queue and a login too
            where = "the table" if bot.in_game else "the queue" if bot.queueing else ""
            if failed:
                log.warning(f"tenhou: stopped, BYE {failed}")
                bot.farewell = f"BYE {failed}; the line closed" + (f" at {where}" if where
                                                                     else "")
            else:
                log.info("tenhou: stopped, said BYE")
                bot.farewell = f"left {where} with BYE" if where else "said BYE"
        else:  # connecting, or connecting again: there is no one to say BYE to
            log.info("tenhou: stopped while not connected, no BYE to say")
            bot.farewell = "not connected, no BYE to say"
        raise
    finally:
        try:  # a second cancel (a stop past its deadline) may land while the line closes
            await transport.close()
        finally:
            bot.close()  # the game log gets its footer whatever happens to the line


async def _session(transport: Transport, bot: TenhouBot,
                   settings: TenhouSettings) -> SessionSummary:
    """Connect, play, and reconnect while the games are not over. The policy's worker is
    started and waited for first (Thinker.ready_before_connecting): the first INIT comes
    moments after the login."""
    await bot.thinker.ready_before_connecting()
    await _connect(transport, settings, first=True)
    # reconnects in a row after which the game did not move on: a line that only brought a
    # login (HELO, LN, REJOIN) or a REINIT before it dropped again is no progress, or a server
    # that answers the login and then closes would be logged into for ever, without a pause
    stalled = 0
    while True:
        moved = _progress(bot)
        try:
            await _play(transport, bot, settings)
            break
        except ConnectionError as exc:
            if bot.summary.finished or bot.left:
                break
            stalled = 1 if _progress(bot) != moved else stalled + 1
            if (not bot.in_game and not bot.queueing) or stalled > settings.reconnect_tries:
                if bot.last_unread is not None:  # e.g. a login refused in words we do not know
                    raise ConnectionError(f"{exc} (its last message, which mjbot does not "
                                          f"read: {bot.last_unread})") from None
                raise
            if isinstance(exc, SilentLine):  # the line is still open: we give it up
                bot.give_up_line(exc)
            log.warning("tenhou: connection lost, reconnecting", error=str(exc))
            bot.summary.reconnects += 1
            await transport.close()
            if stalled > 1:  # the first one at once (the game's clock runs), then paced
                await asyncio.sleep(settings.reconnect_delay)
            await _connect(transport, settings, first=False)
    return bot.summary


def _progress(bot: TenhouBot) -> tuple[int, int, int]:
    """What shows that a line moved the session on: decisions asked, hands and games over."""
    return bot.summary.decisions, bot.summary.hands, bot.summary.games


async def run_until_signalled(settings: TenhouSettings) -> SessionSummary:
    """:func:`run`, stopped gracefully (BYE, logs closed, the game cut logged as stopped) by
    SIGINT or SIGTERM, which then raise :class:`adapter.session.Stopped`."""
    bot = TenhouBot(settings)
    try:
        return await until_signalled(bot, run(settings, bot))
    except Stopped as stopped:
        stopped.note = bot.farewell
        raise


async def _connect(transport: Transport, settings: TenhouSettings, first: bool) -> None:
    tries = max(1, settings.reconnect_tries)
    deadline = time.monotonic() + settings.connect_timeout
    # said once the stop's handlers are set (until_signalled): what `--log-level debug` shows
    # of a wait for a server that does not answer
    log.debug("tenhou: connecting", server=settings.server, first=first)
    for attempt in range(1, 10_000):
        # an attempt is bounded too: a server that drops our SYNs (a black hole, a firewall,
        # a full accept queue) held one for the kernel's two minutes, past the whole limit
        limit = max(0.1, deadline - time.monotonic()) if first else settings.connect_timeout
        try:
            async with asyncio.timeout(limit):
                await transport.connect()
            return
        except OSError as exc:  # TimeoutError too
            out_of_time = time.monotonic() >= deadline if first else attempt >= tries
            if out_of_time:
                # the time given, not the last attempt's remainder ("no answer in 0.999998 s")
                why = exc if str(exc) else f"no answer in {settings.connect_timeout:g} s"
                raise ConnectionError(f"cannot connect to the Tenhou server: {why}") from None
            await asyncio.sleep(0.2 if first else settings.reconnect_delay)


async def _play(transport: Transport, bot: TenhouBot, settings: TenhouSettings) -> None:
    received = [0]  # frames on this line

    async def send(tags: list[Tag]) -> None:
        bot.tx(tags)
        for tag in tags:
            await transport.send(tag)

    async def keepalive() -> None:
        while True:
            await asyncio.sleep(settings.keepalive)
            with contextlib.suppress(ConnectionError, OSError):
                await send([Tag("Z")])

    async def read() -> list[tuple[str, Tag | None]]:
        frames = await transport.receive()
        received[0] += len(frames)
        return frames

    async def urgent(frame: tuple[str, Tag | None]) -> bool:
        replies = bot.keepalive(*frame)
        if replies:
            with contextlib.suppress(ConnectionError, OSError):
                await send(replies)
        return bool(replies)

    # a server silent in a game past the idle limit (a dead line the kernel does not report:
    # a NAT that forgot us, a server that hangs) is a lost line: reconnected as a drop is
    watched = idle_limited(read, settings.idle_limit, lambda: bot.in_game, "in a game")
    bot.thinker.warm()
    bot.last_unread = None  # this line's own: what a line before it said is no reason here
    await send(bot.hello())
    ticker = asyncio.create_task(keepalive())
    try:
        async with Inbox(watched, urgent) as inbox:
            while not bot.summary.finished and not bot.left:
                # the login not answered yet: a server that never answers it, or stops half
                # way (its HELO, then no LN), is not waited for; Tenhou answers each at once
                wait = None if bot.logged_in else settings.login_timeout
                try:
                    raw, tag = await asyncio.wait_for(inbox.get(), wait)
                except TimeoutError:
                    if wait is None:
                        raise
                    if not received[0]:
                        raise ConnectionError(f"the server sent nothing in the {wait:g} s "
                                              "after our HELO") from None
                    raise ConnectionError(f"the server did not finish our login: nothing "
                                          f"for {wait:g} s after its last message (no LN, "
                                          "REJOIN or GO)") from None
                replies = await bot.handle(raw, tag)
                if replies:
                    try:
                        await send(replies)
                    except (ConnectionError, OSError) as exc:
                        bot.bye_sent(exc)
                        raise
                    bot.bye_sent()
                if bot.refused is not None:  # its BYE said: the session ends with the error
                    raise bot.refused
    finally:
        await cancel_and_wait(ticker)
