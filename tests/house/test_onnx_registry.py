"""tests/onnx_registry.py: the suite's ONNX exports share one torchlib registry per process."""

from __future__ import annotations

import torch

from tests import onnx_registry


def test_the_registry_is_built_once_and_exports_stay_the_same(tmp_path):
    assert getattr(torch.onnx.export, "_shares_registry", False)  # conftest installed it
    assert onnx_registry.share_the_torchlib_registry()
    from torch.onnx._internal.exporter import _registration

    first = _registration.ONNXRegistry.from_torchlib()
    assert _registration.ONNXRegistry().from_torchlib() is first  # torch's own call (_compat.export_compat)
    torch.manual_seed(0)
    net = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.ELU(), torch.nn.Linear(4, 2))
    files = []
    for _ in range(2):
        program = torch.onnx.export(net, (torch.zeros(1, 3),), dynamo=True, verbose=False)
        assert program is not None
        files.append(program.model_proto.SerializeToString())
    assert files[0] == files[1] and len(files[0]) > 100
