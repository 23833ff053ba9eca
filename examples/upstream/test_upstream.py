"""The upstream adapters as a kernel project's pytest suite would run them (docs/pytest.md).

One test per Check: kprop's search over the kernel's cases through the public function, on
the GPU. Each goes on past the defects already kept in corpus/upstream/ (known findings at
the heads), so it fails only on a new one. Skipped without CUDA or without the checkout:

    FLA_SRC=.upstream/flash-linear-attention LIGER_SRC=.upstream/Liger-Kernel \\
      python3 -m pytest examples/upstream/test_upstream.py --kprop-cases 50 -v
"""
import os

import pytest
import torch

from kprop.pytest import Check

GPU = pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device")


def checkout(variable):
    return pytest.mark.skipif(not os.environ.get(variable), reason=f"{variable} is not set")


def upstream(kernel, impl, module, source, properties):
    return Check(kernel, impl=impl, imports=[module], device="cuda", properties=properties,
                 corpus=f"../../corpus/upstream/{kernel}", name=kernel,
                 marks=[GPU, checkout(source)])


test_liger = [
    upstream("geglu", "liger::geglu", "kprop_liger", "LIGER_SRC",
             ["vs_reference", "gradient", "layout"]),
    upstream("swiglu", "liger::swiglu", "kprop_liger", "LIGER_SRC",
             ["vs_reference", "gradient", "layout"]),
]

test_fla = [
    upstream("causal_conv1d", "fla::causal_conv1d", "kprop_fla", "FLA_SRC",
             ["vs_reference", "chunked", "packed"]),
    upstream("linear_attn", "fla::linear_attn", "kprop_fla", "FLA_SRC",
             ["vs_reference", "chunked", "packed"]),
]
