"""kprop's operator schemas, for adapters that register a kernel from Python.

The same strings as kprop's own C++ registrations (kernels/causal_conv1d/contract.h,
kernels/geglu/ops.cpp): an adapter registers `<namespace>::<kernel>_fwd/_bwd` with them
and kprop calls it through the dispatcher like any of its own implementations.
"""
import torch

CAUSAL_CONV1D_FWD = (
    "causal_conv1d_fwd(Tensor x, Tensor weight, Tensor? bias, Tensor? initial_state, "
    "Tensor? cu_seqlens, str activation, int num_cores) -> (Tensor y, Tensor final_state)")
CAUSAL_CONV1D_BWD = (
    "causal_conv1d_bwd(Tensor x, Tensor weight, Tensor? bias, Tensor? initial_state, "
    "Tensor? cu_seqlens, str activation, Tensor dy, Tensor? dht, int num_cores) -> "
    "(Tensor dx, Tensor dweight, Tensor dbias, Tensor dinitial_state)")
GEGLU_FWD = "geglu_fwd(Tensor a, Tensor b, int num_cores, int buffer_bytes) -> Tensor c"
GEGLU_BWD = ("geglu_bwd(Tensor dc, Tensor a, Tensor b, int num_cores, int buffer_bytes) -> "
             "(Tensor da, Tensor db)")


def activation_name(activation):
    """kprop's "none" / "silu" / "swish" as the Python kernels spell it (None for none)."""
    return None if activation == "none" else activation


def empty_like_none(t, like):
    """An output the case has no use for (no bias, no initial state): an empty tensor,
    since the schema returns a Tensor there."""
    return t if t is not None else like.new_empty(0)
