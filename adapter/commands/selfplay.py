"""`mjbot selfplay` (decision datasets with hidden truth from the local table) and
`mjbot dataset import|stats` (real games into the same schema; what a dataset holds)."""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
from collections.abc import Iterator
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
    four_policies,
    log,
    require_table,
    start_ray,
    tell,
)

if TYPE_CHECKING:
    from adapter.local.selfplay import SelfPlayConfig
    from adapter.local.stopping import StopRequest

EXAMPLES = """examples:
  %(prog)s --policies rulebased,greedy,rulebased,greedy --hands 200 --out data/sp
  %(prog)s --policies 'mjai:python mybot.py,rulebased,rulebased,rulebased' --out data/x
  %(prog)s --variant mcr --policies 'botzone:./mybot,rulebased,rulebased,rulebased' \\
      --hands 24 --out data/bz
  %(prog)s --policies mc,mc,mc,rulebased --hands 100000 --workers 2 --out data/mc \\
      --stop-after 3600

An outside program (KIND:COMMAND, as in mjbot arena) is recorded like any policy: its
decisions, under its seat name, with a fallback flag where its answer was replaced."""



def register(sub: Any) -> None:
    s = sub.add_parser("selfplay", help="play at the local table and write a decision dataset",
                       description="Every decision of every seat, with the seat's view, the "
                       "legal actions, the action and the hidden truth (every hand, waits, "
                       "their values, the outcome), in shards under --out "
                       "(replay/dataset/README.md). Walls and seatings are the arena's.",
                       epilog=EXAMPLES, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_variant_option(s)
    s.add_argument("--policies", default="rulebased,greedy,rulebased,greedy",
                   help="four policy names or outside programs (KIND:CMD), seat 0..3, each "
                   "optionally LABEL= to name it in the dataset, e.g. "
                   "'rb=mjai:python -m bot,rulebased,rb=mjai:python -m bot,greedy' "
                   "(default: %(default)s)")
    s.add_argument("--hands", type=int, default=200, help="hands to play, about: the fewest "
                   "whole wall sets reaching it, each played in every distinct seating of the "
                   "policies (riichi: ~5.5 hands per east-only game, ~33 per wall set for the "
                   "default's 6 seatings, so --hands 40 plays 2 wall sets, 12 games) "
                   "(default: %(default)s)")
    s.add_argument("--seed", type=int, default=0)
    add_table_arguments(s)
    add_stop_after_argument(s, "start no wall set after this many seconds: the dataset "
                            "holds the wall sets finished, each in every seating. SIGTERM "
                            "or Ctrl-C stops the same way (with one worker, after the wall "
                            "set under way; Ctrl-C again: at once, with no dataset)")
    s.add_argument("--out", required=True, metavar="DIR", help="a new or empty directory; "
                   "or the folder of a stopped or killed run of the same options, which this "
                   "run goes on with (a complete one: nothing to play)")
    s.add_argument("--out-shared", action="store_true", help="with --ray: every node mounts "
                   "--out at the same path, so the workers write the shards there (else their "
                   "games come back to this process, which writes them)")
    add_length_argument(s)
    s.add_argument("--shard-decisions", type=int, default=20000, metavar="N",
                   help="decisions per shard, about (shards end between games)")
    s.add_argument("--checkpoint-every", type=float, default=60.0, metavar="SECONDS",
                   help="write the open shard and record it at most this often, after a wall "
                   "set (0: after each), so a run killed outright goes on from there "
                   "(default: %(default)s; it does not change the dataset)")
    s.add_argument("--json", action="store_true", help="print the run's figures as JSON")
    s.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                   help="progress bar on stderr (default: when it is a terminal)")
    s.set_defaults(handler=cmd_selfplay)

    d = sub.add_parser("dataset", help="import real games into a dataset, or describe one")
    dsub = d.add_subparsers(dest="dataset_command", metavar="ACTION", required=True)
    i = dsub.add_parser("import", help="tenhou6 / mjlog / mjai / Botzone logs into a dataset",
                        description="Games whose hands are all known, in the self-play "
                        "schema (player: recorded): the real-world evaluation sets.")
    i.add_argument("files", nargs="+", metavar="FILE")
    i.add_argument("--out", required=True, metavar="DIR", help="a new or empty directory")
    i.add_argument("--shard-decisions", type=int, default=20000, metavar="N")
    i.add_argument("--json", action="store_true", help="print the manifest as JSON")
    i.set_defaults(handler=cmd_dataset_import)
    st = dsub.add_parser("stats", help="what a dataset holds")
    st.add_argument("dir", metavar="DIR")
    st.add_argument("--json", action="store_true")
    st.set_defaults(handler=cmd_dataset_stats)


