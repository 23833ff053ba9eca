"""A stand-in for an upstream kernel package, for tests/python/test_repro.sh: SwiGLU at
three "commits", chosen by PLANTED_SWIGLU:

- `odd_width`: an odd hidden size drops b from the last column (c = silu(a) there), which
  vs_reference shows;
- `storage_order`: an `a` that is not contiguous is read as if it were (its storage in row
  order), which layout shows;
- `fixed`: neither.
"""
import os

import torch

COMMIT = os.environ.get("PLANTED_SWIGLU", "fixed")


def swiglu(a, b):
    if COMMIT == "storage_order" and not a.is_contiguous():
        a = torch.as_strided(a, a.shape, torch.empty_like(a, memory_format=torch.contiguous_format).stride())
    c = torch.nn.functional.silu(a) * b
    if COMMIT == "odd_width" and a.shape[-1] % 2 == 1:
        c = torch.cat([c[..., :-1], torch.nn.functional.silu(a[..., -1:])], dim=-1)
    return c
