"""Logs compressed in place (replay/logzip.py): every byte kept, and every reader of a log
path reads ``X.mjlog.msgpack.gz`` as it reads ``X.mjlog.msgpack`` — ``mjbot replay``, the
viewer (list, game, old links), the quota's day count, the practice game numbering, the
decision-time report and the dataset import's refusal."""

from __future__ import annotations

import datetime as dt
import gzip
import os
import re
import shutil
import stat
import subprocess
import zlib
from pathlib import Path
from typing import Any

import pytest

from adapter.local.timing import times_from_logs
from adapter.serve.practice import next_game_in
from adapter.serve.supervisor import games_finished_on
from replay import formats, logzip
from replay.dataset import schema as dataset_schema
from replay.dataset.imports import read_game
from replay.log import GZ_SUFFIX, GameLogWriter, Header, read_log
from replay.timeline import build
from tests.in_process import mjbot_here
from tests.narrowing import footer_of
from tests.test_serve_viewer import client_for, gid
from tests.viewer_fixtures import practice_game


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    """Real local-table logs: one game of each variant, our seat moved."""
    root = tmp_path_factory.mktemp("made") / "logs"
    return [practice_game(root / "p", v, game=n)
            for n, v in enumerate(("riichi", "mcr", "taiwan16", "mass"))]


@pytest.fixture
def logs(made: list[Path], tmp_path: Path) -> list[Path]:
    root = made[0].parents[3]  # logs/p/local/DAY/GAME
    shutil.copytree(root, tmp_path / "logs")
    return [tmp_path / "logs" / p.relative_to(root) for p in made]


def test_compression_keeps_every_byte_its_time_and_mode(logs: list[Path]) -> None:
    for path in logs:
        os.chmod(path, 0o640)
        data, before = path.read_bytes(), path.stat()
        target = logzip.compress(path)
        assert target.name == path.name + ".gz" and not path.exists()
        assert gzip.decompress(target.read_bytes()) == data
        assert logzip.read_bytes(target) == data
        after = target.stat()
        assert after.st_mtime_ns == before.st_mtime_ns
        assert stat.S_IMODE(after.st_mode) == 0o640
        assert after.st_size * 5 < len(data)  # about 10:1 on the local table's logs
        # gunzip -N gives the original back under its own name
        assert target.read_bytes()[3] & 0x08 and path.name.encode() in target.read_bytes()[:200]
        assert not list(path.parent.glob(".*"))  # no temporary file left


def test_gunzip_restores_the_original(logs: list[Path], tmp_path: Path) -> None:
    if shutil.which("gunzip") is None:
        pytest.skip("no gunzip on this machine")
    data = logs[0].read_bytes()
    target = logzip.compress(logs[0])
    copy = tmp_path / "elsewhere.gz"
    shutil.copy(target, copy)
    subprocess.run(["gunzip", "-N", str(copy)], check=True)
    assert (tmp_path / logs[0].name).read_bytes() == data


def test_a_compressed_log_reads_as_the_plain_one(logs: list[Path]) -> None:
    for path in logs:
        plain = read_log(path)
        packed = read_log(logzip.compress(path))
        assert packed.header == plain.header and packed.frames == plain.frames
        assert packed.footer == plain.footer and packed.complete


