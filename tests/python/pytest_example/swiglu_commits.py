"""Two "commits" of planted_swiglu (tests/python/planted_swiglu.py) side by side, for
tests/python/test_pytest_plugin.sh: `fixed::swiglu`, correct, and `odd_width::swiglu`,
which drops b from the last column of an odd hidden size (vs_reference shows it). Each
call sets the commit the planted package stands for, so both live in one process."""
import torch

import kprop
import planted_swiglu


def _at(commit):
    def swiglu(a, b):
        planted_swiglu.COMMIT = commit
        return planted_swiglu.swiglu(a, b)
    return swiglu


for _commit in ("fixed", "odd_width"):
    kprop.implementation("swiglu", _commit, _at(_commit), dtypes=[torch.float32],
                         devices=["cpu", "cuda"])
