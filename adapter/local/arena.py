"""Duplicate matches at the local table, in parallel worker processes.

A *unit* is one set of walls (one game's worth, keyed by seed and unit index) played once for
every distinct seating of the policies (4 for one-against-three, 6 for two pairs, 24 for four
different policies): the luck of the tiles then falls on every policy alike, as in the seed
papers' duplicate matches and Mortal's evaluation. Figures are pooled over all seats a policy
holds; their 95% confidence intervals treat each unit as one sample (a ratio estimator over
units), which is what makes use of the duplicate pairing.
"""

from __future__ import annotations

import functools
import itertools
import math
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from adapter.local.external import SeatReport
from adapter.local.game import GameConfig, play_game
from adapter.local.intervals import RANKS, SHARES, cut_to, t975
from adapter.local.seat import (
    check_pair_keys,
    pair_key,
    policy_environment,
    seat_for,
    seat_specs,
    split_label,
    time_limit,
)
from adapter.local.stopping import StopRequest, play_in_process, play_units, stop_reason_text
from adapter.local.timing import DecisionTimes
from brain.clock import MONOTONIC, Clock
from brain.policies.nn import ENV as NN_ENV
from brain.rules.variant import variant_of
from brain.tally import FallbackTally
from replay.log import GameLogWriter, Header

if TYPE_CHECKING:
    from adapter.local.ray_pool import RayRun

EXPECTED_HANDS_PER_GAME = {"east": 5.5, "south": 11.0}
STAT_KEYS = ("hands", "wins", "self_draws", "deal_ins", "points", "games", "rank_sum",
             "win_value_sum", "riichis", "calls")


@dataclass(frozen=True)
class ArenaConfig:
    variant: str
    policies: tuple[str, str, str, str]  # seat names as given (``LABEL=SEAT`` labels one)
    hands: int = 400
    seed: int = 0
    workers: int = 1
    log_dir: str | None = None  # None: no logs
    riichi_length: str = "east"
    hands_per_game: int = 4  # taiwan16 / mass
    seat_limit: float | None = None  # outside programs: seconds per answer (None: platform's)
    connect_wait: float = 60.0  # a listening seat: seconds to wait for its bot, each game
    budget: float | None = None  # our seats: seconds per decision, as a platform gives (None:
    # no limit; a seat named POLICY@budget=SECONDS has its own)
    labels_as: tuple[str, ...] | None = None  # each seat's label where not its name's: a
    # resumed self-play's on record, whose nn@FILE seats now name the same weights otherwise
    clock: Clock = field(default=MONOTONIC, compare=False)  # what our seats keep their budget
    # and time their decisions on (brain/clock.py)

    def game_config(self) -> GameConfig:
        return GameConfig(self.variant, self.riichi_length, self.hands_per_game)

    @functools.cached_property
    def labels(self) -> tuple[str, ...]:
        """Each seat's display name: what the figures, JSON keys and game logs call it (seats
        under one label pool their figures, as seats under one name do); worked out once per
        config, since every seating of every unit reads it."""
        if self.labels_as is not None:
            return self.labels_as
        return tuple(split_label(n)[0] for n in self.policies)

    def specs(self) -> dict[str, str]:
        """Label -> the seat it stands for (a ValueError when one label names two)."""
        if self.labels_as is not None:
            return {label: split_label(n)[1]
                    for label, n in zip(self.labels_as, self.policies, strict=True)}
        return seat_specs(self.policies)

    def arrangements(self) -> list[tuple[str, ...]]:
        """Every distinct seating of the policies (by label), in a fixed order."""
        return sorted(set(itertools.permutations(self.labels)))

    def players(self, seating: tuple[str, ...]) -> list[Any]:
        """The four seats of one seating (labels), each named by its label."""
        self.specs()  # one label, one player (the commands refuse it before any game)
        given = dict(zip(self.labels, self.policies, strict=True))
        players = [seat_for(self.variant, s, given[label], self.seat_limit, self.budget,
                            self.connect_wait, self.clock) for s, label in enumerate(seating)]
        for player, label in zip(players, seating, strict=True):
            player.name = label  # the seat's label, where it is not its name's own
        return players

    def hands_per_unit(self) -> float:
        spec = variant_of(self.variant)
        per_game = (EXPECTED_HANDS_PER_GAME.get(self.riichi_length, 5.5) if spec.dealer_repeats
                    else 1.0 if spec.one_hand_game else float(self.hands_per_game))
        return per_game * len(self.arrangements())

    def units(self) -> int:
        return max(1, math.ceil(self.hands / self.hands_per_unit()))


