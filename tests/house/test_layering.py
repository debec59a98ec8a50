"""Import layers between the top-level packages (including imports inside functions and type-only ones), and no
import circle between modules (an import under ``if TYPE_CHECKING:`` is a type's reference, not an import: a
family's torch-free observation table names its config's type, the config checks names against the table).

Each package imports only the floors below it (``ALLOWED``): ``contract`` (torch-free declarations shared by the
trainer and deployment) at the bottom; ``rl_core`` (the learning side: nothing of the env side, whose contract is
rl_core/env_api.py); ``envs`` (physics and tasks); ``configs`` (the one place that knows every task); ``deploy``
beside them, on ``contract`` alone (its runtime needs numpy and onnxruntime only); ``apps`` (web viewer, video,
adapters, sim2sim dispatch) above the tasks; the two CLIs; ``fault_injection``; and on top ``tools``, ``bench``
and ``tests`` (tests may test the benchmarks; tools and tests do not import each other). tools/ and bench/ run as
modules (``python -m tools.x``) without ``sys.path`` edits.
"""

from __future__ import annotations

import ast
import functools
from pathlib import Path

from tests.house.tree import python_files

ROOT = Path(__file__).resolve().parents[2]
UNITS = ("contract", "rl_core", "envs", "configs", "deploy", "apps", "fault_injection", "tools", "bench", "tests",
         "train", "play")
_BELOW_APPS = {"contract", "rl_core", "envs", "configs", "deploy"}
ALLOWED: dict[str, set[str]] = {
    "contract": set(),
    "rl_core": {"contract"},
    "envs": {"contract", "rl_core"},
    "configs": {"contract", "rl_core", "envs"},
    "deploy": {"contract"},
    "apps": _BELOW_APPS,
    "train": _BELOW_APPS | {"apps"},
    "play": _BELOW_APPS | {"apps"},
    "fault_injection": _BELOW_APPS | {"apps", "train", "play"},
    "tools": _BELOW_APPS | {"apps", "train", "play", "fault_injection"},
    "bench": _BELOW_APPS | {"apps", "train", "play", "fault_injection"},
    "tests": _BELOW_APPS | {"apps", "train", "play", "fault_injection", "bench"},
}
"""Package -> the packages it may import (the floors below it)."""


def unit_of(path: Path) -> str:
    rel = path.relative_to(ROOT)
    return rel.parts[0] if len(rel.parts) > 1 else rel.stem


def imported_units(tree: ast.AST) -> set[str]:
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0:
            names = [node.module or ""]
        else:
            continue
        found |= {n.split(".")[0] for n in names if n.split(".")[0] in UNITS}
    return found


def import_graph(root: Path = ROOT) -> dict[str, dict[str, list[str]]]:
    """unit -> imported unit -> the files of ``unit`` that import it (self-imports left out)."""
    graph: dict[str, dict[str, list[str]]] = {u: {} for u in UNITS}
    files = [p for u in UNITS for p in (python_files(root / u) if (root / u).is_dir() else [root / f"{u}.py"])]
    for path in files:
        if not path.is_file():
            continue
        src = unit_of(path) if root == ROOT else path.relative_to(root).parts[0].removesuffix(".py")
        for dst in imported_units(ast.parse(path.read_text())) - {src}:
            graph[src].setdefault(dst, []).append(str(path.relative_to(root)))
    return graph


def find_cycle(graph: dict[str, dict[str, list[str]]]) -> list[str] | None:
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(u: str) -> list[str] | None:
        state[u] = 1
        stack.append(u)
        for v in graph.get(u, {}):
            if state.get(v) == 1:
                return stack[stack.index(v):] + [v]
            if v not in state and (cycle := visit(v)):
                return cycle
        stack.pop()
        state[u] = 2
        return None

    for u in graph:
        if u not in state and (cycle := visit(u)):
            return cycle
    return None


@functools.cache
def repo_graph() -> dict[str, dict[str, list[str]]]:
    """The repository's import graph, built by the first test that needs it (not at collection: every xdist
    worker collects this file)."""
    return import_graph()


