"""The layout DESIGN.md fixes, checked on the source itself: imports never point up the layers
protocols <- brain <- replay <- adapter; the built-in table (adapter/local) knows no platform;
the fake platform servers live in adapter/fakes; the CLI entry point stays thin; our modules
import one another without a cycle."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path
from typing import TypeGuard

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


def _module_names(root: Path) -> dict[str, Path]:
    out: dict[str, Path] = {}
    for layer in LAYERS:
        for path in (root / layer).rglob("*.py"):
            parts = list(path.relative_to(root).with_suffix("").parts)
            out[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return out


def _runtime_imports(tree: ast.AST) -> list[ast.Import | ast.ImportFrom]:
    """Every import that can run: at the top and inside functions alike (an import moved into
    a function still closes a cycle), but not the ``if TYPE_CHECKING:`` ones, which never run."""
    found: list[ast.Import | ast.ImportFrom] = []
    todo = [tree]
    while todo:
        node = todo.pop()
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            todo.extend(node.orelse)
            continue
        if isinstance(node, ast.Import | ast.ImportFrom):
            found.append(node)
        todo.extend(ast.iter_child_nodes(node))
    return found


def import_graph(root: Path) -> dict[str, set[str]]:
    """Module -> the modules of ours it imports (``from a import b``: a.b where b is a module,
    else a); the packages a dotted name passes through are not counted."""
    names = _module_names(root)

    def known(name: str) -> str | None:
        while name and name not in names:
            name = name.rpartition(".")[0]
        return name or None

    graph: dict[str, set[str]] = {}
    for name, path in names.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        edges: set[str | None] = set()
        for node in _runtime_imports(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                edges |= {known(alias.name) for alias in node.names}
                continue
            base = node.module or ""
            if node.level:
                up = package.split(".")[:len(package.split(".")) - node.level + 1]
                base = ".".join([*up, base] if base else up)
            edges |= {known(f"{base}.{a.name}") if f"{base}.{a.name}" in names else known(base)
                      for a in node.names}
        graph[name] = {e for e in edges if e and e != name}
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    out: list[list[str]] = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                elif child in stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    out.append(sorted(component))
    return out


def test_our_modules_import_one_another_without_a_cycle() -> None:
    graph = import_graph(ROOT)
    assert "adapter.platforms.botzone" in graph["adapter.platforms.botzone_main"]
    assert cycles(graph) == []


def test_the_cycle_check_finds_cycles_through_functions_not_type_checking(tmp_path: Path) -> None:
    """The check itself: an import inside a function closes a cycle, ``from package import
    module`` points at the module, a TYPE_CHECKING import does not count."""
    pkg = tmp_path / "replay" / "things"
    pkg.mkdir(parents=True)
    (tmp_path / "replay" / "__init__.py").write_text("")
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text("from replay.things import b\n")
    (pkg / "b.py").write_text("def f():\n    from replay.things.c import g\n")
    (pkg / "c.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
                              "    from replay.things import b\nimport replay.things.a\n")
    for layer in ("protocols", "brain", "adapter"):
        (tmp_path / layer).mkdir()
    graph = import_graph(tmp_path)
    assert graph["replay.things.c"] == {"replay.things.a"}
    assert cycles(graph) == [["replay.things.a", "replay.things.b", "replay.things.c"]]
    (pkg / "b.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
                              "    from replay.things.c import g\n")
    assert cycles(import_graph(tmp_path)) == []


VARIANT_NAMES = {"riichi", "mcr", "taiwan16", "mass"}
# The variant names left outside brain/rules/ on purpose, each with why it may stay: data and
# contracts keyed by the wire name, where a variant without an entry still works.
LEFT_BY_DESIGN = {
    "protocols/events.py": "the event contract's Literal of wire names (protocols may not "
                           "import the brain; test_the_event_contract_names_the_registry)",
    "brain/policies/mc/tables.py": "data written by python -m brain.policies.mc.solo, which "
                                   "plays every registered variant",
    "replay/yaku_names.py": "display translations per scoring system; english() tries every "
                            "table, so a variant without one still works",
    "adapter/opponent_sets.py": "notes on what the repository holds per variant, with a "
                                "default for any other",
}


def _is_variant_name(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and node.value in VARIANT_NAMES


def _names_only(node: ast.AST) -> TypeGuard[ast.Tuple | ast.List | ast.Set]:
    return (isinstance(node, ast.Tuple | ast.List | ast.Set) and len(node.elts) >= 1
            and all(_is_variant_name(e) for e in node.elts))


def _variant_name_checks(path: Path, root: Path = ROOT) -> list[str]:
    """Comparisons and membership tests of a variant expression against variant names, dict
    literals keyed by variant names (a per-variant table) and lists of two or more names (an
    enumeration the registry owns), in one source file."""
    where = path.relative_to(root).as_posix()
    found = []
    compared: set[int] = set()  # the names of a comparison count once, with it
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Compare):
            sides = [node.left, *node.comparators]
            compared.update(id(s) for s in sides)
            named = any(_is_variant_name(s) or _names_only(s) for s in sides)
            if named and any("variant" in ast.unparse(s) for s in sides):
                found.append(f"{where}:{node.lineno} {ast.unparse(node)}")
        elif isinstance(node, ast.Dict):
            keys = [k for k in node.keys if k is not None]
            if keys and all(_is_variant_name(k) for k in keys):
                found.append(f"{where}:{node.lineno} a table keyed by variant")
        elif _names_only(node) and len(node.elts) >= 2 and id(node) not in compared:
            found.append(f"{where}:{node.lineno} a list of variant names")
    return found


def _checks_outside_rules() -> list[str]:
    return [check for layer in LAYERS for path in sorted((ROOT / layer).rglob("*.py"))
            if path.relative_to(ROOT).parts[:2] != ("brain", "rules")
            for check in _variant_name_checks(path)]


def test_no_variant_name_checks_outside_rules() -> None:
    """Code asks the Variant object (brain/rules/variant.py) what a variant does; only
    brain/rules/ may test the name itself. The string stays the wire and log name."""
    checks = _checks_outside_rules()
    left = [c for c in checks if c.split(":")[0] not in LEFT_BY_DESIGN]
    print(f"{len(checks)} variant-name checks outside brain/rules/, {len(left)} not by design")
    assert not left, "\n".join(left)
    assert {c.split(":")[0] for c in checks} == set(LEFT_BY_DESIGN), "stale LEFT_BY_DESIGN"


def test_the_variant_name_counter_sees_each_kind_of_check(tmp_path: Path) -> None:
    """The measure itself: each shape of check it must see, and what it must let pass."""
    source = tmp_path / "sample.py"
    source.write_text(
        'if state.variant == "riichi": pass\n'
        'if variant in ("taiwan16", "mass"): pass\n'
        'if "mcr" != self.variant: pass\n'
        'SCALE = {"riichi": 1.0, "mcr": 2.0}\n'
        'NAMES = ("riichi", "mcr")\n'
        'if request.verb == "riichi": pass\n'  # an action called riichi, not a variant
        'row = {"riichi": [], "calls": []}\n'  # a mixed dict is no per-variant table
        'GameStarted("mcr", 0)\n', encoding="utf-8")
    found = [line.split(" ", 1)[0] for line in _variant_name_checks(source, tmp_path)]
    assert sorted(found) == ["sample.py:1", "sample.py:2", "sample.py:3", "sample.py:4",
                             "sample.py:5"]


def test_the_event_contract_names_the_registry() -> None:
    """GameStarted.variant's Literal and the registry list the same names, in the same order."""
    from typing import get_args

    from brain.rules.variant import VARIANT_NAMES as registry
    from protocols import events as ev

    assert get_args(ev.Variant) == registry
    assert registry == ev.VARIANTS
