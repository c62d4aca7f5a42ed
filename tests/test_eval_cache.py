"""`mjbot models eval` keeps the held-out self-play set and the imported records it built in
a user cache (replay/dataset/cache.py): a second run reads them, and nothing it reads can be
stale (a changed record, other code) or broken (a cut file is built again)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from adapter.opponent_sets import TENHOU
from replay.dataset import cache as C
from tests.in_process import mjbot_captured, mjbot_here

ROOT = Path(__file__).resolve().parents[1]
GAMES = TENHOU / "convlog_tenhou6_json"


def _figures(r: subprocess.CompletedProcess[str]) -> tuple[dict[str, object], str]:
    assert r.returncode == 0, r.stderr
    figures = json.loads(r.stdout)
    figures.pop("seconds")
    return figures, r.stderr


def _eval_args(real: Path, *extra: str) -> list[str]:
    return ["models", "eval", "--variant", "riichi", "--hands", "2", "--bootstrap", "0",
            "--real", str(real), "--json", *extra]


def evaluate(capsys: pytest.CaptureFixture[str], real: Path, *extra: str
             ) -> tuple[dict[str, object], str]:
    """`models eval` on two hands a mix and ``real``: its figures (the timing left out)
    and its stderr."""
    return _figures(mjbot_here(capsys, *_eval_args(real, *extra)))


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "cache"
    monkeypatch.setenv(C.ENV, str(folder))
    return folder


@pytest.fixture(scope="module")
def first_run(tmp_path_factory: pytest.TempPathFactory
              ) -> tuple[dict[str, object], str, Path]:
    """A first :func:`evaluate` of ranked_game.json (as ``game.json``) into an empty cache:
    its figures, its stderr and the cache folder it filled, which tests copy (mtimes kept)
    as their own cache after that first run. Built once: each first run plays the held-out
    set's 18 riichi games again (about 3.5 s of CPU)."""
    root = tmp_path_factory.mktemp("first-run")
    real, folder = root / "game.json", root / "cache"
    shutil.copy(GAMES / "ranked_game.json", real)
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(C.ENV, str(folder))
        figures, err = _figures(mjbot_captured(*_eval_args(real)))
    return figures, err, folder


def after_a_first_run(first_run: tuple[dict[str, object], str, Path], cache: Path,
                      tmp_path: Path) -> tuple[Path, dict[str, object]]:
    """This test's ``game.json`` (ranked_game.json) and a cache as the first run left it:
    the record's path and the first run's figures."""
    real = tmp_path / "game.json"
    shutil.copy(GAMES / "ranked_game.json", real)
    shutil.copytree(first_run[2], cache)
    return real, first_run[0]


def entries(folder: Path, name: str) -> list[Path]:
    return sorted(folder.glob(f"{name}-*.mjds"))


def test_a_second_run_reads_the_cache_and_gives_the_same_figures(first_run, cache, tmp_path,
                                                                  capsys) -> None:
    real, first = after_a_first_run(first_run, cache, tmp_path)
    assert "building the held-out self-play set" in first_run[1]
    held, imported = entries(cache, "heldout-riichi-h2"), entries(cache, "real-riichi")
    assert len(held) == 1 and len(imported) == 1
    stamps = [p.stat().st_mtime_ns for p in (*held, *imported)]
    second, err = evaluate(capsys, real)
    assert second == first
    assert "building the held-out self-play set" not in err
    assert err.count("read from the cache") == 2
    assert [p.stat().st_mtime_ns for p in (*held, *imported)] == stamps


def test_a_changed_record_is_imported_again(first_run, cache, tmp_path, capsys) -> None:
    real, before = after_a_first_run(first_run, cache, tmp_path)
    shutil.copy(GAMES / "four_reach.json", real)  # same name, another game
    after, err = evaluate(capsys, real)
    assert err.count("read from the cache") == 1  # the held-out set only
    assert len(entries(cache, "real-riichi")) == 1  # the new entry replaced the old one
    fresh, _ = evaluate(capsys, real, "--no-cache")
    assert after == fresh and after["real"] != before["real"]


