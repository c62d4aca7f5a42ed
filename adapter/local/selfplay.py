"""Self-play datasets: the arena's duplicate units, played with a referee that records every
decision of every seat together with the hidden truth (replay/dataset/README.md).

A unit is the arena's: one set of walls played once per distinct seating of the policies.
Units run in worker processes exactly as ``mjbot arena`` runs them; each returns its games as
schema arrays, and the parent writes them in unit order, so the shards depend on the seed and
never on the number of workers or on which worker finished first.
"""

from __future__ import annotations

import re
import time
import traceback
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from adapter.local.arena import ArenaConfig, external_seats
from adapter.local.external import SeatReport
from adapter.local.game import play_game, set_length
from adapter.local.referee import HandOutcome, HandReferee, HandSetup, Player
from adapter.local.seat import BUDGET_SUFFIX, policy_environment, split_budget
from adapter.local.stopping import StopRequest, play_in_process, play_units
from brain.policies import NN_FILE_PREFIX
from brain.tally import FallbackTally, tallies_from
from protocols import events as ev
from replay.dataset.progress import Checkpoint, drop_progress, proved, save_progress
from replay.dataset.records import Block, BlockBuilder, HandStart
from replay.dataset.shards import DatasetWriter, dataset_meta, sha256

if TYPE_CHECKING:
    from adapter.local.ray_pool import RayRun


@dataclass(frozen=True)
class SelfPlayConfig:
    arena: ArenaConfig
    out: str
    shard_decisions: int = 20000
    checkpoint_s: float = 60.0  # the open shard written and recorded at most this often

    @property
    def policy_names(self) -> tuple[str, ...]:
        """The names the ``policy`` fields index: the distinct policies (by label), sorted."""
        return tuple(sorted(set(self.arena.labels)))


class RecordingReferee(HandReferee):
    """The local referee, unchanged, with its decision hook feeding a :class:`BlockBuilder`;
    ``play`` is wrapped only to open and close each hand's row."""

    def __init__(self, variant: str, players: Sequence[Player], builder: BlockBuilder,
                 game: int, seating: tuple[str, ...]) -> None:
        super().__init__(variant, players, observer=self._record)
        self.builder = builder
        self.game = game
        self.seating = seating
        self.hand_number = 0

    def play(self, setup: HandSetup) -> HandOutcome:
        self.builder.start_hand(HandStart(
            game=self.game, number=self.hand_number, seed=setup.seed,
            round=(setup.round_wind, setup.round_number, setup.dealer, setup.honba,
                   setup.sticks),
            players=tuple(self.builder.policy_index(p) for p in self.seating),  # type: ignore[arg-type]
            scores=setup.scores))
        self.hand_number += 1
        outcome = super().play(setup)
        self.builder.end_hand(outcome.reason, outcome.deltas, outcome.wins)
        return outcome

    def _record(self, referee: HandReferee, seat: int, request: ev.DecisionRequest,
                legal: list[Any], answer: Any) -> None:
        # the seat's configured policy (a fallback's answer is flagged, not renamed)
        self.builder.decision(self.views, seat, request, legal,
                              getattr(answer, "action", answer), self.seating[seat],
                              bool(getattr(answer, "fallback", "")))


@dataclass
class UnitData:
    """One unit's games, one block each, in seating order."""

    unit: int
    games: list[Block]
    hands: int
    seconds: float
    errors: list[str] = field(default_factory=list)
    fallbacks: dict[str, FallbackTally] = field(default_factory=dict)  # per policy name
    seatings: list[int] = field(default_factory=list)  # each game's seating (index)
    external: dict[str, SeatReport] = field(default_factory=dict)  # outside programs' faults


