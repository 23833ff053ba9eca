"""kprop checks declared for pytest (docs/pytest.md), run by tests/python/test_pytest_plugin.sh
with the plugin kprop.pytest_plugin: one test per Check."""
import pytest
import torch

from kprop.pytest import Check

# The fixed commit holds. (Not `layout`: ATen's own silu backward differs by an ulp between
# a contiguous and a transposed `a` on the CPU.)
test_fixed = Check("swiglu", impl="fixed::swiglu", imports=["swiglu_commits"],
                   properties=["vs_reference", "gradient", "determinism"])

# The planted defect: an odd hidden size drops b from the last column. vs_reference finds
# it; the test fails with the identity and the command that replays the kept case.
test_odd_width = Check("swiglu", impl="odd_width::swiglu", imports=["swiglu_commits"],
                       properties=["vs_reference"])

# Both on a GPU, where there is one (skipped on the CPU): the fixed one passes, the planted
# defect fails.
test_on_cuda = [
    Check("swiglu", impl=f"{commit}::swiglu", imports=["swiglu_commits"], device="cuda",
          properties=["vs_reference", "gradient"], name=commit,
          marks=[pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device")])
    for commit in ("fixed", "odd_width")
]
