"""No function over ``MAX_LINES`` lines (signature + body, ``end_lineno - lineno + 1``) anywhere in the project's
code (every package, the tools, the benchmarks and the two CLIs; the tests are not measured): a long function is
several jobs that want names of their own (issues 26 and 36)."""

from __future__ import annotations

import ast
from pathlib import Path

from tests.house.tree import python_files

ROOT = Path(__file__).resolve().parents[2]
MAX_LINES = 80
CHECKED = ("contract", "rl_core", "envs", "configs", "deploy", "apps", "fault_injection", "tools", "bench", "train.py",
           "play.py")
"""Folders (walked recursively) and files whose functions are measured."""

ALLOWED: dict[str, int] = {}
"""Functions allowed over the limit while being split, with their length when listed (none left: issue 26 split
the last ones). A listed function may not grow, and one that no longer needs its entry must leave the list."""


def _functions(tree: ast.AST, prefix: str = ""):
    """``(qualified name, node)`` of every function and method, nested ones included."""
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            name = prefix + node.name
            yield name, node
            yield from _functions(node, name + ".")
        elif isinstance(node, ast.ClassDef):
            yield from _functions(node, prefix + node.name + ".")
        else:
            yield from _functions(node, prefix)


def function_lengths(paths: tuple[str, ...] = CHECKED, root: Path = ROOT) -> dict[str, int]:
    """``"path:qualified.name" -> lines`` of every function in the Python files under ``paths``."""
    out: dict[str, int] = {}
    for p in paths:
        base = root / p
        files = [base] if base.suffix == ".py" else python_files(base)
        for f in files:
            rel = f.relative_to(root).as_posix()
            for name, node in _functions(ast.parse(f.read_text(), str(f))):
                assert node.end_lineno is not None
                out[f"{rel}:{name}"] = node.end_lineno - node.lineno + 1
    return out


def over_limit(lengths: dict[str, int], allowed: dict[str, int], limit: int = MAX_LINES) -> list[str]:
    """One line per problem: a function over ``limit`` not allowed (or longer than allowed), a stale allowance."""
    problems = []
    for name, n in sorted(lengths.items()):
        if n > limit and name not in allowed:
            problems.append(f"{name} has {n} lines (limit {limit}): split it")
        elif name in allowed and n > allowed[name]:
            problems.append(f"{name} grew to {n} lines (allowed {allowed[name]} while it is being split)")
    for name in sorted(allowed):
        if lengths.get(name, 0) <= limit:
            problems.append(f"{name} is now within {limit} lines (or gone): remove it from ALLOWED")
    return problems


def test_no_function_over_the_limit():
    problems = over_limit(function_lengths(), ALLOWED)
    assert not problems, "\n".join(problems)


def test_the_checker_finds_long_nested_and_stale(tmp_path):
    def body(indent: int) -> str:
        return "\n".join(" " * indent + f"x{i} = {i}" for i in range(MAX_LINES))

    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "m.py").write_text(
        f"class A:\n  def long(self):\n{body(4)}\n\ndef short():\n    def inner():\n{body(8)}\n    return inner\n")
    lengths = function_lengths(("pkg",), tmp_path)
    assert lengths["pkg/m.py:A.long"] == MAX_LINES + 1
    assert lengths["pkg/m.py:short.inner"] == MAX_LINES + 1
    assert lengths["pkg/m.py:short"] == MAX_LINES + 3
    problems = over_limit(lengths, {"pkg/m.py:short": 200, "pkg/m.py:gone": 100})
    assert [p.split(" ")[0] for p in problems] == ["pkg/m.py:A.long", "pkg/m.py:short.inner", "pkg/m.py:gone"]
    assert "split it" in problems[0] and "remove it from ALLOWED" in problems[2]
    assert over_limit({"pkg/m.py:short": 90}, {"pkg/m.py:short": 85}) == [
        "pkg/m.py:short grew to 90 lines (allowed 85 while it is being split)"]
