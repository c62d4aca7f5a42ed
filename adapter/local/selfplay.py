"""Self-play datasets: the arena's duplicate units, played with a referee that records every
decision of every seat together with the hidden truth (replay/dataset/README.md).

A unit is the arena's: one set of walls played once per distinct seating of the policies.
Units run in worker processes exactly as ``mjbot arena`` runs them; each returns its games as
schema arrays, and the parent writes them in unit order, so the shards depend on the seed and
never on the number of workers or on which worker finished first.
"""

from __future__ import annotations

import time
import traceback
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from adapter.local.arena import ArenaConfig
from adapter.local.game import play_game
from adapter.local.referee import HandOutcome, HandReferee, HandSetup, Player
from adapter.local.seat import policy_environment
from adapter.local.stopping import StopRequest, play_in_process, play_units
from brain.tally import FallbackTally
from protocols import events as ev
from replay.dataset.records import Block, BlockBuilder, HandStart
from replay.dataset.shards import DatasetWriter

if TYPE_CHECKING:
    from adapter.local.ray_pool import RayRun


@dataclass(frozen=True)
class SelfPlayConfig:
    arena: ArenaConfig
    out: str
    shard_decisions: int = 20000

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


def play_selfplay_unit(config: SelfPlayConfig, unit: int) -> UnitData:
    """One unit (every seating of one set of walls) as schema arrays. A game that ends in a
    referee error (a bug of the table, never a player's) is left out and reported, as the
    arena does; the rest of the unit is kept."""
    start = time.perf_counter()
    arena = config.arena
    names = config.policy_names
    blocks: list[Block] = []
    errors: list[str] = []
    fallbacks = {n: FallbackTally() for n in names}
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
        builder.end_game(result.scores, result.ranks)
        blocks.append(builder.block())
    return UnitData(unit, blocks, sum(b.hands for b in blocks), time.perf_counter() - start,
                    errors, fallbacks)


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
               stop: StopRequest | None = None) -> Iterator[UnitData]:
    """Every unit's data in unit order; workers run ahead by at most two units each, so the
    parent holds a bounded number of finished units. ``on_complete`` sees each unit as it
    is taken (what a progress bar follows). When ``stop`` asks for it the units end there:
    with worker processes while a unit is awaited (the units under way are abandoned), in
    one process or on Ray once the unit under way has finished."""
    units = config.arena.units()
    workers = config.arena.workers
    asked = stop if stop is not None else StopRequest()

    def taken(data: UnitData) -> UnitData:
        if on_complete is not None:
            on_complete(data)
        return data

    if ray is not None:
        for _, data in ray.map(play_selfplay_unit, lambda u: (config, u), units, ordered=True):
            yield taken(data)
            if asked():
                return
        return
    if workers <= 1:
        for data in play_in_process(play_selfplay_unit, config, units, asked):
            yield taken(data)
        return
    for data in play_units(play_selfplay_unit, config, units, workers, asked, ordered=True):
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
                   "environment": policy_environment(arena.policies)},
    }


class UnitCounter:
    """Completed units, hands and unit seconds, for the progress bar and the figures."""

    def __init__(self, units: int, progress: Callable[[int, int, int], None] | None) -> None:
        self.units, self.progress = units, progress
        self.done = self.hands = 0
        self.seconds = 0.0

    def __call__(self, data: Any) -> None:
        self.done += 1
        self.hands += data.hands
        self.seconds += data.seconds
        if self.progress:
            self.progress(self.done, self.units, self.hands)


def run_selfplay(config: SelfPlayConfig,
                 progress: Callable[[int, int, int], None] | None = None,
                 ray: RayRun | None = None,
                 stop: StopRequest | None = None) -> dict[str, Any]:
    """Play every unit and write the dataset here; returns the manifest plus timing figures.
    On Ray, the units' games come back to this process, which writes the shards (where every
    node sees the output folder, :func:`adapter.local.ray_selfplay.run_on_workers` has the
    workers write them). Stopped early by ``stop``, the dataset holds the first units, each
    in every seating, and the manifest says so under ``stopped``."""
    start = time.monotonic()
    units = config.arena.units()
    counter = UnitCounter(units, progress)
    writer = DatasetWriter(Path(config.out), selfplay_meta(config), config.shard_decisions)
    errors: list[str] = []
    fallbacks: dict[str, FallbackTally] = {}
    written = 0
    for data in iter_units(config, ray, counter, stop):
        for block in data.games:
            writer.add(block)
        errors.extend(data.errors)
        add_fallbacks(fallbacks, data.fallbacks)
        written += 1
    extra: dict[str, Any] = {"referee_errors": errors, "fallbacks": fallbacks_extra(fallbacks)}
    if written < units:
        assert stop is not None  # only a stop ends the units early
        extra["stopped"] = {"reason": stop(), "units_done": written, "units_planned": units}
    manifest = writer.close(extra)
    return run_figures(config, manifest, start, counter, ray, "driver", written)


def run_figures(config: SelfPlayConfig, manifest: dict[str, Any], start: float,
                counter: UnitCounter, ray: RayRun | None, written_by: str,
                units: int | None = None) -> dict[str, Any]:
    """The manifest plus the run's timing figures (and Ray's, with who wrote the shards)."""
    arena = config.arena
    wall = time.monotonic() - start
    figures = {**manifest, "seconds": round(wall, 3), "unit_seconds": round(counter.seconds, 3),
               "workers": ray.workers if ray is not None else arena.workers,
               "decisions_per_second": manifest["decisions"] / wall if wall else None,
               "decisions_per_core_second": (manifest["decisions"] / counter.seconds
                                             if counter.seconds else None)}
    if ray is not None:
        figures["ray"] = {**ray.figures(arena.units() if units is None else units),
                          "shards_written_by": written_by}
    return figures
