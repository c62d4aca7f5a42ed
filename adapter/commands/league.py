"""`mjbot league`: round-robins of duplicate arenas between a population of styles.

Each pair of members plays one arena (one against three, every seating, the same walls for
every pair since walls are keyed by seed and unit); the table is built from the arenas'
own figures (points/hand difference and its 95% interval, average rank), so a league adds no
referee loop and no statistics of its own. ``--out DIR`` keeps each arena's JSON, and a rerun
skips the arenas already there (a file played with other options is refused, not reused).
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import itertools
import json
import re
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from adapter.commands import (
    UserInputError,
    add_length_argument,
    add_stop_after_argument,
    add_table_arguments,
    add_variant_option,
    checked_stop_after,
    fallback_verdict,
    log,
    log_folder,
    report,
    require_labels,
    require_seat_name,
    require_table,
    require_writable,
    start_ray,
    text_stream,
)

if TYPE_CHECKING:
    from adapter.local.stopping import StopRequest

DEFAULT_MEMBERS = "rulebased,greedy,style:open,style:closed,style:defensive,style:value"
EXAMPLES = """examples:
  mjbot league --hands 200 --seed 31 --workers 2 --json league.json
  mjbot league --variant mcr --members rulebased,style:open,style:closed,mc --hands 96
  mjbot league --members 'rulebased,style:value,nn@runs/gen3.npz' --both --out league-runs/
  mjbot league --hands 64000 --workers 2 --out league-runs/ --stop-after 3600   # and again

