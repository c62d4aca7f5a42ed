"""Outside programs as seats at the local table: any bot a user has, measured with the same
duplicate walls, seatings, intervals, logs and fallback counting as our own policies.

A seat is named like a policy, ``KIND:COMMAND``:

* ``mjai:CMD`` — an mjai bot on stdin/stdout (mjai.app's form), riichi only;
* ``mjai-tcp:HOST:PORT`` — an mjai bot that connects to the seat, which listens there as the
  original mjai server (mjai_tcp_seat.py), riichi only;
* ``botzone:CMD`` / ``botzone-json:CMD`` — a Botzone bot started anew every turn (simple /
  JSON interaction), MCR only; ``botzone-keep:CMD`` / ``botzone-keep-json:CMD`` — one that
  keeps running (botzone_seat.py);
* ``ntpu:CMD`` — an NTPU / Cycgame program on stdin/stdout (the protocol's wrapper form),
  taiwan16 only (ntpu_seat.py).

``CMD`` is split as a shell would split it (no shell runs it) and may not hold a comma
(``--policies`` is comma-separated), nor end in an unquoted ``@budget=...``: that is our own
seats' time limit, which an outside seat's command would take into its last word (its time
is its platform's, or ``--seat-limit``). Each seat runs its own program, one run per game, killed
(with whatever it started) when the game ends; see seat.py for what happens when a program is
late, crashes, answers illegally or writes garbage.
"""

from __future__ import annotations

import re
import shlex
import shutil
from dataclasses import dataclass
from typing import Any

from adapter.local.external.seat import ExternalSeat, SeatLimits, SeatReport

# kind -> (the variant its platform plays, what it is)
KINDS = {"mjai": ("riichi", "an mjai bot"), "mjai-tcp": ("riichi", "an mjai bot"),
         "botzone": ("mcr", "a Botzone bot"), "botzone-json": ("mcr", "a Botzone bot"),
         "botzone-keep": ("mcr", "a Botzone bot"), "botzone-keep-json": ("mcr", "a Botzone bot"),
         "ntpu": ("taiwan16", "an NTPU program")}


# ``@budget=SECONDS`` at the very end of a command, unquoted: our seats' own time limit
# (adapter/local/seat.py's BUDGET_SUFFIX), which an outside seat's command would have taken
# into its last word (``python bot.py@budget=1`` runs the file "bot.py@budget=1"); whatever
# follows it, as our seats take any float there (1e-1) and refuse a bad one (2s) in one line
TRAILING_BUDGET = re.compile(r"@budget=[^\s'\"\\]*\Z")


class SpecError(ValueError):
    """A seat spec that cannot be run: the message says what is wrong, in one line."""


@dataclass(frozen=True)
class ExternalSpec:
    kind: str
    argv: tuple[str, ...]

    @property
    def variant(self) -> str:
        return KINDS[self.kind][0]


def is_external(name: str) -> bool:
    """Whether a policy name names an outside program (``KIND:...``)."""
    kind, sep, _ = name.partition(":")
    return bool(sep) and kind in KINDS


def parse_spec(name: str) -> ExternalSpec:
    kind, _, command = name.partition(":")
    if kind not in KINDS:
        raise SpecError(f"{name!r}: unknown seat kind {kind!r} (known: {', '.join(KINDS)})")
    if TRAILING_BUDGET.search(command.rstrip()):
        raise SpecError(f"{name!r}: @budget= is for our own seats; an outside seat's time "
                        "limit is its platform's, or --seat-limit SECONDS (for a program "
                        "whose last argument really ends so, quote that argument)")
    try:
        argv = tuple(shlex.split(command))
    except ValueError as exc:
        raise SpecError(f"{name!r}: cannot split the command ({exc})") from None
    if not argv:
        raise SpecError(f"{name!r}: no command after {kind}:")
    return ExternalSpec(kind, argv)


