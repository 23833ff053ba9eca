"""An adapter as kprop_liger.py is one, for tests/python/test_repro.sh: planted_swiglu's
public function as `planted::swiglu`, in float32 on the CPU."""
import torch

import kprop
import planted_swiglu


def _swiglu(a, b):
    return planted_swiglu.swiglu(a, b)


kprop.implementation("swiglu", "planted", _swiglu, dtypes=[torch.float32], devices=["cpu"])
