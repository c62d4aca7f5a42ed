"""A weights file damaged on the way (a bad copy, a bad disk) is refused in one line naming it,
exit 2, by every command a user points at it: `mjbot arena --policies nn@FILE` and `mjbot nn
train --init FILE`. A member whose compressed bytes were damaged failed to inflate with
zlib's traceback, and a meta entry that was not JSON with json's."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import zipfile
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parent.parent
SHIPPED = ROOT / "brain" / "data" / "nn_riichi.npz"


def _damaged_member(src: Path, out: Path) -> Path:
    """``src`` with the first bytes of its largest member's compressed data flipped (the zip's
    directory and the member's header intact, as a bad copy leaves them): the deflate stream's
    block header is garbage, so inflating fails (zlib.error) before any CRC is checked."""
    data = bytearray(src.read_bytes())
    with zipfile.ZipFile(src) as z:
        info = max(z.infolist(), key=lambda i: i.compress_size)
    assert info.compress_type == zipfile.ZIP_DEFLATED
    local_header = 30 + len(info.filename.encode()) + len(info.extra)
    start = info.header_offset + local_header
    for i in range(start, start + 64):
        data[i] ^= 0xFF
    out.write_bytes(bytes(data))
    return out


def _bad_meta(src: Path, out: Path) -> Path:
    """``src`` with a meta entry that is not JSON."""
    with np.load(src) as z:
        arrays = {k: z[k] for k in z.files}
    arrays["meta"] = np.frombuffer(b"{not json", dtype=np.uint8)
    np.savez(out, **arrays)
    return out


def _mjbot(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "adapter.cli", *args], capture_output=True,
                          text=True, cwd=cwd, env={**os.environ, "PYTHONPATH": str(ROOT)})


@pytest.mark.parametrize("damage", [_damaged_member, _bad_meta])
def test_arena_refuses_damaged_weights_in_one_line(
        tmp_path: Path, damage: Callable[[Path, Path], Path]) -> None:
    weights = damage(SHIPPED, tmp_path / "gen1.npz")
    r = _mjbot("arena", "--variant", "riichi", "--policies",
               "nn@gen1.npz,rulebased,rulebased,rulebased", "--hands", "4", "--seed", "0",
               "--no-log", cwd=tmp_path)
    assert r.returncode == 2, r.stderr
    assert "Traceback" not in r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "gen1.npz" in lines[0], r.stderr
    assert weights.exists()


def test_nn_train_init_refuses_damaged_weights_in_one_line(tmp_path: Path) -> None:
    """Checked before any data is read: the dataset folder need not even hold one."""
    _damaged_member(SHIPPED, tmp_path / "gen1.npz")
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "manifest.json").write_text(json.dumps({}))
    r = _mjbot("nn", "train", "--variant", "riichi", "--data", "data", "--out", "gen2.npz",
               "--init", "gen1.npz", cwd=tmp_path)
    assert r.returncode == 2, r.stderr
    assert "Traceback" not in r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "gen1.npz" in lines[0], r.stderr
    assert not (tmp_path / "gen2.npz").exists()


def _rewritten(src: Path, out: Path, change: dict[str, object]) -> Path:
    """``src`` with members replaced (an array), dropped (None), or meta fields changed
    (a dict merged into the meta; a None value drops the field)."""
    with np.load(src) as z:
        arrays = {k: z[k] for k in z.files}
    meta = json.loads(arrays["meta"].tobytes().decode())
    for key, value in change.items():
        if key == "meta":
            assert isinstance(value, dict)
            meta = {k: v for k, v in {**meta, **value}.items() if v is not None}
        elif value is None:
            del arrays[key]
        else:
            arrays[key] = value
    arrays["meta"] = np.frombuffer(json.dumps(meta).encode(), dtype=np.uint8)
    np.savez(out, **arrays)
    return out


def _stem_bias() -> np.ndarray:
    with np.load(SHIPPED) as z:
        return np.asarray(z["stem.bias"])


@pytest.mark.parametrize(("change", "said"), [
    ({"stem.bias": np.array(["x"] * len(_stem_bias()))},
     "array 'stem.bias' holds <U1, not floating-point numbers"),
    ({"stem.bias": _stem_bias().astype(np.complex64) + 1j},
     "array 'stem.bias' holds complex64, not floating-point numbers"),
    ({"value2.bias": None}, "no array 'value2.bias'"),
    ({"stem.bias": _stem_bias()[:-1]}, "array 'stem.bias' is (63,), expected (64,)"),
    ({"meta": {"channels": None}}, "its meta gives channels None, not a count"),
    ({"meta": {"blocks": "four"}}, "its meta gives blocks 'four', not a count"),
])
def test_a_member_or_meta_of_the_wrong_kind_is_refused_in_one_line_naming_the_file(
        tmp_path: Path, change: dict[str, object], said: str) -> None:
    """Before: a member of strings or a meta without its sizes failed with numpy's or
    int()'s traceback, a complex member was played cast to its real part, and a member
    missing or of another shape was said without the file's name."""
    _rewritten(SHIPPED, tmp_path / "gen1.npz", change)
    r = _mjbot("arena", "--variant", "riichi", "--policies",
               "nn@gen1.npz,rulebased,rulebased,rulebased", "--hands", "1", "--seed", "0",
               "--no-log", "--no-progress", cwd=tmp_path)
    assert r.returncode == 2, r.stdout + r.stderr
    assert "Traceback" not in r.stderr
    (line,) = r.stderr.strip().splitlines()
    assert f"nn: gen1.npz: {said} (a damaged or foreign file)" in line, line


def test_a_good_file_rewritten_whole_still_loads(tmp_path: Path) -> None:
    from brain.nn.network import Network

    weights = _rewritten(SHIPPED, tmp_path / "same.npz", {})
    same, shipped = Network.from_file(weights, "riichi"), Network.from_file(SHIPPED, "riichi")
    assert same.meta == shipped.meta
    assert all(np.array_equal(same.params[k], v) for k, v in shipped.params.items())
