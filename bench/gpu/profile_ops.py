"""Which ATen operations a kprop run spends its time in, from torch.profiler.

kprop's own split (implementation, transfers, reference, the rest) says how much time goes
outside the implementation; this says which operations, how often and on which device:
torch.profiler sees every operator the dispatcher runs in the process, kprop's C++ ones too.

    python3 bench/gpu/profile_ops.py WARM_CASES CASES -- check geglu --import kprop_liger ...

runs the kprop command with --cases WARM_CASES (unprofiled: Triton compiles), then with
--cases CASES under the profiler, and prints the operators by total CPU time and by count.
Give it a --corpus that knows the implementation's known failures: a search stops at a
new one.
"""
import runpy
import sys

import torch
from torch.profiler import ProfilerActivity, profile


def run_kprop(args):
    sys.argv = ["kprop"] + args
    try:
        runpy.run_module("kprop", run_name="__main__")
    except SystemExit as e:
        return e.code
    return 0


def main():
    if "--" not in sys.argv or sys.argv.index("--") != 3:
        print("usage: profile_ops.py WARM_CASES CASES -- KPROP-ARGUMENTS...", file=sys.stderr)
        sys.exit(2)
    warm_cases, cases, args = sys.argv[1], sys.argv[2], sys.argv[4:]
    print("warm-up exit", run_kprop(args + ["--cases", warm_cases]), flush=True)
    activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if torch.cuda.is_available() else [])
    with profile(activities=activities) as prof:
        code = run_kprop(args + ["--cases", cases])
    print("profiled exit", code, flush=True)
    averages = prof.key_averages()
    print(averages.table(sort_by="cpu_time_total", row_limit=35))
    print(averages.table(sort_by="count", row_limit=25))


if __name__ == "__main__":
    main()
