"""A stand-in for an upstream kernel package, for tests/python/test_repro.sh: SwiGLU at
three "commits", chosen by PLANTED_SWIGLU:

- `odd_width`: an odd hidden size drops b from the last column (c = silu(a) there), which
  vs_reference shows;
- `storage_order`: an `a` that is not contiguous is read as if it were (its storage in row
  order), which layout shows;
- `ignores_offset`: `a` is read from the start of its storage, as a kernel handed the
  storage's pointer rather than the tensor's would, which layout shows ("offset");
- `overwrites_b`: the backward stores db over the b it saved, which the watch over
  handed tensors shows;
- `fixed`: none of these.
"""
import os

import torch

COMMIT = os.environ.get("PLANTED_SWIGLU", "fixed")


class _StoresOverB(torch.autograd.Function):
    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return torch.nn.functional.silu(a) * b

    @staticmethod
    def backward(ctx, dc):
        a, b = ctx.saved_tensors
        s = torch.sigmoid(a)
        da = dc * b * (s + a * s * (1 - s))
        with torch.no_grad():
            b.copy_(dc * torch.nn.functional.silu(a))
        return da, b


def swiglu(a, b):
    if COMMIT == "overwrites_b":
        return _StoresOverB.apply(a, b)
    if COMMIT == "ignores_offset":
        a = torch.as_strided(a, a.shape, a.stride(), 0)
    if COMMIT == "storage_order" and not a.is_contiguous():
        a = torch.as_strided(a, a.shape, torch.empty_like(a, memory_format=torch.contiguous_format).stride())
    c = torch.nn.functional.silu(a) * b
    if COMMIT == "odd_width" and a.shape[-1] % 2 == 1:
        c = torch.cat([c[..., :-1], torch.nn.functional.silu(a[..., -1:])], dim=-1)
    return c
