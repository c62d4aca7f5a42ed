"""``mjbot bundle mjai``: the zip that mjai.app (RiichiLab) runs.

mjai.app unpacks the zip in its image and starts ``python -u bot.py SEAT`` there
(smly/mjai.app: docker/Dockerfile, python/mjai/http_server/server.py). The image has Python
3.10, numpy 1.25, torch and ``mahjong`` 1.2; mjbot scores riichi hands with ``mahjong`` 2
(brain/rules/riichi.py: its options and results are 2.x's), so the zip carries the installed
``mahjong`` 2, pure Python and MIT-licensed, under ``_vendor/`` with its licence, and ``bot.py``
puts that folder first on ``sys.path``: the image's 1.2 is never imported by the bot. The bot
writes no game log (msgpack) and logs through the standard library (no structlog).

The zip holds sources only: it is unpacked, not imported from, and Python 3.10 compiles them
itself (bytecode of the building 3.11 would be skipped there). The Botzone bundle's machinery
(adapter/platforms/botzone_bundle.py) writes it and checks the weights it carries.
"""

from __future__ import annotations

import importlib.metadata
from pathlib import Path

from adapter.platforms.botzone_bundle import ROOT, carried_weights, write_zip
from brain.shanten_tables import packaged_members

# What the riichi bot imports, rulebased and mc (checked by a test that runs the unpacked zip
# with numpy alone, and by one that type-checks these files for Python 3.10).
MODULES = (
    "protocols/__init__.py", "protocols/tiles.py", "protocols/events.py", "protocols/codec.py",
    "protocols/mjai.py", "protocols/ntpu.py", "protocols/tenhou.py",
    "protocols/tenhou_values.py",
    "brain/__init__.py", "brain/shanten.py", "brain/shanten_tables.py", "brain/state.py",
    "brain/brain.py", "brain/tally.py", "brain/anytime.py", "brain/actions.py", "brain/clock.py",
    "brain/shipped.py",
    "brain/rules/__init__.py", "brain/rules/base.py", "brain/rules/mcr.py",
    "brain/rules/riichi.py", "brain/rules/variant.py", "brain/rules/game_end.py",
    "brain/policies/__init__.py", "brain/policies/base.py", "brain/policies/baselines.py",
    "brain/policies/rulebased.py", "brain/policies/evaluation.py", "brain/policies/defence.py",
    "brain/policies/mcr_plan.py",
    "brain/policies/mc/__init__.py", "brain/policies/mc/config.py",
    "brain/policies/mc/expect.py", "brain/policies/mc/models.py",
    "brain/policies/mc/oneplayer.py", "brain/policies/mc/paid.py",
    "brain/policies/mc/playout.py", "brain/policies/mc/policy.py", "brain/policies/mc/root.py",
    "brain/policies/mc/score.py", "brain/policies/mc/tables.py", "brain/policies/mc/values.py",
    "brain/opponents/__init__.py", "brain/opponents/features.py", "brain/opponents/models.py",
    "brain/opponents/net.py", "brain/opponents/view.py",
    "replay/__init__.py", "replay/gcpause.py", "replay/locking.py", "replay/log.py",
    "replay/logzip.py", "replay/progress.py",
    "replay/record.py", "replay/schema.py", "replay/version.py",
    "replay/formats/__init__.py", "replay/formats/botzone_human.py",
    "replay/formats/botzone_log.py", "replay/formats/mjai_log.py", "replay/formats/mjlog.py",
    "replay/formats/ntpu_log.py", "replay/formats/nycu_sgf.py", "replay/formats/sgf.py",
    "replay/formats/tenhou6.py", "replay/formats/tenhou_client.py",
    "adapter/__init__.py", "adapter/logging_setup.py", "adapter/loop_signals.py",
    "adapter/secret_env.py", "adapter/session.py", "adapter/stdout_thread.py",
    "adapter/tasks.py",
    "adapter/thinking/__init__.py", "adapter/thinking/deadline.py", "adapter/thinking/frames.py",
    "adapter/thinking/inbox.py", "adapter/thinking/pipe_watch.py",
    "adapter/thinking/policy_worker.py",
    "adapter/thinking/thinker.py", "adapter/thinking/warm_server.py",
    "adapter/thinking/worker_process.py",
    "adapter/platforms/__init__.py", "adapter/platforms/mjai.py",
    "adapter/platforms/mjai_app.py",
)
# The riichi opponent models the ``mc`` policy reads (shipped; --models otherwise).
RIICHI_WEIGHTS = "brain/data/opponents_riichi.npz"
# What an ``nn`` bundle adds: the network code (numpy only) and the riichi network.
NN_MODULES = ("brain/nn/__init__.py", "brain/nn/encoding.py", "brain/nn/heads.py",
              "brain/nn/network.py", "brain/policies/nn.py",
              "adapter/thinking/warm_network.py")
