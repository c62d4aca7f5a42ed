"""The layout DESIGN.md fixes, checked on the source itself: imports never point up the layers
protocols <- brain <- replay <- adapter; the built-in table (adapter/local) knows no platform;
the fake platform servers live in adapter/fakes; the CLI entry point stays thin."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
LAYERS = ["protocols", "brain", "replay", "adapter"]
PLATFORM_MODULES = ("protocols.botzone", "protocols.tenhou", "protocols.ntpu", "protocols.mjai",
                    "adapter.platforms", "adapter.fakes")


def _imports(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.append(node.module)
    return names


def _ours(name: str) -> str | None:
    top = name.split(".")[0]
    return top if top in LAYERS else None


@pytest.mark.parametrize("layer", LAYERS)
def test_imports_never_point_up_the_layers(layer: str) -> None:
    allowed = set(LAYERS[:LAYERS.index(layer) + 1])
    wrong = [f"{path.relative_to(ROOT)} imports {name}"
             for path in sorted((ROOT / layer).rglob("*.py"))
             for name in _imports(path)
             if _ours(name) and _ours(name) not in allowed]
    assert not wrong, wrong


def test_the_built_in_table_knows_no_platform() -> None:
    table = ROOT / "adapter" / "local"
    wrong = [f"{path.name} imports {name}" for path in sorted(table.glob("*.py"))
             for name in _imports(path) if name.startswith(PLATFORM_MODULES)]
    assert not wrong, wrong
    for server in ("ntpu_server", "tenhou_server", "tenhou_recording", "tenhou_table",
                   "tenhou_seat", "tenhou_results", "tenhou_serve", "botzone_judge"):
        assert not (table / f"{server}.py").exists(), f"{server} belongs in adapter/fakes"
        assert (ROOT / "adapter" / "fakes" / f"{server}.py").is_file()


def test_cli_entry_point_is_thin_and_every_group_registers() -> None:
    cli = ROOT / "adapter" / "cli.py"
    assert len(cli.read_text(encoding="utf-8").splitlines()) < 150
    groups = sorted(p.stem for p in (ROOT / "adapter" / "commands").glob("*.py")
                    if p.stem != "__init__")
    code = ("import adapter.cli as c; print(' '.join(sorted(g.__name__.rsplit('.', 1)[1] "
            "for g in c.COMMAND_GROUPS)))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         cwd=ROOT, check=True).stdout.split()
    assert out == groups


def test_the_cli_does_not_import_the_brain_or_structlog_at_start() -> None:
    """Botzone starts `mjbot botzone` for every turn: the entry point must stay light."""
    code = ("import sys, adapter.cli; heavy = [m for m in ('structlog', 'brain.policies', 'ray', "
            "'numpy', 'replay.log') if m in sys.modules]; print(heavy)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         cwd=ROOT, check=True).stdout.strip()
    assert out == "[]"


def test_tests_read_no_data_outside_the_repository() -> None:
    """A plain clone (no ../shared beside it) must test the same: tests read tests/data."""
    wrong = [f"{path.name}:{n}" for path in sorted((ROOT / "tests").glob("*.py"))
             for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
             if ('"shared"' in line or "parents[2]" in line or "parent.parent.parent" in line)
             and path.name not in ("shared_data.py", "test_layout.py")]
    assert not wrong, wrong


VARIANT_NAMES = {"riichi", "mcr", "taiwan16", "mass"}


def _is_variant_name(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and node.value in VARIANT_NAMES


def _variant_name_checks(path: Path) -> list[str]:
    """Comparisons and membership tests of a variant expression against variant names, and
    dict literals keyed by variant names (a per-variant table), in one source file."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Compare):
            sides = [node.left, *node.comparators]
            named = any(_is_variant_name(s) or (isinstance(s, ast.Tuple | ast.List | ast.Set)
                        and s.elts and all(_is_variant_name(e) for e in s.elts)) for s in sides)
            if named and any("variant" in ast.unparse(s) for s in sides):
                found.append(f"{path.relative_to(ROOT)}:{node.lineno} {ast.unparse(node)}")
        elif isinstance(node, ast.Dict):
            keys = [k for k in node.keys if k is not None]
            if keys and all(_is_variant_name(k) for k in keys):
                found.append(f"{path.relative_to(ROOT)}:{node.lineno} a table keyed by variant")
    return found


def test_no_variant_name_checks_outside_rules() -> None:
    """Code asks the Variant object (brain/rules/variant.py) what a variant does; only
    brain/rules/ may test the name itself. The string stays the wire and log name."""
    checks = [check for layer in LAYERS for path in sorted((ROOT / layer).rglob("*.py"))
              if path.relative_to(ROOT).parts[:2] != ("brain", "rules")
              for check in _variant_name_checks(path)]
    print(f"{len(checks)} variant-name checks outside brain/rules/")
    assert len(checks) <= 13, "\n".join(checks)