def cmd_selfplay(args: argparse.Namespace) -> int:
    names = four_policies(args.policies)
    require_table(names, args)
    if args.shard_decisions < 1:
        raise UserInputError("--shard-decisions must be at least 1")
    if not args.checkpoint_every >= 0:  # a NaN too
        raise UserInputError(f"--checkpoint-every {args.checkpoint_every}: give 0 or more "
                             "seconds")
    if args.out_shared and args.ray is None:
        raise UserInputError("--out-shared goes with --ray (it says the Ray workers see --out)")
    stop_after = checked_stop_after(args)
    if args.out_shared and stop_after is not None:
        raise UserInputError("--stop-after does not go with --out-shared (the Ray workers "
                             "write the shards there: such a run cannot stop early, and "
                             "killed it leaves no dataset)")

    from adapter.local.arena import ArenaConfig
    from adapter.local.selfplay import SelfPlayConfig
    from adapter.local.stopping import StopRequest

    ray = start_ray(args)
    workers = ray.workers if ray is not None else args.workers or 1
    arena = ArenaConfig(args.variant, names, args.hands, args.seed, workers, None, args.length,
                        seat_limit=args.seat_limit, budget=args.budget,
                        connect_wait=args.connect_wait)
    config = SelfPlayConfig(arena, str(Path(args.out).resolve()) if args.out_shared else args.out,
                            args.shard_decisions, args.checkpoint_every)
    stop = StopRequest(stop_after, args.command_path)
    if args.out_shared:  # the Ray workers write the shards: no stop to answer
        with _signals_end_at_once():
            return _run_and_report(args, config, ray, stop)
    with stop.on_signals():  # to the end: a signal never cuts a shard or the report
        return _run_and_report(args, config, ray, stop)


@contextlib.contextmanager
def _signals_end_at_once() -> Iterator[None]:
    """``--out-shared``: the workers write the parts, so the run cannot stop between wall sets;
    SIGTERM ends it at once as Ctrl-C does (``SignalledEnd``, a KeyboardInterrupt: the files
    left are said, then one line, exit 143). Ray's own handler, in place since ``ray.init``,
    printed a stack dump ("*** SIGTERM received ... PC: @ 0x7f...") and the run exited 1.
    The handler raises a plain KeyboardInterrupt, which is what Ray's waits pass on for any
    exception a handler raises in them; the signal is told apart here, after."""
    import signal

    from adapter.local.stopping import SignalledEnd

    received: list[int] = []

    def end(signum: int, _frame: object) -> None:
        received.append(signum)
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGTERM, end)
    try:
        yield
    except KeyboardInterrupt:
        if received:
            raise SignalledEnd(received[0]) from None
        raise
    finally:
        signal.signal(signal.SIGTERM, previous)