A member is any policy name (rulebased, greedy, mc, nn, nn@FILE, style:open, style:closed,
style:defensive, style:value) or an outside program (KIND:CMD, as in mjbot arena), with an
optional LABEL= naming it in the table and the JSON (as in mjbot arena). Each pair
A, B plays A against three B on the same walls (--both: B against three A as well); the
table's cell (row A, column B) is A's points/hand minus B's, with the arena's 95% interval."""


def register(sub: Any) -> None:
    a = sub.add_parser("league", help="round-robin of duplicate arenas between styles",
                       description="Every pair of members plays a duplicate arena (one "
                       "against three, every seating, the same walls); writes the table of "
                       "points/hand differences with 95% intervals (and average ranks).",
                       epilog=EXAMPLES, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_variant_option(a)
    a.add_argument("--members", default=DEFAULT_MEMBERS,
                   help="comma-separated policies or outside programs, each optionally "
                   "LABEL= to name it in the table, e.g. 'nn,rb=mjai:python -m bot' "
                   "(default: %(default)s)")
    a.add_argument("--hands", type=int, default=200, help="hands per arena, about")
    a.add_argument("--seed", type=int, default=0)
    a.add_argument("--both", action="store_true",
                   help="also play B against three A for every pair (twice the arenas)")
    add_table_arguments(a)
    add_length_argument(a)
    a.add_argument("--json", metavar="FILE", help="write the table and every arena's figures "
                   "('-': onto stdout, and the text onto stderr)")
    add_stop_after_argument(a, "play no arena and start no wall set after this many seconds; "
                            "the table holds what finished (an arena cut short: its first "
                            "wall sets). SIGTERM or Ctrl-C stops the same way")
    a.add_argument("--out", metavar="DIR", help="keep each arena's JSON here; arenas whose "
                   "file is already there are not played again")
    a.add_argument("--log-dir", help="write the games' logs here (default: no logs)")
    a.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                   help="progress bar on stderr (default: when it is a terminal)")
    a.set_defaults(handler=cmd_league)


def parse_members(text: str) -> list[str]:
    """``--members``: two or more distinct known policies or outside programs, each
    optionally ``LABEL=`` (the league's name for it)."""
    from adapter.local.seat import split_label

    members = [m.strip() for m in text.split(",") if m.strip()]
    if len(members) < 2:
        raise UserInputError(f"--members needs two or more names, got {text!r}")
    for name in members:
        require_seat_name(name)
    require_labels(members)
    labels = [split_label(m)[0] for m in members]
    twice = sorted({m for m in labels if labels.count(m) > 1})
    if twice:
        raise UserInputError(f"--members names {', '.join(twice)} more than once")
    return members


def require_listeners_as_heroes(members: list[str], both: bool) -> None:
    """A listening member (``mjai-tcp:HOST:PORT``) is one seat at its address, waiting for
    one bot: as the field of an arena (A against three B) it would take three seats there,
    and the league wait out --connect-wait for a second client. Refused before any game,
    saying where it may sit."""
    from adapter.local.external import is_external, parse_spec
    from adapter.local.seat import split_label

    for hero, field in pairings(members, both):
        seat = split_label(field)[1]
        if is_external(seat) and parse_spec(seat).kind == "mjai-tcp":
            raise UserInputError(
                f"{field!r}: a listening seat is one seat at its address, but the arena "
                f"against {hero!r} would seat it three times (three seats of the field); "
                "list it first in --members, without --both, so that it only plays one "
                "seat against three of each other member")


def pairings(members: list[str], both: bool) -> list[tuple[str, str]]:
    """(hero, field) per arena: each pair once in member order, reversed too with ``both``."""
    out = []
    for a, b in itertools.combinations(members, 2):
        out.append((a, b))
        if both:
            out.append((b, a))
    return out


def arena_file(out: Path, hero: str, field: str) -> Path:
    """A stable, file-safe name for one arena's JSON (names may hold paths and spaces): a
    seat's label, and a digest of all it stands for."""
    from adapter.local.seat import split_label

    def slug(name: str) -> str:
        digest = hashlib.sha1(name.encode()).hexdigest()[:8]
        return re.sub(r"[^A-Za-z0-9_.-]+", "_", split_label(name)[0])[:32] + "-" + digest
    return out / f"{slug(hero)}--vs-3x--{slug(field)}.json"


def difference(summary: dict[str, Any], a: str, b: str) -> tuple[float, list[float | None]]:
    """A's points/hand minus B's and its interval (adapter.local.arena.paired_difference)."""
    from adapter.local.arena import paired_difference

    value, ci = paired_difference(summary, a, b)
    return value, ci  # type: ignore[return-value]  # None only for an arena of no hands


def table(members: list[str], arenas: dict[tuple[str, str], dict[str, Any]]
          ) -> dict[str, dict[str, Any]]:
    """Row A, column B: from the arena A against three B (or, without it, from B against
    three A, read from A's side): A−B points/hand, its 95% interval, A's average rank; no
    cell for a pair with neither arena (a league stopped early)."""
    cells: dict[str, dict[str, Any]] = {m: {} for m in members}
    for a in members:
        for b in members:
            key = (a, b) if (a, b) in arenas else (b, a)
            if a == b or key not in arenas:  # not played: a league stopped early
                continue
            summary = arenas[key]
            value, ci = difference(summary, a, b)
            mine = summary["policies"][a]
            cells[a][b] = {"points_per_hand": value, "ci95": ci, "avg_rank": mine["avg_rank"],
                           "avg_rank_ci95": mine["avg_rank_ci95"], "seats": mine["seats"],
                           "arena": f"{key[0]} vs 3x {key[1]}"}
    return cells


def row_means(members: list[str], cells: dict[str, dict[str, Any]]) -> dict[str, float | None]:
    """The table's mean column: each member's mean A−B over the arenas played (None: none)."""
    means: dict[str, float | None] = {}
    for a in members:
        values = [cells[a][b]["points_per_hand"] for b in members if b != a and b in cells[a]]
        means[a] = sum(values) / len(values) if values else None
    return means


def format_table(variant: str, members: list[str], cells: dict[str, dict[str, Any]],
                 means: dict[str, float | None]) -> str:
    """The table as text: A−B points/hand [95% CI] per cell, a mean column (``means``, as
    row_means gives it), then (ranked variants) the average ranks."""
    from adapter.local.arena import _interval
    from brain.rules.variant import variant_of

    spec = variant_of(variant)
    width = max(24, *(len(m) + 2 for m in members))
    head = f"{'member':<{width}}" + "".join(f"{m:>{width}}" for m in members) + f"{'mean':>10}"
    lines = [f"league {variant}: row minus column, {spec.score_unit}/hand [95% CI]", head]
    for a in members:
        row = f"{a:<{width}}"
        for b in members:
            if a == b:
                row += f"{'-':>{width}}"
                continue
            c = cells[a].get(b)
            if c is None:
                row += f"{'not played':>{width}}"
                continue
            row += f"{c['points_per_hand']:+z.1f} {_interval(c['ci95'], '+z.0f')}".rjust(width)
        mean = "-" if means[a] is None else f"{means[a]:+z.1f}"
        lines.append(row + f"{mean:>10}")
    if spec.ranked:
        lines += ["", "average rank of the row member in the arena of the pair (above the "
                  "diagonal, or with --both: one seat against three of the column member; "
                  "below it: three seats against one)",
                  f"{'member':<{width}}" + "".join(f"{m:>{width}}" for m in members)]
        for a in members:
            row = f"{a:<{width}}"
            for b in members:
                c = cells[a].get(b)
                text = "-" if c is None or c["avg_rank"] is None else (
                    f"{c['avg_rank']:.2f} " + _interval(c["avg_rank_ci95"], ".2f"))
                row += text.rjust(width)
            lines.append(row)
    return "\n".join(lines)


def _league_options(args: argparse.Namespace, hero: str, field: str) -> dict[str, Any]:
    options = {"variant": args.variant, "seed": args.seed, "hands": args.hands,
               "length": args.length, "hero": hero, "field": field}
    if args.budget is not None:  # absent without one, so arenas kept before it still count
        options["budget"] = args.budget
    # what the names alone do not say (absent where empty, as the budget): the bytes of an
    # nn@FILE seat's weights and the environment mc and nn read; a file retrained in place
    # must not pass for the one an arena kept in --out was played with
    from adapter.local.seat import policy_environment, program_digests, weights_digest

    digests = {seat: weights_digest(seat) for seat in (hero, field)}
    weights = {seat: digest for seat, digest in digests.items() if digest}
    if weights:
        options["weights_sha256"] = weights
    programs = {seat: files for seat in (hero, field) if (files := program_digests(seat))}
    if programs:  # an outside program edited since has the same command
        options["programs_sha256"] = programs
    environment = policy_environment()
    if environment:
        options["environment"] = environment
    return options


def _stored(path: Path, options: dict[str, Any]) -> dict[str, Any] | None:
    """The arena summary kept at ``path`` for these options; None when there is none; the
    user's error when the file is unreadable or was played with other options."""
    from adapter.local.game import set_length

    if not path.exists():
        return None
    try:
        kept = json.loads(path.read_text())
        league, summary = kept["league"], kept["arena"]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise StaleArena(f"{path}: not a league arena file ({exc})",
                         "remove it or use another --out") from None
    if isinstance(league, dict) and "length" in league and set_length(options["variant"]):
        # a riichi game's length, not played by this variant: an mjbot before 406c4c8 took
        # `--variant mcr --length south` and kept it, which no command can give now
        league = {**league, "length": options["length"]}
    if "programs_sha256" in options and "programs_sha256" not in league and league == {
            k: v for k, v in options.items() if k != "programs_sha256"}:
        # kept by an mjbot that hashed no program (before f75ae3f): the same command,
        # but whether the program behind it was edited since cannot be told
        programs = ", ".join(options["programs_sha256"])
        raise StaleArena(f"{path}: played by an older mjbot, which kept no hash of the "
                         f"outside program ({programs}): whether it was edited since "
                         "cannot be told", "remove the file to play that arena again, or "
                         "use another --out")
    if league != options:
        changed = ", ".join(f"{k} {league.get(k)!r} (now {v!r})" for k, v in options.items()
                            if league.get(k) != v)
        raise StaleArena(f"{path}: played with other options ({changed})",
                         "remove it or use another --out")
    return summary  # type: ignore[no-any-return]


class StaleArena(UserInputError):
    """An arena file in --out that this league cannot reuse: ``why`` (its path and what
    differs) and what the user can do."""

    def __init__(self, why: str, advice: str) -> None:
        super().__init__(f"{why}; {advice}")
        self.why = why
        self.advice = advice

    def __reduce__(self) -> tuple[Any, ...]:  # pickle would call __init__(the message) alone
        return type(self), (self.why, self.advice)


def _kept_arenas(pairs: list[tuple[str, str]], out: Path | None,
                 options: dict[tuple[str, str], dict[str, Any]]
                 ) -> dict[tuple[str, str], dict[str, Any] | None]:
    """Each pair's arena kept in ``out`` (None: none kept), every file read before a game is
    played: the files this league cannot reuse (an outside program edited since is in every
    arena it sits in) are refused in one error naming them all, where naming the first alone
    had its author rerun once per file."""
    kept: dict[tuple[str, str], dict[str, Any] | None] = {}
    stale: list[StaleArena] = []
    for pair in pairs:
        try:
            kept[pair] = _stored(arena_file(out, *pair), options[pair]) if out else None
        except StaleArena as exc:
            stale.append(exc)
    if len(stale) > 1:
        raise UserInputError(f"{len(stale)} arenas kept in --out cannot be reused: "
                             + "; ".join(exc.why for exc in stale)
                             + "; remove them to play those arenas again, or use another --out")
    if stale:
        raise stale[0]
    return kept


def cmd_league(args: argparse.Namespace) -> int:
    from adapter.local.seat import split_label
    from adapter.local.stopping import StopRequest

    stop_after = checked_stop_after(args)
    require_writable(args.json, "--json")
    given = parse_members(args.members)
    require_table(given, args)
    require_listeners_as_heroes(given, args.both)
    args.log_dir = log_folder(args.log_dir, default=False)
    members = [split_label(m)[0] for m in given]  # labels: the table's and the JSON's names
    out = Path(args.out) if args.out else None
    if out is not None:
        if out.exists() and not out.is_dir():
            raise UserInputError(f"--out {out}: not a directory")
        out.mkdir(parents=True, exist_ok=True)
    ray = start_ray(args)
    stop = StopRequest(stop_after, args.command_path)
    with stop.on_signals():  # to the end: a signal never cuts a file or the report
        return _league_and_report(args, given, members, out, ray, stop)


def _league_and_report(args: argparse.Namespace, given: list[str], members: list[str],
                       out: Path | None, ray: Any, stop: StopRequest) -> int:
    """Play (or read from ``out``) every pair's arena until ``stop`` asks, then print and
    write the table; the exit status."""
    import time

    from adapter.local.arena import external_lines, pool_external, pool_tallies
    from adapter.local.seat import seat_specs
    from adapter.local.stopping import exit_status, stop_reason_text
    from brain.tally import tallies_from

    start = time.monotonic()
    try:
        arenas, played, stopped = _play_league(args, given, dict(zip(given, members,
                                                                     strict=True)),
                                               out, ray, stop)
    finally:
        if ray is not None:
            ray.cluster.close()
    if not arenas:
        assert stopped is not None  # a finished league has every arena
        print(f"mjbot league: stopped ({stop_reason_text(stopped['reason'])}) before the "
              "first arena had a finished wall set: no figures", file=sys.stderr)
        return exit_status(stopped["reason"]) or 1
    cells = table(members, arenas)
    means = row_means(members, cells)
    text = "\n" + format_table(args.variant, members, cells, means)
    if stopped is not None:
        text += (f"\n\nstopped early ({stop_reason_text(stopped['reason'])}): "
                 f"{len(stopped['not_played'])} arena(s) not played"
                 + (f", {stopped['arena']} cut short" if stopped["arena"] else "")
                 + (" (a rerun with the same --out plays what is missing)" if out is not None
                    else ""))
    fallbacks = {m: pool_tallies(tallies_from({m: s["policies"][m]})[m]
                                 for s in arenas.values() if m in s["policies"]).as_dict()
                 for m in members}
    errors = sum(s["referee_errors"] for s in arenas.values())
    external = pool_external(arenas.values())
    if external:  # what the arena prints of each outside program, over all its arenas
        text += "\n\n" + "\n".join(external_lines(external))
    figures = {
        "variant": args.variant, "members": members, "specs": seat_specs(given),
        "seed": args.seed, "hands": args.hands, "both": args.both, "length": args.length,
        "arenas_played": played, "arenas_kept": len(arenas) - played,
        "seconds": round(time.monotonic() - start, 3), "referee_errors": errors,
        "fallbacks": fallbacks, "external_seats": external, "table": cells, "means": means,
        "arenas": {f"{h} vs 3x {f}": s for (h, f), s in arenas.items()},
    }
    if stopped is not None:
        figures["stopped"] = stopped
    report(args.json, text, figures)
    failed = fallback_verdict(args, fallbacks)
    return exit_status(stopped["reason"] if stopped else None) or (1 if errors else failed)


def _play_league(args: argparse.Namespace, given: list[str], label_of: dict[str, str],
                 out: Path | None, ray: Any, stop: StopRequest,
                 ) -> tuple[dict[tuple[str, str], dict[str, Any]], int, dict[str, Any] | None]:
    """Every pair's arena (played, or kept from ``out``) until ``stop`` asks: the summaries
    by (hero, field), how many were played, and ``stopped`` (None when none was missed):
    why, the arena cut short (its first wall sets are in the table but not kept in ``out``,
    so a rerun plays it whole) and the arenas not played. Arenas kept in ``out`` count
    whenever the stop came: reading them costs nothing."""
    arenas: dict[tuple[str, str], dict[str, Any]] = {}
    played = 0
    pairs = pairings(given, args.both)
    cut = ""
    options_of = {pair: _league_options(args, *pair) for pair in pairs}
    stored = _kept_arenas(pairs, out, options_of)
    for hero_seat, field_seat in pairs:
        hero, field = label_of[hero_seat], label_of[field_seat]
        # taken again as the arena begins: what it is kept with is what it was played with
        options = _league_options(args, hero_seat, field_seat)
        path = arena_file(out, hero_seat, field_seat) if out is not None else None
        summary = stored[(hero_seat, field_seat)]
        kept = summary is not None
        if summary is None:
            if stop():
                continue
            summary = _play_arena(args, hero_seat, field_seat, ray, stop)
            if summary is None:
                continue
            played += 1
            if "stopped" in summary:
                cut = f"{hero} vs 3x {field}"
            elif path is not None:
                _write_atomically(path, json.dumps({"league": options, "arena": summary},
                                                   indent=2) + "\n")
        arenas[(hero, field)] = summary
        _print_arena(args, hero, field, summary, kept, out is not None)
    not_played = [f"{label_of[h]} vs 3x {label_of[f]}" for h, f in pairs
                  if (label_of[h], label_of[f]) not in arenas]
    if not (cut or not_played):
        return arenas, played, None
    return arenas, played, {"reason": stop(), "arena": cut or None, "not_played": not_played}


def _play_arena(args: argparse.Namespace, hero: str, field: str, ray: Any,
                stop: StopRequest) -> dict[str, Any] | None:
    """One pair's arena, the hero against three of the field, until it ends or ``stop``
    asks: its summary (with ``stopped`` where it was cut short), None where no wall set
    finished."""
    import time

    from adapter.local.arena import ArenaConfig, environment_changed, run_arena_until, summarize
    from adapter.local.seat import policy_environment
    from adapter.progress import ProgressBar

    workers = ray.workers if ray is not None else args.workers or 1
    config = ArenaConfig(args.variant, (hero, field, field, field), args.hands, args.seed,
                         workers, args.log_dir, args.length,
                         seat_limit=args.seat_limit,
                         budget=args.budget, connect_wait=args.connect_wait)
    began = time.monotonic()
    environment = policy_environment(config.policies)  # the weights as the games begin
    bar = ProgressBar(args.progress)
    results, early = run_arena_until(config, bar, ray, stop)
    bar.end()
    if not results:
        return None
    summary = summarize(config, results, time.monotonic() - began, environment)
    changed = environment_changed(config, environment)
    if changed is not None:
        summary["environment_changed"] = changed
        log().warning("weights replaced", arena=f"{hero} vs 3x {field}", detail=changed)
    for r in results:
        for error in r.errors:
            log().error("referee error", arena=f"{hero} vs 3x {field}", error=error)
    if early is not None:
        summary["stopped"] = early.as_dict()
    return summary


def _print_arena(args: argparse.Namespace, hero: str, field: str, summary: dict[str, Any],
                 kept: bool, with_out: bool) -> None:
    """One line per arena as it ends: the pair's difference, its size and where it came
    from. A reader gone already (``| head``) does not end the league: its figures are still
    written, and the table's print (commands.report) ends the command as SIGPIPE would."""
    from adapter.local.arena import _interval

    value, ci = difference(summary, hero, field)
    note = ", kept from --out" if kept else ""
    if "stopped" in summary:
        s = summary["stopped"]
        note = (f", stopped early: the first {s['units_done']} of {s['units_planned']} wall "
                "sets" + (", not kept in --out" if with_out else ""))
    line = (f"{hero} vs 3x {field}: {value:+z.1f}/hand {_interval(ci, '+z.1f')} "
            f"({summary['hands']} hands, {summary['seconds']:.1f} s{note})")
    with contextlib.suppress(BrokenPipeError):
        print(line, flush=True, file=text_stream(args.json))


def _write_atomically(path: Path, text: str) -> None:
    """``text`` into ``path`` by way of a temporary file and a rename, so that a run killed
    while writing (SIGKILL, a full disk) never leaves a half-written arena file for the next
    run to refuse."""
    import os

    temporary = path.with_name(path.name + ".part")
    temporary.write_text(text)
    os.replace(temporary, path)
