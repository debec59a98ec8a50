"""One torchlib registry for every ONNX export of a test process.

``torch.onnx.export(..., dynamo=True)`` (torch 2.13, ``rl_core/export.py``) builds its op registry from torchlib on
every call: 2.7 s of a 4.3 s export of a small MLP on the 2-core CPU, about 30 times in the default suite's
processes. The registry is only read during an export when no ``custom_translation_table`` is given (we never give
one), so the suite builds it once per opset and hands every export the same one. The files written are the same;
play.py and the other programs export once per process and are left as torch has them. Without the private module
(another torch) the suite runs as torch has it. ``install`` wraps ``torch.onnx.export`` so that the share is made
at a process's first export: a test process that exports nothing does not import the exporter (2 s).
"""

from __future__ import annotations

import functools
from typing import Any


def share_the_torchlib_registry() -> bool:
    """Make ``ONNXRegistry.from_torchlib`` build each opset's registry once in this process; False when this torch
    has no such method."""
    try:
        from torch.onnx._internal.exporter import _registration
    except ImportError:
        return False
    cls = _registration.ONNXRegistry
    build = getattr(cls, "from_torchlib", None)
    if build is None or getattr(build, "_shared", False):
        return build is not None

    @functools.cache
    def built(opset_version: Any) -> Any:
        return build(opset_version=opset_version)

    def from_torchlib(_cls: type, opset_version: Any = _registration._constants.TORCHLIB_OPSET) -> Any:
        return built(opset_version)

    from_torchlib._shared = True  # type: ignore[attr-defined]
    cls.from_torchlib = classmethod(from_torchlib)  # type: ignore[method-assign,assignment]
    return True


def install() -> None:
    """Share the registry from the first ``torch.onnx.export`` of this process on (module docstring)."""
    import torch.onnx

    export = torch.onnx.export
    if getattr(export, "_shares_registry", False):
        return

    @functools.wraps(export)
    def sharing(*args: Any, **kwargs: Any) -> Any:
        share_the_torchlib_registry()
        return export(*args, **kwargs)

    sharing._shares_registry = True  # type: ignore[attr-defined]
    torch.onnx.export = sharing