def _run_and_report(args: argparse.Namespace, config: SelfPlayConfig, ray: Any,
                    stop: StopRequest) -> int:
    """Play and write the dataset (until ``stop`` asks), then report it; the exit status."""
    from adapter.local.selfplay import resume_point, run_selfplay
    from adapter.local.stopping import exit_status, stop_reason_text
    from adapter.progress import ProgressBar
    from replay.dataset.schema import DatasetError

    out = Path(args.out)
    made = _first_missing(out)
    fresh = made is not None or (out.is_dir() and not any(out.iterdir()))  # else resumed
    try:
        # refused there: nothing removed, the folder is another's
        with holding_out(out, args.command_path):
            # what --out holds is read under the lock: a run writing there is not taken for
            # a killed one
            point = resume_point(config)
            if isinstance(point, dict):  # this dataset, complete: nothing is written
                return _already_complete(args, point)
            if point is not None and args.out_shared:
                raise UserInputError(f"{out}: holds a stopped dataset, which a run with "
                                     "--out-shared cannot go on with (run without it)")
            if point is not None:
                _going_on(out, point, config, args.command_path)
            try:
                if args.out_shared:
                    from adapter.local.ray_selfplay import run_on_workers

                    result = run_on_workers(config, ray, ProgressBar(args.progress))
                else:
                    bar = ProgressBar(args.progress)
                    result = run_selfplay(config, bar, ray, stop, point)
                    bar.end()
            except BaseException:  # the error itself is said where it is caught (cli.main)
                if fresh:
                    _left_behind(out, made, args, resumable=True)
                raise
    except DatasetError as exc:
        raise UserInputError(str(exc)) from None
    finally:
        if ray is not None:
            ray.cluster.close()
    for error in result["referee_errors"]:
        log().error("referee error", error=error)
    stopped = result.get("stopped")
    status = exit_status(stopped["reason"] if stopped else None)
    if stopped is not None and stopped["units_done"] == 0:
        _remove_empty_dataset(out, made, args)
        print(f"mjbot {args.command_path}: stopped ({stop_reason_text(stopped['reason'])}) "
              f"before the first wall set was finished: no dataset written in {args.out}",
              file=sys.stderr)
        return status or 1
    summary = {k: result[k] for k in (
        "variant", "source", "games", "hands", "decisions", "seconds", "workers",
        "decisions_per_second", "decisions_per_core_second")}
    if "resumed" in result:
        summary["resumed"] = result["resumed"]
    summary["out"] = args.out
    summary["shards"] = len(result["shards"])
    summary["bytes"] = sum(s["bytes"] for s in result["shards"])
    summary["referee_errors"] = len(result["referee_errors"])
    summary["fallbacks"] = result["fallbacks"]
    if result.get("external_seats"):
        summary["external_seats"] = result["external_seats"]
    if "ray" in result:
        summary["ray"] = result["ray"]
    if stopped is not None:
        summary["stopped"] = stopped
    if args.json:
        print(json.dumps(summary, indent=2))
    else:
        print(f"{args.command_path} {summary['variant']}: {summary['hands']} hands, "
              f"{summary['decisions']} decisions in {summary['games']} games, "
              f"{summary['shards']} shards ({summary['bytes'] / 1e6:.2f} MB) in {args.out}; "
              f"{summary['seconds']:.1f} s, {summary['decisions_per_core_second'] or 0:.0f} "
              f"decisions/s per core, {summary['workers']} worker(s)")
        if stopped is not None:
            print(f"stopped early ({stop_reason_text(stopped['reason'])}): the first "
                  f"{stopped['units_done']} of {stopped['units_planned']} wall sets, each in "
                  "every seating")
        print("fallbacks (decisions the brain answered for the policy): " + ", ".join(
            f"{name} {f['fallbacks']} of {f['decisions']} ({100 * f['fallback_share']:.1f}%)"
            for name, f in summary["fallbacks"].items()))
        for name, f in summary["fallbacks"].items():
            if f["first_fallback"]:
                print(f"{name} fell back in {f['fallbacks']} of {f['decisions']} decisions; "
                      f"first: {f['first_fallback']}")
        from adapter.local.arena import external_lines

        for line in external_lines(summary.get("external_seats", {})):
            print(line)
    failed = fallback_verdict(args, summary["fallbacks"])
    return status or (1 if summary["referee_errors"] else failed)


def _going_on(out: Path, point: Any, config: SelfPlayConfig, command: str) -> None:
    """Say where a resumed run (of ``mjbot COMMAND``) goes on from, and clear what it will
    write again (the stopped run's manifest, shards past the checkpoint, a killed run's
    temporary files)."""
    from replay.dataset.progress import clear_for_resume

    clear_for_resume(out, point.point)
    kept = len(point.point.shards) + (point.point.open is not None)
    print(f"mjbot {command}: going on with the dataset in {out} from wall set "
          f"{point.point.unit + 1} of {config.arena.units()} ({kept} shard(s) kept"
          f"{f', {point.point.skip} game(s) of that wall set in them' if point.point.skip else ''}"
          ")", file=sys.stderr)


