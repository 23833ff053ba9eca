"""Standalone reproducer: Liger-Kernel's cross entropy returns the logits as their gradient
when the logits are not contiguous in their last dimension (kprop finding,
corpus/upstream/cross_entropy/liger__cross_entropy-layout-dx-8c5d99b3.json, 2026-12-03).

cross_entropy_forward copies such logits (`_input = _input.contiguous()`) and launches the
kernel with HAS_GRADIENTS=_input.requires_grad. Inside autograd.Function.forward grad mode
is off, so the copy does not require grad: the kernel computes the loss but never writes
the gradient into the copy, and the backward returns the copy, which still holds the
logits. The loss is right; dx is the logits (times grad_output). Since #894 (5c2a04df),
which added HAS_GRADIENTS; before it the gradient was always written.

    LIGER_SRC=~/src/Liger-Kernel python3 liger_ce_noncontiguous.py
"""
import os
import sys

import torch

sys.path.insert(0, os.path.join(os.environ["LIGER_SRC"], "src"))
from liger_kernel.ops.cross_entropy import LigerCrossEntropyFunction  # noqa: E402


def main():
    torch.manual_seed(0)
    rows, V = 2, 2
    stored = torch.randn(V, rows, device="cuda")
    target = torch.randint(0, V, (rows,), device="cuda")
    expected = torch.func.grad(
        lambda z: torch.nn.functional.cross_entropy(z, target.cpu()))(stored.t().double().cpu())
    failed = False
    for name, logits in [("contiguous", stored.t().contiguous()),
                         ("transposed (stride(-1) != 1)", stored.t())]:
        x = logits.detach().requires_grad_(True)
        # (_input, target, weight, ignore_index, lse_square_scale, label_smoothing,
        #  reduction, softcap, return_z_loss)
        loss = LigerCrossEntropyFunction.apply(x, target, None, -100, 0.0, 0.0, "mean", None,
                                               False)[0]
        loss.backward()
        err = float((x.grad.double().cpu() - expected).abs().max())
        print(f"{name}: loss {float(loss):.6f}, max |dx - float64| = {err:.3e}")
        if err > 1e-5:
            failed = True
            print(f"  dx = {x.grad.tolist()}\n  the logits = {logits.tolist()}")
    assert not failed, "dx wrong for logits that are not contiguous in their last dimension"
    print("dx matches the float64 reference in both layouts")


if __name__ == "__main__":
    main()
