"""A brain at the local table: it builds its own state from the events it is shown."""

from __future__ import annotations

import itertools
import os
import re
import shutil
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from adapter.local.timing import DecisionTimes
from brain import anytime
from brain.brain import Answer, Brain
from brain.clock import MONOTONIC, Clock
from brain.policies import NN_FILE_PREFIX
from brain.policies.mc.config import ENV as MC_ENV
from brain.policies.nn import ENV as NN_ENV
from brain.state import TableState
from brain.tally import FallbackTally
from protocols import events as ev
from replay.dataset.shards import sha256

BUDGET_SUFFIX = "@budget="  # ``mc@budget=0.5``: this seat's own time limit per decision
MAX_BUDGET = 3600.0
LABEL_MAX = 24
LABEL = re.compile(rf"[A-Za-z0-9_.-]{{1,{LABEL_MAX}}}")  # ``rb=mjai:CMD``: the seat's display name


def policy_environment(policies: Iterable[str] = ()) -> dict[str, str]:
    """The environment settings that change how the named policies play (``MJBOT_MC``'s
    options, the weights file ``MJBOT_NN_WEIGHTS`` names and its SHA-256), so a dataset or an
    arena's figures say which search and which network played: the seat names alone read "mc"
    or "nn" whatever the options and the weights were. An ``nn@FILE`` seat among ``policies``
    adds its file's SHA-256 (``sha256 FILE``): its name says the path, not which weights lay
    there when it played."""
    settings = {name: os.environ[name] for name in (MC_ENV, NN_ENV) if os.environ.get(name)}
    weights = settings.get(NN_ENV)
    if weights and Path(weights).is_file():
        settings["nn_weights_sha256"] = sha256(weights)
    for spec in policies:
        digest = weights_digest(spec)
        if digest:
            path = split_budget(split_label(spec)[1])[0].removeprefix(NN_FILE_PREFIX)
            settings[f"sha256 {path}"] = digest
    return settings


def weights_digest(seat: str) -> str:
    """The SHA-256 of an ``nn@FILE`` seat's weights, under a label or a budget too ('' for
    any other seat, or a file that is not there)."""
    policy = split_budget(split_label(seat)[1])[0]
    path = Path(policy.removeprefix(NN_FILE_PREFIX))
    return sha256(path) if policy.startswith(NN_FILE_PREFIX) and path.is_file() else ""


def program_digests(seat: str) -> dict[str, str]:
    """For an outside program (``KIND:CMD``, under a label too): the SHA-256 of each word of
    its command that names a file here (``bot.py``, ``./mybot``, an upload zip) and of the
    program it starts (``mybot`` on PATH, ``python`` itself), by the word;
    empty for any other seat. Its command stays the same when its author edits the program,
    so a kept figure must be told from a fresh one by these. A module run with ``-m`` or what
    a program imports are not seen."""
    from adapter.local.external import is_external, parse_spec

    name = split_label(seat)[1]
    if not is_external(name) or name.startswith("mjai-tcp:"):
        return {}
    try:
        argv = parse_spec(name).argv
    except ValueError:
        return {}
    # the program as it is started (execvp): a bare name is found on PATH, not here
    program = shutil.which(argv[0])
    files = {argv[0]: Path(program)} if program else {}
    files.update({word: Path(word) for word in argv[1:] if word not in files})
    return {word: _file_digest(path) for word, path in files.items() if path.is_file()}


def _file_digest(path: Path) -> str:
    """``path``'s SHA-256; for a file this user may run but not read (an execute-only
    binary), its size and modification time, which an edit changes too."""
    try:
        return sha256(path)
    except OSError as exc:
        try:
            stat = path.stat()
        except OSError:
            return f"unreadable ({exc.strerror})"
        return f"unreadable ({exc.strerror}): {stat.st_size} bytes, modified {stat.st_mtime_ns}"


class BrainSeat:
    """One seat played by a :class:`Brain`. Its state is its own, fed only by what the referee
    shows it, exactly as an adapter feeds a brain from a platform's messages. ``limit``: the
    seconds per decision a platform would give (the brain keeps its margin back from it);
    ``clock``: what that limit is kept on (brain/clock.py)."""

    def __init__(self, variant: str, seat: int, policy: str, limit: float | None = None,
                 clock: Clock = MONOTONIC) -> None:
        self.name = policy
        self.brain = Brain(variant, policy, limit=limit, clock=clock)
        self.state = TableState(variant, seat)
        self.times = DecisionTimes()

    def observe(self, event: Any) -> None:
        self.state.apply(event)

    # The referee reads this seat's state as its view of the seat (``observe`` feeds it every
    # event the view would get) and hands over the legal set it computes from it, so neither
    # the state nor the legal set is built twice. Nothing but ``observe`` changes the state.
    shares_state = True
    takes_legal = True

    def decide(self, request: ev.DecisionRequest, legal: list[Any] | None = None) -> Answer:
        answer = self.brain.decide(self.state, request, legal)
        if answer.source != anytime.FORCED:
            self.times.record(answer.elapsed, answer.work)
        return answer

    @property
    def tally(self) -> FallbackTally:
        """How often the brain answered for the policy (see brain/tally.py)."""
        return self.brain.tally

    def close(self) -> None:
        self.brain.close()


