"""Game logs compressed in place: ``X.mjlog.msgpack`` -> ``X.mjlog.msgpack.gz`` (gzip, level 6),
and reading either form back as the same bytes.

gzip (not a better ratio, lzma or bz2) because on the local table's logs level 6 packs about
10:1 at under a millisecond a log, unpacks in a fraction of one, and ``gunzip -N`` gives the
operator the original file back, name and time (`mjbot bench logkeep` measures it). A file is
recognised by its gzip magic, not its name: no game format starts with byte 0x1f (our header is
a msgpack map, the imports are text). Reading never fails on a cut or damaged stream: what
inflates before the cut is returned, as a cut plain log reads back up to its cut.
"""

from __future__ import annotations

import gzip
import os
import zlib
from pathlib import Path
from typing import BinaryIO

GZ = ".gz"
MAGIC = b"\x1f\x8b"
LEVEL = 6
CHUNK = 1 << 16
MAX_INFLATED = 1 << 30  # a log is a few hundred KB; more than this is no log of ours
# Our logs pack about 11 to 1 (a 37 MB match log as a one-hand one); gzip can pack 1,000 to 1.
# Past MAX_RATIO times its size, and past FREE_INFLATED, gzip data is refused as no game log (a
# decompression bomb): a 2.4 MB file of one small frame repeated inflated to 1 GB and its
# frames took some 14 GB to read (a 24 KB one: 10 MB inflated, 145 MB, 2 s)
MAX_RATIO = 100
FREE_INFLATED = 1 << 23  # what inflates to no more than this is read whatever its ratio


class Unreadable(ValueError):
    """gzip data of which nothing can be inflated (a damaged gzip header)."""


class Changed(OSError):
    """The file changed while it was compressed: left as it was."""


def is_gzip(data: bytes) -> bool:
    return data[:2] == MAGIC


def inflate(data: bytes) -> bytes:
    """gzip ``data`` unpacked (other data as it is). A cut or damaged stream gives what came
    before the cut; Unreadable where nothing came, and where the bytes read so far inflate past
    :func:`inflated_bound` of them (a decompression bomb), found before that much is held."""
    if not is_gzip(data):
        return data
    unpacker = zlib.decompressobj(wbits=31)
    out: list[bytes] = []
    size = 0
    for at in range(0, len(data), CHUNK):
        # the bound of what was read so far, not of the whole file: bytes after the stream (or
        # a file past MAX_INFLATED / MAX_RATIO) let a bomb of any ratio inflate to 1 GiB
        read = min(at + CHUNK, len(data))
        bound = inflated_bound(read)
        try:
            # one byte past the bound: data that inflates to exactly it is read
            piece = unpacker.decompress(data[at:at + CHUNK], bound + 1 - size)
        except zlib.error as exc:
            if not out:
                raise Unreadable(f"damaged gzip data ({exc})") from None
            break  # damaged: what came before it
        out.append(piece)
        size += len(piece)
        if size > bound:
            if bound == MAX_INFLATED:  # a huge log: what fits is read, as before
                return b"".join(out)[:bound]
            whose = "that inflates" if read == len(data) else f"whose first {read} inflate"
            raise Unreadable(f"gzip data of {len(data)} bytes {whose} past {bound} "
                             f"(more than {MAX_RATIO} times as many, which no game log packs to: a "
                             "decompression bomb?)")
        if unpacker.eof:  # (below the bound, each chunk is inflated whole)
            break
    if not size and not unpacker.eof:  # cut before its first byte: not an empty file
        raise Unreadable(f"gzip data cut short after {len(data)} bytes, before anything "
                         "inflates (a copy cut off?)")
    return b"".join(out)


def inflated_bound(packed: int) -> int:
    """The most bytes gzip data of ``packed`` bytes may inflate to: MAX_RATIO times its size,
    FREE_INFLATED at least, MAX_INFLATED at most (a log bigger than that is read up to it)."""
    return min(MAX_INFLATED, max(FREE_INFLATED, MAX_RATIO * packed))


