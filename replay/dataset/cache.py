"""A user cache of built dataset directories (``mjbot models eval``'s held-out self-play set
and its import of the shipped Tenhou records), so that a second run does not play and import
them again.

It must never hand back stale data, so an entry is named by a key over everything that made
it: the inputs (the records' bytes, the self-play seed, hands and mixes) and the code, as
:func:`source_digest` of the package folders that play, import and encode the games (every
file under them, so no encoder change can be forgotten), and the versions of the libraries
scoring uses. An entry is one file, written beside its final name and renamed, checked by
its SHA-256 when read: a truncated, corrupt or foreign file is a miss (rebuilt and
overwritten), never an error.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import shutil
import socket
import sys
import tempfile
from collections.abc import Callable, Iterable
from importlib import metadata
from pathlib import Path
from typing import Any

from replay.dataset.schema import DatasetError
from replay.dataset.shards import read_manifest

ENV = "MJBOT_EVAL_CACHE"  # a folder for the cache, or "off"
OFF = ("off", "0", "no", "none")
MAGIC = b"mjbot-dataset-cache 1\n"
LIBRARIES = ("numpy", "mahjong", "PyMahjongGB", "msgpack")
# The opponent models' weights are what `models eval` judges, not what makes its data (no
# policy of the held-out mixes reads them: tests/test_eval_cache.py checks it); left out of
# the code digest so that `models train` does not throw the cache away.
SKIPPED_FILES = ("opponents_*.npz",)


class CacheMiss(Exception):
    """An entry that cannot be used; the message says why, in a few words."""


def cache_dir(env: dict[str, str] | None = None) -> Path | None:
    """Where entries live: ``$MJBOT_EVAL_CACHE`` (a folder; "off" disables the cache), else
    ``$XDG_CACHE_HOME/mjbot/models-eval`` (an absolute XDG_CACHE_HOME only, as the XDG spec
    says), else ``~/.cache/mjbot/models-eval``. None: disabled."""
    env = dict(os.environ) if env is None else env
    given = env.get(ENV, "").strip()
    if given.lower() in OFF:
        return None
    if given:
        return Path(given).expanduser()
    xdg = env.get("XDG_CACHE_HOME", "")
    base = Path(xdg) if xdg and Path(xdg).is_absolute() else Path.home() / ".cache"
    return base / "mjbot" / "models-eval"


def source_digest(roots: Iterable[Path]) -> str:
    """SHA-256 over the relative path and bytes of every file under ``roots`` (bytecode and
    :data:`SKIPPED_FILES` aside), in sorted order: any edit of the code or its data there
    gives another digest."""
    h = hashlib.sha256()
    for root in roots:
        files = sorted(p for p in Path(root).rglob("*") if p.is_file()
                       and "__pycache__" not in p.parts and p.suffix != ".pyc"
                       and not any(p.match(s) for s in SKIPPED_FILES))
        for p in files:
            h.update(f"{root.name}/{p.relative_to(root).as_posix()}\0".encode())
            h.update(hashlib.sha256(p.read_bytes()).digest())
    return h.hexdigest()


def libraries() -> dict[str, str]:
    """Python's and the scoring libraries' versions: a new ``mahjong`` may score otherwise."""
    out = {"python": sys.version.split()[0]}
    for name in LIBRARIES:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = "absent"
    return out


def entry_key(parts: dict[str, Any]) -> str:
    """The key of an entry: SHA-256 of ``parts`` as canonical JSON."""
    return hashlib.sha256(json.dumps(parts, sort_keys=True).encode()).hexdigest()


def entry_path(folder: Path, name: str, key: str) -> Path:
    return folder / f"{name}-{key[:32]}.mjds"


def pack(src: Path, key: str) -> bytes:
    """The files under ``src`` as one entry: magic, a JSON header line (key, file list,
    payload SHA-256), then the files' bytes end to end."""
    files = sorted(p for p in src.rglob("*") if p.is_file())
    blobs = [p.read_bytes() for p in files]
    payload = b"".join(blobs)
    header = {"key": key, "sha256": hashlib.sha256(payload).hexdigest(),
              "files": [[p.relative_to(src).as_posix(), len(b)] for p, b in
                        zip(files, blobs, strict=True)]}
    return MAGIC + json.dumps(header).encode() + b"\n" + payload


