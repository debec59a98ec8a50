"""The kernel report's line and the start-up manifest (envs/physics/warp_kernels.py), without Warp."""

from __future__ import annotations

from pathlib import Path

from envs.physics.warp_kernels import (
    KernelReport,
    cache_binaries,
    expected_cached,
    manifest_path,
    read_manifest,
    write_manifest,
)


def test_report_line_says_cache_or_compile() -> None:
    assert KernelReport(41, 0, 0.42, "cuda:0").line() == "kernels: 41 modules from cache in 0.4 s (cuda:0)"
    line = KernelReport(41, 34, 52.0, "cuda:0").line()
    assert line.startswith("kernels: 41 modules, 34 compiled in 52.0 s (cuda:0)")


def _module(root: Path, name: str, files: tuple[str, ...]) -> None:
    d = root / name
    d.mkdir(parents=True)
    for f in files:
        (d / f).write_bytes(b"x")


def test_manifest_predicts_a_cached_start_only_when_every_binary_is_there(tmp_path: Path) -> None:
    _module(tmp_path, "wp_a_1234567", ("wp_a_1234567.cpu0abc.o", "wp_a_1234567.meta", "wp_a_1234567.cpp"))
    _module(tmp_path, "wp_b_89abcde", ("wp_b_89abcde.sm90.ptx", "wp_b_89abcde.meta"))
    binaries = cache_binaries(tmp_path)
    assert binaries == {"wp_a_1234567/wp_a_1234567.cpu0abc.o", "wp_b_89abcde/wp_b_89abcde.sm90.ptx"}
    assert not expected_cached(tmp_path, "k")  # no manifest yet: a first run
    write_manifest(tmp_path, "k", sorted(binaries))
    assert read_manifest(tmp_path, "k") == sorted(binaries)
    assert expected_cached(tmp_path, "k")
    assert not list(manifest_path(tmp_path, "k").parent.glob("*.tmp"))  # written through a temporary, renamed
    (tmp_path / "wp_b_89abcde" / "wp_b_89abcde.sm90.ptx").unlink()  # a cache cleaned in part
    assert not expected_cached(tmp_path, "k")
    assert not expected_cached(tmp_path, "other-model")


def test_a_torn_manifest_reads_as_none(tmp_path: Path) -> None:
    path = manifest_path(tmp_path, "k")
    path.parent.mkdir(parents=True)
    path.write_text('{"binaries": ["wp_a')
    assert read_manifest(tmp_path, "k") is None and not expected_cached(tmp_path, "k")