def play_selfplay_unit(config: SelfPlayConfig, unit: int) -> UnitData:
    """One unit (every seating of one set of walls) as schema arrays. A game that ends in a
    referee error (a bug of the table, never a player's) is left out and reported, as the
    arena does; the rest of the unit is kept."""
    start = time.perf_counter()
    arena = config.arena
    names = config.policy_names
    blocks: list[Block] = []
    played: list[int] = []
    errors: list[str] = []
    fallbacks = {n: FallbackTally() for n in names}
    external: dict[str, SeatReport] = {}
    for index, seating in enumerate(arena.arrangements()):
        players = arena.players(seating)
        builder = BlockBuilder(arena.variant, names)
        game_id = unit * len(arena.arrangements()) + index
        referee = RecordingReferee(arena.variant, players, builder, game_id, seating)
        try:
            result = play_game(arena.game_config(), players, arena.seed, unit, None, referee)
        except Exception as exc:
            errors.append(f"unit {unit} seating {index}: {type(exc).__name__}: {exc}\n"
                          + traceback.format_exc(limit=6))
            continue
        finally:
            for seat, p in enumerate(players):
                p.close()
                fallbacks[seating[seat]].add(p.tally)
                report = getattr(p, "report", None)
                if report is not None:
                    external.setdefault(seating[seat], SeatReport()).add(report)
        builder.end_game(result.scores, result.ranks)
        blocks.append(builder.block())
        played.append(index)
    return UnitData(unit, blocks, sum(b.hands for b in blocks), time.perf_counter() - start,
                    errors, fallbacks, played, external)


def add_fallbacks(total: dict[str, FallbackTally], unit: dict[str, FallbackTally]) -> None:
    """Pool one unit's per-policy tallies into ``total`` (units in order: the first error
    kept is the earliest unit's)."""
    for name, tally in unit.items():
        total.setdefault(name, FallbackTally()).add(tally)


def fallbacks_extra(total: dict[str, FallbackTally]) -> dict[str, Any]:
    """The manifest's record of how often each policy's own answer was not played."""
    return {name: total[name].as_dict() for name in sorted(total)}


def iter_units(config: SelfPlayConfig, ray: RayRun | None = None,
               on_complete: Callable[[UnitData], None] | None = None,
               stop: StopRequest | None = None, first: int = 0) -> Iterator[UnitData]:
    """Every unit's data in unit order from unit ``first``; workers run ahead by at most two
    units each, so the parent holds a bounded number of finished units. ``on_complete`` sees
    each unit as it is taken (what a progress bar follows). When ``stop`` asks for it the
    units end there: with worker processes while a unit is awaited (the units under way are
    abandoned), in one process or on Ray once the unit under way has finished."""
    units = config.arena.units()
    workers = config.arena.workers
    asked = stop if stop is not None else StopRequest()

    def taken(data: UnitData) -> UnitData:
        if on_complete is not None:
            on_complete(data)
        return data

    if ray is not None:
        for _, data in ray.map(play_selfplay_unit, lambda u: (config, first + u),
                               units - first, ordered=True):
            yield taken(data)
            if asked():
                return
        return
    if workers <= 1:
        for data in play_in_process(play_selfplay_unit, config, units, asked, first):
            yield taken(data)
        return
    for data in play_units(play_selfplay_unit, config, units, workers, asked, ordered=True,
                           first=first):
        yield taken(data)


def selfplay_meta(config: SelfPlayConfig) -> dict[str, Any]:
    """The dataset's description (in every shard and the manifest): what was played."""
    arena = config.arena
    return {
        "source": "selfplay", "variant": arena.variant, "policies": list(config.policy_names),
        "config": {"policies_seated": list(arena.labels), "specs": arena.specs(),
                   "hands_requested": arena.hands,
                   "seed": arena.seed, "units": arena.units(),
                   "seatings": len(arena.arrangements()),
                   "riichi_length": arena.riichi_length,
                   "hands_per_game": arena.hands_per_game,
                   "shard_decisions": config.shard_decisions,
                   # seconds per decision (ours) and per answer (outside programs): None
                   # where not given; a resume with other limits would mix them silently
                   "budget": arena.budget, "seat_limit": arena.seat_limit,
                   "environment": policy_environment(arena.policies),
                   "weights": nn_seat_weights(arena)},
    }


def nn_seat_weights(arena: ArenaConfig) -> dict[str, dict[str, str]]:
    """Each ``nn@FILE`` seat's weights, by label: the file resolved and its SHA-256 ('' where
    there is no such file). A resume knows its seats by these, not by the path's text, which
    names the same file otherwise from another folder."""
    weights: dict[str, dict[str, str]] = {}
    for label, spec in sorted(arena.specs().items()):
        policy = split_budget(spec)[0]
        if policy.startswith(NN_FILE_PREFIX):
            path = Path(policy.removeprefix(NN_FILE_PREFIX))
            weights[label] = {"file": str(path.resolve()),
                              "sha256": sha256(path) if path.is_file() else ""}
    return weights