def read_bytes(path: str | Path) -> bytes:
    """A file's bytes, unpacked if it is gzip."""
    return inflate(Path(path).read_bytes())


def open_stream(path: str | Path) -> BinaryIO:
    """A file opened for reading from its start, unpacked as read if it is gzip (a header
    frame read without inflating the whole log)."""
    f = open(path, "rb")  # noqa: SIM115
    try:
        if f.read(2) == MAGIC:
            f.seek(0)
            return _Inflating(f)  # type: ignore[return-value]
        f.seek(0)
        return f
    except BaseException:
        f.close()
        raise


class _Inflating(gzip.GzipFile):
    """A gzip stream that closes the file it reads when it is closed: a GzipFile leaves a
    ``fileobj`` it was given open (each header read left one to the garbage collector)."""

    def __init__(self, f: BinaryIO) -> None:
        super().__init__(fileobj=f, mode="rb")
        self._file = f

    def close(self) -> None:
        try:
            super().close()
        finally:
            self._file.close()


def compressed_name(path: Path) -> Path:
    return path.with_name(path.name + GZ)


def compress(path: str | Path, level: int = LEVEL) -> Path:
    """``path`` replaced by ``path.gz`` holding every one of its bytes (checked by unpacking
    before the original goes), its mtime and mode kept (the viewer lists and the upkeep ages
    logs by mtime) and its name and time in the gzip header (``gunzip -N``). A temporary
    ``.NAME.gz.tmp`` is written, synced and renamed; a file that changed meanwhile is left
    (Changed); a ``.gz`` already there that holds the same bytes (a pass cut between the rename
    and the removal) only has the original removed; one that holds other bytes is
    FileExistsError. OSError (a full disk) leaves the original as it was."""
    path = Path(path)
    before = os.stat(path)
    data = path.read_bytes()
    target = compressed_name(path)
    if target.exists():
        try:
            same = read_bytes(target) == data
        except Unreadable:
            same = False
        if not same:
            raise FileExistsError(f"{target} exists and holds other bytes than {path.name}")
        os.unlink(path)
        return target
    packed = gzip.compress(data, level, mtime=int(before.st_mtime))
    packed = _named(packed, path.name)
    if len(data) > inflated_bound(len(packed)):  # never met: our logs pack about 11 to 1
        raise Changed(f"{path} packs more than {MAX_RATIO} to 1, which the readers would "
                      "refuse as a decompression bomb: left plain")
    try:
        same = inflate(packed) == data
    except Unreadable as exc:  # a part that packs past the bound (never met either)
        raise Changed(f"{path}: the readers would refuse the compressed copy ({exc}): "
                      "left plain") from None
    if not same:  # never: zlib is exact; but nothing is removed unchecked
        raise Changed(f"{path}: the compressed copy does not read back the same")
    tmp = path.with_name(f".{path.name}{GZ}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, before.st_mode & 0o777)
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(packed)
            out.flush()
            os.fsync(out.fileno())
        os.utime(tmp, ns=(before.st_atime_ns, before.st_mtime_ns))
        now = os.stat(path)
        if (now.st_size, now.st_mtime_ns, now.st_ino) != \
                (before.st_size, before.st_mtime_ns, before.st_ino):
            raise Changed(f"{path} changed while it was compressed")
        os.rename(tmp, target)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    _sync_folder(path.parent)
    os.unlink(path)
    _sync_folder(path.parent)
    return target


def _named(packed: bytes, name: str) -> bytes:
    """gzip data with the FNAME field set (as ``gzip -N`` reads it back): gzip.compress writes
    none."""
    flags = packed[3]
    if flags & 0x08 or not name.isascii():
        return packed
    return packed[:3] + bytes([flags | 0x08]) + packed[4:10] + name.encode() + b"\0" + \
        packed[10:]


def _sync_folder(folder: Path) -> None:
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return  # Windows: a folder cannot be opened
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
