"""``mjbot bundle botzone``: the zip that Botzone runs.

Botzone starts a Python bot as ``python3 bot.zip`` with only the standard library, numpy and
MahjongGB installed. The zip holds ``__main__.py`` (simple or JSON interaction, told apart by
the input; keep running by default) and just the modules the Botzone bot imports, plus the
shanten tables; the game log (msgpack) and structured logging (structlog) are left out, and the
bot runs without them.

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

from brain.shanten_tables import packaged_members
from brain.shipped import pack_arrays, packed_name

ROOT = Path(__file__).resolve().parents[2]
# What the Botzone bot imports (checked by a test that runs the zip with nothing else). The
# shanten tables go in as brain.shanten_tables.packaged_members(), one .npy per array.
MODULES = (
    "protocols/__init__.py", "protocols/tiles.py", "protocols/events.py", "protocols/codec.py",
    "protocols/botzone.py",
    "brain/__init__.py", "brain/shanten.py", "brain/shanten_tables.py", "brain/state.py",
    "brain/brain.py", "brain/tally.py", "brain/anytime.py", "brain/actions.py", "brain/clock.py",
    "brain/rules/__init__.py", "brain/rules/base.py", "brain/rules/mcr.py",
    "brain/rules/variant.py",
    "brain/policies/__init__.py", "brain/policies/base.py", "brain/policies/baselines.py",
    "brain/policies/rulebased.py", "brain/policies/evaluation.py", "brain/policies/defence.py",
    "brain/policies/mcr_plan.py", "brain/shipped.py",
    "brain/policies/mc/__init__.py", "brain/policies/mc/config.py",
    "brain/policies/mc/expect.py", "brain/policies/mc/models.py",
    "brain/policies/mc/oneplayer.py", "brain/policies/mc/paid.py",
    "brain/policies/mc/playout.py",
    "brain/policies/mc/policy.py", "brain/policies/mc/root.py", "brain/policies/mc/score.py",
    "brain/policies/mc/tables.py", "brain/policies/mc/values.py",
    "brain/opponents/__init__.py", "brain/opponents/features.py",
    "brain/opponents/models.py", "brain/opponents/net.py", "brain/opponents/view.py",
    "adapter/__init__.py", "adapter/argtypes.py", "adapter/platforms/__init__.py",
    "adapter/platforms/botzone.py", "adapter/platforms/botzone_options.py",
)
# The MCR opponent models the ``mc`` policy reads (shipped where trained; --models otherwise).
MCR_WEIGHTS = "brain/data/opponents_mcr.npz"
# What an ``nn`` bundle adds: the network code (numpy only) and the MCR network's weights.
NN_MODULES = ("brain/nn/__init__.py", "brain/nn/encoding.py", "brain/nn/heads.py",
              "brain/nn/network.py", "brain/nn/mcr_planes.py", "brain/policies/nn.py")
NN_WEIGHTS = "brain/data/nn_mcr.npz"
MAIN = '''"""mjbot for Botzone ChineseStandardMahjong: simple or JSON interaction, keep running."""
import os
import sys

# Botzone's "Python 3" has no version said: name the need (this file parses as Python 2 too)
if sys.version_info < (3, 10):
    sys.exit("mjbot: this bot needs Python 3.10 or later, not "
             + ".".join(map(str, sys.version_info[:3])))

from adapter.platforms.botzone_options import one_blas_thread

one_blas_thread()  # before numpy is imported
try:  # Botzone's Python has both; a local test run may not: say so, not a traceback
    import MahjongGB  # noqa: F401
    import numpy  # noqa: F401
except ImportError as exc:
    sys.exit("mjbot: this bot needs numpy and MahjongGB (pip install numpy PyMahjongGB): %s" % exc)

from adapter.platforms.botzone import main

if {options!r}:
    os.environ.setdefault("MJBOT_MC", {options!r})
sys.exit(main(sys.argv[1:], keep_running_default=True, policy_default={policy!r}))
'''


def build_botzone_bundle(out_dir: str | Path, name: str = "mjbot-botzone.zip",
                         compiled: bool = True, policy: str = "rulebased",
                         models_dir: str | Path | None = None, mc_options: str = "",
                         nn_weights: str | Path | None = None) -> Path:
    """Write the zip; ``compiled=False`` leaves the bytecode out (the benchmark's reference).
    ``policy``: what the bot plays when Botzone starts it (no arguments there);
    ``models_dir``: where opponents_mcr.npz is, if not shipped in brain/data; ``mc_options``:
    the bot's MJBOT_MC; ``nn_weights``: the MCR network an ``nn`` bundle carries (default the
    shipped brain/data/nn_mcr.npz; also carried by an ``mc`` bundle whose options say
    ``fast=nn``). A bundle without the weights its policy reads is refused here, not on
    Botzone."""
    weight_files, network = carried_weights(
        policy, models_dir, mc_options, nn_weights, MCR_WEIGHTS, "MCR", NN_WEIGHTS,
        "mcr", "an MCR network")
    modules = MODULES + NN_MODULES if network else MODULES
    files = [(ROOT / module, module) for module in modules]
    # the weights packed (brain/shipped.py): an .npz read in the zip imported zipfile, every turn
    packed = {carried_as(in_zip): pack_arrays(source) for source, in_zip in weight_files}
    return write_zip(Path(out_dir) / name, {"__main__.py": MAIN.format(
        policy=policy, options=mc_options), **packaged_members(), **packed}, files, compiled)


def carried_as(in_zip: str) -> str:
    """The name in the Botzone zip of the weights shipped as ``in_zip`` (brain/data/X.npz):
    their arrays packed, brain/data/X.arrays (brain/shipped.py)."""
    return packed_name(in_zip)


def write_zip(path: Path, texts: dict[str, str | bytes], files: list[tuple[Path, str]],
              compiled: bool) -> Path:
    """A bundle at ``path`` (its folder made): ``texts`` (name in the zip -> text or bytes) and
    ``files`` (source, name in the zip), with each ``.py`` file's bytecode beside it where
    ``compiled``. Shared by the Botzone and mjai.app bundles. Written whole or not at all
    (brain/shipped.py): a build that fails part way leaves the last zip as it was."""
    from brain.shipped import written_whole

    for source, _ in files:  # a missing one named as itself (written_whole names the zip)
        source.stat()
    path.parent.mkdir(parents=True, exist_ok=True)
    with written_whole(path) as fh, zipfile.ZipFile(fh, "w", zipfile.ZIP_DEFLATED) as zf, \
            tempfile.TemporaryDirectory() as tmp:
        for name_in_zip, text in texts.items():
            zf.writestr(name_in_zip, text)
        for source, name_in_zip in files:
            zf.write(source, name_in_zip)
            if compiled and name_in_zip.endswith(".py"):
                zf.writestr(name_in_zip + "c", _bytecode(source, name_in_zip, Path(tmp)))
    return path


def carried_weights(policy: str, models_dir: str | Path | None, mc_options: str,
                    nn_weights: str | Path | None, models: str, models_words: str,
                    network_in_zip: str, variant: str, network_words: str
                    ) -> tuple[list[tuple[Path, str]], bool]:
    """The weight files a bundle of ``policy`` carries, (source, name in the zip), and whether
    it carries the network (then its code too). ``models``: the opponent models' shipped path
    (``--models DIR`` holds a file of the same name); ``network_in_zip``: where the network
    goes (``nn_weights``, else the shipped file of that path). Shared by the Botzone and
    mjai.app bundles: a bundle without the weights its policy reads is refused here
    (FileNotFoundError naming what is missing), never built to fail on the platform, and so
    is ``nn_weights`` for a bundle that plays no network (ValueError): it was left out without
    a word, and the user believed the network was shipped; ``models_dir`` for a bundle that
    reads no opponent models (ValueError): they were carried, and read by nothing. Only an
    ``mc`` bundle carries opponent models, only a bundle that plays the network carries it;
    the shanten tables (in the modules) every bundle reads."""
    check_bundle_policy(policy)
    if models_dir and policy != "mc":  # carried unread, the user believed they played
        raise ValueError(f"--models {models_dir}: only a bundle that plays mc reads the "
                         f"opponent models (--policy mc), and this one plays {policy}")
    file_name = Path(models).name
    weights = Path(models_dir) / file_name if models_dir else ROOT / models
    if policy == "mc":
        check_models(weights, variant, f"an mc bundle needs the {models_words} opponent models")
    # only mc reads them: a rulebased or nn zip carried the shipped ones unread (100 KB)
    files = [(weights, models)] if policy == "mc" else []
    if policy != "nn" and not (policy == "mc" and _mc_plays_the_network(mc_options)):
        if nn_weights:  # left out without a word, the user believed the network shipped
            raise ValueError(f"--nn-weights {nn_weights}: only a bundle that plays the network "
                             f"carries it (--policy nn, or --policy mc with --mc-options "
                             f"fast=nn), and this one plays {policy}")
        return files, False
    network = Path(nn_weights) if nn_weights else ROOT / network_in_zip
    check_network(network, variant, network_words)
    return [*files, (network, network_in_zip)], True


def _mc_plays_the_network(mc_options: str) -> bool:
    """Whether ``mc`` with these MJBOT_MC options reads the network (``fast=nn``): its bundle
    then carries the network code and weights as an ``nn`` bundle does."""
    from brain.policies.mc.config import parse

    return parse(mc_options).fast == "nn"


def check_bundle_policy(policy: str) -> None:
    """ValueError unless the bundle can play ``policy``: a name Botzone can resolve, not
    ``nn@FILE``, whose file is on this machine only, nor ``mc@OPTIONS`` (the bundle's
    options are its MJBOT_MC: ``--mc-options``), which was told to carry a network instead."""
    from brain.policies import MC_OPTIONS_PREFIX, POLICIES

    if policy not in POLICIES:
        how = (f"give mc its options as --policy mc --mc-options "
               f"{policy.removeprefix(MC_OPTIONS_PREFIX)!r} (mjbot bench botzone: MJBOT_MC)"
               if policy.startswith(MC_OPTIONS_PREFIX)
               else "carry a network with --policy nn --nn-weights FILE")
        raise ValueError(f"a bundle plays a policy by name ({', '.join(sorted(POLICIES))}), "
                         f"not {policy!r}; {how}")


def check_models(path: Path, variant: str, wanted: str) -> None:
    """An ``mc`` bundle's opponent models must be ``variant``'s, in a file they read
    (FileNotFoundError starting with ``wanted`` otherwise): another variant's, renamed, or
    another file under their name was carried, and every mc decision on the platform fell
    back (``mc raised MissingModels``), the zip built without a word."""
    from brain.opponents.models import OpponentModels

    if not path.is_file():
        raise FileNotFoundError(f"{wanted}: no {path}")
    try:
        held = OpponentModels.from_file(path).variant
    except (ValueError, KeyError, OSError) as exc:
        raise FileNotFoundError(f"{wanted}: {path}: {exc}") from None
    if held != variant:
        raise FileNotFoundError(f"{wanted}: {path} holds {held!r} models, not {variant!r}")


def check_network(path: Path, variant: str, named: str) -> None:
    """An ``nn`` bundle's weights must be a network of ``variant`` this code reads
    (FileNotFoundError naming what is wrong otherwise, the network as ``named``, e.g. "an MCR
    network"): a riichi file would refuse every turn on Botzone, an MCR one every turn on
    mjai.app."""
    from brain.nn.network import MissingNetwork, Network

    wanted = f"an nn bundle needs {named}"
    if not path.is_file():
        raise FileNotFoundError(f"{wanted}: no {path}")
    try:
        Network.from_file(path, variant)
    except (MissingNetwork, ValueError, KeyError, OSError, zipfile.BadZipFile) as exc:
        raise FileNotFoundError(f"{wanted}: {path}: {exc}") from None


def bundle_python_tag() -> str:
    """The Python the bytecode in a bundle built here is for, e.g. ``3.11``."""
    return f"{sys.version_info.major}.{sys.version_info.minor}"


def _bytecode(source: Path, name: str, tmp: Path) -> bytes:
    target = tmp / "module.pyc"
    py_compile.compile(str(source), cfile=str(target), dfile=name, doraise=True,
                       invalidation_mode=py_compile.PycInvalidationMode.UNCHECKED_HASH)
    return target.read_bytes()