class UnitCounter:
    """Completed units, hands and unit seconds, for the progress bar and the figures."""

    def __init__(self, units: int, progress: Callable[[int, int, int], None] | None,
                 done: int = 0, hands: int = 0) -> None:
        self.units, self.progress = units, progress
        self.done, self.hands = done, hands  # a resumed run's count goes on from its start
        self.seconds = 0.0

    def __call__(self, data: Any) -> None:
        self.done += 1
        self.hands += data.hands
        self.seconds += data.seconds
        if self.progress:
            self.progress(self.done, self.units, self.hands)


@dataclass
class Resumed:
    """Where a resumed run goes on from (replay/dataset/progress.py): the dataset meta on
    record, the checkpoint proved on disk, its open shard's games read back, and the
    checkpoints of the record that stay true until this run writes a new one."""

    meta: dict[str, Any]
    point: Checkpoint
    open_block: Block | None
    kept: list[Checkpoint]
    labels: tuple[str, ...] | None = None  # the seats' labels on record, where this run's
    # nn@FILE seats name the same weights by another path


def run_selfplay(config: SelfPlayConfig,
                 progress: Callable[[int, int, int], None] | None = None,
                 ray: RayRun | None = None,
                 stop: StopRequest | None = None,
                 resumed: Resumed | None = None) -> dict[str, Any]:
    """Play every unit and write the dataset here; returns the manifest plus timing figures.
    On Ray, the units' games come back to this process, which writes the shards (where every
    node sees the output folder, :func:`adapter.local.ray_selfplay.run_on_workers` has the
    workers write them). Stopped early by ``stop``, the dataset holds the first units, each
    in every seating, and the manifest says so under ``stopped``. ``resumed``: the run goes
    on from a stopped or killed one's checkpoint, and writes what an unbroken run writes.

    After each unit in which a shard was written, ``progress.json`` records the checkpoint
    (the shards so far, where play stands, the units' tallies); at most every
    ``config.checkpoint_s`` seconds (after a unit), and at a stop, one more holds the open
    shard as it stands; the record goes when the dataset is complete."""
    if resumed is not None and resumed.labels is not None:  # the data names seats so
        config = replace(config, arena=replace(config.arena, labels_as=resumed.labels))
    start = time.monotonic()
    units = config.arena.units()
    out = Path(config.out)
    point = resumed.point if resumed is not None else Checkpoint()
    if resumed is None:
        meta = dataset_meta(selfplay_meta(config))
        writer = DatasetWriter(out, selfplay_meta(config), config.shard_decisions)
        kept: list[Checkpoint] = []
        save_progress(out, meta, kept)  # the folder is a run's from its start
    else:
        meta = resumed.meta
        writer = DatasetWriter.going_on(out, meta, config.shard_decisions, point.shards,
                                        point.games, resumed.open_block, point.open_games)
        kept = resumed.kept
    before = sum(s["decisions"] for s in point.files())
    counter = UnitCounter(units, progress, point.unit,
                          sum(s["hands"] for s in point.files()))
    errors: list[str] = list(point.referee_errors)
    fallbacks: dict[str, FallbackTally] = tallies_from(point.fallbacks)
    external = {name: SeatReport.from_dict(r) for name, r in point.external.items()}
    reached = point.unit
    last_open = time.monotonic()
    # a stop that gave games back leaves no checkpoint without an open shard: until this run
    # records its own, the open shard is the only proof of the shards before it, so the first
    # write over it is recorded before it is put in place (a kill keeps one or the other)
    guard = resumed is not None and point.open is not None and not any(
        c.open is None and proved(out, c) for c in kept)

    def guarded(checkpoint: Callable[[dict[str, Any]], Checkpoint]
                ) -> Callable[[dict[str, Any]], None] | None:
        nonlocal guard
        if not guard:
            return None
        guard = False
        return lambda entry: save_progress(out, meta, [*kept, point, checkpoint(entry)])

    for data in iter_units(config, ray, counter, stop, point.unit):
        errors_before, fallbacks_before = list(errors), fallbacks_extra(fallbacks)
        external_before = external_seats(external)
        skip = point.skip if data.unit == point.unit else 0
        cut_after = None
        for index, block in zip(data.seatings, data.games, strict=True):
            if index < skip:
                continue
            cut = guard and (writer.cutter.pending_decisions + block.decisions
                             >= writer.cutter.shard_decisions)  # this game closes a shard
            cut_at = guarded(partial(_cut_checkpoint, writer, data.unit, index, errors_before,
                                     fallbacks_before, external_before)) if cut else None
            if writer.add(block, recorded=cut_at):
                cut_after = index
        errors.extend(data.errors)
        add_fallbacks(fallbacks, data.fallbacks)
        for name, report in data.external.items():
            external.setdefault(name, SeatReport()).add(report)
        reached = data.unit + 1
        if cut_after is not None:  # a shard was written: a checkpoint at it
            if writer.open_games:  # this unit's later games are not in it yet
                kept = [Checkpoint(list(writer.shards), writer.games - writer.open_games,
                                   data.unit, cut_after + 1, errors_before, fallbacks_before,
                                   external=external_before)]
            else:
                kept = [Checkpoint(list(writer.shards), writer.games, reached, 0, list(errors),
                                   fallbacks_extra(fallbacks), external=external_seats(external))]
            save_progress(out, meta, kept)
        if writer.open_games and time.monotonic() - last_open >= config.checkpoint_s:
            # the games since the last shard, so a kill outright does not take them all
            opened = writer.write_open(guarded(partial(
                _open_checkpoint, writer, reached, list(errors), fallbacks_extra(fallbacks),
                external_seats(external))))
            save_progress(out, meta, [*kept, Checkpoint(
                list(writer.shards), writer.games - writer.open_games, reached, 0,
                list(errors), fallbacks_extra(fallbacks), opened, writer.open_games,
                external_seats(external))])
            last_open = time.monotonic()
    extra: dict[str, Any] = {"referee_errors": errors, "fallbacks": fallbacks_extra(fallbacks)}
    if external:  # only where an outside program sat: other manifests stay as they were
        extra["external_seats"] = external_seats(external)
    gone: list[Path] | None = None  # a stop's shards given back, removed once it is recorded
    if reached < units:
        assert stop is not None  # only a stop ends the units early
        extra["stopped"] = {"reason": stop(), "units_done": reached, "units_planned": units}
        if reached == point.unit and point.skip:
            # stopped before it finished the wall set it went on with inside: the games of
            # it that its point had go (played again on resume), so that the stopped dataset
            # holds whole wall sets, as its manifest says, and its tallies cover its rows
            gone = writer.keep_before(reached * len(config.arena.arrangements()))
    whole, open_games = len(writer.shards), writer.open_games

    def stopped_at(opened: dict[str, Any] | None) -> Checkpoint:
        return Checkpoint(writer.shards[:whole], writer.games - open_games, reached, 0, errors,
                          fallbacks_extra(fallbacks), opened, open_games if opened else 0,
                          external_seats(external))

    # games given back: the shard cut back replaces one the point needs, so the stop is on
    # record before it is put in place (a kill then leaves one checkpoint or the other proved)
    manifest = writer.close(extra, (lambda opened: save_progress(
        out, meta, [*kept, stopped_at(opened)])) if gone is not None else guarded(stopped_at))
    if reached < units:
        if gone is not None:
            kept = [c for c in kept if proved(out, c)]  # a shard of theirs is cut back
        save_progress(out, meta, [*kept, stopped_at(
            writer.shards[whole] if len(writer.shards) > whole else None)])
        listed = {entry["file"] for entry in writer.shards}  # the one cut back is written again
        for path in gone or []:  # only now: until here the point was proved with them
            if path.name not in listed:
                path.unlink(missing_ok=True)
    else:
        drop_progress(out)
    figures = run_figures(config, manifest, start, counter, ray, "driver", reached - point.unit,
                          before)
    if resumed is not None:
        figures["resumed"] = {"units_done_before": point.unit, "games_replayed": point.skip,
                              "decisions_before": before}
    return figures


