"""Standalone reproducer: Liger-Kernel's fused linear cross entropy scales a transposed
weight's gradient by grad_output in the wrong places (kprop finding, `layout`: "dw varies
with w transposed", Liger's head ead96b61).

grad_weight is made with torch.zeros_like(weight), which keeps a transposed weight's
strides. When grad_output is not 1 (a scaled loss: gradient accumulation's loss / n),
fused_linear_cross_entropy_backward multiplies it in place with element_mul_kernel,
launched with grad_weight.stride(-2) as the row stride and unit column stride: for a
transposed grad_weight the rows overlap, so some elements are scaled several times and
others never.

    LIGER_SRC=~/src/Liger-Kernel python3 liger_flce_transposed_weight.py
"""
import os
import sys

import torch

sys.path.insert(0, os.path.join(os.environ["LIGER_SRC"], "src"))
from liger_kernel.ops.fused_linear_cross_entropy import LigerFusedLinearCrossEntropyFunction  # noqa: E402


def main():
    torch.manual_seed(0)
    rows, H, V = 3, 4, 5
    # h requires grad as in training (Liger computes dW only then).
    h = torch.randn(rows, H, device="cuda", requires_grad=True)
    stored = torch.randn(H, V, device="cuda")          # the weight kept as [H, V]
    target = torch.randint(0, V, (rows,), device="cuda")
    scale = 0.5                                        # grad_output != 1
    w64 = stored.t().double().cpu().requires_grad_(True)
    (torch.nn.functional.cross_entropy(h.detach().double().cpu() @ w64.t(), target.cpu()) * scale).backward()
    failed = False
    for name, weight in [("contiguous [V, H]", stored.t().contiguous()),
                         ("transposed view of [H, V]", stored.t())]:
        w = weight.detach().requires_grad_(True)
        # (_input, weight, target, bias, ce_weight, ignore_index, lse_square_scale,
        #  label_smoothing, reduction, softcap, return_z_loss)
        loss = LigerFusedLinearCrossEntropyFunction.apply(h, w, target, None, None, -100, 0.0,
                                                          0.0, "mean", None, False)[0]
        (loss * scale).backward()
        err = float((w.grad.double().cpu() - w64.grad).abs().max())
        print(f"{name}: max |dW - float64| = {err:.3e}")
        if err > 1e-5:
            failed = True
    assert not failed, "dW wrong for a transposed weight when grad_output != 1"
    print("dW matches the float64 reference in both layouts")


if __name__ == "__main__":
    main()