def _already_complete(args: argparse.Namespace, manifest: dict[str, Any]) -> int:
    """A rerun on a dataset it finished says so and writes nothing: exit 0, as a resume
    that had nothing left to play."""
    summary = {"variant": manifest["variant"], "source": manifest["source"],
               "games": manifest["games"], "hands": manifest["hands"],
               "decisions": manifest["decisions"], "seconds": 0.0, "out": args.out,
               "shards": len(manifest["shards"]),
               "bytes": sum(s["bytes"] for s in manifest["shards"]),
               "referee_errors": len(manifest["referee_errors"]),
               "fallbacks": manifest["fallbacks"], "already_complete": True}
    if args.json:
        print(json.dumps(summary, indent=2))
    else:
        print(f"{args.command_path} {summary['variant']}: {args.out} already holds this dataset, "
              f"complete ({summary['hands']} hands, {summary['decisions']} decisions in "
              f"{summary['shards']} shards): nothing to play")
    return 0


@contextlib.contextmanager
def holding_out(out: Path, command: str) -> Iterator[None]:
    """Hold the dataset folder ``out`` (made here if missing) while this run (of
    ``mjbot COMMAND``, its command_path: selfplay, dataset import) writes it: a second run
    at the same --out is refused in one line. Both passed the empty-folder check when they
    started together, and each wrote its shards and manifest over the other's (a
    dataset of one run's manifest and the other's shards, or a run that said it wrote a
    dataset nobody has). An OS lock on the folder itself (no file in it: an --out must be
    empty), released when the run ends or dies. Where the folder cannot be made or opened
    (a file there, no permission; or Windows, where a folder takes no lock) nothing is held
    and the dataset writer says what is wrong."""
    fd = -1
    if sys.platform != "win32" and not (out.exists() and not out.is_dir()):
        try:
            out.mkdir(parents=True, exist_ok=True)
            fd = os.open(out, os.O_RDONLY)
        except OSError:
            fd = -1
    try:
        if fd >= 0:
            from replay.locking import Busy, lock_now

            try:
                unheld = lock_now(fd)
            except Busy:
                raise UserInputError(f"{out}: another run is writing a dataset there "
                                     "(give another --out)") from None
            if unheld is not None:  # a filesystem that takes no lock: unguarded, not busy
                print(f"mjbot {command}: {out}: no lock taken ({unheld}): a second run at "
                      "this --out would not be refused", file=sys.stderr)
        yield
    finally:
        if fd >= 0:
            os.close(fd)


def _first_missing(path: Path) -> Path | None:
    """The outermost folder of ``path`` that does not exist yet (None: it exists): what a run
    creates, so that a failed one can remove it again."""
    missing = None
    for folder in (path, *path.parents):
        if folder.exists():
            break
        missing = folder
    return missing


def _left_behind(out: Path, made: Path | None, args: Any, resumable: bool = False) -> None:
    """A run of ``mjbot COMMAND`` that failed (no client at a listening seat, a dead worker,
    a second Ctrl-C, a full disk) leaves the disk as it found it: the folders it made for
    --out are removed while they are empty (an empty --out was left behind). Files it did write
    (shards, no manifest) are kept and said, as they are no dataset, and, for a
    ``resumable`` one (selfplay) whose record is there, that the same command goes on (said
    through :func:`tell`, ``args`` the command's)."""
    from replay.dataset.progress import PROGRESS

    written = sorted(out.iterdir()) if out.is_dir() else []
    if written and all(p.name in (PROGRESS, PROGRESS + ".tmp") for p in written):
        for p in written:  # a record of no shard: nothing to go on with
            p.unlink(missing_ok=True)
        written = []
    for p in [p for p in written if p.is_dir()]:  # --out-shared's .parts of no part (its
        folders = sorted(p.rglob("*"), reverse=True)  # first one had no room): no file
        if all(f.is_dir() for f in folders):
            with contextlib.suppress(OSError):
                for f in [*folders, p]:
                    f.rmdir()
                written.remove(p)
    if written:
        resumable = resumable and (out / PROGRESS).is_file()
        # --out-shared's part files are in a hidden folder: "left 1 file(s)" of a folder of
        # many, which a plain ls of --out does not show (an empty listing, "remove them")
        files = sum(sum(1 for f in p.rglob("*") if not f.is_dir()) if p.is_dir() else 1
                    for p in written)
        hidden = [p.name for p in written if p.name.startswith(".")]
        # a JSON log line under --log-json, as the run's other lines (tell)
        tell(args, f"the failed run left {files} file(s) in {out} ("
             + (f"in {', '.join(hidden)}, which ls shows with -a; " if hidden else "") + "no "
             "manifest: not a dataset; " + ("the same command goes on with it)" if resumable
                                            else "remove them, or give another --out, to "
                                            "run it again)"), "files left")
        return
    folder = out
    while made is not None:
        try:
            folder.rmdir()
        except OSError:
            return
        if folder == made:
            return
        folder = folder.parent