def _cut_checkpoint(writer: DatasetWriter, unit: int, index: int, errors: list[str],
                    tallies: dict[str, Any], faults: dict[str, Any], entry: dict[str, Any]
                    ) -> Checkpoint:
    """The checkpoint of a shard cut after game ``index`` of ``unit`` (``entry``: the shard
    being written), as the run records it once the unit is taken."""
    return Checkpoint([*writer.shards, entry], writer.games, unit, index + 1, errors, tallies,
                      external=faults)


def _open_checkpoint(writer: DatasetWriter, reached: int, errors: list[str],
                     tallies: dict[str, Any], faults: dict[str, Any], entry: dict[str, Any]
                     ) -> Checkpoint:
    """The checkpoint of the open shard written as it stands (``entry``)."""
    return Checkpoint(list(writer.shards), writer.games - writer.open_games, reached, 0,
                      errors, tallies, entry, writer.open_games, faults)


def run_figures(config: SelfPlayConfig, manifest: dict[str, Any], start: float,
                counter: UnitCounter, ray: RayRun | None, written_by: str,
                units: int | None = None, before: int = 0) -> dict[str, Any]:
    """The manifest plus the run's timing figures (and Ray's, with who wrote the shards);
    the rates are of this run's decisions (``before``: those a resumed run found written)."""
    arena = config.arena
    wall = time.monotonic() - start
    played = manifest["decisions"] - before
    figures = {**manifest, "seconds": round(wall, 3), "unit_seconds": round(counter.seconds, 3),
               "workers": ray.workers if ray is not None else arena.workers,
               "decisions_per_second": played / wall if wall else None,
               "decisions_per_core_second": (played / counter.seconds
                                             if counter.seconds else None)}
    if ray is not None:
        figures["ray"] = {**ray.figures(arena.units() if units is None else units),
                          "shards_written_by": written_by}
    return figures


