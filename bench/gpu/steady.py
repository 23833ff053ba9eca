"""Steady-state cases/s of `kprop check` runs through a Python-registered kernel, in one
Python process: the imports (torch, Triton, the upstream package: 5 to 20 s on the H200)
are paid once, and each run goes twice with the same seed, so that the second, measured
one meets only kernels Triton has compiled already (a new shape or constexpr compiles in
the first). What it prints per run is kprop's own summary of the measured run (cases,
its clock, where the time went, what isolation cost) and one line:

    steady: LABEL: N cases in T s = R cases/s; warm-up run W s (exit E); measured A-B

(A and B: the measured run's start and end, seconds since the epoch, to add up several
processes over the span they shared), and one line of what the measured run allocated:

    memory: LABEL: P page faults a case; D device allocations (cudaMalloc) for R requests; H pinned

(the process's minor page faults; the CUDA caching allocator's calls to the driver against
the tensors it handed out, and the pinned host blocks it had to allocate: a run that reuses
its memory from case to case allocates nothing new once warm). `--json FILE` appends the same as one JSON object a line
(label, cases, seconds, rate, stopped, warm_seconds, warm_exit, exit, measured_from,
measured_to; `error` where the run gave no summary): what scripts/gpu.py's summary reads.
With `--together DIR:N`, N processes running one spec
beside each other on one GPU measure each run only once all N have finished its warm-up, so
that their measured runs overlap (a process that came late would otherwise run alone).

Each line of the spec file (or stdin) is LABEL CASES kprop-check-arguments...; `#` starts
a comment. Example (examples/upstream on PYTHONPATH, kprop's Python entry built):

    echo "liger-small 2000 geglu --import kprop_liger --impl liger::geglu --device cuda \\
        --property vs_reference --no-isolation" | python3 bench/gpu/steady.py -
"""
import argparse
import ctypes
import json
import os
import re
import resource
import shlex
import sys
import tempfile
import time

_STARTED = time.perf_counter()
import kprop  # noqa: E402  (after the clock: its import is part of what is reported)

_libc = ctypes.CDLL(None)
_SUMMARY = re.compile(r"^(\d+) cases: .* in ([\d.]+) s \((\d+) cases/s\)")


def run_captured(args):
    """kprop.main(args) with its standard output in a string (kprop writes to file
    descriptor 1 from C++, so the descriptor is redirected, not sys.stdout)."""
    sys.stdout.flush()
    with tempfile.TemporaryFile(mode="w+") as sink:
        saved = os.dup(1)
        os.dup2(sink.fileno(), 1)
        try:
            code = kprop.main(args)
        finally:
            _libc.fflush(None)
            os.dup2(saved, 1)
            os.close(saved)
        sink.seek(0)
        return code, sink.read()


def wait_for_all(together, run_name):
    """Blocks until N processes (this one included) have reached this run's barrier in DIR;
    gives up after 10 minutes (a process that died does not hold the others forever)."""
    folder, count = together
    arrived = os.path.join(folder, run_name)
    os.makedirs(arrived, exist_ok=True)
    open(os.path.join(arrived, str(os.getpid())), "w").close()
    deadline = time.time() + 600
    while len(os.listdir(arrived)) < count and time.time() < deadline:
        time.sleep(0.05)


def record(path, fields):
    """Appends one run's numbers to the JSON-lines file `path` (None: nothing)."""
    if path:
        with open(path, "a") as out:
            out.write(json.dumps(fields) + "\n")


def memory_counts():
    """The process's minor page faults and, once CUDA is in use, the caching allocators'
    counters (device allocations from the driver, requests served, pinned host blocks)."""
    counts = {"page_faults": resource.getrusage(resource.RUSAGE_SELF).ru_minflt}
    torch = sys.modules.get("torch")
    if torch is not None and torch.cuda.is_available() and torch.cuda.is_initialized():
        stats = torch.cuda.memory_stats()
        counts["device_allocations"] = stats.get("num_device_alloc", 0)
        counts["requests"] = stats.get("allocation.all.allocated", 0)
        host = getattr(torch.cuda, "host_memory_stats", None)
        if host is not None:
            counts["pinned_allocations"] = host().get("num_host_alloc", 0)
    return counts


