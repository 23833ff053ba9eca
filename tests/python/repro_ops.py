"""An adapter as kprop_liger.py is one, for tests/python/test_repro.sh: planted_swiglu's
public function as `planted::swiglu`, in float32 on the CPU."""
import torch

import kprop
import planted_swiglu


def _swiglu(a, b):
    return planted_swiglu.swiglu(a, b)


# The environment its numerics depend on (as kprop_fla declares TRITON_F32_DEFAULT): the
# scripts must set it before they import anything.
kprop.implementation("swiglu", "planted", _swiglu, dtypes=[torch.float32], devices=["cpu"],
                     environment={"REPRO_OPS_DECLARED": "yes"})