# --------------------------------------------------------------------------- going on

# the options a dataset's config records, as the user gives them
FLAGS = {"policies_seated": "--policies", "specs": "--policies", "hands_requested": "--hands",
         "units": "--hands", "seed": "--seed", "riichi_length": "--length",
         "shard_decisions": "--shard-decisions", "seatings": "--policies",
         "hands_per_game": "--variant", "budget": "--budget", "seat_limit": "--seat-limit"}


def _weights_path_aside(environment: dict[str, str], by_seat: bool) -> dict[str, str]:
    """The environment as it shapes the games: the network by its SHA-256, not by the path it
    was named by (a run resumed from another folder names the same file otherwise); with
    ``by_seat`` without the nn@FILE seats' hashes, which the seats are compared by."""
    if "nn_weights_sha256" in environment:
        environment = {k: v for k, v in environment.items() if k != "MJBOT_NN_WEIGHTS"}
    if by_seat:
        environment = {k: v for k, v in environment.items() if not k.startswith("sha256 ")}
    return environment


def _seats(config: dict[str, Any]) -> list[tuple[int, str | None, str]] | None:
    """Each seat as it plays, whatever path its ``nn@FILE`` was named by: (the first seat of
    its label, its label where it has one of its own (None: its name is its label), the seat
    with an ``nn@FILE``'s path put as its weights' SHA-256 where recorded). None where the
    record does not name the seats."""
    labels, specs = config.get("policies_seated"), config.get("specs")
    if not isinstance(labels, list) or not isinstance(specs, dict):
        return None
    weights, environment = config.get("weights") or {}, config.get("environment") or {}
    seats = []
    for label in labels:
        spec = str(specs.get(label, label))
        policy = spec.rpartition(BUDGET_SUFFIX)[0] if BUDGET_SUFFIX in spec else spec
        played = spec
        if policy.startswith(NN_FILE_PREFIX):
            digest = ((weights.get(label) or {}).get("sha256")
                      or environment.get(f"sha256 {policy.removeprefix(NN_FILE_PREFIX)}"))
            if digest:
                played = f"{NN_FILE_PREFIX}sha256:{digest}{spec[len(policy):]}"
        seats.append((labels.index(label), None if label == spec else label, played))
    return seats