def test_every_package_imports_only_the_floors_below_it():
    up = {u: {dst: files[:3] for dst, files in repo_graph()[u].items() if dst not in ALLOWED[u]} for u in UNITS}
    assert not any(up.values()), f"arrows up: { {u: v for u, v in up.items() if v} }"


def test_the_floor_check_can_fail(tmp_path):
    (tmp_path / "deploy").mkdir()
    (tmp_path / "deploy" / "sim.py").write_text("from envs.tasks import base\n")
    graph = import_graph(tmp_path)
    assert "envs" in graph["deploy"] and "envs" not in ALLOWED["deploy"]


def test_no_import_cycle_among_top_level_packages():
    graph = repo_graph()
    cycle = find_cycle(graph)
    assert cycle is None, " -> ".join(cycle or []) + f"  ({ {u: graph[u] for u in cycle or []} })"


def test_the_cycle_finder_can_fail(tmp_path):
    (tmp_path / "envs").mkdir()
    (tmp_path / "configs").mkdir()
    (tmp_path / "envs" / "registry.py").write_text("def f():\n    import configs\n")
    (tmp_path / "configs" / "__init__.py").write_text("from envs.registry import f\n")
    assert find_cycle(import_graph(tmp_path)) == ["envs", "configs", "envs"]


def test_tools_and_bench_do_not_edit_sys_path():
    bad = [str(p.relative_to(ROOT)) for u in ("tools", "bench", "fault_injection") for p in python_files(ROOT / u)
           if "sys.path" in p.read_text()]
    assert not bad, bad
    assert (ROOT / "tools" / "__init__.py").is_file() and (ROOT / "bench" / "__init__.py").is_file()


def _type_only(tree: ast.AST) -> set[int]:
    """The ids of the nodes under an ``if TYPE_CHECKING:`` (not its ``else``)."""
    out: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            out |= {id(n) for stmt in node.body for n in ast.walk(stmt)}
    return out


def module_graph(root: Path = ROOT) -> dict[str, set[str]]:
    """Module -> the project modules it imports at run time (``from pkg import submodule`` counts as the
    submodule; imports under ``if TYPE_CHECKING:`` do not count)."""
    mods = {}
    for u in UNITS:
        paths = python_files(root / u) if (root / u).is_dir() else [root / f"{u}.py"]
        for p in paths:
            if p.is_file():
                name = ".".join(p.relative_to(root).with_suffix("").parts)
                mods[name.removesuffix(".__init__")] = p
    graph: dict[str, set[str]] = {m: set() for m in mods}
    for m, p in mods.items():
        package = m if p.name == "__init__.py" else m.rpartition(".")[0]
        tree = ast.parse(p.read_text())
        skip = _type_only(tree)
        for node in ast.walk(tree):
            if id(node) in skip:
                continue
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    parts = package.split(".")[:len(package.split(".")) - node.level + 1]
                    base = ".".join(parts + ([base] if base else []))
                names = [f"{base}.{a.name}" if f"{base}.{a.name}" in mods else base for a in node.names]
            else:
                continue
            for n in names:
                while n and n not in mods:
                    n = n.rpartition(".")[0]
                if n and n != m:
                    graph[m].add(n)
    return graph


def test_no_import_circle_between_modules():
    graph = module_graph()
    cycle = find_cycle({m: dict.fromkeys(deps, []) for m, deps in graph.items()})
    assert cycle is None, " -> ".join(cycle or [])


def test_a_type_only_import_closes_no_circle_and_a_run_time_one_does(tmp_path):
    (tmp_path / "envs").mkdir()
    (tmp_path / "envs" / "table.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
                                                "    from envs.config import C\n")
    (tmp_path / "envs" / "config.py").write_text("from envs.table import T\n")
    graph = module_graph(tmp_path)
    assert find_cycle({m: dict.fromkeys(deps, []) for m, deps in graph.items()}) is None
    (tmp_path / "envs" / "table.py").write_text("from envs.config import C\n")
    graph = module_graph(tmp_path)
    assert find_cycle({m: dict.fromkeys(deps, []) for m, deps in graph.items()}) == [
        "envs.config", "envs.table", "envs.config"]
