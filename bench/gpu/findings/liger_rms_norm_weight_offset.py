"""Standalone reproducer: Liger-Kernel's RMSNorm gives other bits when its weight sits at
another storage offset (kprop `layout` finding, corpus/upstream/rms_norm/, 2026-12-02).

The same values of x, w and dy; only where w lies in memory changes (a slice of a larger
buffer, as a flat parameter buffer of FSDP or a fused projection hands it). The forward y
and the backward dx differ in the last bits, within kprop's derived bound: a reduction
order that depends on the address, not a wrong value. It matters to whoever needs
bit-reproducible training across allocations. The table shows, per offset (in elements),
whether w's address is 16-byte aligned and how many elements of y, dx and dw differ from
the offset-0 call, and by how many ulps at most.

    LIGER_SRC=.upstream/Liger-Kernel python3 bench/gpu/findings/liger_rms_norm_weight_offset.py
"""
import os
import sys

import torch

sys.path.insert(0, os.path.join(os.environ["LIGER_SRC"], "src"))
from liger_kernel.ops.rms_norm import LigerRMSNormFunction  # noqa: E402


def call(x, w, dy):
    x = x.detach().clone().requires_grad_(True)
    w = w.detach().requires_grad_(True)  # keeps w's storage offset
    y = LigerRMSNormFunction.apply(x, w, 1e-6, 0.0, "llama", True, None)  # as LigerRMSNorm
    y.backward(dy.clone())  # in_place=True writes dx over the dy it gets: a copy
    return y.detach(), x.grad, w.grad


def ulps(a, b):
    ia, ib = a.view(torch.int32).long(), b.view(torch.int32).long()
    return (ia - ib).abs()


def main():
    torch.manual_seed(0)
    print(f"torch {torch.__version__}, {torch.cuda.get_device_name()}")
    print(f"{'rows':>4} {'cols':>5} {'offset':>6} {'aligned':>7}  "
          f"{'y differs':>12} {'dx differs':>12} {'dw differs':>12}")
    for rows, cols in [(1, 129), (1, 257), (4, 1000), (8, 4096)]:
        x = torch.randn(rows, cols, device="cuda")
        w = torch.randn(cols, device="cuda")
        dy = torch.randn(rows, cols, device="cuda")
        base = call(x, w, dy)
        for offset in [0, 1, 2, 3, 4, 8]:
            buffer = torch.full((offset + cols,), float("nan"), device="cuda")
            buffer[offset:] = w
            got = call(x, buffer[offset:], dy)
            aligned = buffer[offset:].data_ptr() % 16 == 0
            cells = []
            for a, b in zip(got, base):
                d = ulps(a.contiguous(), b.contiguous())
                n = int((d > 0).sum())
                cells.append(f"{n:>4} ({int(d.max()):>3} ulp)" if n else f"{'same bits':>12}")
            print(f"{rows:>4} {cols:>5} {offset:>6} {str(aligned):>7}  " + " ".join(cells))


if __name__ == "__main__":
    main()