def test_a_cut_or_damaged_compressed_log_reads_up_to_the_cut(logs: list[Path]) -> None:
    data = logs[0].read_bytes()
    target = logzip.compress(logs[0])
    packed = target.read_bytes()
    target.write_bytes(packed[:len(packed) // 2])
    cut = read_log(target)
    assert cut.header is not None and cut.frames and cut.footer is None
    assert 0 < len(logzip.read_bytes(target)) < len(data)
    assert data.startswith(logzip.read_bytes(target))
    target.write_bytes(packed[:3] + b"\0" + packed[4:10] + b"\xff" * 40)  # nothing inflates
    with pytest.raises(logzip.Unreadable):
        logzip.read_bytes(target)


def test_a_cut_compressed_logs_note_counts_the_bytes_gunzip_gives(
        logs: list[Path], capsys: pytest.CaptureFixture[str]) -> None:
    """A compressed log cut in half was noted "log cut at byte 25487 of 25509" of a file of
    3,000 bytes: the bytes it unpacks to, not said. The note (replay's, review's, the
    viewer's) now says they are those its gzip file unpacks to, which ``gunzip -c`` gives,
    and the file's own size; a plain log's note is as it was."""
    target = logzip.compress(logs[0])
    packed = target.read_bytes()
    target.write_bytes(packed[:len(packed) // 2])
    unpacked = zlib.decompressobj(wbits=31).decompress(packed[:len(packed) // 2])  # zlib's
    cut = read_log(target).truncated
    assert cut is not None and cut.size == len(unpacked) and cut.packed == len(packed) // 2
    where = (f"byte {cut.offset} of the {len(unpacked)} its gzip file of {len(packed) // 2} "
             "bytes unpacks to")
    run = mjbot_here(capsys, "replay", str(target))
    assert run.returncode == 0, run.stderr
    assert f"note: log cut at {where} (cut inside a frame): the frames before it are shown" \
        in run.stdout, run.stdout
    assert f"the log is cut at {where} (cut inside a frame)" in build(
        formats.read(target.read_bytes(), target)).meta["notes"]
    plain = logs[1]
    plain.write_bytes(plain.read_bytes()[:5000])
    run = mjbot_here(capsys, "replay", str(plain))
    assert re.search(r"note: log cut at byte \d+ of 5000 \(cut inside a frame\)", run.stdout)


def test_a_compressed_log_cut_before_its_first_byte_says_so(
        logs: list[Path], capsys: pytest.CaptureFixture[str]) -> None:
    """A compressed log cut within its first block (a copy cut off after 100 bytes) inflated
    to nothing without an error: `mjbot replay` said 'mjbot msgpack log: the file is empty'
    of a 100-byte file, among nine formats' reasons. It now says in one line that the gzip
    data was cut short; an empty file compressed is still read as empty, and a pass that finds
    such a cut copy in the place of its .gz leaves the original (as for other bytes)."""
    target = logzip.compress(logs[0])
    packed = target.read_bytes()
    target.write_bytes(packed[:100])
    with pytest.raises(logzip.Unreadable, match="cut short after 100 bytes"):
        logzip.read_bytes(target)
    cut = mjbot_here(capsys, "replay", str(target))
    assert cut.returncode == 2 and "Traceback" not in cut.stderr
    assert cut.stderr.strip().splitlines() == [
        f"mjbot replay: {target}: gzip data cut short after 100 bytes, before anything"
        " inflates (a copy cut off?)"], cut.stderr
    assert logzip.inflate(gzip.compress(b"")) == b""
    other = logs[1]
    logzip.compressed_name(other).write_bytes(
        gzip.compress(other.read_bytes())[:100])
    with pytest.raises(FileExistsError):
        logzip.compress(other)
    assert other.exists()


def test_a_pass_cut_after_the_rename_is_finished_the_next_time(logs: list[Path]) -> None:
    path = logs[0]
    data = path.read_bytes()
    target = logzip.compressed_name(path)
    target.write_bytes(gzip.compress(data))  # the copy in place, the original not yet gone
    assert logzip.compress(path) == target and not path.exists()
    assert logzip.read_bytes(target) == data
    other = logs[1]
    logzip.compressed_name(other).write_bytes(gzip.compress(b"other bytes"))
    with pytest.raises(FileExistsError):
        logzip.compress(other)
    assert other.exists()  # nothing lost


def test_mjbot_replay_reads_a_compressed_log_identically(
        logs: list[Path], capsys: pytest.CaptureFixture[str]) -> None:
    path = logs[0]
    plain = mjbot_here(capsys, "replay", str(path))
    json_plain = mjbot_here(capsys, "replay", "--json", str(path))
    target = logzip.compress(path)
    packed = mjbot_here(capsys, "replay", str(target))
    json_packed = mjbot_here(capsys, "replay", "--json", str(target))
    assert plain.returncode == packed.returncode == 0
    assert packed.stdout == plain.stdout.replace(str(path), str(target))
    assert json_packed.stdout.replace(str(target), str(path)) == json_plain.stdout
    target.write_bytes(b"\x1f\x8b" + b"\x00" * 30)  # gzip's magic, nothing that inflates
    damaged = mjbot_here(capsys, "replay", str(target))
    assert damaged.returncode == 2 and "Traceback" not in damaged.stderr
    assert len(damaged.stderr.strip().splitlines()) == 1 and "gzip" in damaged.stderr


async def test_the_viewer_shows_a_compressed_log_as_the_plain_one(logs: list[Path]) -> None:
    root = logs[0].parents[3]
    path = logs[0]
    client = await client_for(root)
    try:
        listed = (await (await client.get("/api/games")).json())["games"]
        before = next(g for g in listed if g["name"] == path.name)
        outline = await (await client.get(f"/api/games/{gid(root, path)}")).json()
        hand = await (await client.get(f"/api/games/{gid(root, path)}/hands/0")).json()
        target = logzip.compress(path)
        listed = (await (await client.get("/api/games")).json())["games"]
        names = {g["name"] for g in listed}
        assert target.name in names and path.name not in names
        after = next(g for g in listed if g["name"] == target.name)
        for key in ("own", "platform", "variant", "players", "our_seat", "mtime", "finished",
                    "scores", "our_rank", "our_score", "session"):
            assert after.get(key) == before.get(key), key
        assert after["id"] == gid(root, target)
        new = await (await client.get(f"/api/games/{gid(root, target)}")).json()
        assert new["id"] == gid(root, target)
        assert {**new, "id": outline["id"]} == outline
        assert await (await client.get(f"/api/games/{gid(root, target)}/hands/0")).json() == hand
        # a link made before the compression (the dashboard's results) still opens the game
        old = await client.get(f"/api/games/{gid(root, path)}")
        assert old.status == 200 and await old.json() == new  # named by its new id
        assert (await client.get(f"/games/{gid(root, path)}")).status == 200
        filtered = await (await client.get("/api/games?q=rulebased")).json()
        assert target.name in {g["name"] for g in filtered["games"]}
    finally:
        await client.close()


async def test_a_log_there_twice_while_compressed_is_listed_once(logs: list[Path]) -> None:
    root, path = logs[0].parents[3], logs[0]
    logzip.compressed_name(path).write_bytes(gzip.compress(path.read_bytes()))
    client = await client_for(root)
    try:
        names = [g["name"] for g in (await (await client.get("/api/games")).json())["games"]]
        assert names.count(path.name) == 1 and path.name + ".gz" not in names
    finally:
        await client.close()
    ended = dt.datetime.fromisoformat(footer_of(read_log(path)).ended).date()
    assert games_finished_on(str(logs[0].parents[3] / "p"), ended) == len(logs)  # counted once


async def test_a_damaged_compressed_log_is_listed_as_unreadable(logs: list[Path]) -> None:
    root = logs[0].parents[3]
    packed = logzip.compress(logs[0]).read_bytes()
    damaged = logzip.compressed_name(logs[1])
    damaged.write_bytes(packed[:3] + b"\0" + packed[4:10] + b"\xff" * 40)  # bad deflate data
    logs[1].unlink()
    client = await client_for(root)
    try:
        listing = await client.get("/api/games")
        assert listing.status == 200
        shown = {g["name"]: g for g in (await listing.json())["games"]}
        assert shown[damaged.name].get("unreadable") and shown[logs[0].name + ".gz"]["own"]
        opened = await client.get(f"/api/games/{gid(root, damaged)}")
        assert opened.status == 422
    finally:
        await client.close()


def test_the_days_quota_and_the_game_numbers_count_compressed_logs(logs: list[Path]) -> None:
    session = logs[0].parents[3] / "p"  # the fixture's session folder, logs/p
    day = dt.date.fromisoformat(logs[0].parent.name)
    ended = dt.datetime.fromisoformat(footer_of(read_log(logs[0])).ended).date()
    counted = games_finished_on(str(session), ended)
    numbered = next_game_in(str(session), "fixture", 0)
    assert counted == 4 and numbered == 4 and day <= ended
    for path in logs:
        logzip.compress(path)
    assert games_finished_on(str(session), ended) == counted
    assert next_game_in(str(session), "fixture", 0) == numbered


def test_a_new_log_never_takes_the_name_of_a_compressed_one(tmp_path: Path) -> None:
    when = dt.datetime(2026, 11, 28, 12, 0, 0)
    header = Header("local", "riichi", game_id="g")
    first = GameLogWriter.create(tmp_path, header, when=when)
    first.close()
    packed = logzip.compress(first.path)
    second = GameLogWriter.create(tmp_path, header, when=when)
    second.close()
    assert second.path != first.path and packed.exists()
    assert second.path.name.endswith("-g-2.mjlog.msgpack")
    with pytest.raises(ValueError, match="compressed"):
        GameLogWriter(first.path, header, append=True)


def test_decision_times_and_the_dataset_import_read_compressed_logs(logs: list[Path]) -> None:
    folder = logs[0].parents[3]
    plain = times_from_logs([str(folder)])
    for path in logs:
        logzip.compress(path)
    assert times_from_logs([str(folder)]) == plain and plain
    target = logs[0].with_name(logs[0].name + ".gz")
    with pytest.raises(dataset_schema.DatasetError, match="an mjbot game log"):
        read_game(target)  # the same refusal as the plain log's, not 'no reader accepts it'


def test_an_import_gzipped_reads_as_itself(tmp_path: Path) -> None:
    from replay import formats
    from tests.viewer_fixtures import IMPORTS

    source = IMPORTS["tenhou6.json"]
    if not source.exists():
        pytest.skip("the tenhou6 sample is absent")
    data = source.read_bytes()
    plain: Any = formats.read(data, source)
    packed: Any = formats.read(gzip.compress(data), source)
    assert packed.name == plain.name == "tenhou6"
    assert packed.record.events == plain.record.events
    assert zlib.crc32(data) == zlib.crc32(logzip.inflate(gzip.compress(data)))
    assert GZ_SUFFIX == ".mjlog.msgpack.gz"


def test_decision_times_count_a_log_left_twice_by_a_cut_compression_once(
        logs: list[Path]) -> None:
    """A serve process killed between the compression's rename and the original's removal
    leaves X.mjlog.msgpack and X.mjlog.msgpack.gz: one game, as the viewer lists it."""
    folder = logs[0].parents[3]
    plain = times_from_logs([str(folder)])
    data = logs[0].read_bytes()
    logzip.compress(logs[0])
    logs[0].write_bytes(data)  # the original, not yet removed when the process died
    assert times_from_logs([str(folder)]) == plain