NN_WEIGHTS = "brain/data/nn_riichi.npz"
VENDOR = "_vendor"  # bot.py puts it first on sys.path: `mahjong` is the 2.x carried there
BOT = '''"""mjbot for mjai.app (RiichiLab): its harness runs `python -u bot.py SEAT` here."""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
# mjbot scores riichi hands with the `mahjong` 2 carried in _vendor, not the image's 1.2
sys.path[:0] = [HERE, os.path.join(HERE, {vendor!r})]
# never imported here, even where installed: structlog unconfigured would print on stdout,
# where only answers go; msgpack writes game logs, and this bot writes none
sys.modules["structlog"] = None
sys.modules["msgpack"] = None
try:
    import numpy  # noqa: F401
except ImportError as exc:
    sys.exit(f"mjbot: this bot needs numpy (pip install numpy): {{exc}}")

if {options!r}:
    os.environ.setdefault("MJBOT_MC", {options!r})
try:  # a file of the zip left out as it was unpacked or copied: say so, not a traceback
    from adapter.platforms.mjai_app import main

    code = main(sys.argv[1:], policy={policy!r})
except ImportError as exc:
    sys.exit(f"mjbot: this bot is missing part of its own code ({{exc}}): unzip the whole "
             "zip here, or build it again with mjbot bundle mjai")
sys.exit(code)
'''


def build_mjai_bundle(out_dir: str | Path, name: str = "mjbot-mjai.zip",
                      policy: str = "rulebased", models_dir: str | Path | None = None,
                      mc_options: str = "", nn_weights: str | Path | None = None) -> Path:
    """Write the zip. ``policy``: what the bot plays; ``models_dir``: where
    opponents_riichi.npz is, if not the shipped one; ``mc_options``: the bot's MJBOT_MC;
    ``nn_weights``: the riichi network an ``nn`` bundle (or an ``mc`` one with ``fast=nn``)
    carries, default the shipped brain/data/nn_riichi.npz. A bundle without the weights its
    policy reads is refused here (FileNotFoundError), not on mjai.app."""
    weight_files, network = carried_weights(
        policy, models_dir, mc_options, nn_weights, RIICHI_WEIGHTS, "riichi", NN_WEIGHTS,
        "riichi", "a riichi network")
    modules = MODULES + NN_MODULES if network else MODULES
    files = [(ROOT / module, module) for module in modules] + weight_files + vendored_mahjong()
    bot = BOT.format(vendor=VENDOR, policy=policy, options=mc_options)
    return write_zip(Path(out_dir) / name, {"bot.py": bot, **packaged_members()}, files,
                     compiled=False)


def vendored_mahjong() -> list[tuple[Path, str]]:
    """The installed ``mahjong`` package's modules and its licence, as ``_vendor/...``;
    ValueError unless it is the 2.x that brain/rules/riichi.py is written for."""
    dist = importlib.metadata.distribution("mahjong")
    if not dist.version.startswith("2."):
        raise ValueError(f"the bundle carries mjbot's mahjong 2, but mahjong {dist.version} is "
                         "installed here")
    files: list[tuple[Path, str]] = []
    licence = None
    for entry in dist.files or ():
        source = Path(str(dist.locate_file(entry)))
        if entry.parts[0] == "mahjong" and entry.suffix == ".py":
            files.append((source, f"{VENDOR}/{entry.as_posix()}"))
        elif entry.name.upper().startswith("LICENSE"):
            licence = source
    if licence is None or not files:
        raise ValueError("the installed mahjong package lists no modules or no licence file")
    return [*sorted(files, key=lambda f: f[1]), (licence, f"{VENDOR}/mahjong/LICENSE.txt")]
