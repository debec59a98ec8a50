"""The README stays short and every relative link in README.md and docs/*.md points to an existing file
(and, with ``#anchor``, to an existing heading of it)."""

from __future__ import annotations

import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")


def slug(heading: str) -> str:
    """GitHub's anchor of a heading."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def anchors(path: Path) -> set[str]:
    text = re.sub(r"```.*?```", "", path.read_text(), flags=re.S)
    return {slug(m.group(1)) for m in re.finditer(r"^#+\s+(.*)$", text, flags=re.M)}


def broken_links(path: Path) -> list[str]:
    bad = []
    for target in LINK.findall(path.read_text()):
        if re.match(r"[a-z]+:", target):
            continue
        file, _, anchor = target.partition("#")
        dest = (path.parent / file).resolve() if file else path
        if not dest.exists():
            bad.append(f"{path.relative_to(ROOT)}: {target} (no such file)")
        elif anchor and dest.suffix == ".md" and anchor not in anchors(dest):
            bad.append(f"{path.relative_to(ROOT)}: {target} (no such heading)")
    return bad


def test_readme_is_at_most_200_lines():
    n = len((ROOT / "README.md").read_text().splitlines())
    assert n <= 200, f"README.md has {n} lines; move detail to docs/"


def test_every_relative_link_resolves():
    bad = [b for p in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))] for b in broken_links(p)]
    assert not bad, "\n".join(bad)


def test_the_link_check_can_fail(tmp_path, monkeypatch):
    monkeypatch.setattr(sys.modules[__name__], "ROOT", tmp_path)
    (tmp_path / "a.md").write_text("# Title\n[x](b.md) [y](a.md#title) [z](a.md#nope) [w](https://example.com)\n")
    assert broken_links(tmp_path / "a.md") == ["a.md: b.md (no such file)", "a.md: a.md#nope (no such heading)"]
