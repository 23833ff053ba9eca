"""Where a small case's time goes on the GPU, per upstream kernel, outside kprop: one fixed
case (the smallest kprop draws typically), called many times through the adapter's
registered operators, split into
  upload    the case's inputs .to("cuda") (pageable host memory, as kprop moves them)
  host      forward + backward from Python until the calls return (wrappers, launches)
  device    the kernels' own time on the GPU (torch.profiler, CUDA activity)
  download  the results .cpu()
Compare with kprop's `time:` lines (implementation / transfers / reference / rest).

    PYTHONPATH=examples/upstream FLA_SRC=... LIGER_SRC=... DAO_CAUSAL_CONV1D_SRC=... \
      python3 bench/gpu/launch.py [fla dao liger] [--iters N]
"""
import argparse
import importlib
import time

import torch
from torch.profiler import ProfilerActivity, profile


def conv_case(dtype):
    g = torch.Generator().manual_seed(0)
    T, D, W = 16, 64, 4
    r = lambda *s: torch.randn(*s, generator=g, dtype=torch.float64).to(dtype)
    x, w, b, h0, dy, dht = r(1, T, D), r(D, W), r(D), r(1, D, W), r(1, T, D), r(1, D, W)
    cu = torch.tensor([0, T], dtype=torch.int64)
    return [x, w, b, h0, cu, dy, dht]


def conv_call(ns):
    op = getattr(torch.ops, ns)

    def call(x, w, b, h0, cu, dy, dht):
        y, ht = op.causal_conv1d_fwd(x, w, b, h0, cu, "silu", 48)
        grads = op.causal_conv1d_bwd(x, w, b, h0, cu, "silu", dy, dht, 48)
        return [y, ht, *grads]
    return call


def geglu_case(dtype):
    g = torch.Generator().manual_seed(0)
    return [torch.randn(8, 64, generator=g, dtype=torch.float64).to(dtype) for _ in range(3)]


def geglu_call(ns):
    op = getattr(torch.ops, ns)

    def call(a, b, dc):
        c = op.geglu_fwd(a, b, 48, 196608)
        return [c, *op.geglu_bwd(dc, a, b, 48, 196608)]
    return call


KERNELS = {  # name: module, case, call, dtype
    "fla": ("kprop_fla", conv_case, conv_call("fla"), torch.float32),
    "dao": ("kprop_dao", conv_case, conv_call("dao"), torch.float32),
    "liger": ("kprop_liger", geglu_case, geglu_call("liger"), torch.bfloat16),
}


def measure(name, iters):
    module, make_case, call, dtype = KERNELS[name]
    importlib.import_module(module)
    host_case = make_case(dtype)
    for _ in range(3):  # compile, autotune, warm the allocator
        call(*[t.cuda() for t in host_case])
    torch.cuda.synchronize()
    up = host = down = 0.0
    for _ in range(iters):
        t0 = time.perf_counter()
        case = [t.to("cuda") for t in host_case]
        torch.cuda.synchronize()
        t1 = time.perf_counter()
        out = call(*case)
        t2 = time.perf_counter()
        torch.cuda.synchronize()
        t3 = time.perf_counter()
        [t.cpu() for t in out if t.numel()]
        t4 = time.perf_counter()
        up, host, down = up + (t1 - t0), host + (t2 - t1), down + (t4 - t3)
    case = [t.to("cuda") for t in host_case]
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(iters):
            call(*case)
        torch.cuda.synchronize()
    kernels = [e for e in prof.key_averages() if e.device_type.name == "CUDA"]
    device_us = sum(getattr(e, "self_device_time_total", 0) for e in kernels) / iters
    launches = sum(e.count for e in kernels) / iters
    us = lambda s: 1e6 * s / iters
    print(f"{name:6s} {dtype}: upload {us(up):7.1f} us  host (wrappers+launches) {us(host):7.1f} us"
          f"  device {device_us:6.1f} us in {launches:.0f} kernels  download {us(down):7.1f} us"
          f"  -> {iters / (up + host + down):6.0f} fwd+bwd/s", flush=True)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("kernels", nargs="*", default=list(KERNELS))
    parser.add_argument("--iters", type=int, default=500)
    args = parser.parse_args()
    print(torch.cuda.get_device_name(), "torch", torch.__version__)
    for name in args.kernels:
        try:
            measure(name, args.iters)
        except Exception as e:  # one adapter's trouble is not the others'
            print(f"{name}: {type(e).__name__}: {e}", flush=True)
