"""Standalone reproducer: flash-linear-attention's causal_conv1d drops dht[..., 0] from dx.

kprop finding (corpus/upstream/causal_conv1d/fla__causal_conv1d-vs_reference-dx-*.json),
at fla bc3b101d. The final state ht [N, D, W] holds the last W tokens, slot s = token
T - W + s, so dL/dx[T - W] must receive dht[..., 0]. The backward's USE_FINAL_STATE branch
adds dht only to tokens t >= T - (W - 1), i.e. slots 1..W-1: slot 0 is never added.

    FLA_SRC=~/src/flash-linear-attention python3 fla_causal_conv1d_dht0.py

It checks the forward (y, ht) against a float64 reference first, so that a wrong
convention here cannot pass for a bug there; then dx, with dy = 0 and dht = 1 in slot 0
only (the smallest cotangent that shows it) and with random dy, dht.
"""
import os
import sys

import torch

sys.path.insert(0, os.environ.get("FLA_SRC", "."))
from fla.modules.conv.triton.ops import CausalConv1dFunction  # noqa: E402


def reference(x, w):
    """float64: y[t] = sum_k w[:, k] x[t - W + 1 + k]; ht[:, :, s] = x[T - W + s]."""
    T, W = x.shape[1], w.shape[1]
    xp = torch.nn.functional.pad(x, (0, 0, W - 1, 0))  # W - 1 zero tokens before the first
    y = sum(xp[:, k:k + T, :] * w[:, k] for k in range(W))
    ht = xp[:, -W:, :].transpose(1, 2)
    return y, ht


def main():
    torch.manual_seed(0)
    B, T, D, W = 1, 3, 32, 2
    x = torch.randn(B, T, D, device="cuda")
    w = torch.randn(D, W, device="cuda")
    xs, ws = x.clone().requires_grad_(), w.clone().requires_grad_()
    y, ht = CausalConv1dFunction.apply(xs, ws, None, None, None, True, None, None)
    x64, w64 = x.double().requires_grad_(), w.double().requires_grad_()
    y_ref, ht_ref = reference(x64, w64)
    print(f"forward: max |y - y_ref| = {(y.double() - y_ref).abs().max():.2e}, "
          f"max |ht - ht_ref| = {(ht.double() - ht_ref).abs().max():.2e}")
    assert torch.allclose(y.double(), y_ref, atol=1e-5) and torch.allclose(ht.double(), ht_ref)

    failed = False
    for name, dy, dht in [
        ("dy = 0, dht = 1 in slot 0", torch.zeros_like(y), torch.zeros_like(ht).index_fill_(2, torch.tensor([0], device="cuda"), 1.0)),
        ("random dy and dht", torch.randn_like(y), torch.randn_like(ht)),
    ]:
        dx, = torch.autograd.grad((y, ht), (xs,), (dy, dht), retain_graph=True)
        dx_ref, = torch.autograd.grad((y_ref, ht_ref), (x64,), (dy.double(), dht.double()),
                                      retain_graph=True)
        err = (dx.double() - dx_ref).abs().amax(dim=2)[0]  # per token
        print(f"{name}: max |dx - dx_ref| per token {[f'{e:.3g}' for e in err.tolist()]}")
        bad = (err > 1e-4).nonzero().flatten().tolist()
        if bad:
            failed = True
            print(f"  wrong at tokens {bad} (T - W = {T - W}: the token of slot 0)")
    assert not failed, "dx misses dht[..., 0]"
    print("dx matches the float64 reference")


if __name__ == "__main__":
    main()