def test_a_cut_or_corrupt_entry_is_a_miss_built_again_and_overwritten(first_run, cache,
                                                                      tmp_path, capsys
                                                                      ) -> None:
    real, first = after_a_first_run(first_run, cache, tmp_path)
    [held] = entries(cache, "heldout-riichi-h2")
    [imported] = entries(cache, "real-riichi")
    whole = held.read_bytes()
    held.write_bytes(whole[:len(whole) // 2])  # a copy that did not finish
    data = bytearray(imported.read_bytes())
    data[-100] ^= 0xFF  # one flipped byte in a shard
    imported.write_bytes(bytes(data))
    again, err = evaluate(capsys, real)
    assert again == first
    warned = [line for line in err.splitlines() if "models eval cache" in line]
    assert len(warned) == 2, err
    assert "truncated" in warned[0] + warned[1] and "corrupt" in warned[0] + warned[1]
    assert held.read_bytes() == whole  # overwritten with the entry built again
    _, err = evaluate(capsys, real)
    assert err.count("read from the cache") == 2


@pytest.mark.parametrize("how", ["env", "option"])
def test_disabled_writes_nothing(how, cache, tmp_path, capsys, monkeypatch) -> None:
    real = tmp_path / "game.json"
    shutil.copy(GAMES / "ranked_game.json", real)
    if how == "env":
        monkeypatch.setenv(C.ENV, "off")
        evaluate(capsys, real)
    else:
        evaluate(capsys, real, "--no-cache")
    assert not cache.exists()


def test_the_folder_follows_the_environment(tmp_path) -> None:
    home = Path.home()
    assert C.cache_dir({}) == home / ".cache" / "mjbot" / "models-eval"
    assert C.cache_dir({"XDG_CACHE_HOME": str(tmp_path)}) == tmp_path / "mjbot" / "models-eval"
    # the XDG spec: a relative path is invalid and ignored
    assert C.cache_dir({"XDG_CACHE_HOME": "rel"}) == home / ".cache" / "mjbot" / "models-eval"
    assert C.cache_dir({"XDG_CACHE_HOME": str(tmp_path), C.ENV: "/x/y"}) == Path("/x/y")
    assert C.cache_dir({C.ENV: "off"}) is None and C.cache_dir({C.ENV: "OFF"}) is None


def test_the_code_digest_covers_every_file_but_the_judged_weights(tmp_path) -> None:
    tree = tmp_path / "brain"
    (tree / "data").mkdir(parents=True)
    (tree / "enc.py").write_text("VERSION = 1\n")
    (tree / "data" / "table.npz").write_bytes(b"a")
    (tree / "data" / "opponents_riichi.npz").write_bytes(b"w")
    first = C.source_digest([tree])
    (tree / "data" / "opponents_riichi.npz").write_bytes(b"retrained")
    assert C.source_digest([tree]) == first
    (tree / "data" / "table.npz").write_bytes(b"b")
    second = C.source_digest([tree])
    assert second != first
    (tree / "enc.py").write_text("VERSION = 2\n")
    assert C.source_digest([tree]) != second


def test_the_held_out_set_and_the_import_never_read_the_opponent_models(tmp_path) -> None:
    """The opponent models' weights are left out of the cache key (a `models train` keeps
    the cache): true only while nothing that builds the held-out set or the import reads
    them. Were a mix's policy to read them, the key would need them: this fails first."""
    script = (
        "import sys\nfrom pathlib import Path\n"
        "from adapter import opponent_sets as s\n"
        f"s.build_heldout('riichi', Path({str(tmp_path)!r}) / 'h', 1)\n"
        f"s.build_real(s.real_game_files('riichi')[:2], Path({str(tmp_path)!r}) / 'r')\n"
        "loaded = [m for m in sys.modules if m.startswith('brain.opponents')]\n"
        "assert 'brain.opponents.models' not in loaded, loaded\n")
    r = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True,
                       text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]


def test_another_key_is_a_miss_and_its_entry_replaces_the_old_one(tmp_path) -> None:
    """Other code (another digest in the key) never reads the old entry; the folder keeps one
    entry a name, so it does not grow with every change of the code."""
    built: list[str] = []

    def build(text: str) -> Callable[[Path], None]:
        def write(out: Path) -> None:
            out.mkdir(parents=True)
            (out / "rows.txt").write_text(text)
            built.append(text)
        return write

    folder = tmp_path / "cache"
    assert C.cached_build(folder, "set", "k1", tmp_path / "a", build("one")) == "miss"
    assert C.cached_build(folder, "set", "k1", tmp_path / "b", build("one")) == "hit"
    assert (tmp_path / "b" / "rows.txt").read_text() == "one" and built == ["one"]
    assert C.cached_build(folder, "set", "k2", tmp_path / "c", build("two")) == "miss"
    assert built == ["one", "two"]
    assert [p.name for p in folder.glob("set-*.mjds")] == [C.entry_path(folder, "set",
                                                                         "k2").name]
    assert C.cached_build(folder, "set", "k1", tmp_path / "d", build("one")) == "miss"


def test_a_killed_runs_temporary_file_is_removed_by_the_next_write(tmp_path) -> None:
    """A run killed while it wrote an entry (SIGKILL: no handler runs) leaves its temporary
    file, as large as an entry; nothing removed it, so each such kill kept one for ever. The
    next run that writes an entry of that set removes it, but not the file of a run still
    writing (a live process) nor one of another host sharing the folder."""
    folder = tmp_path / "cache"
    target = C.entry_path(folder, "set", "k0")
    script = ("import os, signal, sys\nfrom pathlib import Path\n"
              "from replay.dataset import cache as C\n"
              "os.replace = lambda *a: os.kill(os.getpid(), signal.SIGKILL)  # killed there\n"
              "C.write_entry(Path(sys.argv[1]), b'x' * 100000)\n")
    r = subprocess.run([sys.executable, "-c", script, str(target)], cwd=ROOT, timeout=120)
    assert r.returncode == -9
    [left] = folder.glob(".set-*.tmp")
    assert left.stat().st_size == 100000

    def build(out: Path) -> None:
        out.mkdir(parents=True)
        (out / "rows.txt").write_text("one")

    assert C.cached_build(folder, "set", "k1", tmp_path / "a", build) == "miss"
    assert not left.exists()
    assert C.cached_build(folder, "set", "k1", tmp_path / "b", build) == "hit"
    target = C.entry_path(folder, "set", "k2")
    live = folder / f".{target.name}.{C._writer_tag()}.abcd1234.tmp"  # this process: alive
    other = folder / f".{target.name}.otherhost-{left.name.split('-')[-1]}"
    live.write_bytes(b"y")
    other.write_bytes(b"z")
    assert C.cached_build(folder, "set", "k2", tmp_path / "c", build) == "miss"
    assert live.exists() and other.exists()
