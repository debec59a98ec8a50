"""rl_core is the learning side: it never imports from envs/, configs/ or deploy/ (the env contract is
rl_core/env_api.py)."""

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_rl_core_imports_nothing_from_envs_configs_or_deploy():
    bad = []
    for path in sorted((ROOT / "rl_core").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else (
                [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
            bad += [f"{path.relative_to(ROOT)}: {n}" for n in names if n.split(".")[0] in ("envs", "configs", "deploy")]
    assert not bad, bad
