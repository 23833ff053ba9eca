"""kprop adapter: flash-linear-attention's Triton causal_conv1d, as `fla::causal_conv1d`.

Registration and argument mapping only; the kernel is imported from your own checkout of
https://github.com/fla-org/flash-linear-attention, named by FLA_SRC (the folder holding
`fla/`). Nothing of it is copied here.

    FLA_SRC=~/src/flash-linear-attention PYTHONPATH=examples/upstream:build/python \
      python3 -m kprop check causal_conv1d --import kprop_fla --impl fla::causal_conv1d \
      --device cuda

Conventions match kprop's contract (DESIGN.md §3 follows fla's layouts): x [B, T, D],
weight [D, W], initial and final state [N, D, W], packed sequences by cu_seqlens. The
`num_cores` hint is ignored (a GPU kernel picks its own grid).
"""
import os
import sys

import torch

_src = os.environ.get("FLA_SRC")
if not _src:
    raise ImportError("kprop_fla: set FLA_SRC to your flash-linear-attention checkout")
sys.path.insert(0, _src)

from fla.modules.conv.triton.ops import causal_conv1d_bwd, causal_conv1d_fwd  # noqa: E402


def _keep_configs(kernel, n):
    """Keep the first n of an autotuned kernel's configs (it is wrapped by heuristics)."""
    while kernel is not None and not hasattr(kernel, "configs"):
        kernel = getattr(kernel, "fn", None)
    if kernel is not None:
        kernel.configs = kernel.configs[:n]


# KPROP_FLA_CONFIGS=N: autotune over the first N configs only. Each new (D, W, dtype, flags)
# compiles every config (16 here), which dominates a search over many shapes; a run with
# one config tests that config's tiling (BD = 16, the most blocks) in a sixteenth the time.
if os.environ.get("KPROP_FLA_CONFIGS"):
    from fla.modules.conv.triton import kernels as _kernels  # noqa: E402
    for _name in ("causal_conv1d_fwd_kernel", "causal_conv1d_bwd_kernel"):
        _keep_configs(getattr(_kernels, _name), int(os.environ["KPROP_FLA_CONFIGS"]))

from kprop_schemas import CAUSAL_CONV1D_BWD, CAUSAL_CONV1D_FWD, activation_name, empty_like_none  # noqa: E402

_lib = torch.library.Library("fla", "DEF")
_lib.define(CAUSAL_CONV1D_FWD)
_lib.define(CAUSAL_CONV1D_BWD)


def _forward(x, weight, bias, initial_state, cu_seqlens, activation, num_cores):
    y, final_state = causal_conv1d_fwd(
        x=x, weight=weight, bias=bias, residual=None, initial_state=initial_state,
        output_final_state=True, activation=activation_name(activation),
        cu_seqlens=cu_seqlens)
    return y, final_state


def _backward(x, weight, bias, initial_state, cu_seqlens, activation, dy, dht, num_cores):
    dx, dw, db, _, dh0 = causal_conv1d_bwd(
        x=x, dy=dy, dht=dht, weight=weight, bias=bias, residual=None,
        initial_state=initial_state, activation=activation_name(activation),
        cu_seqlens=cu_seqlens)
    return dx, dw, empty_like_none(db, x), empty_like_none(dh0, x)


_lib.impl("causal_conv1d_fwd", _forward, "CUDA")
_lib.impl("causal_conv1d_bwd", _backward, "CUDA")