def _weights_said(config: dict[str, Any], label: str) -> str:
    """An nn@FILE seat's weights as a refusal names them."""
    weights = (config.get("weights") or {}).get(label) or {}
    digest = weights.get("sha256") or (config.get("environment") or {}).get(
        f"sha256 {split_budget(config['specs'][label])[0].removeprefix(NN_FILE_PREFIX)}", "")
    return (f"{label} (SHA-256 {digest[:12] or '(no file)'}"
            f"{', ' + weights['file'] if weights.get('file') else ''})")


def _seat_differs(old: dict[str, Any], new: dict[str, Any]) -> str:
    """How the seats differ, by what plays there ('' where only an nn@FILE's path does)."""
    a, b = _seats(old), _seats(new)
    if a == b:
        return ""
    assert a is not None and b is not None
    def but_weights(seat: tuple[int, str | None, str]) -> tuple[int, str | None, str]:
        return seat[0], seat[1], re.sub(r"sha256:[0-9a-f]+", "", seat[2])

    for seat, (x, y) in enumerate(zip(a, b, strict=True)):
        labels = old["policies_seated"][seat], new["policies_seated"][seat]
        if x != y and but_weights(x) == but_weights(y):  # the same seat but its weights
            return (f"--policies {_weights_said(new, labels[1])} differs from "
                    f"{_weights_said(old, labels[0])}")
    return (f"--policies {','.join(new['policies_seated'])} differs from "
            f"{','.join(old['policies_seated'])}")


def differing_option(recorded: dict[str, Any], given: dict[str, Any]) -> str:
    """What differs between a dataset's meta on record and this run's, as the user would
    change it ('' when nothing that shapes the data does). Seats are compared by what plays
    there: an ``nn@FILE`` by its weights' SHA-256, not by the path naming it."""
    for key in ("schema_version", "source", "variant"):
        if recorded.get(key) != given.get(key):
            flag = "--variant" if key == "variant" else key
            return f"{flag} {given.get(key)} differs from {recorded.get(key)}"
    old, new = recorded.get("config", {}), given["config"]
    by_seat = _seats(old) is not None and len(old["policies_seated"]) == len(
        new["policies_seated"])
    for key in sorted(old):  # what an older mjbot did not record cannot be told apart
        a, b = old.get(key), new.get(key)
        if by_seat and key in ("policies_seated", "specs", "seatings", "weights"):
            if differs := _seat_differs(old, new):
                return differs
        elif key == "environment":
            a, b = _weights_path_aside(a or {}, by_seat), _weights_path_aside(b or {}, by_seat)
            if a != b:
                name = sorted(k for k in set(a) | set(b) if a.get(k) != b.get(k))[0]
                return (f"the environment's {name} {b.get(name, '(unset)')!r} differs from "
                        f"{a.get(name, '(unset)')!r}")
        elif key == "riichi_length" and set_length(str(given.get("variant"))) is not None:
            continue  # a riichi game's, not played: an older mjbot kept `--length south` of mcr
        elif a != b:
            if key in ("policies_seated", "specs", "seatings"):
                return (f"--policies {','.join(new['policies_seated'])} differs from "
                        f"{','.join(old.get('policies_seated', []))}")
            return f"{FLAGS.get(key, key)} {_given(b)} differs from {_given(a)}"
    return ""


def _given(value: Any) -> str:
    """An option's value as the user gave it (an option not given, recorded None, says so)."""
    if value is None:
        return "(not given)"
    return f"{value:g}" if isinstance(value, float) else str(value)


def _strings(value: Any) -> bool:
    return isinstance(value, dict) and all(isinstance(v, str) for v in value.values())


# the recorded config's fields a resume reads into, each as a run writes it
_CONFIG_SHAPES: dict[str, tuple[Callable[[Any], bool], str]] = {
    "weights": (lambda v: isinstance(v, dict) and all(map(_strings, v.values())),
                'an object of {"file", "sha256"} objects, by seat label'),
    "environment": (_strings, "an object of strings"),
    "specs": (_strings, "an object of strings, by seat label"),
    "policies_seated": (lambda v: isinstance(v, list) and all(isinstance(x, str) for x in v),
                        "a list of seat labels"),
}