def unpack(data: bytes, key: str, dest: Path) -> None:
    """Write the files of an entry under ``dest``; CacheMiss if it is not a whole entry of
    ``key``."""
    if not data.startswith(MAGIC):
        raise CacheMiss("not a cache entry")
    line_end = data.find(b"\n", len(MAGIC))
    if line_end < 0:
        raise CacheMiss("truncated header")
    try:
        header = json.loads(data[len(MAGIC):line_end])
        files = [(str(n), int(s)) for n, s in header["files"]]
        digest, stored_key = str(header["sha256"]), str(header["key"])
    except (ValueError, KeyError, TypeError) as exc:
        raise CacheMiss(f"unreadable header ({exc})") from None
    if stored_key != key:
        raise CacheMiss("another key's entry")
    payload = data[line_end + 1:]
    if len(payload) != sum(s for _, s in files):
        raise CacheMiss(f"{len(payload)} payload bytes, the header says "
                        f"{sum(s for _, s in files)}: truncated")
    if hashlib.sha256(payload).hexdigest() != digest:
        raise CacheMiss("payload SHA-256 differs: corrupt")
    at = 0
    for name, size in files:
        rel = Path(name)
        if rel.is_absolute() or ".." in rel.parts:
            raise CacheMiss(f"a file outside the entry ({name})")
        out = dest / rel
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_bytes(payload[at:at + size])
        at += size


def _writer_tag() -> str:
    """This host and process, as a temporary file's name holds them: a run killed while it
    wrote leaves its file, which a later run of the same host removes once that process is
    gone (a live one, a concurrent run, is left to finish)."""
    host = re.sub(r"[^A-Za-z0-9_]", "_", socket.gethostname()) or "host"
    return f"{host}-{os.getpid()}"


_TEMP = re.compile(r"^\.(?P<entry>.+\.mjds)\.(?P<host>[A-Za-z0-9_]+)-(?P<pid>\d+)\.[^.]*\.tmp$")


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # another user's process: alive
        return True
    return True


def remove_dead_temps(folder: Path, name: str) -> None:
    """Remove the temporary files of ``name``'s entries that a run of this host left when it
    was killed while writing (SIGKILL, SIGTERM, the machine's OOM killer): each is as large as
    an entry, and nothing else ever removes them."""
    host = _writer_tag().rsplit("-", 1)[0]
    for tmp in folder.glob(f".{name}-*.mjds.*.tmp"):
        m = _TEMP.match(tmp.name)
        if m and m["host"] == host and not _alive(int(m["pid"])):
            with contextlib.suppress(OSError):  # not ours to remove (a shared folder)
                tmp.unlink(missing_ok=True)


def write_entry(path: Path, data: bytes) -> None:
    """``data`` to ``path`` through a uniquely named file in the same folder and a rename:
    a reader never sees half an entry, and two runs never write into one temporary file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.{_writer_tag()}.",
                               suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def cached_build(folder: Path | None, name: str, key: str, dest: Path,
                 build: Callable[[Path], None], dataset_dirs: Iterable[str] = (),
                 say: Callable[[str], None] = lambda _: None) -> str:
    """Fill ``dest`` (an empty or absent folder) from the entry of ``key``, else by
    ``build(dest)`` and store what it wrote. ``dataset_dirs`` (relative to ``dest``) must read
    as datasets after unpacking. ``say`` gets one line where an entry was unusable or could
    not be written. The entry written replaces the others of ``name`` (built by older code or
    from other records), so the folder does not grow with every change. Returns "hit", "miss"
    or "off"."""
    if folder is None:
        build(dest)
        return "off"
    path = entry_path(folder, name, key)
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        data = None
    except OSError as exc:
        say(f"{path}: unreadable ({exc.strerror or exc}); built again")
        data = None
    if data is not None:
        try:
            unpack(data, key, dest)
            for d in dataset_dirs:
                read_manifest(dest / d)
            return "hit"
        except (CacheMiss, OSError, DatasetError) as exc:  # an unusable entry is a miss
            say(f"{path}: {exc}; built again and overwritten")
            shutil.rmtree(dest, ignore_errors=True)
    build(dest)
    try:
        write_entry(path, pack(dest, key))
    except OSError as exc:
        say(f"{path}: not written ({exc.strerror or exc}); the next run builds again")
        return "miss"
    for old in folder.glob(f"{name}-*.mjds"):  # one entry a name: older code, other records
        if old != path:
            old.unlink(missing_ok=True)
    remove_dead_temps(folder, name)
    return "miss"
