"""Python causal_conv1d kernels that compute the right values until they misbehave, for
tests/python/test_python_isolation.sh (as tests/plugins/misbehaving.cpp does in C++):

    py_raise_wide::causal_conv1d   raises ValueError when W >= 3 (shrinks to W = 3)
    py_raise_5th::causal_conv1d    raises on the 5th forward call of the process
    py_exit_wide::causal_conv1d    os._exit(3) when W >= 3
    py_segv_wide::causal_conv1d    reads address 0 through ctypes when W >= 3: SIGSEGV
    py_hang_wide::causal_conv1d    sleeps forever when W >= 3 (a hang: --case-timeout ends it)
    py_cuda_wide::causal_conv1d    as a CUDA illegal address does: when W >= 3 it raises
                                   "CUDA error: an illegal memory access ...", and so does
                                   every later call of the process (the context is poisoned)
"""
import ctypes
import os
import time

import causal_conv1d_ops as ops

calls = 0
poisoned = False
ILLEGAL_ADDRESS = "CUDA error: an illegal memory access was encountered"


def misbehaving(how, when):
    def forward(x, weight, *rest):
        global calls, poisoned
        calls += 1
        if poisoned:
            raise RuntimeError(ILLEGAL_ADDRESS)
        if (when == "wide" and weight.shape[1] >= 3) or (when == "5th" and calls == 5):
            if how == "raise":
                raise ValueError(f"py_{how}_{when}: W = {weight.shape[1]} is too wide for me")
            if how == "exit":
                os._exit(3)
            if how == "segv":
                ctypes.string_at(0)
            if how == "hang":
                while True:
                    time.sleep(3600)
            if how == "cuda":
                poisoned = True
                raise RuntimeError(ILLEGAL_ADDRESS)
        return ops.forward(x, weight, *rest)
    return forward


_libraries = [ops.register(f"py_{how}_{when}", misbehaving(how, when), ops.backward)
              for how, when in [("raise", "wide"), ("raise", "5th"), ("exit", "wide"),
                                ("segv", "wide"), ("cuda", "wide"), ("hang", "wide")]]