@dataclass
class UnitResult:
    unit: int
    stats: dict[str, dict[str, float]]
    hands: int = 0
    games: int = 0
    illegal: int = 0
    errors: list[str] = field(default_factory=list)
    logs: list[str] = field(default_factory=list)
    fallbacks: dict[str, FallbackTally] = field(default_factory=dict)  # per policy name
    external: dict[str, SeatReport] = field(default_factory=dict)  # outside programs' faults
    times: dict[str, DecisionTimes] = field(default_factory=dict)  # our seats, per policy name


def play_unit(config: ArenaConfig, unit: int) -> UnitResult:
    """Play one set of walls in every seating; never raises (a referee error is recorded)."""
    names = sorted(set(config.labels))
    result = UnitResult(unit, {n: dict.fromkeys(STAT_KEYS, 0.0) for n in names},
                        fallbacks={n: FallbackTally() for n in names})
    game_config = config.game_config()
    for index, seating in enumerate(config.arrangements()):
        players = config.players(seating)
        log = _open_log(config, unit, index, seating)
        try:
            game = play_game(game_config, players, config.seed, unit, log)
        except Exception as exc:
            result.errors.append(f"unit {unit} seating {index}: {type(exc).__name__}: {exc}\n"
                                 + traceback.format_exc(limit=6))
            if log is not None:
                log.close()
            continue
        finally:
            for seat, p in enumerate(players):
                p.close()
                result.fallbacks[seating[seat]].add(p.tally)
                times = getattr(p, "times", None)
                if times is not None:
                    result.times.setdefault(seating[seat], DecisionTimes()).add(times)
                report = getattr(p, "report", None)
                if report is not None:
                    result.external.setdefault(seating[seat], SeatReport()).add(report)
        if log is not None:
            result.logs.append(str(log.path))
        result.games += 1
        result.hands += len(game.hands)
        result.illegal += len(game.illegal)
        start = variant_of(config.variant).start_score
        for seat, name in enumerate(seating):
            row = result.stats[name]
            row["games"] += 1
            row["hands"] += len(game.hands)
            row["points"] += game.scores[seat] - start
            if game.ranks is not None:
                row["rank_sum"] += game.ranks[seat]
            for hand in game.hands:
                won = [w for w in hand.wins if w[0] == seat]
                row["wins"] += bool(won)
                for w in won:
                    row["win_value_sum"] += w[2]
                    low = row.get("min_win_value")
                    row["min_win_value"] = w[2] if low is None else min(low, w[2])
                row["self_draws"] += any(w[1] is None for w in won)
                row["deal_ins"] += any(w[1] == seat for w in hand.wins)
                row["riichis"] += hand.riichi[seat]
                row["calls"] += hand.called[seat]
    return result


def _open_log(config: ArenaConfig, unit: int, index: int,
              seating: tuple[str, ...]) -> GameLogWriter | None:
    if config.log_dir is None:
        return None
    specs = config.specs()
    header = Header(
        platform="local", variant=config.variant, seat=None, policy=",".join(seating),
        policy_config={"seed": config.seed, "unit": unit, "seating": index},
        game_id=f"{config.variant}-s{config.seed}-u{unit}-{index}",
        extra={"players": list(seating), "full_information": True,
               "specs": {label: specs[label] for label in sorted(set(seating))}})
    return GameLogWriter.create(config.log_dir, header, flush_per_hand=True)


# ---------------------------------------------------------------------- running


@dataclass
class EarlyStop:
    """How a run ended before its last unit: ``reason`` "time" (``--stop-after`` passed),
    "SIGTERM" or "SIGINT"; the figures hold ``units_done`` (the first units, every seating of
    each) of ``units_planned``; ``units_left_out`` finished out of order after a missing one
    and are not counted, so the sample is a prefix whatever the finishing order was."""

    reason: str
    units_done: int
    units_planned: int
    units_left_out: int

    def as_dict(self) -> dict[str, Any]:
        return {"reason": self.reason, "units_done": self.units_done,
                "units_planned": self.units_planned, "units_left_out": self.units_left_out}


