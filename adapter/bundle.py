"""``mjbot bundle botzone``: the zip that Botzone runs.

Botzone starts a Python bot as ``python3 bot.zip`` with only the standard library, numpy and
MahjongGB installed. The zip holds ``__main__.py`` (simple interaction, keep running by
default) and just the modules the Botzone bot imports, plus the shanten tables; the game log
(msgpack) and structured logging (structlog) are left out, and the bot runs without them.

Each module also goes in compiled (``module.pyc`` beside ``module.py``, the layout zipimport
looks for first): without it zipimport compiles every module at every start, which made a
one-shot turn 0.1-0.15 s slower than the installed command. The ``.pyc`` files are
unchecked-hash ones (no source timestamps to match) for the building interpreter's version; a
Python of another version finds a foreign magic number, skips them and reads the sources.
"""

from __future__ import annotations

import py_compile
import sys
import tempfile
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# What the Botzone bot imports (checked by a test that runs the zip with nothing else).
MODULES = (
    "protocols/__init__.py", "protocols/tiles.py", "protocols/events.py", "protocols/botzone.py",
    "brain/__init__.py", "brain/shanten.py", "brain/shanten_tables.py", "brain/state.py",
    "brain/brain.py", "brain/anytime.py", "brain/actions.py", "brain/rules/__init__.py",
    "brain/rules/base.py", "brain/rules/mcr.py",
    "brain/policies/__init__.py", "brain/policies/base.py", "brain/policies/baselines.py",
    "brain/policies/rulebased.py", "brain/policies/evaluation.py", "brain/policies/defence.py",
    "brain/policies/mcr_plan.py", "brain/data/shanten_tables.npz",
    "adapter/__init__.py", "adapter/botzone.py",
)
MAIN = '''"""mjbot for Botzone ChineseStandardMahjong: simple interaction, keep running."""
import sys

from adapter.botzone import main

sys.exit(main(sys.argv[1:], keep_running_default=True))
'''


def build_botzone_bundle(out_dir: str | Path, name: str = "mjbot-botzone.zip",
                         compiled: bool = True) -> Path:
    """Write the zip; ``compiled=False`` leaves the bytecode out (the benchmark's reference)."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    path = out / name
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf, \
            tempfile.TemporaryDirectory() as tmp:
        zf.writestr("__main__.py", MAIN)
        for module in MODULES:
            zf.write(ROOT / module, module)
            if compiled and module.endswith(".py"):
                zf.writestr(module + "c", _bytecode(ROOT / module, module, Path(tmp)))
    return path


def bundle_python_tag() -> str:
    """The Python the bytecode in a bundle built here is for, e.g. ``3.11``."""
    return f"{sys.version_info.major}.{sys.version_info.minor}"


def _bytecode(source: Path, name: str, tmp: Path) -> bytes:
    target = tmp / "module.pyc"
    py_compile.compile(str(source), cfile=str(target), dfile=name, doraise=True,
                       invalidation_mode=py_compile.PycInvalidationMode.UNCHECKED_HASH)
    return target.read_bytes()
