"""The package's shape: no import cycles between modules (imports inside functions count), no
module over 600 lines, and the seams the layout promises (docs/design.md)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[2] / "src"
PACKAGE = SRC / "oltplab"
MAX_LINES = 600


def _modules() -> dict[str, tuple[Path, bool]]:
    found = {}
    for path in PACKAGE.rglob("*.py"):
        parts = list(path.relative_to(SRC).with_suffix("").parts)
        is_package = parts[-1] == "__init__"
        found[".".join(parts[:-1] if is_package else parts)] = (path, is_package)
    return found


MODULES = _modules()


def _resolve(name: str) -> str:
    """The module that ``name`` (a module, or a name inside one) lives in."""
    while name not in MODULES:
        name = name.rpartition(".")[0]
    return name


def _type_checking(node: ast.AST) -> bool:
    return isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)


def _imports(module: str) -> set[str]:
    """Every oltplab module that ``module`` imports, at any depth of its code."""
    path, is_package = MODULES[module]
    base = module if is_package else module.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                parts = base.split(".")
                parent = ".".join(parts[:len(parts) - node.level + 1])
                head = f"{parent}.{node.module}" if node.module else parent
            else:
                head = node.module or ""
            names = [f"{head}.{a.name}" for a in node.names]
        else:
            continue
        for name in names:
            if name == "oltplab" or name.startswith("oltplab."):
                target = _resolve(name)
                if target != module:
                    found.add(target)
    return found


def _cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in edges[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return found


EDGES = {m: _imports(m) for m in MODULES}


def test_no_import_cycles_between_modules():
    assert _cycles(EDGES) == []


def test_the_cycle_finder_finds_a_cycle():
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_imports_inside_functions_count():
    (path, _), = [MODULES["oltplab.cli.results"]]
    assert "def " in path.read_text()
    inner = {t for node in ast.walk(ast.parse(path.read_text()))
             if isinstance(node, ast.FunctionDef) for t in _imports("oltplab.cli.results")}
    assert "oltplab.results.store" in inner


@pytest.mark.parametrize("module", sorted(MODULES))
def test_no_module_over_600_lines(module):
    path = MODULES[module][0]
    assert len(path.read_text().splitlines()) <= MAX_LINES, path


def _importers_of(prefix: str, within: str) -> list[tuple[str, str]]:
    return sorted((m, t) for m, targets in EDGES.items() if m.startswith(within)
                  for t in targets if t == prefix or t.startswith(prefix + "."))


def test_engines_import_nothing_from_the_layers_above():
    for above in ("oltplab.loadgen", "oltplab.scenarios", "oltplab.cli", "oltplab.faults",
                  "oltplab.plans", "oltplab.runs", "oltplab.report"):
        assert _importers_of(above, "oltplab.engines") == []


def test_scenarios_and_faults_reach_an_engine_only_through_the_registry():
    """They may use what all engines share (engines/base.py, engines/common/), never one
    engine's own modules."""
    for layer in ("oltplab.scenarios", "oltplab.faults"):
        direct = [(m, t) for m, t in _importers_of("oltplab.engines", layer)
                  if t not in ("oltplab.engines", "oltplab.engines.base")
                  and not t.startswith("oltplab.engines.common")]
        assert direct == []


def test_mariadb_shares_code_with_postgres_only_through_common():
    assert _importers_of("oltplab.engines.postgres", "oltplab.engines.mariadb") == []


def test_the_layers_above_the_workloads_name_none_of_their_modules():
    """loadgen/, results/, metrics/ and report/ ask the workload registry; none imports one
    workload's own modules."""
    for layer in ("oltplab.loadgen", "oltplab.results", "oltplab.metrics", "oltplab.report"):
        own = [(m, t) for m, t in _importers_of("oltplab.workloads", layer)
               if t != "oltplab.workloads"]
        assert own == []


def test_only_the_workloads_name_a_transaction_type():
    names = ("new_order", "order_status", "stock_level")
    for layer in ("loadgen", "results", "metrics", "report"):
        for path in (PACKAGE / layer).rglob("*.py"):
            code = "\n".join(line for line in path.read_text().splitlines()
                             if not line.lstrip().startswith("#"))
            assert not [n for n in names if f'"{n}"' in code], path


# What the C loop's shared part may not name: TPC-C's transactions, tables, procedures and
# its Terminal type (a workload's terminal is an object the loop only hands back to it).
NATIVE_LOOP = PACKAGE / "native" / "loop"
TPCC_WORDS = re.compile(
    r"new[_ -]?orders?|neword|order[_ -]?lines?|payments?|order[_ -]?status|ostat|"
    r"deliver(y|ies)|stock[_ -]?level|slev|districts?|warehouses?|customers?|nurand|tpc-?c",
    re.IGNORECASE)


def tpcc_words_in(folder: Path) -> list[tuple[str, int, str]]:
    found = []
    for path in sorted(folder.iterdir()):
        for n, line in enumerate(path.read_text().splitlines(), 1):
            words = [m.group(0) for m in TPCC_WORDS.finditer(line)]
            words += re.findall(r"\bTerminal\b", line)
            found += [(path.name, n, w) for w in words]
    return found


def test_the_native_loop_names_no_tpcc_thing():
    """native/loop/ drives any workload through workload.h; TPC-C's parts live in
    native/tpcc/."""
    assert tpcc_words_in(NATIVE_LOOP) == []


TESTS = SRC.parent / "tests"


def _test_folders(kind: str) -> list[Path]:
    return sorted(p.relative_to(TESTS / kind) for p in (TESTS / kind).rglob("*")
                  if p.is_dir() and p.name != "__pycache__")


@pytest.mark.parametrize("kind", ["unit", "integration"])
def test_unit_and_integration_tests_mirror_the_packages(kind):
    """tests/unit/<package>/ and tests/integration/<package>/: a folder per package it tests."""
    strays = [str(f) for f in _test_folders(kind) if not (PACKAGE / f).is_dir()]
    assert not strays, f"tests/{kind} folders that name no package of oltplab: {strays}"


def test_end_to_end_tests_mirror_the_commands():
    """tests/e2e/<command>/: a folder per command group of the CLI."""
    from oltplab.cli.main import cli
    strays = [str(f) for f in _test_folders("e2e") if f.name not in cli.list_commands(None)]
    assert not strays, f"tests/e2e folders that name no command: {strays}"