def measure(number, label, cases, args, seed, together, records=None):
    run = ["check"] + args + ["--cases", str(cases), "--seed", str(seed)]
    start = time.perf_counter()
    warm_code, _ = run_captured(run)
    warm_seconds = time.perf_counter() - start
    if together:
        wait_for_all(together, f"{number}-{label}")  # the spec's n-th run: labels may repeat
    before = memory_counts()
    measured_from = time.time()
    code, text = run_captured(run)
    measured_to = time.time()
    after = memory_counts()
    used = {k: after[k] - before.get(k, 0) for k in after}
    found = None
    for line in text.splitlines():
        summary = _SUMMARY.match(line)
        found = found or summary
        if summary or line.startswith(("time:", "isolation:", "FAIL", "defect:")):
            print(f"   {line}")
    if found is None:
        print(f"steady: {label}: no summary (exit {code}); its output:\n{text}", flush=True)
        record(records, {"label": label, "exit": code, "warm_seconds": round(warm_seconds, 2),
                         "warm_exit": warm_code, "error": "no summary"})
        return
    n, seconds, rate = int(found.group(1)), float(found.group(2)), int(found.group(3))
    stopped = " (stopped at a new failure)" if code == 1 else ""
    print(f"steady: {label}: {n} cases in {seconds:.2f} s = {rate} cases/s{stopped}; "
          f"warm-up run {warm_seconds:.1f} s (exit {warm_code}); "
          f"measured {measured_from:.2f}-{measured_to:.2f}", flush=True)
    device = ""
    if "device_allocations" in used:
        device = (f"; {used['device_allocations']} device allocations (cudaMalloc) for "
                  f"{used['requests']} requests")
        if "pinned_allocations" in used:
            device += f"; {used['pinned_allocations']} pinned host blocks allocated"
    print(f"memory: {label}: {used['page_faults'] / max(n, 1):.1f} page faults a case{device}",
          flush=True)
    record(records, {"label": label, "cases": n, "seconds": seconds, "rate": rate,
                     "stopped": code == 1, "warm_seconds": round(warm_seconds, 2),
                     "warm_exit": warm_code, "exit": code,
                     "measured_from": round(measured_from, 2), "measured_to": round(measured_to, 2),
                     "memory": used})


def barrier(text):
    folder, _, count = text.rpartition(":")
    if not folder or not count.isdigit() or int(count) < 1:
        raise argparse.ArgumentTypeError(f"expected DIR:N (N >= 1), got {text!r}")
    return folder, int(count)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("spec", help="file of LABEL CASES arguments... lines, or - for stdin")
    parser.add_argument("--seed", type=int, default=7, help="seed of every run (default 7)")
    parser.add_argument("--together", metavar="DIR:N", type=barrier,
                        help="measure each run once N processes sharing DIR are warm")
    parser.add_argument("--json", metavar="FILE",
                        help="also append each run's numbers to FILE, one JSON object a line")
    options = parser.parse_args()
    lines = (sys.stdin if options.spec == "-" else open(options.spec)).read().splitlines()
    start = time.perf_counter()
    print(f"steady: kprop and torch imported in {start - _STARTED:.1f} s", flush=True)
    runs = [words for words in (shlex.split(line, comments=True) for line in lines)
            if len(words) >= 3]
    for number, words in enumerate(runs, 1):
        measure(number, words[0], int(words[1]), words[2:], options.seed, options.together,
                options.json)
    print(f"steady: all runs in {time.perf_counter() - start:.1f} s", flush=True)


if __name__ == "__main__":
    main()
