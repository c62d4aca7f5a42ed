"""The `mjbot` commands, one module per group. Each module has ``register(sub)``, which adds its
sub-commands and binds each to its handler (``handler(args) -> exit code``).

Botzone starts `mjbot botzone` afresh for every turn, so these modules import only argparse
at the top: everything a command needs is imported inside its handler.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TextIO

# the argparse types live where the Botzone bundle can carry them; the commands take them here
from adapter.argtypes import add_log_options as add_log_options
from adapter.argtypes import at_least as at_least
from adapter.argtypes import command_path
from adapter.argtypes import float_within as float_within
from adapter.argtypes import port_number as port_number
from adapter.argtypes import positive_seconds as positive_seconds
from adapter.argtypes import seat_number as seat_number

# What every command's (and bench's) parser sets as ``handler``: cli.main calls it with the
# parsed arguments, and its int is the exit status.
Handler = Callable[[argparse.Namespace], int]


class UserInputError(ValueError):
    """Something the user typed is wrong; reported in one line, no traceback."""


def add_variant_option(parser: argparse.ArgumentParser, default: str | None = "riichi", *,
                       also: tuple[str, ...] = (), help: str | None = None,
                       **kwargs: Any) -> None:
    """``--variant``, one option in every command (and bench): a choice of the variants the
    table plays (and ``also``, a bench's ``all``), required where ``default`` is None, so
    that a wrong name is refused in the one wording argparse gives a choice, naming the
    values it takes; some commands once checked it themselves, in words of their own."""
    from brain.rules.variant import VARIANT_NAMES

    if help is None:
        help = "the rules" + (" (default: %(default)s)" if default is not None else "")
    parser.add_argument("--variant", choices=[*also, *VARIANT_NAMES], default=default,
                        required=default is None and kwargs.get("action") != "append",
                        help=help, **kwargs)


@contextmanager
def reading(path: str) -> Iterator[None]:
    """A game file that cannot be read, as the user's error naming the file: missing, a
    folder, a path through a file, not readable, or not a log of any known format (the
    reader's own words)."""
    from replay.log import LogError
    from replay.record import RecordError

    try:
        yield
    except OSError as exc:
        if _names(exc, path):  # also a file on the way (a/file/x), a file it may not read
            why = ("no such file" if isinstance(exc, FileNotFoundError)
                   # `make run` says where its logs went and that replay reads them: the
                   # folder is what a newcomer gives first
                   else "is a folder; name the game files in it, or see them all with "
                   f"`mjbot view {path}`" if isinstance(exc, IsADirectoryError)
                   else exc.strerror or str(exc))
            raise UserInputError(f"{path}: {why}") from None
        if isinstance(exc, FileNotFoundError | IsADirectoryError):
            # another file: a predictor's missing or wrong weights
            raise UserInputError(str(exc)) from None
        raise
    except (LogError, RecordError, ValueError) as exc:
        raise UserInputError(f"{path}: {exc}") from None


def _names(exc: OSError, path: str) -> bool:
    """Whether ``exc`` is about ``path`` itself. What :func:`reading` wraps also loads
    weights (``--commentary --predictor nn@FILE``), whose MissingNetwork is a
    FileNotFoundError too: it was reported as the game file missing."""
    return exc.filename is not None and os.path.normpath(str(exc.filename)) \
        == os.path.normpath(path)


def text_stream(json_path: str | None) -> TextIO:
    """Where a command prints its human text: stderr when ``--json -`` takes stdout (so
    stdout is one JSON document a pipe can parse), else stdout."""
    return sys.stderr if json_path == "-" else sys.stdout


def report(json_path: str | None, text: str, data: Any) -> None:
    """A finished run's table (``text``) and ``--json`` figures: a FILE is written before
    the table is printed, so a reader of the table that stops early (``| head``, whose
    broken pipe ends the command) does not cost the run its figures; with ``-`` the table
    goes to stderr and the JSON to stdout after it."""
    if json_path and json_path != "-":
        write_json(json_path, data)
    print(text, file=text_stream(json_path), flush=True)  # a gone reader ends it here
    if json_path == "-":
        write_json(json_path, data)


def tell(args: Any, text: str, event: str = "run failed") -> None:
    """One line for the user about the run (a server not there, no client, a stop): under
    ``--log-json`` a JSON log line (``event``, ``command``, ``error``), as the session's own
    lines are, so that a log collector reads every line; else ``mjbot COMMAND: text`` on
    stderr, for the person at the terminal. JSON only where JSON logging was set up
    (``json_asked``): `mjbot botzone` keeps plain lines under ``--log-json``, and structlog
    unconfigured writes to stdout, a Botzone bot's answer channel."""
    from adapter.logging_setup import json_asked

    if json_asked():
        log().error(event, command=args.command_path, error=text)
    else:
        print(f"mjbot {args.command_path}: {text}", file=sys.stderr)


def tell_waiting(args: Any, port: int, clients: int, text: str) -> None:
    """A fake server's line that it listens for ``clients`` clients on ``args.host``:``port``
    (``text``: the plain line's words after ``mjbot COMMAND: ``): under ``--log-json`` a JSON
    log line, as :func:`tell`'s, so that every line a log collector reads is JSON."""
    from adapter.logging_setup import json_asked

    if json_asked():
        log().warning("waiting for clients", command=args.command_path,
                      address=f"{args.host}:{port}", clients=clients)
    else:
        print(f"mjbot {args.command_path}: {text}", file=sys.stderr, flush=True)


def stopped_status(args: Any, stopped: Any, note: str = "") -> int:
    """A platform session stopped by a signal (adapter.session.Stopped): one line on stderr
    (:func:`tell`), and the exit status a shell gives a signalled process (128 + the
    signal's number)."""
    tell(args, f"stopped ({stopped}{note})", "stopped")
    return 128 + int(stopped.signum)


def require_writable(path: str | None, option: str) -> None:
    """Refuse an output file that cannot be written before the work that fills it (an arena,
    a review, a bench) runs, not after; ``-`` and None (stdout, none) pass. A regular file
    (or a new one) is opened for appending, the one sure test (root passes os.access; /proc
    refuses all the same), and removed again if the test made it; an existing file that is no
    regular file (a FIFO, /dev/stdout) is checked with os.access only, since an open would
    block for a reader or hand it an empty file."""
    if not path or path == "-":
        return
    target = Path(path)
    try:  # is_dir() itself raises for a name too long
        if target.is_dir():
            raise UserInputError(f"{option} {path}: is a folder")
        if not target.parent.is_dir():
            raise UserInputError(f"{option} {path}: no folder {target.parent}")
        existed = target.exists()
        if existed and not target.is_file():  # a FIFO, /dev/stdout: an open of ours would
            # block for a reader, or hand the reader an EOF before the figures come
            if not os.access(target, os.W_OK):
                raise UserInputError(f"{option} {path}: not writable")
            return
        with open(target, "a", encoding="utf-8"):
            pass
        if not existed:
            target.unlink(missing_ok=True)
    except OSError as exc:
        raise UserInputError(f"{option} {path}: {exc.strerror or exc}") from None


def write_json(json_path: str | None, data: Any) -> None:
    """``--json FILE``: ``data`` as indented JSON into FILE, or onto stdout for ``-``; a
    FILE that cannot be written is the user's error, named."""
    if not json_path:
        return
    text = json.dumps(data, indent=2) + "\n"
    if json_path == "-":
        sys.stdout.write(text)
        sys.stdout.flush()
        return
    try:
        Path(json_path).write_text(text, encoding="utf-8")
    except OSError as exc:
        raise UserInputError(f"--json {json_path}: {exc.strerror or exc}") from None


def log() -> Any:
    """The CLI's structlog logger, imported on first use (see the module docstring)."""
    import structlog

    return structlog.get_logger("mjbot.cli")


def usage_error_as_json(prog: str, message: str, usage: str) -> None:
    """A usage error under ``--log-json`` (adapter.argtypes.UsageErrors): one JSON log line,
    as a UserInputError's is (the command, what was wrong), with argparse's usage line."""
    from adapter.logging_setup import configure_logging

    configure_logging(True)  # the error may come before the logging options were read
    log().error("bad input", command=command_path(prog), error=message, usage=usage)


def log_folder(given: str | None, no_log: bool = False, default: bool = True) -> str | None:
    """The folder game logs go to (``given``, else $MJBOT_LOG_DIR or ``logs`` where there is
    a default), made now: a path that is a file, unwritable or under a file is the user's
    error before any game is played, not a traceback in the middle of one. None: no logs.
    An empty ``given`` is none given, as an empty $MJBOT_LOG_DIR is unset: without a default,
    no logs (it was the default folder, the real games' logs)."""
    from replay.log import LOG_DIR_ENV, default_log_dir

    if no_log or (not given and not default):
        return None
    folder = Path(given) if given else default_log_dir()
    named = "--log-dir" if given else f"${LOG_DIR_ENV}" if os.environ.get(LOG_DIR_ENV) else ""
    try:
        folder.mkdir(parents=True, exist_ok=True)
        if not os.access(folder, os.W_OK | os.X_OK):
            raise PermissionError(13, "Permission denied")
    except OSError as exc:
        where = f"{named} {folder}" if named else f"the log folder {folder}"
        raise UserInputError(f"{where}: {folder_error(exc)}") from None
    return str(folder)


def folder_error(exc: OSError) -> str:
    """Why a folder could not be made, in words that fit a path the user gave."""
    if isinstance(exc, FileExistsError):
        return "a file, not a folder"
    if isinstance(exc, NotADirectoryError):
        return "a part of it is a file"
    return exc.strerror or str(exc)


def require_distinct_datasets(data: list[str], holdout: list[str]) -> None:
    """A dataset named twice in ``--data`` counts every example twice, and one in both
    ``--data`` and ``--holdout`` makes the held-out figures in-sample: each is refused,
    named (the same folder however it is written)."""
    seen: dict[Path, str] = {}
    for d in data:
        key = Path(d).resolve()
        if key in seen:
            raise UserInputError(f"--data names {seen[key]} twice ({d}): its examples would "
                                 "count twice")
        seen[key] = d
    for d in holdout:
        if Path(d).resolve() in seen:
            raise UserInputError(f"--holdout {d} is also in --data: the held-out figures "
                                 "would be read on training examples")
    _require_distinct_contents(data, holdout)


def _dataset_identity(folder: str) -> tuple[set[str], tuple[str, int] | None, object]:
    """A dataset's shards by SHA-256, its variant and self-play seed (its walls; None for an
    import), and its manifest's source; nothing for a folder whose manifest does not read
    (the training's own reading says why), its source where that much reads."""
    source: object = None
    try:
        manifest = json.loads((Path(folder) / "manifest.json").read_text())
        source = manifest.get("source")
        shards = {str(s["sha256"]) for s in manifest.get("shards", []) if s.get("sha256")}
        seed = manifest["config"]["seed"] if source == "selfplay" else None
        walls = (str(manifest.get("variant")), seed) if isinstance(seed, int) else None
        return shards, walls, source
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return set(), None, source


def _require_distinct_contents(data: list[str], holdout: list[str]) -> None:
    """Two folders holding the same shard (a dataset copied) count its examples twice, or
    put them on both sides of the held-out line; and a held-out self-play set of a training
    set's seed was dealt the same walls (a seed's walls do not depend on --hands or the
    policies: the smaller set is the first rows of the larger, decision for decision), so
    its figures were in-sample without a word."""
    ids = {d: _dataset_identity(d) for d in [*data, *holdout]}
    for i, a in enumerate(data):
        for b in data[i + 1:]:
            if ids[a][0] & ids[b][0]:
                raise UserInputError(f"--data {a} and {b} hold the same shard (one dataset "
                                     "copied): its examples would count twice")
    for h in holdout:
        for d in data:
            if ids[h][0] & ids[d][0]:
                raise UserInputError(f"--holdout {h} and --data {d} hold the same shard (one "
                                     "dataset copied): the held-out figures would be read on "
                                     "training examples")
            walls = ids[h][1]
            if walls is not None and walls == ids[d][1]:
                raise UserInputError(
                    f"--holdout {h} was dealt the walls of --data {d} ({walls[0]} self-play "
                    f"seed {walls[1]} both): the held-out figures would be read on the deals "
                    "trained on; play the held-out set on another --seed")
    deals = _imported_deals({d: ids[d][2] for d in ids})
    for i, a in enumerate(data):
        for b in data[i + 1:]:
            if both := len(deals[a] & deals[b]):
                raise UserInputError(f"--data {a} and {b} hold {both} of the same hands (the "
                                     "same records imported in both): their examples would "
                                     "count twice")
    for h in holdout:
        for d in data:
            if both := len(deals[h] & deals[d]):
                raise UserInputError(
                    f"--holdout {h}: {both} of its {len(deals[h])} hands are in --data {d} "
                    "(the same records imported in both): the held-out figures would be read "
                    "on hands trained on; hold out records not imported into --data")


# the imported deals a weights file keeps at most: the smallest digests of them (a sample the
# same for every run), which any deal of a held-out set at or below the largest kept one is
# checked against exactly. All of them grew the file 9 bytes a hand (a million hands: 9 MB,
# over the 8 MB a model may weigh, and 0.5 s and 100 MB more at every load, each Botzone
# turn's); these are about 150 KB of it (153 KB measured).
DEALS_KEPT = 16384


def training_record(data: list[str]) -> dict[str, Any]:
    """What a weights file keeps of the datasets it was trained on, so that a later held-out
    set can be told from them as ``--holdout`` is at training (:func:`require_held_out_from`):
    their shards' SHA-256, each self-play set's walls (variant, seed), the imported hands'
    deals (16 hex digits of each one's SHA-256; the :data:`DEALS_KEPT` smallest of them, and
    how many there were). Digests only: no path, no record."""
    shards: set[str] = set()
    walls: list[list[Any]] = []
    deals: set[str] = set()
    for d in data:
        digests, dealt, source = _dataset_identity(d)
        shards |= digests
        if dealt is not None and list(dealt) not in walls:
            walls.append(list(dealt))
        if source == "import":
            deals |= {_deal_digest(x) for x in _deals(d)}
    return {"shards": sorted(shards), "walls": walls, "deals": sorted(deals)[:DEALS_KEPT],
            "deals_total": len(deals)}


def require_held_out_from(held: list[str], record: Any, weights: str, option: str,
                          shown: str | None = None) -> bool:
    """Refuse a held-out set (``option``'s folders) that holds what ``weights`` was trained on,
    as :func:`require_distinct_datasets` refuses a ``--holdout`` of the ``--data``: the same
    shard, the same self-play walls, the same imported hands. Weights that record nothing of
    their training data (trained before they did: the shipped ones) cannot be checked: False,
    and the caller says so (:func:`warn_not_held_out_checked`) once its figures are made (said
    here, the warning came before any refusal of the command's own, which was one line).
    ``shown``: what a refusal names instead of the folder (one the command made itself, as
    the import of ``--real``'s records)."""
    if not isinstance(record, dict):
        return False
    shards, walls = set(record.get("shards", [])), record.get("walls", [])
    deals = set(record.get("deals", []))
    total = record.get("deals_total", len(deals))  # more than kept: the smallest were kept
    for h in held:
        named = f"{option} {shown or h}"
        digests, dealt, source = _dataset_identity(h)
        if both := len(digests & shards):
            raise UserInputError(f"{named}: {both} of its shards are ones {weights} was "
                                 "trained on: the held-out figures would be read on training "
                                 "examples")
        if dealt is not None and list(dealt) in walls:
            raise UserInputError(
                f"{named} was dealt the walls {weights} was trained on ({dealt[0]} "
                f"self-play seed {dealt[1]}): the held-out figures would be read on the deals "
                "trained on; play the held-out set on another --seed")
        if source == "import" and deals:
            mine = {_deal_digest(x) for x in _deals(h)}
            if both := len(mine & deals):
                more = "" if total <= len(deals) else \
                    f"; it records {len(deals)} of the {total} it was, so more may be"
                raise UserInputError(
                    f"{named}: {both} of its {len(mine)} hands are ones {weights} was "
                    f"trained on (the same records imported{more}): the held-out figures "
                    "would be read on hands trained on")
    return True


def require_walls_held_out(record: Any, variant: str, seeds: list[int], weights: str,
                           what: str, instead: str) -> None:
    """Refuse to build a held-out self-play set (``what``) on a seed whose walls ``weights``
    was trained on (its ``trained_on`` record; nothing to check where it has none), before
    it is played: its figures would be read on the deals trained on."""
    if not isinstance(record, dict):
        return
    for seed in seeds:
        if [variant, seed] in record.get("walls", []):
            raise UserInputError(
                f"{what} would be dealt the walls {weights} was trained on ({variant} "
                f"self-play seed {seed}): the held-out figures would be read on the deals "
                f"trained on; {instead}")


def warn_not_held_out_checked(weights: str, option: str) -> None:
    """What :func:`require_held_out_from` could not check, said beside the figures."""
    log().warning(f"{option} not checked against the data {weights} was trained on: the "
                  "file records none (trained before weights did); held-out figures on "
                  "a set it was trained on would be in-sample")


def _deal_digest(deal: bytes) -> str:
    return hashlib.sha256(deal).hexdigest()[:16]


def _imported_deals(sources: dict[str, object]) -> dict[str, set[bytes]]:
    """Each imported dataset's hands, each by its deal (every seat's tiles and the dora at
    the hand's first decision): records carry no seed, and the same records imported into
    two folders (a subset, or in another order) share no shard. Nothing for a self-play
    dataset (its seed says its walls) or a folder that does not read (the training says
    why); the shards are read only where two imports are named. ``sources``: each folder's
    manifest source, as :func:`_dataset_identity` read it."""
    two = sum(1 for s in sources.values() if s == "import") > 1
    return {d: _deals(d) if two and source == "import" else set()
            for d, source in sources.items()}


def _deals(folder: str) -> set[bytes]:
    try:
        manifest = json.loads((Path(folder) / "manifest.json").read_text())
        import numpy as np

        from replay.dataset.shards import read_shard, shard_paths

        deals = set()
        for path, size in shard_paths(folder, manifest):
            rows = read_shard(path, ("hand_index", "t_hand", "v_dora"), size)
            for row in np.unique(rows["hand_index"], return_index=True)[1]:
                deals.add(rows["t_hand"][row].tobytes() + rows["v_dora"][row].tobytes())
        return deals
    except (OSError, ValueError, KeyError, TypeError, AttributeError):  # DatasetError too
        return set()


def require_torch_device(device: str) -> None:
    """A device torch can use here, refused in one line otherwise: torch's own refusals
    (an AssertionError for cuda on a CPU build) come as tracebacks, and only once a run
    has begun."""
    import torch

    try:
        kind = torch.device(device).type
    except RuntimeError:
        raise UserInputError(f"--device {device!r}: not a torch device (cpu, or cuda on a "
                             "GPU machine)") from None
    if kind == "cuda" and not torch.cuda.is_available():
        raise UserInputError(f"--device {device}: this torch has no CUDA device (a CPU build, "
                             "or no GPU here); use --device cpu")
    if kind not in ("cpu", "cuda"):
        raise UserInputError(f"--device {device}: mjbot trains on cpu or cuda")


def require_policy(name: str, seat: bool = False) -> None:
    """Refuse an unknown policy name with the list of known ones (``nn@FILE``: FILE must
    exist; whether it fits the variant is :func:`require_networks`' question). ``seat``: a
    table's seat, which takes ``@budget=`` after it; a command's ``--policy`` takes none."""
    from brain.policies import MC_OPTIONS_PREFIX, NN_FILE_PREFIX, POLICIES

    if name.startswith(NN_FILE_PREFIX):
        path = name.removeprefix(NN_FILE_PREFIX)
        if not os.path.isfile(path):
            raise UserInputError(f"{name}: no weights file at {path!r}")
        return
    if name.startswith(MC_OPTIONS_PREFIX):
        options = name.removeprefix(MC_OPTIONS_PREFIX)
        if not options.strip(" ;,"):
            raise UserInputError(f"{name}: no options after mc@ (mc@KEY=VALUE;...; plain mc "
                                 "plays without)")
        require_mc_options(options, name, seat)
        return
    if name not in POLICIES:
        raise UserInputError(f"unknown policy {name!r} (known: {', '.join(sorted(POLICIES))})")
    if name == "mc":
        require_mc_options()


def require_mc_options(options: str = "", seat: str = "", at_a_seat: bool = True) -> None:
    """Refuse a bad ``MJBOT_MC`` (an unknown key, a bad value), or bad ``options`` of the seat
    ``mc@OPTIONS``, in one line naming it and the known keys, before any game starts (else
    every mc policy built fails with a traceback). Not ``at_a_seat`` (a command's
    ``--policy``, which takes no ``@budget=``), it is named as a policy, and a key like
    ``budget`` gets no hint to write ``POLICY@budget=SECONDS``: `mjbot botzone --policy
    mc@budget=1` was told to write what it had written."""
    from brain.policies.mc.config import ENV, UnknownKey, from_env, parse

    try:
        base = from_env()
    except ValueError as exc:
        raise UserInputError(f"{ENV}={os.environ.get(ENV, '')!r}: {exc}") from None
    named = f"seat {seat!r}" if at_a_seat else f"policy {seat!r}"
    try:
        parse(options, base)
    except UnknownKey as exc:
        hint = _seat_budget_hint(exc.key) if at_a_seat else ""
        raise UserInputError(f"{named}: {exc}{hint}") from None
    except ValueError as exc:
        raise UserInputError(f"{named}: {exc}") from None


def _seat_budget_hint(key: str) -> str:
    """A seat's own time limit is no mc option but a suffix (``mc@budget=0.5``, after any
    options): a key near ``budget`` among the options was most likely that."""
    import difflib

    from adapter.local.seat import BUDGET_SUFFIX

    if not difflib.get_close_matches(key, ["budget"], cutoff=0.8):
        return ""
    return f"; a seat's own time limit per decision is POLICY{BUDGET_SUFFIX}SECONDS"


def four_policies(text: str, budgets: bool = True) -> tuple[str, str, str, str]:
    """``--policies A,B,C,D``: one known policy or outside program (``KIND:CMD``, checked
    against the variant by :func:`require_seats`) per seat, each optionally ``LABEL=``.
    ``budgets``: the seats may take ``@budget=`` (not the Botzone judge's)."""
    names = tuple(n.strip() for n in text.split(","))
    if len(names) != 4:
        raise UserInputError(f"--policies needs four names (one per seat), got {len(names)}: "
                             f"{text!r}")
    for name in names:
        require_seat_name(name, budgets)
    require_labels(names)
    return names  # the length check above makes it a four-tuple


def require_labels(names: Any) -> None:
    """One label, one player: refuse two different seats under one label in one line."""
    from adapter.local.seat import seat_specs

    try:
        seat_specs(names)
    except ValueError as exc:
        raise UserInputError(str(exc)) from None


def require_pair_keys(names: Any) -> None:
    """An arena's table: refuse names whose pairs would share one difference key, in one line
    (:func:`adapter.local.seat.check_pair_keys`)."""
    from adapter.local.seat import check_pair_keys, seat_specs

    try:
        check_pair_keys(seat_specs(names))
    except ValueError as exc:
        raise UserInputError(str(exc)) from None


def require_seat_name(name: str, budgets: bool = True) -> None:
    """One seat of a table: a known policy, or an outside program's spec that parses, with
    an optional ``LABEL=`` before it (a bad label is refused here, naming the seat).
    ``budgets``: the seat may take ``@budget=``, and a key like ``budget`` is told so."""
    from adapter.local.external import SpecError, is_external, parse_spec
    from adapter.local.seat import split_budget, split_label

    try:
        label, spec = split_label(name)
    except ValueError as exc:
        raise UserInputError(str(exc)) from None
    try:
        if not is_external(spec):
            policy, _ = split_budget(spec)
            require_policy(policy, seat=budgets)
            return
        parse_spec(spec)
    except (SpecError, ValueError) as exc:  # UserInputError is a ValueError
        where = f"label {label!r}: " if label != spec else ""
        raise UserInputError(where + str(exc)) from None


def add_ray_arguments(parser: Any) -> None:
    """``--workers`` and ``--ray``, alike for arena, league and selfplay."""
    parser.add_argument("--workers", type=int, default=None, help="worker processes (default "
                        "1; with --ray: units at once, default every CPU of the cluster)")
    parser.add_argument("--ray", metavar="ADDRESS", help="run the units as Ray tasks: auto (the "
                        "cluster this node belongs to), HOST:PORT (its head) or local (start "
                        "one here with --workers CPUs); needs Ray: pip install -e '.[ray]' in "
                        "mjbot's checkout")


def start_ray(args: Any) -> Any:
    """The ``RayRun`` for ``--ray`` (None without it); Ray missing or unreachable is one line."""
    if args.workers is not None and args.workers < 1:
        raise UserInputError("--workers must be at least 1")
    if args.ray is None:
        return None
    if not args.ray.strip():
        raise UserInputError("--ray needs an address: auto, HOST:PORT or local")
    from adapter.local.ray_pool import RayUnavailable, start

    try:
        return start(args.ray.strip(), args.workers)
    except RayUnavailable as exc:
        raise UserInputError(str(exc)) from None


def require_table(names: Any, args: Any) -> None:
    """The checks every command that seats ``names`` at a local table makes before any
    game (arena, league, selfplay): their networks, their outside programs, ``--hands``
    (each seat as itself: a ``LABEL=`` before it only names it)."""
    from adapter.local.seat import split_label

    seats = [split_label(n)[1] for n in names]
    require_networks(seats, args.variant)
    require_opponent_models(seats, args.variant)
    require_seats(seats, args.variant, args)
    if args.hands < 1:
        raise UserInputError("--hands must be at least 1")
    args.length = game_length(args.variant, args.length)
    warn_tight_budget(seats, args.budget)


def add_length_argument(parser: Any) -> None:
    """``--length``, alike for arena, league and selfplay: a riichi game's length only."""
    parser.add_argument("--length", choices=["east", "south"], default=None,
                        help="riichi game length: east-only (default) or east-south; the "
                        "other variants' games have a set length")


def game_length(variant: str, length: str | None) -> str:
    """The riichi game length the table plays (east where none is given). Given for another
    variant, whose game has a set length, it is refused naming that length: `--variant mcr
    --length south` was accepted and played the same one-hand games as without it."""
    from adapter.local.game import set_length

    game = set_length(variant)
    if length is None or game is None:  # riichi's game runs over its winds
        return length or "east"
    raise UserInputError(f"--length {length} sets how long a riichi game runs; a game of "
                         f"{variant} is {game}: leave --length out")


def warn_tight_budget(names: Any, budget: float | None, margin: float | None = None) -> None:
    """One warning line for each limit (``--budget``, a seat's ``@budget=``) that leaves a
    policy that thinks (``mc``, ``mc@OPTIONS``) among ``names`` only a tenth of itself: within
    a ninth of the brain's margin (``margin``; default the brain's), it searched for almost no
    time and fell back, silently. Only a warning: a platform's limit may really be that tight, the
    answer still goes out in time, and a fast policy is unaffected."""
    from adapter.local.seat import split_budget
    from brain.brain import DEFAULT_MARGIN, tight_limit_note
    from brain.policies import MC_OPTIONS_PREFIX

    said = set()
    for name in names:
        try:
            policy, own = split_budget(name)
        except ValueError:  # refused in one line where the seats are read
            continue
        limit = own if own is not None else budget
        if limit is None or (policy != "mc" and not policy.startswith(MC_OPTIONS_PREFIX)):
            continue
        note = tight_limit_note(limit, DEFAULT_MARGIN if margin is None else margin)
        what = f"seat {name!r}" if own is not None else f"--budget {limit:g}"
        if note is not None and what not in said:
            said.add(what)
            log().warning(f"{what}: {note}")


def require_seats(names: Any, variant: str, args: Any = None) -> None:
    """Refuse, in one line, an outside program (``mjai:CMD``, ``botzone:CMD``, ...) that
    cannot sit at ``variant``'s table: its platform plays another variant, its program is
    missing, or (a listening seat) its address is shared or units would run in parallel."""
    from adapter.local.external import SpecError, check_listeners, check_spec, is_external

    parallel = args is not None and (getattr(args, "ray", None) is not None
                                     or (getattr(args, "workers", None) or 1) > 1)
    try:
        for name in names:
            if is_external(name):
                check_spec(name, variant)
        check_listeners(names, parallel)
    except SpecError as exc:
        raise UserInputError(str(exc)) from None


def add_seat_limit_argument(parser: Any) -> None:
    """``--seat-limit`` and ``--connect-wait``, alike for arena, league and selfplay."""
    parser.add_argument("--seat-limit", type=positive_seconds, default=None, metavar="SECONDS",
                        help="outside programs: seconds per answer, the first (start-up) "
                        "one included (default: their platform's, mjai 2 and 30 for the "
                        "first, mjai-tcp 60 (the mjai server's), Botzone 6 for a fresh run "
                        "/ 4 kept running, NTPU 5 and 30 for the first)")
    parser.add_argument("--connect-wait", type=positive_seconds, default=60.0,
                        metavar="SECONDS", help="a listening seat (mjai-tcp:HOST:PORT): "
                        "seconds to wait for its bot to connect, for each game; none by then "
                        "ends the run (default: 60)")


def add_budget_argument(parser: Any) -> None:
    """``--budget``, alike for arena, league and selfplay."""
    parser.add_argument("--budget", type=positive_seconds, default=None, metavar="SECONDS",
                        help="our own seats: seconds per decision, given to the brain as a "
                        "platform's limit (margin kept back; a late answer is a fallback); "
                        "POLICY@budget=SECONDS sets one seat's (default: no limit)")


def add_table_arguments(parser: Any) -> None:
    """The options of the local table that :func:`require_table` and the runs read, alike for
    arena, league and selfplay: ``--workers`` / ``--ray``, ``--max-fallback-share``,
    ``--seat-limit`` / ``--connect-wait`` and ``--budget``, in that order."""
    add_ray_arguments(parser)
    add_fallback_argument(parser)
    add_seat_limit_argument(parser)
    add_budget_argument(parser)


def add_stop_after_argument(parser: Any, help_text: str) -> None:
    """``--stop-after``, alike for arena, league and selfplay (each says what it stops)."""
    parser.add_argument("--stop-after", type=float, metavar="SECONDS", help=help_text)


def checked_stop_after(args: Any) -> float | None:
    """``--stop-after`` if it is a positive number of seconds (or absent), else the user's
    error naming it."""
    value: float | None = args.stop_after
    if value is not None and not value > 0:
        raise UserInputError(f"--stop-after {value:g}: needs a positive number of seconds")
    return value


def require_networks(names: Any, variant: str) -> None:
    """Refuse ``nn`` or ``nn@FILE`` among ``names`` in one line when it has no network for
    ``variant`` (it never plays with made-up weights, and a game must not quietly fall back
    to rulebased). Each policy finds its network as it will in play."""
    from adapter.local.seat import split_budget
    from brain.policies import NN_FILE_PREFIX, get_policy

    policies = {split_budget(n)[0] for n in names}
    networked = sorted({n for n in policies if n == "nn" or n.startswith(NN_FILE_PREFIX)})
    if not networked:
        return
    from brain.nn.network import MissingNetwork

    try:
        for name in networked:
            get_policy(name).network(variant)  # type: ignore[attr-defined]
    except MissingNetwork as exc:
        raise UserInputError(str(exc)) from None


def require_opponent_models(names: Any, variant: str) -> None:
    """Refuse ``mc`` or ``mc@OPTIONS`` among ``names`` in one line when its opponent models
    for ``variant`` are missing or unreadable (MJBOT_MC's or the seat's ``models=DIR``): it
    raised at every decision, so a whole run (an hour of self-play) was played by the
    fallback and only its fallback share said so at the end. Read as mc reads them."""
    from adapter.local.seat import split_budget
    from brain.policies import MC_OPTIONS_PREFIX
    from brain.policies.mc.config import from_env, parse
    from brain.policies.mc.models import MissingModels, load_models

    for name in sorted({split_budget(n)[0] for n in names}):
        if name != "mc" and not name.startswith(MC_OPTIONS_PREFIX):
            continue
        config = parse(name.removeprefix(MC_OPTIONS_PREFIX), from_env()) if name != "mc" \
            else from_env()
        try:
            load_models(variant, config.models)
        except (MissingModels, ValueError, OSError) as exc:
            raise UserInputError(f"{name}: {str(exc).removeprefix('mc: ')}") from None


def require_playable(name: str, variant: str) -> None:
    """A policy that can play ``variant`` (:func:`require_policy`, its network, its opponent
    models), or the user's error in one line, before it is asked anything."""
    require_policy(name)
    require_networks([name], variant)
    require_opponent_models([name], variant)


def add_fallback_argument(parser: Any,
                          which: str = "the brain answered for it (it raised, was late or "
                                       "illegal)") -> None:
    """``--max-fallback-share``, alike for arena, selfplay and the benches that play games
    (``which``: the decisions it counts, where a bench counts fewer)."""
    parser.add_argument("--max-fallback-share", type=_share, default=0.01, metavar="SHARE",
                        help=f"exit 1 when a policy's share of decisions {which} is above "
                        "this (default %(default)s)")


_share = float_within(0.0, 1.0, "a share between 0 and 1")


def fallback_verdict(args: Any, figures: dict[str, Any]) -> int:
    """Exit status for a run's per-policy fallback figures (name: ``FallbackTally.as_dict``):
    1, with one line naming the policy and its first error, when a share is above
    ``--max-fallback-share``; else 0. A run whose policy never played must not pass for that
    policy's figures."""
    import sys

    from brain.tally import over_threshold, tallies_from

    verdict = over_threshold(tallies_from(figures), args.max_fallback_share)
    if not verdict:
        return 0
    if getattr(args, "log_json", None):
        log().error("fallbacks over threshold", command=args.command_path, error=verdict)
    else:
        print(f"mjbot {args.command_path}: {verdict}", file=sys.stderr)
    return 1


def mjbot_version() -> str:
    """This build's version, as its game logs' headers carry it (replay/version.py)."""
    from replay.version import build_version

    return build_version()