def _check_recorded_config(recorded: dict[str, Any], path: Path) -> None:
    """The record's config as a run writes it, else a DatasetError naming the field (a
    hand-edited ``weights`` of another shape was a traceback where a seat was compared)."""
    from replay.dataset.schema import DatasetError

    config = recorded.get("config", {})
    if not isinstance(config, dict):
        raise DatasetError(f"{path}: config is {config!r:.60}, not an object (edited by hand?); "
                           "put it back, or give another --out")
    for key, (fits, shape) in _CONFIG_SHAPES.items():
        if key in config and not fits(config[key]):
            raise DatasetError(f"{path}: config.{key} is {config[key]!r:.60}, not {shape} "
                               "(edited by hand?); put it back, or give another --out")


def resume_point(config: SelfPlayConfig) -> Resumed | dict[str, Any] | None:
    """What ``config.out`` holds for this run: None when it is new or empty (a fresh run);
    the manifest when it holds this very dataset, complete; else where a stopped or killed
    run of the same options goes on from. A folder of anything else, or of other options, is
    a DatasetError in one line, and nothing in it is touched."""
    from replay.dataset.progress import (
        PROGRESS,
        drop_progress,
        foreign_files,
        latest_proved,
        open_block,
        read_progress,
    )
    from replay.dataset.schema import DatasetError
    from replay.dataset.shards import MANIFEST, read_manifest

    out = Path(config.out)
    if not out.is_dir() or not any(out.iterdir()):
        return None
    held = list(out.iterdir())
    if all(p.is_file() and not p.is_symlink() and (p.name == PROGRESS + ".tmp" or (
            p.name.startswith("shard-") and p.name.endswith(".npz.tmp"))) for p in held):
        # a run killed while it wrote its first record, before any game, or (an mjbot older
        # than the record: no progress.json) while it wrote its first shard, which then
        # read 'directory is not empty': nothing to go on with, nothing but its own
        # temporary files (a half shard is never read; no run makes a link: one of these
        # names is a user's, and the folder is refused as any other)
        for p in held:
            p.unlink()
        return None
    given = dataset_meta(selfplay_meta(config))
    progress = read_progress(out)
    manifest = read_manifest(out) if (out / MANIFEST).is_file() else None
    if progress is None and manifest is None:
        shards = sorted(out.glob("shard-*.npz"))
        if shards and not foreign_files(out):  # a run that could not say where it stood
            raise DatasetError(
                f"{out}: holds {len(shards)} shard(s) but neither {MANIFEST} nor {PROGRESS}: "
                "a selfplay run ended there before it finished and left no record to go on "
                "from (an mjbot older than the resume of a killed run, or the record "
                "removed); give another --out")
        raise DatasetError(f"{out}: directory is not empty (a dataset goes in a new or empty "
                           "directory)")
    recorded = progress[0] if progress is not None else manifest
    assert recorded is not None
    _check_recorded_config(recorded, out / (PROGRESS if progress is not None else MANIFEST))
    if recorded.get("source") != "selfplay":
        raise DatasetError(f"{out}: holds a dataset not made by selfplay (source "
                           f"{recorded.get('source')!r}); give another --out")
    if differs := differing_option(recorded, given):
        raise DatasetError(f"{differs}, the dataset's in {out}: give the same to go on with "
                           "it, or another --out")
    if manifest is not None and "stopped" not in manifest:
        drop_progress(out)  # a run killed between its manifest and dropping the record
        return manifest
    if progress is None:
        raise DatasetError(f"{out}: a stopped dataset with no {PROGRESS} (written by an mjbot "
                           "that could not resume it); give another --out")
    if foreign := foreign_files(out):
        raise DatasetError(f"{out}: holds {foreign[0]}, which no selfplay run writes; move it "
                           "away to go on with the dataset")
    checkpoints = progress[1]
    point = latest_proved(out, checkpoints)
    # until this run records its own: the checkpoint it goes on from, or the one before a
    # stop's (its shards are the stop's but the open one, which this run writes over)
    kept = [point] if point.open is None else [
        c for c in checkpoints[:checkpoints.index(point)] if c.open is None][-1:]
    labels = recorded["config"].get("policies_seated")
    relabel = isinstance(labels, list) and tuple(labels) != config.arena.labels
    return Resumed(recorded, point, open_block(out, point), kept,
                   tuple(labels) if relabel else None)
