"""``mjbot bundle botzone``: the zip that Botzone runs.

Botzone starts a Python bot as ``python3 bot.zip`` with only the standard library, numpy and
MahjongGB installed. The zip holds ``__main__.py`` (simple interaction, keep running by
default) and just the modules the Botzone bot imports, plus the shanten tables; the game log
(msgpack) and structured logging (structlog) are left out, and the bot runs without them.
"""

from __future__ import annotations

import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# What the Botzone bot imports (checked by a test that runs the zip with nothing else).
MODULES = (
    "protocols/__init__.py", "protocols/tiles.py", "protocols/events.py", "protocols/botzone.py",
    "brain/__init__.py", "brain/shanten.py", "brain/shanten_tables.py", "brain/state.py",
    "brain/brain.py", "brain/actions.py", "brain/rules/__init__.py", "brain/rules/base.py",
    "brain/rules/mcr.py",
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


def build_botzone_bundle(out_dir: str | Path, name: str = "mjbot-botzone.zip") -> Path:
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    path = out / name
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("__main__.py", MAIN)
        for module in MODULES:
            zf.write(ROOT / module, module)
    return path