def run_arena(config: ArenaConfig,
              progress: Callable[[int, int, int], None] | None = None,
              ray: RayRun | None = None) -> list[UnitResult]:
    """Play every unit (in ``config.workers`` processes, or as tasks on a Ray cluster) and
    return the results in unit order. ``progress(units done, units, hands so far)`` is called
    after each unit."""
    return run_arena_until(config, progress, ray)[0]


def run_arena_until(config: ArenaConfig,
                    progress: Callable[[int, int, int], None] | None = None,
                    ray: RayRun | None = None,
                    stop: StopRequest | None = None,
                    ) -> tuple[list[UnitResult], EarlyStop | None]:
    """:func:`run_arena` that may end early when ``stop`` asks for it (its deadline passed, or
    a signal): with worker processes at once (the units under way are abandoned), in one
    process or on Ray once the unit under way has finished (in one process, a signal while
    an outside program is awaited abandons that unit at once); a KeyboardInterrupt (a second
    Ctrl-C) ends it at once as well. Then the results are the longest run of consecutive
    units from the first that all finished, so a stopped arena still reports whole wall sets
    in every seating, and the :class:`EarlyStop` says so; otherwise (every unit finished,
    whenever the stop came) it is None. Names whose pairs would share one difference key
    are a ValueError before any game (the CLI refuses them in one line first)."""
    check_pair_keys(config.specs())
    units = config.units()
    results: list[UnitResult] = []
    hands = 0
    asked = stop if stop is not None else StopRequest()

    def done(result: UnitResult) -> None:
        nonlocal hands
        results.append(result)
        hands += result.hands
        if progress:
            progress(len(results), units, hands)

    try:
        if ray is not None:
            for _, result in ray.map(play_unit, lambda u: (config, u), units):
                done(result)
                if asked():
                    break
        elif config.workers <= 1:
            for result in play_in_process(play_unit, config, units, asked):
                done(result)
        else:
            for result in play_units(play_unit, config, units, config.workers, asked,
                                     ordered=False):
                done(result)
    except KeyboardInterrupt:
        asked.reason = asked.reason or "SIGINT"
    results.sort(key=lambda r: r.unit)
    prefix = 0
    while prefix < len(results) and results[prefix].unit == prefix:
        prefix += 1
    if prefix == units:
        return results, None
    return results[:prefix], EarlyStop(asked(), prefix, units, len(results) - prefix)


def ratio_ci(numerators: list[float],
             denominators: list[float]) -> tuple[float, float | None, float | None]:
    """Ratio estimate sum(x)/sum(h) over clusters, and its 95% interval (linearised variance
    with one cluster per unit, Student's t with one degree of freedom fewer than clusters:
    1.96 claimed too much of a run of a few wall sets); no interval (None) from fewer than
    two clusters."""
    total = sum(denominators)
    n = len(numerators)
    if total == 0:
        return 0.0, None, None
    ratio = sum(numerators) / total
    if n < 2:
        return ratio, None, None
    residuals = [x - ratio * h for x, h in zip(numerators, denominators, strict=True)]
    variance = n / (n - 1) * sum(e * e for e in residuals) / (total * total)
    half = t975(n - 1) * math.sqrt(variance)
    return ratio, ratio - half, ratio + half


