"""Standalone reproducer: Liger-Kernel's
rope leaves heads of later sequences unrotated at sequence length 1 when q is contiguous as
[batch, heads, 1, head_dim] (kprop finding, corpus/upstream/rope/, 2026-12-02).

rope_forward transposes q to [batch, seq, heads, head_dim] and calls .contiguous(). With
seq = 1 that view already counts as contiguous (a size-1 dimension's stride is ignored),
so nothing is copied, and the kernel takes its per-token row stride as q.stride(1): the
stride of the size-1 dimension, head_dim, not heads * head_dim. The program of token
(b, 0) then starts at b * head_dim. The same values stored token-major, as Hugging Face's
projection view hands them, come out right: the script checks both (run at Liger's head
ead96b61 on an H200, 2026-12-03: the first fails, the second passes).

    LIGER_SRC=~/src/Liger-Kernel python3 liger_rope_seq1.py
"""
import os
import sys

import torch

sys.path.insert(0, os.path.join(os.environ["LIGER_SRC"], "src"))
from liger_kernel.ops.rope import LigerRopeFunction  # noqa: E402


def rotate_half(x):
    half = x.shape[-1] // 2
    return torch.cat([-x[..., half:], x[..., :half]], dim=-1)


def main():
    torch.manual_seed(0)
    B, H, S, D = 2, 2, 1, 4
    # Any position but 0: at 0, cos = 1 and sin = 0 make a missed rotation invisible.
    pos = torch.tensor([[1000.0]], dtype=torch.float64)
    inv_freq = 10000.0 ** (-torch.arange(0, D, 2, dtype=torch.float64) / D)
    angles = pos[..., None] * inv_freq                                 # [1, S, D/2]
    cos = torch.cat([angles.cos()] * 2, -1).float().cuda()             # [1, S, D]
    sin = torch.cat([angles.sin()] * 2, -1).float().cuda()
    q = torch.randn(B, H, S, D, device="cuda")                         # contiguous [B, H, 1, D]
    k = torch.randn(B, 1, S, D, device="cuda")
    expected = (q.double() * cos.double()[:, None] + rotate_half(q.double()) * sin.double()[:, None])
    failed = False
    for name, layout in [("contiguous [B, H, 1, D]", lambda t: t.clone()),
                         # Stored [B, S, H, D] and viewed [B, H, S, D], as HF's q_proj(x).view(...)
                         # .transpose(1, 2) hands it (a .contiguous() of the transpose would be
                         # a no-op at S = 1 and keep the head-major strides).
                         ("token-major, as HF's view",
                          lambda t: torch.empty(B, S, H if t.shape[1] == H else 1, D, device="cuda")
                          .copy_(t.transpose(1, 2)).transpose(1, 2))]:
        q_rot, _ = LigerRopeFunction.apply(layout(q), layout(k), cos, sin)
        err = (q_rot.double() - expected).abs().amax(dim=(2, 3))       # per (sequence, head)
        bad = (err > 1e-5).nonzero().tolist()
        print(f"{name}: max |q_rot - float64| per (sequence, head) = {err.tolist()}")
        if bad:
            failed = True
            print(f"  unrotated or wrong at (sequence, head) {bad}")
    assert not failed, "q_rot wrong at seq_len 1 with q contiguous as [B, H, 1, D]"
    print("q_rot matches the float64 reference in both layouts")


if __name__ == "__main__":
    main()
