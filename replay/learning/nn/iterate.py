"""The bookkeeping of `mjbot nn iterate` (issue 26): rounds of expert iteration whose state is
written after every phase, so a run killed anywhere resumes at the phase it was in.

A round is three phases: ``selfplay`` (the expert against league opponents), ``train`` (the
apprentice from the current weights on this round's data and a window of earlier rounds) and
``select`` (the new generation against the current one on selection walls; kept when the paired
difference is >= 0). ``state.json`` in the run folder holds the current weights, every round's
phases with their figures, command, seconds, machine and finishing time, and is replaced
atomically. Its paths are relative to the run folder, so a run resumes from any working
directory, and so are the paths in its commands, which are to be run from the run folder
(``commands``). A file from before, whose paths and commands were relative to where the run
started, is read by the run layout's last parts. Numpy-free and torch-free: the command
(adapter/nn_iterate.py) runs the phases.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path, PurePath
from typing import Any

from replay.locking import Busy, lock_now

PHASES = ("selfplay", "train", "select")
STATE = "state.json"
LOCK = "lock"  # held (flock) by the run working in the folder, released when it ends or dies
PATHS = "relative to the run folder"  # state.json's "paths": absent in files from before
COMMANDS = "run from the run folder"  # state.json's "commands": absent in files from before
# a path of the run's layout inside a recorded command, after whatever folder preceded it
_RUN_PATH = re.compile(r"(?<![^\s,=@])(?:[^\s,=@]*/)?"
                       r"(round-\d{3}/[^\s,/]+|gen-000\.npz)(?=[\s,]|$)")
_PATH_KEYS = ("start", "current", "weights_before", "weights_after", "data", "weights")


class StateError(ValueError):
    """The run folder's state cannot be resumed (unreadable, or another variant's run)."""


@dataclass(frozen=True)
class RunLock:
    """The lock :func:`holding_run` holds: ``fd`` the lock file's (a phase's process is handed
    it, so that the folder stays held while a phase of a killed run finishes), ``unheld`` why
    no lock could be taken (None: held)."""

    fd: int
    unheld: str | None


@contextlib.contextmanager
def holding_run(root: Path) -> Iterator[RunLock]:
    """Hold the run folder ``root`` (made if missing) while a run works in it: a second run on
    the same folder is refused with :class:`StateError`, not let loose on the same state.json,
    weights and round folders (the second would delete the first's self-play data under way
    as a killed phase's, and each would write state.json over the other's). An OS lock, not a
    file's presence: a run killed outright (SIGKILL, a power cut) holds nothing once its phase
    under way (handed the lock: it may still be finishing a wall set in the folder) has ended
    too, so the same command resumes it. Yields a :class:`RunLock`, whose ``unheld`` says why
    no lock could be taken where the folder's filesystem takes none (an NFS mount without its
    lock service: ENOLCK): the run goes on unguarded, not refused as if another held it."""
    root.mkdir(parents=True, exist_ok=True)
    with open(root / LOCK, "a+b") as fh:
        try:
            unheld = lock_now(fh.fileno())
        except Busy:
            raise StateError(f"{root}: another nn iterate run is working in this folder "
                             "(wait for it to end, or give another --dir)") from None
        yield RunLock(fh.fileno(), unheld)


class IterateState:
    """``data``: the JSON object of state.json (see the module docstring for its parts)."""

    def __init__(self, root: Path, data: dict[str, Any]) -> None:
        self.root, self.data = root, data

    @classmethod
    def open(cls, root: str | Path, variant: str, start: str) -> IterateState:
        """The run in ``root``: resumed from its state.json, or a new one starting at the
        weights ``start``."""
        root = Path(root)
        path = root / STATE
        if path.exists():
            try:
                data = json.loads(path.read_text())
            except (OSError, ValueError) as exc:
                raise StateError(f"{path}: unreadable ({exc})") from None
            if not isinstance(data, dict) or "rounds" not in data or "current" not in data:
                raise StateError(f"{path}: not the state of an nn iterate run")
            if data.get("variant") != variant:
                raise StateError(f"{path}: a {data.get('variant')} run, not {variant}")
            if data.get("paths") != PATHS:
                _rebase(data, path)
            if data.get("commands") != COMMANDS:
                _rebase_commands(data)
            return cls(root, data)
        root.mkdir(parents=True, exist_ok=True)
        state = cls(root, {"variant": variant, "paths": PATHS, "commands": COMMANDS,
                           "start": start, "current": start, "rounds": []})
        state.save()
        return state

    @property
    def current(self) -> Path:
        """The current weights, as a path from here (state.json holds it run-relative)."""
        return self.path(self.data["current"])

    def path(self, stored: str) -> Path:
        """A path state.json holds (relative to the run folder) as a path from here."""
        return self.root / stored

    def stored(self, path: Path) -> str:
        """``path`` (in the run folder) as state.json holds it: relative to the folder."""
        return path.relative_to(self.root).as_posix()

    def recorded_sha256(self, stored: str) -> str | None:
        """The SHA-256 state.json records for the weights ``stored`` (run-relative): the
        start's, or the training phase's that wrote them; None where none is on record (a
        state from before the hashes)."""
        if stored == self.data.get("start"):
            return self.data.get("start_sha256")
        for entry in self.data["rounds"]:
            train = entry.get("phases", {}).get("train")
            if isinstance(train, dict) and train.get("weights") == stored:
                return train.get("sha256")
        return None

    def completed(self) -> int:
        """Rounds whose three phases are done."""
        return sum(1 for r in self.data["rounds"] if r.get("done"))

    def round(self, number: int) -> dict[str, Any]:
        """Round ``number``'s record (1-based), created on first use."""
        rounds = self.data["rounds"]
        while len(rounds) < number:
            rounds.append({"round": len(rounds) + 1, "phases": {}, "done": False})
        return dict(rounds[number - 1])

    def phase(self, number: int, name: str) -> dict[str, Any] | None:
        """A finished phase's record, or None when it has to run (again)."""
        got = self.data["rounds"][number - 1]["phases"].get(name) if number <= len(
            self.data["rounds"]) else None
        return dict(got) if got is not None else None

    def finish_phase(self, number: int, name: str, record: dict[str, Any]) -> None:
        """Record a phase as done and write the state."""
        self.round(number)
        entry = self.data["rounds"][number - 1]
        entry["phases"][name] = {**record, "finished_at": time.strftime(
            "%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
        parts = entry.get("parts", {})
        parts.pop(name, None)  # now in the phase's record
        if not parts:
            entry.pop("parts", None)
        self.save()

    def add_part(self, number: int, name: str, record: dict[str, Any]) -> None:
        """Record one run's part of a phase that stopped before its end (a self-play goes on
        from the wall sets it finished) and write the state."""
        self.round(number)
        self.data["rounds"][number - 1].setdefault("parts", {}).setdefault(name, []).append(
            record)
        self.save()

    def parts(self, number: int, name: str) -> list[dict[str, Any]]:
        """The earlier runs' parts of a phase not yet done."""
        if number > len(self.data["rounds"]):
            return []
        return list(self.data["rounds"][number - 1].get("parts", {}).get(name, []))

    def set_round(self, number: int, **fields: Any) -> None:
        self.round(number)
        self.data["rounds"][number - 1].update(fields)
        self.save()

    def finish_round(self, number: int, current: Path) -> None:
        self.data["current"] = self.stored(current)
        self.data["rounds"][number - 1]["done"] = True
        self.data["rounds"][number - 1]["weights_after"] = self.data["current"]
        self.save()

    def save(self) -> None:
        """Write state.json atomically (a kill never leaves half a file)."""
        path = self.root / STATE
        tmp = path.with_name(STATE + ".tmp")
        tmp.write_text(json.dumps(self.data, indent=2) + "\n")
        os.replace(tmp, path)


def _rebase(data: Any, path: Path) -> None:
    """Make an older state's paths (relative to the folder the run was started from) relative
    to the run folder: the layout fixes their last parts (``gen-000.npz``, or
    ``round-NNN/NAME``), whatever came before them."""
    def walk(node: Any) -> None:
        items = node.items() if isinstance(node, dict) else enumerate(node) \
            if isinstance(node, list) else []
        for key, value in list(items):
            if key in _PATH_KEYS and isinstance(value, str):
                node[key] = _in_run(value, path)
            else:
                walk(value)

    walk(data)
    data["paths"] = PATHS


def _rebase_commands(data: dict[str, Any]) -> None:
    """Make an older state's commands (their paths relative to the folder the run was started
    from, which state.json never named) run from the run folder: each path of the run's layout
    loses the folders before its last parts, as :func:`_rebase` does."""
    for entry in data["rounds"]:
        for phase in entry.get("phases", {}).values():
            if isinstance(phase, dict) and isinstance(phase.get("command"), str):
                phase["command"] = _RUN_PATH.sub(r"\1", phase["command"])
    data["commands"] = COMMANDS


def _in_run(stored: str, path: Path) -> str:
    parts = PurePath(stored).parts
    if parts and parts[-1] == "gen-000.npz":
        return "gen-000.npz"
    if len(parts) >= 2 and re.fullmatch(r"round-\d{3}", parts[-2]):
        return "/".join(parts[-2:])
    raise StateError(f"{path}: {stored!r} is not a path in the run folder")