def summarize(config: ArenaConfig, results: list[UnitResult], seconds: float,
              environment: dict[str, str] | None = None) -> dict[str, Any]:
    """The arena's figures, in the JSON form of ``mjbot arena --json``; ``environment``: the
    :func:`policy_environment` taken as the run began (None: taken now), as self-play's
    manifest and the league's options take it, so a weights file replaced during the run
    does not pass its hash off as the one the games began with."""
    policies: dict[str, Any] = {}
    labels = config.labels
    for name in sorted(set(labels)):
        rows = [r.stats[name] for r in results]
        hands = [row["hands"] for row in rows]
        entry: dict[str, Any] = {"hands": int(sum(hands)), "seats": labels.count(name)}
        entry.update(pool_tallies(r.fallbacks.get(name) for r in results).as_dict())
        for key, stat in (("win_rate", "wins"), ("self_draw_rate", "self_draws"),
                          ("deal_in_rate", "deal_ins"), ("points_per_hand", "points"),
                          ("riichi_rate", "riichis"), ("call_rate", "calls")):
            value, lo, hi = ratio_ci([row[stat] for row in rows], hands)
            entry[key] = value
            entry[f"{key}_ci95"] = cut_to((lo, hi), SHARES) if key.endswith("_rate") \
                else [lo, hi]
        wins = sum(row["wins"] for row in rows)
        lows = [row["min_win_value"] for row in rows if row.get("min_win_value") is not None]
        # han (riichi), fan (MCR, mass) or tai (Taiwan) of the hands this policy won
        entry["avg_win_value"] = sum(row["win_value_sum"] for row in rows) / wins if wins else None
        entry["min_win_value"] = min(lows) if lows else None
        if variant_of(config.variant).ranked:
            value, lo, hi = ratio_ci([row["rank_sum"] for row in rows],
                                     [row["games"] for row in rows])
            # within the ranks, as the rates are within 0-100%
            entry["avg_rank"], entry["avg_rank_ci95"] = value, cut_to((lo, hi), RANKS)
        else:
            entry["avg_rank"], entry["avg_rank_ci95"] = None, None
        policies[name] = entry
    names = sorted(set(labels))
    differences = {}
    for a, b in itertools.combinations(names, 2):
        # paired by wall set, each wall set weighing the same (the rows weigh each hand, so
        # A - B is not exactly row A - row B where games differ in length; README: arena)
        diffs = [_per_hand(r.stats[a]) - _per_hand(r.stats[b]) for r in results]
        value, lo, hi = ratio_ci(diffs, [1.0] * len(diffs))
        differences[pair_key(a, b)] = {"a": a, "b": b, "points_per_hand": value,
                                       "ci95": [lo, hi]}
    return {
        "variant": config.variant, "policies_seated": list(labels),
        "specs": config.specs(),  # label -> the seat it stands for (the command, the policy)
        # MJBOT_MC's options, the weights and their hash, each nn@FILE's hash
        "environment": policy_environment(config.policies) if environment is None
        else environment,
        "seed": config.seed, "units": len(results),
        "seatings": len(config.arrangements()),
        "games": sum(r.games for r in results), "hands": sum(r.hands for r in results),
        "illegal_actions": sum(r.illegal for r in results),
        "referee_errors": sum(len(r.errors) for r in results),
        "seconds": round(seconds, 3), "workers": config.workers,
        "seat_limit": config.seat_limit, "budget": config.budget,
        # what each seat decided under, in words: an outside program's is its platform's
        "time_limits": {label: time_limit(spec, config.seat_limit, config.budget)
                        for label, spec in config.specs().items()},
        "hands_per_second": (sum(r.hands for r in results) / seconds) if seconds else None,
        "policies": policies, "differences": differences,
        # seconds per decision our seats used: apart from "policies", which a seed fixes
        "thinking": {name: pool_times(r.times.get(name) for r in results).as_dict()
                     for name in sorted(set(labels))
                     if any(name in r.times for r in results)},
        "external_seats": external_reports(results),
        "log_dir": config.log_dir,
        "log_files": sum(len(r.logs) for r in results),
        "log_folders": sorted({str(Path(p).parent) for r in results for p in r.logs}),
    }


def paired_difference(summary: dict[str, Any], a: str, b: str
                      ) -> tuple[float | None, list[float | None]]:
    """A's points/hand minus B's and its 95% interval, from a summary's ``differences``
    (which key each pair by the names in sorted order, so the pair may come as B - A: then
    the difference and its interval change sign)."""
    first, second = sorted((a, b))
    d = summary["differences"][pair_key(first, second)]
    value, (lo, hi) = d["points_per_hand"], d["ci95"]
    if first == a:
        return value, [lo, hi]
    return (None if value is None else -value,
            [None if hi is None else -hi, None if lo is None else -lo])


def pool_tallies(tallies: Any) -> FallbackTally:
    """The units' tallies of one policy added up, in unit order (the first error is the
    first unit's that has one)."""
    total = FallbackTally()
    for t in tallies:
        if t is not None:
            total.add(t)
    return total


def pool_times(times: Any) -> DecisionTimes:
    """The units' decision times of one policy together (None: a unit without them)."""
    total = DecisionTimes()
    for t in times:
        if t is not None:
            total.add(t)
    return total


