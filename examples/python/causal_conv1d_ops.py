"""A causal_conv1d kernel written in Python and registered with torch.library, the way a
Python or Triton kernel is tested with kprop:

    PYTHONPATH=build/python:examples/python python3 -m kprop check causal_conv1d \\
        --import causal_conv1d_ops --impl mine::causal_conv1d

kprop calls ``mine::causal_conv1d_fwd`` and ``mine::causal_conv1d_bwd`` through the
dispatcher with kprop's schemas (``kprop.schemas("causal_conv1d")``: the explicit operator
pair, for kernels with their own backward entry point; a function tested through autograd
is registered with ``kprop.implementation`` instead). This one is
composed of ATen operations in float64, one sequence at a time, and rounds each result
once to its input's dtype; a Triton kernel is registered the same way (for "CUDA") and
launched from the function. The semantics are docs/design.md §3's:

    x [B, T, D]; packed: B = 1 and cu_seqlens [N+1]; weight [D, W]; bias [D];
    initial_state h0 [N, D, W] (column c holds input position c - W);
    y[t] = act(bias + sum_k weight[:, k] * xx[t - (W-1) + k]);
    final_state [N, D, W]: the last W inputs (from h0 or zeros for a short sequence).
"""
import torch

import kprop

FORWARD_SCHEMA, BACKWARD_SCHEMA = kprop.schemas("causal_conv1d")


def sequences(x, cu_seqlens):
    """(batch, first row, length) of each sequence: from cu_seqlens when packed."""
    if cu_seqlens is None:
        return [(b, 0, x.shape[1]) for b in range(x.shape[0])]
    cu = cu_seqlens.tolist()
    return [(0, cu[n], cu[n + 1] - cu[n]) for n in range(len(cu) - 1)]


def history(x, initial_state, W, n, b, bos, length):
    """Positions -W..L-1 of sequence n as rows [W + L, D] in float64: the initial state's
    columns (zeros without one), then the sequence's own rows."""
    rows = x[b, bos:bos + length].double()
    if initial_state is not None:
        before = initial_state[n].double().t()
    else:
        before = torch.zeros(W, x.shape[2], dtype=torch.float64, device=x.device)
    return torch.cat([before, rows])


def pre_activation(full, weight, bias, length):
    """bias + sum_k weight[:, k] * xx[t - (W-1) + k] for t < L (full: positions -W..L-1)."""
    w = weight.double()
    W = w.shape[1]
    z = torch.zeros(length, w.shape[0], dtype=torch.float64, device=full.device)
    if bias is not None:
        z = z + bias.double()
    for k in range(W):
        z = z + w[:, k] * full[1 + k:1 + k + length]
    return z


def silu_slope(z):
    s = torch.sigmoid(z)
    return s * (1 + z * (1 - s))


def forward(x, weight, bias, initial_state, cu_seqlens, activation, num_cores):
    del num_cores  # a tiling hint for emulations: a real kernel ignores it
    W = weight.shape[1]
    seqs = sequences(x, cu_seqlens)
    y = torch.zeros_like(x)
    final_state = x.new_zeros(len(seqs), x.shape[2], W)
    for n, (b, bos, length) in enumerate(seqs):
        full = history(x, initial_state, W, n, b, bos, length)
        z = pre_activation(full, weight, bias, length)
        if activation in ("silu", "swish"):
            z = torch.nn.functional.silu(z)
        y[b, bos:bos + length] = z.to(x.dtype)
        final_state[n] = full[length:length + W].t().to(x.dtype)
    return y, final_state


def backward(x, weight, bias, initial_state, cu_seqlens, activation, dy, dht, num_cores):
    return gradients(x, weight, bias, initial_state, cu_seqlens, activation, dy, dht,
                     pass_dht_to_initial_state=True)


def gradients(x, weight, bias, initial_state, cu_seqlens, activation, dy, dht,
              pass_dht_to_initial_state):
    """dx, dweight, dbias, dinitial_state; dbias and dinitial_state are None without bias or
    initial_state."""
    W = weight.shape[1]
    w = weight.double()
    seqs = sequences(x, cu_seqlens)
    dx = torch.zeros_like(x)
    dweight = torch.zeros(weight.shape, dtype=torch.float64, device=x.device)
    dbias = torch.zeros(weight.shape[0], dtype=torch.float64, device=x.device)
    dh0 = None if initial_state is None else torch.zeros_like(initial_state)
    for n, (b, bos, length) in enumerate(seqs):
        full = history(x, initial_state, W, n, b, bos, length)
        g = dy[b, bos:bos + length].double()
        if activation in ("silu", "swish"):
            g = g * silu_slope(pre_activation(full, weight, bias, length))
        dbias += g.sum(0)
        dfull = torch.zeros_like(full)  # the gradient of positions -W..L-1
        for k in range(W):
            dweight[:, k] += (g * full[1 + k:1 + k + length]).sum(0)
            dfull[1 + k:1 + k + length] += g * w[:, k]
        if dht is not None:
            # final_state holds positions L-W..L-1: rows of x, or columns of h0 when the
            # sequence is shorter than W.
            if pass_dht_to_initial_state:
                dfull[length:length + W] += dht[n].double().t()
            else:
                # x rows only: what a backward that forgets short sequences does.
                dfull[max(length, W):length + W] += dht[n].double().t()[max(0, W - length):]
        dx[b, bos:bos + length] = dfull[W:].to(x.dtype)
        if dh0 is not None:
            dh0[n] = dfull[:W].t().to(initial_state.dtype)
    return (dx, dweight.to(weight.dtype), None if bias is None else dbias.to(bias.dtype), dh0)


def register(namespace, forward_fn, backward_fn, keys=("CPU", "CUDA")):
    """Registers NAMESPACE::causal_conv1d_fwd/_bwd for each dispatch key and returns the
    torch.library.Library, which must stay alive (dropping it removes the kernels)."""
    lib = torch.library.Library(namespace, "DEF")
    lib.define(FORWARD_SCHEMA)
    lib.define(BACKWARD_SCHEMA)
    for key in keys:
        lib.impl("causal_conv1d_fwd", forward_fn, key)
        lib.impl("causal_conv1d_bwd", backward_fn, key)
    return lib


_mine = register("mine", forward, backward)
