"""No function over 80 lines (issue 26) in the packages that hold to it so far: a long function is split by job
before it grows. Widen ``CHECKED`` as more packages get there."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
LIMIT = 80
"""Longest function allowed, in lines (decorators excluded, docstring and body included)."""
CHECKED = ("envs/scenes", "envs/physics", "envs/robots", "envs/terrain")
"""Folders every function of which is checked."""


def long_functions(source: str, limit: int = LIMIT) -> list[tuple[str, int]]:
    """``(name, lines)`` of each function or method of ``source`` longer than ``limit`` lines."""
    return [(node.name, node.end_lineno - node.lineno + 1) for node in ast.walk(ast.parse(source))
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.end_lineno is not None
            and node.end_lineno - node.lineno + 1 > limit]


@pytest.mark.parametrize("folder", CHECKED)
def test_no_function_over_the_limit(folder):
    found = [f"{path.relative_to(ROOT)}: {name} ({n} lines)" for path in sorted((ROOT / folder).rglob("*.py"))
             for name, n in long_functions(path.read_text())]
    assert not found, f"functions over {LIMIT} lines: " + "; ".join(found)


def test_the_check_finds_a_long_function():
    body = "".join(f"    x{i} = {i}\n" for i in range(LIMIT))
    assert long_functions(f"def f():\n{body}") == [("f", LIMIT + 1)]
    assert long_functions(f"class C:\n    def g(self):\n{body.replace('    ', '        ')}") == [("g", LIMIT + 1)]
    assert long_functions("def short():\n    pass\n") == []