def external_seats(total: dict[str, SeatReport]) -> dict[str, Any]:
    """``external_seats`` of pooled reports: each outside program's record, by seat name."""
    return {name: total[name].as_dict() for name in sorted(total)}


def external_reports(results: list[UnitResult]) -> dict[str, Any]:
    """Per outside program (by its seat name): its faults by reason, fresh runs after a
    crash and the first fault, pooled over the units in order."""
    total: dict[str, SeatReport] = {}
    for r in results:
        for name, report in r.external.items():
            total.setdefault(name, SeatReport()).add(report)
    return external_seats(total)


def external_lines(external: dict[str, Any]) -> list[str]:
    """One line per outside program (``external_seats``, by seat name): its faults by
    reason, its fresh runs, stderr left out and the first fault."""
    return [f"{name} (outside program): late {x['late']}, crashed {x['crashed']}, "
            f"garbage {x['garbage']}, illegal {x['illegal']}, restarts {x['restarts']}"
            + (f", stderr trimmed ({x['stderr_left_out']} bytes left out)"
               if x.get("stderr_left_out") else "")
            + (f"; first: {x['first_fault']}" if x["first_fault"] else "")
            for name, x in external.items()]


def pool_external(summaries: Any) -> dict[str, Any]:
    """``external_seats`` of several arenas' summaries added up per program, in the order
    given (the first fault is the first arena's that has one)."""
    total: dict[str, SeatReport] = {}
    for summary in summaries:
        for name, report in summary.get("external_seats", {}).items():
            total.setdefault(name, SeatReport()).add(SeatReport.from_dict(report))
    return external_seats(total)


def _per_hand(row: dict[str, float]) -> float:
    return row["points"] / row["hands"] if row["hands"] else 0.0


def format_summary(summary: dict[str, Any]) -> str:
    spec = variant_of(summary["variant"])
    ranked, riichi = spec.ranked, spec.has_riichi  # the rank column; the riichi rate
    unit = spec.score_unit
    width = max([12, *(len(name) + 2 for name in summary["policies"])])  # long seat names
    lines = [
        f"arena {summary['variant']}: {summary['hands']} hands in {summary['games']} games "
        f"({summary['units']} wall sets x {summary['seatings']} seatings), seed "
        f"{summary['seed']}, {summary['workers']} worker(s), {summary['seconds']:.1f} s",
        f"illegal actions: {summary['illegal_actions']}   referee errors: "
        f"{summary['referee_errors']}",
        *([_stopped_line(summary["stopped"])] if summary.get("stopped") else []),
        "",
        f"{'policy':<{width}}{'hands':>7}  {'win %':<18}{'self-draw %':<18}{'deal-in %':<18}"
        f"{unit + '/hand':<30}" + (f"{'avg rank':<18}" if ranked else "") + "fallbacks",
    ]
    for name, p in summary["policies"].items():
        def pct(key: str, p: dict[str, Any] = p) -> str:
            return f"{100 * p[key]:5.1f} " + _interval(p[f"{key}_ci95"], "4.1f", 100)
        points = f"{p['points_per_hand']:+z8.1f} " + _interval(p["points_per_hand_ci95"], "+z.1f")
        line = (f"{name:<{width}}{p['hands']:>7}  {pct('win_rate'):<18}{pct('self_draw_rate'):<18}"
                f"{pct('deal_in_rate'):<18}{points:<30}")
        if ranked:
            rank = ("" if p["avg_rank"] is None
                    else f"{p['avg_rank']:.2f} " + _interval(p["avg_rank_ci95"], ".2f"))
            line += f"{rank:<18}"
        line += f"{p['fallbacks']} ({100 * p['fallback_share']:.1f}%)"
        lines.append(line)
    for name, p in summary["policies"].items():
        if p["fallbacks"]:
            lines.append(f"{name} fell back in {p['fallbacks']} of {p['decisions']} decisions; "
                         f"first: {p['first_fallback']}")
    lines += _thinking_lines(summary)
    lines += external_lines(summary.get("external_seats", {}))
    values = [f"{name} {p['avg_win_value']:.1f} (min {p['min_win_value']})"
              for name, p in summary["policies"].items() if p["avg_win_value"] is not None]
    if values:
        word = spec.value_unit
        lines.append(f"{word} per win: " + ", ".join(values))
    style = [f"{name} call {100 * p['call_rate']:.1f}%"
             + (f" riichi {100 * p['riichi_rate']:.1f}%" if riichi else "")
             for name, p in summary["policies"].items()]
    lines.append("hands with a call (chow, pung, open kong)" + (" / a riichi" if riichi else "")
                 + ": " + ", ".join(style))
    for pair, d in summary["differences"].items():
        lo, hi = d["ci95"]
        if lo is None or hi is None:
            verdict = "one wall set: no interval"
        else:
            verdict = "differs" if lo > 0 or hi < 0 else "no clear difference"
        lines.append(f"{pair}: {d['points_per_hand']:+z.1f} {unit}/hand "
                     f"{_interval(d['ci95'], '+z.1f')} ({verdict})")
    if summary.get("environment"):
        lines.append("environment: " + format_environment(summary["environment"]))
    if summary.get("log_folders"):
        lines.append(f"logs: {summary['log_files']} games in "
                     + ", ".join(summary["log_folders"]))
    return "\n".join(lines)