def _remove_empty_dataset(out: Path, made: Path | None, args: Any) -> None:
    """A run stopped before its first wall set wrote only a manifest of nothing: removed, and
    then the disk left as the run found it (the folders it made go; an --out that was there,
    empty, stays), so the same --out can be used again."""
    from replay.dataset.shards import MANIFEST

    with contextlib.suppress(OSError):
        (out / MANIFEST).unlink()
    _left_behind(out, made, args)  # the record of where it stood goes with it


def cmd_dataset_import(args: argparse.Namespace) -> int:
    if args.shard_decisions < 1:
        raise UserInputError("--shard-decisions must be at least 1")
    from brain.rules.variant import variant_of
    from replay.dataset.imports import import_files
    from replay.dataset.schema import DatasetError

    out = Path(args.out)
    made = _first_missing(out)
    fresh = made is not None or (out.is_dir() and not any(out.iterdir()))  # else refused
    try:
        # as selfplay's: two imports at one --out each passed the empty-folder check and
        # wrote over the other's shards and manifest, both saying they wrote their dataset
        with holding_out(out, args.command_path):
            try:
                manifest = import_files(args.files, out, args.shard_decisions)
            except BaseException:  # a file refused: the folders made for --out go again
                if fresh:
                    _left_behind(out, made, args)
                raise
    except DatasetError as exc:
        raise UserInputError(str(exc)) from None
    report = manifest["import"]
    # a hand whose moves do not fit the table (a damaged or hand-edited file) is left out,
    # the rest of its game kept: the dataset is written, the exit status says part was not
    # each file named as given ("path"; "file" is its basename, as the manifest always had it)
    damaged = [(f["path"], line) for f in report["files"] for line in f.get("damaged_hands", ())]
    for name, line in damaged:
        print(f"mjbot dataset import: {name}: {line}", file=sys.stderr)
    # a file no reader takes, beside files that were read: left out, the others imported
    unread = [f for f in report["files"] if f.get("unread")]
    for f in unread:
        print(f"mjbot dataset import: {f['path']}: {f['left_out']}; left out, the other files "
              "imported", file=sys.stderr)
    if args.json:
        print(json.dumps(manifest, indent=2, sort_keys=True))
        return 1 if damaged or unread else 0
    left_out = [f for f in report["files"] if "left_out" in f]
    print(f"{args.command_path} {manifest['variant']}: {len(report['files']) - len(left_out)} "
          f"games, {manifest['hands']} hands, {manifest['decisions']} decisions in "
          f"{len(manifest['shards'])} shards in {args.out}; recorded moves our rules do not "
          f"list: {report['skipped_decisions']}"
          + (f"; damaged hands left out: {len(damaged)}" if damaged else ""))
    for f in left_out:
        if not f.get("unread"):  # said on stderr
            print(f"left out {f['path']}: {f['left_out']}")
    ranked = variant_of(manifest["variant"]).ranked
    for f in report["files"]:
        if f.get("cut") and f.get("game_end"):  # its end came before the cut: read whole
            print(f"cut short {f['path']}: {f['cut']}; its game end was read: its "
                  f"{f['hands']} hands are in with its final scores"
                  + (" and ranks" if ranked else ""))
        elif f.get("cut"):
            print(f"cut short {f['path']}: {f['cut']}; its {f['hands']} hands up to the cut "
                  "are in, with " + ("no final ranks" if ranked else "no game end")
                  + " (its final scores are those at the cut)")
    return 1 if damaged or unread else 0


def cmd_dataset_stats(args: argparse.Namespace) -> int:
    from replay.dataset.schema import DatasetError
    from replay.dataset.stats import dataset_stats, format_stats

    try:
        stats = dataset_stats(args.dir)
    except DatasetError as exc:
        raise UserInputError(str(exc)) from None
    print(json.dumps(stats, indent=2) if args.json else format_stats(stats))
    return 0
