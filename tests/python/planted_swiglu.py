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
- `reads_past_end`: the last element of c takes in the element that lies past b's end in
  its storage (an unmasked load: on the CPU, where b's storage ends with b, it reads 0);
- `db_doubled`: db is twice what it should be, c is right;
- `fixed`: none of these.
"""
import os

import torch

COMMIT = os.environ.get("PLANTED_SWIGLU", "fixed")


class _SwiGLU(torch.autograd.Function):
    """c = silu(a) * b, whose backward each planted commit below changes in one place."""

    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return torch.nn.functional.silu(a) * b

    @staticmethod
    def gradients(ctx, dc):
        a, b = ctx.saved_tensors
        s = torch.sigmoid(a)
        return a, b, dc * b * (s + a * s * (1 - s)), dc * torch.nn.functional.silu(a)


class _StoresOverB(_SwiGLU):
    @staticmethod
    def backward(ctx, dc):
        _, b, da, db = _SwiGLU.gradients(ctx, dc)
        with torch.no_grad():
            b.copy_(db)
        return da, b


class _DoublesDb(_SwiGLU):
    @staticmethod
    def backward(ctx, dc):
        _, _, da, db = _SwiGLU.gradients(ctx, dc)
        return da, 2 * db


def _past_the_end(b):
    """The element after b's last one in its storage, as an unmasked load would read it; 0
    where the storage ends there."""
    storage = b.untyped_storage() if hasattr(b, "untyped_storage") else b.storage()  # torch 1.13
    elements = storage.nbytes() // b.element_size()
    after = b.storage_offset() + sum((n - 1) * s for n, s in zip(b.shape, b.stride())) + 1
    if after >= elements:
        return torch.zeros((), dtype=b.dtype, device=b.device)
    return b.as_strided((1,), (1,), after)[0]


def swiglu(a, b):
    if COMMIT == "overwrites_b":
        return _StoresOverB.apply(a, b)
    if COMMIT == "db_doubled":
        return _DoublesDb.apply(a, b)
    if COMMIT == "ignores_offset":
        a = torch.as_strided(a, a.shape, a.stride(), 0)
    if COMMIT == "storage_order" and not a.is_contiguous():
        a = torch.as_strided(a, a.shape, torch.empty_like(a, memory_format=torch.contiguous_format).stride())
    c = torch.nn.functional.silu(a) * b
    if COMMIT == "odd_width" and a.shape[-1] % 2 == 1:
        c = torch.cat([c[..., :-1], torch.nn.functional.silu(a[..., -1:])], dim=-1)
    if COMMIT == "reads_past_end":
        c = c + torch.nn.functional.pad(_past_the_end(b.detach()).reshape(1), (c.numel() - 1, 0)).reshape(c.shape)
    return c