def check_spec(name: str, variant: str) -> None:
    """Refuse, in one line, a spec that cannot be seated at ``variant``'s table: a bad
    command, a program not found, a platform that does not play the variant."""
    spec = parse_spec(name)
    if spec.variant != variant:
        raise SpecError(f"{name!r}: {KINDS[spec.kind][1]} plays {spec.variant}, not {variant} "
                        f"(mjai: riichi; botzone: mcr; ntpu: taiwan16)")
    if spec.kind == "mjai-tcp":
        from adapter.local.external.mjai_tcp_seat import parse_address

        try:
            parse_address(" ".join(spec.argv))
        except ValueError as exc:
            raise SpecError(f"{name!r}: {exc}") from None
        return
    program = spec.argv[0]
    if shutil.which(program) is None:
        raise SpecError(f"{name!r}: no program {program!r} (not found, or not executable)")


def check_listeners(names: Any, parallel: bool) -> None:
    """A listening seat (``mjai-tcp:``) owns its address: one seat per address, and no
    parallel units (each would listen there at once)."""
    listeners = [n for n in names if is_external(n) and parse_spec(n).kind == "mjai-tcp"]
    for name in listeners:
        if list(names).count(name) > 1:
            raise SpecError(f"{name!r}: one seat per listening address (give each its own "
                            f"port)")
    if listeners and parallel:
        raise SpecError(f"{listeners[0]!r}: a listening seat plays one game at a time "
                        f"(no --workers above 1, no --ray)")


def time_limit_text(name: str, seat_limit: float | None = None) -> str:
    """What an outside seat's answers are timed against, in words (the arena's thinking
    line): ``--seat-limit`` where given, else its platform's limits, not our seats' budget."""
    from adapter.local.external import botzone_seat, mjai_seat, mjai_tcp_seat, ntpu_seat

    if seat_limit is not None:
        return f"--seat-limit {seat_limit:g} s"
    first = SeatLimits().first
    kind = parse_spec(name).kind
    if kind == "mjai-tcp":  # join included: the server's 60 s is above the start allowance
        return f"the mjai server's {max(first, mjai_tcp_seat.ANSWER_LIMIT):g} s"
    if kind.startswith("mjai"):
        return f"mjai's {mjai_seat.ANSWER_LIMIT:g} s, {first:g} s the first"
    if kind.startswith("botzone-keep"):
        return (f"Botzone's {botzone_seat.FIRST_LIMIT:g} s first, "
                f"{botzone_seat.LATER_LIMIT:g} s later")
    if kind.startswith("botzone"):  # a fresh run every turn: each its first
        return f"Botzone's {botzone_seat.FIRST_LIMIT:g} s"
    return f"NTPU's {ntpu_seat.ANSWER_LIMIT:g} s (the fake server's), {first:g} s the first"


def external_seat(variant: str, seat: int, name: str,
                  limits: SeatLimits | None = None) -> ExternalSeat:
    """The seat for spec ``name`` (already checked by :func:`check_spec`)."""
    from adapter.local.external import botzone_seat as bz
    from adapter.local.external.mjai_seat import MjaiSeat
    from adapter.local.external.mjai_tcp_seat import MjaiTcpSeat
    from adapter.local.external.ntpu_seat import NtpuSeat

    spec = parse_spec(name)
    cls: Any = {"mjai": MjaiSeat, "mjai-tcp": MjaiTcpSeat, "botzone": bz.BotzoneSeat,
                "botzone-json": bz.BotzoneJsonSeat, "botzone-keep": bz.BotzoneKeepSeat,
                "botzone-keep-json": bz.BotzoneKeepJsonSeat, "ntpu": NtpuSeat}[spec.kind]
    return cls(variant, seat, name, list(spec.argv), limits)  # type: ignore[no-any-return]


__all__ = ["ExternalSeat", "ExternalSpec", "SeatLimits", "SeatReport", "SpecError",
           "check_listeners", "check_spec", "external_seat", "is_external", "parse_spec",
           "time_limit_text"]
