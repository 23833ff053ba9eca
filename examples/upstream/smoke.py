"""Smoke test of the upstream adapters without kprop: each registered operator once on a
small CUDA case, against a float64 PyTorch composition. For checking an adapter on a new
machine before a kprop run; kprop's properties are the real test.

    FLA_SRC=... LIGER_SRC=... DAO_CAUSAL_CONV1D_SRC=... python3 examples/upstream/smoke.py
"""
import importlib
import sys
import time

import torch
import torch.nn.functional as F


def conv_reference(x, w, b, h0, activation):
    # x [B, T, D], w [D, W], h0 [B, D, W] (column 0 unused) -> y, ht [B, D, W]
    B, T, D = x.shape
    W = w.shape[1]
    pad = h0[:, :, 1:].transpose(1, 2) if h0 is not None else x.new_zeros(B, W - 1, D)
    xx = torch.cat([pad, x], dim=1)  # [B, W-1+T, D]
    y = F.conv1d(xx.transpose(1, 2), w.unsqueeze(1), b, groups=D).transpose(1, 2)
    if activation == "silu":
        y = F.silu(y)
    full = torch.cat([h0.transpose(1, 2) if h0 is not None else x.new_zeros(B, W, D), x], dim=1)
    return y, full[:, -W:, :].transpose(1, 2)


def check_conv(ns, dtype=torch.float32, B=2, T=37, D=64, W=4, activation="silu"):
    g = torch.Generator().manual_seed(0)
    x = torch.randn(B, T, D, generator=g, dtype=torch.float64)
    w = torch.randn(D, W, generator=g, dtype=torch.float64)
    b = torch.randn(D, generator=g, dtype=torch.float64)
    h0 = torch.randn(B, D, W, generator=g, dtype=torch.float64)
    dy = torch.randn(B, T, D, generator=g, dtype=torch.float64)
    dht = torch.randn(B, D, W, generator=g, dtype=torch.float64)
    leaves = [t.clone().requires_grad_() for t in (x, w, b, h0)]
    y_ref, ht_ref = conv_reference(*leaves, activation)
    grads = torch.autograd.grad((y_ref * dy).sum() + (ht_ref * dht).sum(), leaves)
    cuda = lambda t: t.to("cuda", dtype)
    op = getattr(torch.ops, ns)
    t0 = time.time()
    y, ht = op.causal_conv1d_fwd(cuda(x), cuda(w), cuda(b), cuda(h0), None, activation, 48)
    dx, dw, db, dh0 = op.causal_conv1d_bwd(cuda(x), cuda(w), cuda(b), cuda(h0), None, activation,
                                           cuda(dy), cuda(dht), 48)
    torch.cuda.synchronize()
    errs = {n: (a.double().cpu() - r).abs().max().item() for n, a, r in
            [("y", y, y_ref), ("ht", ht, ht_ref), ("dx", dx, grads[0]), ("dw", dw, grads[1]),
             ("db", db, grads[2]), ("dh0[:, :, 1:]", dh0[:, :, 1:], grads[3][:, :, 1:])]}
    print(f"{ns}::causal_conv1d {dtype} ({time.time() - t0:.2f} s):",
          ", ".join(f"{k} {v:.2e}" for k, v in errs.items()))


def check_geglu(ns, dtype=torch.bfloat16, rows=33, cols=300):
    g = torch.Generator().manual_seed(0)
    a = torch.randn(rows, cols, generator=g, dtype=torch.float64)
    b = torch.randn(rows, cols, generator=g, dtype=torch.float64)
    dc = torch.randn(rows, cols, generator=g, dtype=torch.float64)
    la, lb = a.clone().requires_grad_(), b.clone().requires_grad_()
    c_ref = F.gelu(la, approximate="tanh") * lb
    da_ref, db_ref = torch.autograd.grad((c_ref * dc).sum(), [la, lb])
    cuda = lambda t: t.to("cuda", dtype)
    op = getattr(torch.ops, ns)
    c = op.geglu_fwd(cuda(a), cuda(b), 48, 196608)
    da, db = op.geglu_bwd(cuda(dc), cuda(a), cuda(b), 48, 196608)
    torch.cuda.synchronize()
    print(f"{ns}::geglu {dtype}:", ", ".join(
        f"{n} {(x.double().cpu() - r).abs().max().item():.2e}"
        for n, x, r in [("c", c, c_ref), ("da", da, da_ref), ("db", db, db_ref)]))


for module, checks in [("kprop_fla", [lambda: check_conv("fla")]),
                       ("kprop_dao", [lambda: check_conv("dao")]),
                       ("kprop_liger", [lambda: check_geglu("liger"),
                                        lambda: check_geglu("liger_ascend")])]:
    t0 = time.time()
    try:
        importlib.import_module(module)
        print(f"{module}: imported in {time.time() - t0:.1f} s")
        for check in checks:
            check()
    except Exception as e:  # report and go on: one adapter's trouble is not the others'
        print(f"{module}: {type(e).__name__}: {e}", file=sys.stderr)