def _thinking_lines(summary: dict[str, Any]) -> list[str]:
    """Seconds per decision, per seat, under the limit each had: one heading where all had
    the same (``--budget``'s), else each its own (an outside program's is its platform's,
    a seat's ``@budget=`` its own; the heading named the run's budget over them all)."""
    thinking = {name: t for name, t in summary.get("thinking", {}).items()
                if t["mean_s"] is not None and t["decisions_per_s"] is not None}
    if not thinking:
        return []
    budget = summary.get("budget")
    limits = summary.get("time_limits") or {  # a summary written before they were kept
        name: f"budget {budget:g} s" if budget else None for name in thinking}
    under = {limits.get(name) for name in thinking}
    shared = under.pop() if len(under) == 1 else ""
    timed = [f"{name} {t['mean_s']:.3f} s mean, {t['p99_s']:.3f} s p99, "
             f"{t['decisions_per_s']:.1f}/s"
             + ("" if shared != "" else f" ({limits.get(name) or 'no limit'})")
             for name, t in thinking.items()]
    return ["thinking per decision" + (f" ({shared})" if shared else "") + ": "
            + ", ".join(timed)]


def _stopped_line(stopped: dict[str, Any]) -> str:
    why = stop_reason_text(stopped["reason"])
    left = (f"; {stopped['units_left_out']} finished after a missing one, not counted"
            if stopped["units_left_out"] else "")
    return (f"stopped early ({why}): the first {stopped['units_done']} of "
            f"{stopped['units_planned']} wall sets, each in every seating{left}")


def environment_changed(config: ArenaConfig, began: dict[str, str]) -> str | None:
    """One line naming each weights file whose bytes are not the ones hashed as the run
    began (``began``: its :func:`policy_environment`), or None where none changed."""
    now = policy_environment(config.policies)
    changed = []
    for key in sorted(set(began) | set(now)):
        if began.get(key) == now.get(key):
            continue
        path = began.get(NN_ENV, now.get(NN_ENV, "?")) if key == "nn_weights_sha256" \
            else key.removeprefix("sha256 ")
        old, new = began.get(key, "")[:12] or "none", now.get(key, "")[:12] or "none"
        changed.append(f"{path} (SHA-256 {old} as the run began, {new} now)")
    if not changed:
        return None
    return ("weights replaced during the run: " + ", ".join(changed) + "; the figures name "
            "the weights the run began with, but games played after the change may have "
            "played the new ones")


def format_environment(settings: dict[str, str]) -> str:
    """``policy_environment``'s settings on one line, the weights' hashes cut to 12 digits."""
    digest = settings.get("nn_weights_sha256")
    text = ", ".join(f"{name}={value}" for name, value in settings.items()
                     if name != "nn_weights_sha256" and not name.startswith("sha256 "))
    text += f" (SHA-256 {digest[:12]})" if digest else ""
    files = [f"nn@{name.removeprefix('sha256 ')} (SHA-256 {value[:12]})"
             for name, value in settings.items() if name.startswith("sha256 ")]
    return ", ".join([text, *files] if text else files)


def _interval(bounds: list[float | None], spec: str, scale: float = 1.0) -> str:
    lo, hi = bounds
    if lo is None or hi is None:
        return "[n/a]"
    return f"[{format(scale * lo, spec)},{format(scale * hi, spec)}]"
