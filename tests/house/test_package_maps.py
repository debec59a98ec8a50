"""Package maps: a package's docstring that lists its modules names every one of them, and nothing that is gone.

A map is the block of entries in an ``__init__.py`` docstring, one entry a line indented by four spaces: a name
(``module.py``, ``subpackage/`` or another file such as ``install.sh``), two or more spaces, its description;
longer descriptions go on in lines indented further. Names inside a description are free text. A name may be a
pattern (``sim2sim_*.py``, ``*/``: fnmatch) that names every module it matches, so that a task family's folder or
module needs no line in its package's map (issue 49: a family is its own files, 0 edits elsewhere).
"""

from __future__ import annotations

import ast
import fnmatch
import re
from pathlib import Path

from tests.house.tree import python_files

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("contract", "rl_core", "envs", "configs", "deploy", "apps", "fault_injection", "tools", "bench")
"""The project's top-level packages (tests/ aside), searched for maps at every depth."""
ENTRY = re.compile(r"^ {4}(?P<name>[\w.*-]+(?:\.\w+|/))(?: {2,}\S|$)")
"""A map entry's first line: four spaces, the name, then its description after two or more spaces."""


def map_entries(init: Path) -> list[str]:
    """The names a package's map lists, in order (empty: its docstring has no map)."""
    doc = ast.get_docstring(ast.parse(init.read_text()), clean=False) or ""
    return [m["name"] for line in doc.splitlines() if (m := ENTRY.match(line))]


def modules_of(package: Path) -> set[str]:
    """What a map must name: the package's modules (``__init__.py`` aside) and its folders holding Python."""
    out = set()
    for child in package.iterdir():
        if child.is_file() and child.suffix == ".py" and child.name != "__init__.py":
            out.add(child.name)
        elif child.is_dir() and child.name != "__pycache__" and python_files(child):
            out.add(child.name + "/")
    return out


def problems(package: Path) -> list[str]:
    """One line per module the package's map leaves out and per name it lists that is not there."""
    named = map_entries(package / "__init__.py")
    if not named:
        return []
    where = package.relative_to(ROOT) if package.is_relative_to(ROOT) else package.name
    present = modules_of(package)
    missing = sorted(m for m in present if not any(fnmatch.fnmatchcase(m, n) for n in named))
    gone = [n for n in named if not any(fnmatch.fnmatchcase(m, n) for m in present)
            and not (package / n.rstrip("/")).exists()]
    return ([f"{where}/__init__.py: the map does not name {m}" for m in missing]
            + [f"{where}/__init__.py: the map names {n}, which is not there" for n in gone])


def mapped_packages() -> list[Path]:
    inits = (f for top in PACKAGES for f in python_files(ROOT / top) if f.name == "__init__.py")
    return sorted(init.parent for init in inits if map_entries(init))


def test_every_package_map_names_every_module_and_nothing_that_is_gone():
    found = mapped_packages()
    names = {str(p.relative_to(ROOT)) for p in found}
    assert {"envs", "envs/tasks", "deploy", "deploy/runtime", "contract", "apps"} <= names, names
    assert [line for p in found for line in problems(p)] == []


def test_a_stale_map_is_reported(tmp_path):
    package = tmp_path / "pkg"
    (package / "sub").mkdir(parents=True)
    (package / "sub" / "inner.py").write_text("")
    (package / "kept.py").write_text("")
    (package / "new.py").write_text("")
    (package / "__init__.py").write_text('"""A package.\n\n    kept.py    stays\n    sub/       a folder\n'
                                         '    moved.py   went elsewhere\n                 (a second line)\n"""\n')
    assert map_entries(package / "__init__.py") == ["kept.py", "sub/", "moved.py"]
    assert problems(package) == ["pkg/__init__.py: the map does not name new.py",
                                 "pkg/__init__.py: the map names moved.py, which is not there"]
    (package / "__init__.py").write_text('"""A package.\n\n    k*.py  patterns\n    */  every folder\n'
                                         '    new.py  new\n    gone_*.py  matches nothing\n"""\n')
    assert problems(package) == ["pkg/__init__.py: the map names gone_*.py, which is not there"]
    (package / "__init__.py").write_text('"""A package without a map: kept.py, sub/ in prose."""\n')
    assert problems(package) == []
