"""Import layers between the top-level packages (including imports inside functions).

rl_core is the learning side: it imports nothing from the env side (the env contract is rl_core/env_api.py).
envs/ never imports configs/ (configs/catalog.py is the one place that knows every task). tests/ and tools/
do not import each other (shared fault injection lives in fault_injection/). No import cycle among the
top-level packages, and tools/ and bench/ run as modules (``python -m tools.x``) without ``sys.path`` edits.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
UNITS = ("rl_core", "envs", "configs", "deploy", "fault_injection", "tools", "bench", "tests", "train", "play")


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
    files = [p for u in UNITS for p in ((root / u).rglob("*.py") if (root / u).is_dir() else [root / f"{u}.py"])]
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


GRAPH = import_graph()


def test_rl_core_imports_nothing_from_the_env_side():
    assert not GRAPH["rl_core"], f"rl_core imports {GRAPH['rl_core']}"


def test_envs_do_not_import_configs_or_the_entry_points():
    bad = {u: f for u, f in GRAPH["envs"].items() if u not in ("rl_core",)}
    assert not bad, f"envs imports {bad}"


def test_tests_and_tools_do_not_import_each_other():
    assert "tools" not in GRAPH["tests"], GRAPH["tests"]["tools"]
    assert "tests" not in GRAPH["tools"], GRAPH["tools"]["tests"]
    assert "tests" not in GRAPH["fault_injection"], GRAPH["fault_injection"]["tests"]


def test_no_import_cycle_among_top_level_packages():
    cycle = find_cycle(GRAPH)
    assert cycle is None, " -> ".join(cycle or []) + f"  ({ {u: GRAPH[u] for u in cycle or []} })"


def test_the_cycle_finder_can_fail(tmp_path):
    (tmp_path / "envs").mkdir()
    (tmp_path / "configs").mkdir()
    (tmp_path / "envs" / "registry.py").write_text("def f():\n    import configs\n")
    (tmp_path / "configs" / "__init__.py").write_text("from envs.registry import f\n")
    assert find_cycle(import_graph(tmp_path)) == ["envs", "configs", "envs"]


def test_tools_and_bench_do_not_edit_sys_path():
    bad = [str(p.relative_to(ROOT)) for u in ("tools", "bench", "fault_injection") for p in (ROOT / u).rglob("*.py")
           if "sys.path" in p.read_text()]
    assert not bad, bad
    assert (ROOT / "tools" / "__init__.py").is_file() and (ROOT / "bench" / "__init__.py").is_file()