def split_budget(name: str) -> tuple[str, float | None]:
    """``POLICY@budget=SECONDS`` as (POLICY, SECONDS); any other name as (name, None),
    an outside program's (``KIND:CMD``) included: its command is its own, and its time the
    platform's (a trailing ``@budget=`` there is refused by its spec's parse). A bad number
    is a ValueError in one line naming the seat."""
    from adapter.local.external import is_external

    if is_external(name):
        return name, None
    policy, sep, text = name.rpartition(BUDGET_SUFFIX)
    if not sep:
        return name, None
    try:
        seconds = float(text)
    except ValueError:
        seconds = -1.0
    if not policy or not 0.0 < seconds <= MAX_BUDGET:
        raise ValueError(f"seat {name!r}: {BUDGET_SUFFIX}SECONDS needs a policy and seconds "
                         f"above 0 (at most {MAX_BUDGET:g}), not {text!r}")
    return policy, seconds


def split_label(name: str) -> tuple[str, str]:
    """``LABEL=SEAT`` as (LABEL, SEAT): a short display name for a seat whose own name is long
    (an outside program's command). Anything else, including an ``=`` inside a command or a
    budget (``mjai:python -c "x=1"``, ``mc@budget=0.3``), is (name, name): only a prefix
    before which no ``:`` or ``@`` comes, followed by a seat name of its own, is a label. A
    bad label there is a ValueError in one line naming the seat."""
    head, sep, rest = name.partition("=")
    if not sep or ":" in head or "@" in head or not is_seat_spec(rest):
        return name, name
    if not LABEL.fullmatch(head):
        raise ValueError(f"seat {name!r}: a label (LABEL=SEAT) is 1 to {LABEL_MAX} letters, "
                         f"digits, '_', '-' or '.', not {head!r}")
    return head, rest


def is_seat_spec(text: str) -> bool:
    """Whether ``text`` has the form of a seat name (not whether it can be played): a
    policy, ``nn@FILE``, ``mc@OPTIONS``, ``style:NAME`` or ``KIND:CMD``, with an optional
    ``@budget=``."""
    from adapter.local.external import is_external
    from brain.policies import MC_OPTIONS_PREFIX, NN_FILE_PREFIX, POLICIES

    if is_external(text):
        return True
    policy, sep, _ = text.rpartition(BUDGET_SUFFIX)
    policy = policy if sep else text
    return policy in POLICIES or policy.startswith((NN_FILE_PREFIX, MC_OPTIONS_PREFIX))


def seat_specs(names: Iterable[str]) -> dict[str, str]:
    """Label -> seat name without it, for every seat (an unlabelled seat is its own label).
    One label must mean one player: two specs under one label are a ValueError naming both."""
    specs: dict[str, str] = {}
    for name in names:
        label, spec = split_label(name)
        if specs.setdefault(label, spec) != spec:
            raise ValueError(f"label {label!r} names two players: {specs[label]!r} and "
                             f"{spec!r} (a label must mean one player)")
    return specs


def pair_key(a: str, b: str) -> str:
    """The key of A - B in a summary's ``differences``: the two names, A first, joined by '-'."""
    return f"{a}-{b}"


def check_pair_keys(names: Iterable[str]) -> None:
    """Names may hold '-' (labels, outside programs' commands), so two pairs could share one
    ``A-B`` key and one difference overwrite the other in an arena's figures: refuse such
    names (a ValueError). Only a table of four names has such keys: a league's arenas seat
    two members each, and self-play reports no differences, so neither asks this."""
    seen: dict[str, tuple[str, str]] = {}
    for a, b in itertools.combinations(sorted(set(names)), 2):
        other = seen.setdefault(pair_key(a, b), (a, b))
        if other != (a, b):
            raise ValueError(f"seats {other[0]!r} - {other[1]!r} and {a!r} - {b!r} would share "
                             f"the difference key {pair_key(a, b)!r}: give one of them another "
                             "label (LABEL=SEAT)")


def time_limit(name: str, seat_limit: float | None = None,
               budget: float | None = None) -> str | None:
    """The limit seat ``name`` (a label's seat) decides under, in words, as seat_for seats
    it: an outside program its platform's (or ``seat_limit``), our brain its own
    ``@budget=`` or ``budget``; None where there is none."""
    from adapter.local.external import is_external, time_limit_text

    spec = split_label(name)[1]
    if is_external(spec):
        return time_limit_text(spec, seat_limit)
    own = split_budget(spec)[1]
    seconds = own if own is not None else budget
    return None if seconds is None else f"budget {seconds:g} s"


def seat_for(variant: str, seat: int, name: str, seat_limit: float | None = None,
             budget: float | None = None, connect_wait: float = 60.0,
             clock: Clock = MONOTONIC) -> Any:
    """The player for seat ``name``: our brain, or an outside program for a ``KIND:CMD``
    name (adapter/local/external/; ``seat_limit`` overrides its platform's answer limit, and a
    listening seat waits ``connect_wait`` seconds for its bot).
    Our brain decides under ``budget`` seconds per decision (None: no limit), or under the
    name's own ``@budget=SECONDS``; the seat keeps ``name`` (its label, for ``LABEL=SEAT``)
    so figures stay per seat name. ``clock``: what our brain keeps its budget on (an outside
    program's time is always the real clock's: it runs in its own process)."""
    from adapter.local.external import SeatLimits, external_seat, is_external

    label, spec = split_label(name)
    if is_external(spec):
        limits = SeatLimits(seat_limit, connect=connect_wait)
        player: Any = external_seat(variant, seat, spec, limits)
    else:
        policy, own = split_budget(spec)
        player = BrainSeat(variant, seat, policy, limit=own if own is not None else budget,
                           clock=clock)
    player.name = label
    return player
