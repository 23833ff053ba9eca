#!/usr/bin/env python3
"""The GPU suite in one go, for the GPU machine (docs/gpu.md), as a declarative matrix.

Builds kprop and its Python entry against the torch that the interpreter imports (torch 2.x
with CUDA), compiles the Dao-AILab CUDA extension meanwhile, then runs every property of
kprop against each real upstream kernel (examples/upstream/) on the GPU, measures cases/s
and where the time goes, and runs the GEGLU MLP precision report at the seed's shape. What
runs is data (TARGETS, SIZES, PRECISION below), expanded into one command per run.

    scripts/gpu.py                          # everything but mps (the three upstream checkouts)
    scripts/gpu.py build speed              # some parts: build suite speed scale mps launch
                                            # precision (default: all but mps)
    scripts/gpu.py --kernels "fla liger"    # some upstream kernels (default: fla liger dao)
    scripts/gpu.py --dry-run suite          # print the commands of the parts, run nothing
    scripts/gpu.py summary                  # summary.md/.json again from the results folder
    CASES=300 RUN_SECONDS=60 scripts/gpu.py # every option also reads an environment variable
                                            # (scripts/gpu.sh's knobs): --help lists them

Each run is one process, in a time box: SIGINT at its end (kprop prints what it has), then
SIGKILL --kill-after seconds later. The suite runs one process per (kernel, property), all
beside each other on the one GPU (one intra-op thread each: OMP_NUM_THREADS=1); speed runs
one bench/gpu/steady.py process at a time; scale runs 1..8 steady.py processes together.
Findings go to RESULTS/corpus, which starts as a copy of corpus/upstream (what is known
already is counted, not hunted again). fla's kernels are autotuned over 16 configs per new
shape; KPROP_FLA_CONFIGS=1 (the default here) keeps the first only, and Triton's cache
stays in BUILD_DIR/triton-cache between runs. Dao's runs wait for its extension's compile
(started with the build) and are skipped, as problems, when it failed. The precision report
through Liger's GEGLU runs when liger is among the kernels.

Results (default build-gpu/results/, git-ignored): one log per run (NAME.log; a check's
`--json` result in NAME.json, steady.py's records in NAME.jsonl, a report's in NAME.json),
runs.jsonl (what ran: command, exit, seconds, box), and summary.md + summary.json, built
from those files (rewritten after every run, so a cut session leaves one). Exit 0 when
every run gave its result; 1 when the build failed (nothing after it runs; the message
names the log) or a run gave none (listed under "Problems"); 2 on bad usage.

The upstream kernels come from your own checkouts (never committed here):
  FLA_SRC                 flash-linear-attention (the folder holding fla/)
  LIGER_SRC               Liger-Kernel (the folder holding src/)
  DAO_CAUSAL_CONV1D_SRC   Dao-AILab/causal-conv1d (the folder holding csrc/)
default: .upstream/<name> in this repository (git-ignored). The Debian packages kprop needs
beyond torch (docs/gpu.md, "A GPU machine without a network") are unpacked from .debs/ (git-ignored) when present.
Standard library only: runs with the GPU venv's python3 and with Debian's.
"""
from __future__ import annotations

import argparse
import dataclasses
import datetime
import glob
import json
import os
import shlex
import shutil
import signal
import subprocess
import sys
import threading
import time
from typing import Dict, List, Optional, Tuple

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PARTS = ("build", "suite", "speed", "scale", "mps", "launch", "precision")
DEFAULT_PARTS = ("build", "suite", "speed", "scale", "launch", "precision")
UPSTREAMS = ("fla", "liger", "dao")
VENV_PYTHON = "/opt/torch/.venv/bin/python3"
PREFIX = "/tmp/kprop-pfx"  # where .debs/*.deb are unpacked

# ---- the matrix -------------------------------------------------------------------------

# Every property of each kernel: the suite runs each in its own process.
PROPERTIES = {
    "causal_conv1d": ("gradient", "vs_reference", "chunked", "packed", "cores"),
    "geglu": ("gradient", "vs_reference", "policy", "invariance"),
}

# The case sizes of the speed and scale runs, per kernel.
_CONV = ("--set", "W=4", "--set", "activation=silu", "--set", "bias=true")
SIZES = {
    "geglu": {"small": (), "large": ("--limit", "max_rows=256", "--limit", "max_cols=1024")},
    "causal_conv1d": {
        "small": ("--max-length", "16", "--max-segments", "2", "--set", "D=64") + _CONV,
        "large": ("--max-length", "256", "--max-segments", "8", "--set", "D=512") + _CONV},
}

# fla's shapes in speed and scale: one dtype, an initial state, packed, no final-state
# gradient. Each new constexpr combination compiles its kernels (seconds), and float64 does
# not compile at all, so `gradient` is left out of its speed runs.
FLA_PINS = ("--set", "initial_state=true", "--set", "final_state_grad=false",
            "--set", "layout=packed", "--dtype", "float32")
DAO_REFUSAL = ("--refusal", "dao adapter: unsupported")


@dataclasses.dataclass(frozen=True)
class Target:
    """One upstream implementation, and how each part runs it."""
    name: str                       # names its runs and logs
    upstream: str                   # the --kernels word that selects it
    kernel: str
    module: str                     # its adapter (examples/upstream/)
    impl: str
    options: Tuple[str, ...] = ()   # every run's extra kprop options
    # More suite runs: (name suffix, property, options).
    extra_suite: Tuple[Tuple[str, str, Tuple[str, ...]], ...] = ()
    speed_properties: Optional[Tuple[str, ...]] = None  # None: every property of its kernel
    pins: Tuple[str, ...] = ()      # speed and scale only
    parts: Tuple[str, ...] = ("suite", "speed", "scale")
    suite_box: str = "run_seconds"  # the setting that boxes its suite runs
    needs_extension: bool = False   # waits for the Dao extension's compile

    def properties(self):
        return PROPERTIES[self.kernel]


TARGETS = (
    Target("liger", "liger", "geglu", "kprop_liger", "liger::geglu"),
    Target("liger_ascend", "liger", "geglu", "kprop_liger", "liger_ascend::geglu",
           parts=("suite",)),
    Target("fla", "fla", "causal_conv1d", "kprop_fla", "fla::causal_conv1d",
           # The smoke test's lead: dx with a final-state gradient.
           extra_suite=(("final-state-grad", "vs_reference",
                         ("--set", "final_state_grad=true", "--dtype", "float32")),),
           speed_properties=("vs_reference", "chunked", "packed", "cores"), pins=FLA_PINS),
    # Dao's runs start when nvcc is done (~5 min on a fresh machine): --dao-seconds boxes
    # its suite runs.
    Target("dao", "dao", "causal_conv1d", "kprop_dao", "dao::causal_conv1d",
           options=DAO_REFUSAL, suite_box="dao_seconds", needs_extension=True),
)

# The GEGLU MLP at the seed's shape, matmuls on the GPU: (run, options, upstream or None).
PRECISION = (
    ("precision-seed-unscaled", ("--impl", "torch_policy"), None),
    ("precision-seed-fan-in", ("--impl", "torch_policy", "--scale", "fan_in"), None),
    ("precision-seed-fp32-product", ("--impl", "flat@fp32_product"), None),
    ("precision-seed-liger", ("--import", "kprop_liger", "--impl", "liger::geglu"), "liger"),
)

# ---- settings: option, environment variable, default ------------------------------------

KNOBS = (
    # (dest, environment variable, type, default, help); a default of None is computed.
    ("results", "RESULTS", str, os.path.join("build-gpu", "results"),
     "results folder (relative: to the repository)"),
    ("build_dir", "BUILD_DIR", str, "build-gpu", "kprop's build folder (relative: to the repository)"),
    ("python", "PYTHON", str, None, f"the interpreter with torch (default: {VENV_PYTHON} if "
     "there, else python3)"),
    ("kernels", "KERNELS", str, "fla liger dao", "the upstream kernels the parts run on"),
    ("cases", "CASES", int, 1000, "cases per suite run"),
    ("run_seconds", "RUN_SECONDS", float, 600, "time box of each suite, launch and precision run"),
    ("dao_seconds", "DAO_SECONDS", float, None, "time box of Dao's suite runs (default: RUN_SECONDS)"),
    ("shrink_seconds", "SHRINK_SECONDS", float, 240, "shrink budget of each suite run"),
    ("cases_small", "CASES_SMALL", int, 2000, "cases per small speed/scale run (gradient: an eighth)"),
    ("cases_large", "CASES_LARGE", int, 200, "cases per large speed/scale run (gradient: an eighth)"),
    ("speed_box", "SPEED_BOX", float, 480, "time box of each kernel's speed process"),
    ("speed_sizes", "SPEED_SIZES", str, "small large isolated",
     "the speed runs (isolated: small, each case in a worker)"),
    ("scale_sizes", "SCALE_SIZES", str, "small large", "the sizes of the several-process runs"),
    ("scale_procs", "SCALE_PROCS", str, "1 2 4 8", "the process counts of the several-process runs"),
    ("scale_box", "SCALE_BOX", float, 240, "time box of each several-process run"),
    ("launch_iters", "LAUNCH_ITERS", int, 500, "iterations of bench/gpu/launch.py"),
    ("kill_after", "KILL_AFTER", float, 30, "seconds from a box's SIGINT to SIGKILL"),
    ("jobs", "JOBS", int, None, "build jobs (default: the cores)"),
    ("debs", "DEBS", str, ".debs", f"folder of Debian packages (*.deb) unpacked into {PREFIX} for "
     "the build (relative: to the repository)"),
)


class BuildFailed(Exception):
    pass


def words(text):
    return [w for w in text.replace(",", " ").split() if w]


def settings_from(argv):
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], epilog=__doc__.split("\n\n", 1)[1],
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("parts", nargs="*", metavar="PART",
                        help=f"{' '.join(PARTS)}, or summary (only rebuild the summary); "
                             f"default: {' '.join(DEFAULT_PARTS)}")
    parser.add_argument("--dry-run", action="store_true",
                        help="print the commands the parts would run, run nothing")
    for dest, env, kind, default, text in KNOBS:
        parser.add_argument("--" + dest.replace("_", "-"), dest=dest, type=kind, metavar=env,
                            help=f"{text} (${env}" + (f"; default: {default})" if default is not None else ")"))
    args = parser.parse_args(argv)
    for dest, env, kind, default, _ in KNOBS:
        if getattr(args, dest) is None:
            raw = os.environ.get(env, "")
            try:
                setattr(args, dest, kind(raw) if raw else default)
            except ValueError:
                parser.error(f"${env}: not a {kind.__name__}: {raw!r}")
    if args.python is None:
        args.python = VENV_PYTHON if os.access(VENV_PYTHON, os.X_OK) else (
            shutil.which("python3") or sys.executable)
    if args.dao_seconds is None:
        args.dao_seconds = args.run_seconds
    if args.jobs is None:
        args.jobs = os.cpu_count() or 1
    args.results = os.path.abspath(os.path.join(ROOT, args.results))
    args.build_dir = os.path.abspath(os.path.join(ROOT, args.build_dir))
    args.debs = os.path.abspath(os.path.join(ROOT, args.debs))
    args.kernels = words(args.kernels)
    for k in args.kernels:
        if k not in UPSTREAMS:
            parser.error(f"--kernels/KERNELS: unknown kernel {k!r} (known: {' '.join(UPSTREAMS)})")
    args.speed_sizes, args.scale_sizes = words(args.speed_sizes), words(args.scale_sizes)
    for size in args.speed_sizes:
        if size not in ("small", "large", "isolated"):
            parser.error(f"SPEED_SIZES: unknown size {size!r} (small large isolated)")
    for size in args.scale_sizes:
        if size not in ("small", "large"):
            parser.error(f"SCALE_SIZES: unknown size {size!r} (small large)")
    try:
        args.scale_procs = [int(n) for n in words(args.scale_procs)]
    except ValueError:
        parser.error(f"SCALE_PROCS: not process counts: {args.scale_procs!r}")
    for part in args.parts:
        if part not in PARTS + ("summary",):
            parser.error(f"unknown part {part!r} (parts: {' '.join(PARTS)}, summary)")
    # gpu.sh's order, whatever the order asked: build first.
    args.parts = [p for p in PARTS + ("summary",) if p in (args.parts or DEFAULT_PARTS)]
    return args


# ---- the runs the matrix expands to ------------------------------------------------------

@dataclasses.dataclass
class Run:
    name: str
    part: str
    argv: List[str]
    kind: str                       # check (--json on stdout), steady, report, launch, command
    box: Optional[float] = None     # seconds; None: no time box
    spec: Optional[List[str]] = None  # steady.py's spec lines, written to spec_file
    spec_file: Optional[str] = None
    needs_extension: bool = False
    meta: Dict = dataclasses.field(default_factory=dict)
    order: int = 0                  # its place in the matrix (the summary's order)


def numbered(steps):
    """The steps, each run given its place in the matrix."""
    for i, r in enumerate(r for step in steps for r in step):
        r.order = i
    return steps


def kprop(s, *args):
    return [s.python, "-m", "kprop", *args]


def selected(s, part):
    return [t for t in TARGETS if t.upstream in s.kernels and part in t.parts]


def suite_runs(s):
    runs = []
    for t in selected(s, "suite"):
        every = [(f"{t.name}-{p}", p, ()) for p in t.properties()]
        every += [(f"{t.name}-{suffix}", p, extra) for suffix, p, extra in t.extra_suite]
        for name, prop, extra in every:
            argv = kprop(s, "check", t.kernel, "--import", t.module, "--impl", t.impl,
                         "--device", "cuda", "--property", prop, "--cases", str(s.cases),
                         "--corpus", os.path.join(s.results, "corpus"),
                         "--shrink-seconds", f"{s.shrink_seconds:g}", *t.options, *extra, "--json")
            runs.append(Run(name, "suite", argv, "check", box=getattr(s, t.suite_box),
                            needs_extension=t.needs_extension,
                            meta={"target": t.name, "kernel": t.kernel, "impl": t.impl,
                                  "property": prop}))
    return [runs]  # one step: all at once


def spec_line(s, label, cases, t, prop, *rest):
    """One line of steady.py's spec: LABEL CASES kprop-check-arguments..."""
    return shlex.join([label, str(cases), t.kernel, "--import", t.module, "--impl", t.impl,
                       "--device", "cuda", "--property", prop,
                       "--corpus", os.path.join(s.results, "corpus"), *rest])


def size_cases(s, size):
    return s.cases_small if size == "small" else s.cases_large


def steady(s, records, spec_file, *more):
    return [s.python, os.path.join(ROOT, "bench", "gpu", "steady.py"), *more,
            "--json", records, spec_file]


def speed_runs(s):
    steps = []
    for t in selected(s, "speed"):
        extra = t.options + t.pins
        lines = []
        for size in ("small", "large"):
            if size not in s.speed_sizes:
                continue
            for prop in t.speed_properties or t.properties():
                n = size_cases(s, size) // (8 if prop == "gradient" else 1)
                lines.append(spec_line(s, f"{size}-{prop}", n, t, prop, "--no-isolation",
                                       *SIZES[t.kernel][size], *extra))
        if "isolated" in s.speed_sizes:  # the same with each case in a worker (the default)
            lines.append(spec_line(s, "small-vs_reference-isolated", s.cases_small // 4, t,
                                   "vs_reference", *SIZES[t.kernel]["small"], *extra))
        name = f"speed-{t.name}"
        spec_file = os.path.join(s.results, name + ".spec")
        steps.append([Run(name, "speed", steady(s, os.path.join(s.results, name + ".jsonl"),
                                                spec_file),
                          "steady", box=s.speed_box, spec=lines, spec_file=spec_file,
                          needs_extension=t.needs_extension,
                          meta={"target": t.name, "kernel": t.kernel, "impl": t.impl})])
    return steps


def scale_runs(s, label="scale"):
    """1..8 processes on the one GPU, each running one steady.py spec; they measure together
    (steady.py --together: each waits for all to be warm). One step per process count."""
    steps = []
    for t in selected(s, "scale"):
        for size in s.scale_sizes:
            spec_file = os.path.join(s.results, f"{label}-{t.name}-{size}.spec")
            line = spec_line(s, f"{size}-vs_reference", size_cases(s, size), t, "vs_reference",
                             "--no-isolation", *SIZES[t.kernel][size], *t.options, *t.pins)
            for procs in s.scale_procs:
                barrier = os.path.join(s.results, f".together-{label}-{t.name}-{size}-{procs}")
                group = {"label": label, "target": t.name, "size": size, "procs": procs,
                         "barrier": barrier}
                step = []
                for i in range(1, procs + 1):
                    name = f"{label}-{t.name}-{size}-{procs}-{i}"
                    argv = steady(s, os.path.join(s.results, name + ".jsonl"), spec_file,
                                  "--seed", str(i), "--together", f"{barrier}:{procs}")
                    step.append(Run(name, label, argv, "steady", box=s.scale_box, spec=[line],
                                    spec_file=spec_file, needs_extension=t.needs_extension,
                                    meta={"target": t.name, "kernel": t.kernel,
                                          "impl": t.impl, "group": group}))
                steps.append(step)
    return steps


def launch_runs(s):
    argv = [s.python, os.path.join(ROOT, "bench", "gpu", "launch.py"), *s.kernels,
            "--iters", str(s.launch_iters)]
    return [[Run("launch", "launch", argv, "launch", box=s.run_seconds,
                 needs_extension="dao" in s.kernels)]]


def precision_runs(s):
    steps = []
    for name, options, upstream in PRECISION:
        if upstream and upstream not in s.kernels:
            continue
        argv = kprop(s, "report", "precision", "geglu_mlp", *options, "--device", "cuda",
                     "--json-out", os.path.join(s.results, name + ".json"))
        steps.append([Run(name, "precision", argv, "report", box=s.run_seconds,
                          meta={"impl": options[options.index("--impl") + 1]})])
    return steps  # one at a time


def build_runs(s, torch_prefix, pybind_dir):
    prefix_path = ";".join([torch_prefix] + ([pybind_dir] if pybind_dir else []) +
                           [PREFIX + "/usr"])
    rel = os.path.relpath(s.build_dir, ROOT)
    return [
        Run("configure", "build", ["cmake", "-S", ".", "-B", rel, "-G", "Ninja",
                                   "-DCMAKE_BUILD_TYPE=Release", "-DKPROP_FUZZERS=OFF",
                                   f"-DCMAKE_PREFIX_PATH={prefix_path}",
                                   f"-DPython3_EXECUTABLE={s.python}"], "command"),
        Run("build", "build", ["cmake", "--build", rel, f"-j{s.jobs}", "--target", "kprop",
                               "kprop_python", "kprop_unit_test_device"], "command"),
        Run("unit-device", "build",
            [os.path.join(s.build_dir, "tests", "kprop_unit_test_device")], "command"),
    ]


def extension_run(s):
    return Run("dao-build", "build", [s.python, "-c", "import kprop_dao"], "command")


PLANS = {"suite": suite_runs, "speed": speed_runs, "scale": scale_runs,
         "mps": lambda s: scale_runs(s, "scale-mps"), "launch": launch_runs,
         "precision": precision_runs}


def environment(s):
    """What every run gets (gpu.sh's exports)."""
    env = dict(os.environ)
    env["FLA_SRC"] = env.get("FLA_SRC") or os.path.join(ROOT, ".upstream", "flash-linear-attention")
    env["LIGER_SRC"] = env.get("LIGER_SRC") or os.path.join(ROOT, ".upstream", "Liger-Kernel")
    env["DAO_CAUSAL_CONV1D_SRC"] = (env.get("DAO_CAUSAL_CONV1D_SRC") or
                                    os.path.join(ROOT, ".upstream", "causal-conv1d"))
    env["DAO_BUILD"] = env.get("DAO_BUILD") or os.path.join(s.build_dir, "dao")
    env["PATH"] = "/usr/local/cuda/bin" + os.pathsep + env.get("PATH", "")
    env["TORCH_CUDA_ARCH_LIST"] = env.get("TORCH_CUDA_ARCH_LIST") or "9.0"
    env["TRITON_CACHE_DIR"] = env.get("TRITON_CACHE_DIR") or os.path.join(s.build_dir, "triton-cache")
    env["KPROP_FLA_CONFIGS"] = env.get("KPROP_FLA_CONFIGS", "1")  # set but empty: all configs
    env["OMP_NUM_THREADS"] = env.get("OMP_NUM_THREADS") or "1"
    env["PYTHONPATH"] = os.pathsep.join([os.path.join(s.build_dir, "python"),
                                         os.path.join(ROOT, "examples", "upstream")])
    return env


SHOWN_ENV = ("FLA_SRC", "LIGER_SRC", "DAO_CAUSAL_CONV1D_SRC", "DAO_BUILD", "TORCH_CUDA_ARCH_LIST",
             "TRITON_CACHE_DIR", "KPROP_FLA_CONFIGS", "OMP_NUM_THREADS", "PYTHONPATH")


def dry_run(s):
    env = environment(s)
    print("# environment of every run: " +
          " ".join(f"{k}={shlex.quote(env[k])}" for k in SHOWN_ENV))
    print(f"# results: {s.results}; corpus: a copy of corpus/upstream in {s.results}/corpus")
    shown = set()
    for part in s.parts:
        if part == "summary":
            continue
        if part == "build":
            print("== build: one step after the other; a failure ends the driver")
            if "dao" in s.kernels:
                r = extension_run(s)
                print(f"[{r.name}] in the background, PYTHONPATH=examples/upstream: {shlex.join(r.argv)}")
            for deb in sorted(glob.glob(os.path.join(s.debs, "*.deb"))):
                print(f"dpkg -x {shlex.quote(os.path.relpath(deb, ROOT))} {PREFIX}")
            runs = build_runs(s, f"$({s.python} -c 'import torch; print(torch.utils.cmake_prefix_path)')",
                              f"$({s.python} -c 'import pybind11; print(pybind11.get_cmake_dir())')")
            for r in runs:
                print(f"[{r.name}] {shlex.join(r.argv)}")
            continue
        steps = PLANS[part](s)
        how = {"suite": "all at once", "speed": "one at a time", "scale": "each step together",
               "mps": "each step together, under MPS", "launch": "", "precision": "one at a time"}
        count = sum(len(step) for step in steps)
        print(f"== {part}: {count} run{'s' if count != 1 else ''}" +
              (f", {how[part]}" if how[part] else ""))
        if part == "mps":
            print("nvidia-cuda-mps-control -d   # then, after the runs: echo quit | nvidia-cuda-mps-control")
        for step in steps:
            if len(steps) > 1 and len(step) > 1:
                print(f"-- together: {len(step)} processes")
            for r in step:
                after = ", after the Dao extension's compile" if r.needs_extension else ""
                print(f"[{r.name}] box {r.box:g} s{after}: {shlex.join(r.argv)}")
                if r.spec is not None and r.spec_file not in shown:
                    shown.add(r.spec_file)
                    for line in r.spec:
                        print(f"    spec {os.path.basename(r.spec_file)}: {line}")
    return 0


# ---- running ------------------------------------------------------------------------------

def now():
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


class Driver:
    def __init__(self, s):
        self.s = s
        self.env = environment(s)
        self.lock = threading.Lock()
        self.extension = None      # the thread that waits for the Dao extension's compile
        self.extension_proc = None # its process (its own session: ended with its children)
        self.extension_ok = None   # its outcome, once known
        self.noted_extension = False

    def note(self, text):
        with self.lock:
            print(text, flush=True)

    def record(self, fields):
        with self.lock:
            with open(os.path.join(self.s.results, "runs.jsonl"), "a") as out:
                out.write(json.dumps(fields) + "\n")
            write_summary(self.s.results)

    def probe(self, code):
        """What the interpreter prints for `code`, or None (with why on stderr)."""
        try:
            p = subprocess.run([self.s.python, "-c", code], capture_output=True, text=True,
                               timeout=300, env=self.env, cwd=ROOT)
        except (OSError, subprocess.TimeoutExpired) as e:
            print(f"gpu.py: {self.s.python} -c {code!r}: {e}", file=sys.stderr)
            return None
        if p.returncode != 0:
            tail = (p.stderr.strip().splitlines() or [""])[-1]
            print(f"gpu.py: {self.s.python} -c {code!r}: exit {p.returncode}: {tail}", file=sys.stderr)
            return None
        return p.stdout.strip()

    # One process, in its time box: SIGINT at the end (kprop prints what it has), SIGKILL
    # kill_after seconds later.
    def execute(self, r, env=None, session=False):
        s = self.s
        fields = {"record": "run", "name": r.name, "part": r.part, "kind": r.kind,
                  "command": r.argv, "box": r.box, "log": r.name + ".log", "meta": r.meta,
                  "order": r.order}
        if r.needs_extension and not self.wait_for_extension():
            fields.update(skipped="the Dao extension did not compile (dao-build.log)",
                          exit=None, seconds=0)
            self.record(fields)
            self.note(f"-- {r.name}: skipped: the Dao extension did not compile")
            return fields
        log = os.path.join(s.results, r.name + ".log")
        outputs = {"check": ".json", "report": ".json", "steady": ".jsonl"}
        if r.kind in outputs:
            fields["output"] = r.name + outputs[r.kind]
            try:
                os.remove(os.path.join(s.results, fields["output"]))
            except FileNotFoundError:
                pass
        if r.spec is not None:
            with self.lock:
                with open(r.spec_file, "w") as f:
                    f.write("".join(line + "\n" for line in r.spec))
            fields["spec"] = os.path.basename(r.spec_file)
        start = time.time()
        timed_out = killed = False
        with open(log, "w") as err:
            out = open(os.path.join(s.results, fields["output"]), "w") if r.kind == "check" else err
            try:
                p = subprocess.Popen(r.argv, cwd=ROOT, env=env or self.env, stdin=subprocess.DEVNULL,
                                     stdout=out, stderr=err, start_new_session=session)
                if session:
                    self.extension_proc = p
            except OSError as e:
                err.write(f"gpu.py: cannot start {r.argv[0]}: {e}\n")
                p = None
            finally:
                if out is not err:
                    out.close()
            if p is None:
                code = None
            else:
                try:
                    code = p.wait(timeout=r.box)
                except subprocess.TimeoutExpired:
                    timed_out = True
                    p.send_signal(signal.SIGINT)
                    try:
                        code = p.wait(timeout=s.kill_after)
                    except subprocess.TimeoutExpired:
                        killed = True
                        p.kill()
                        code = p.wait()
        seconds = time.time() - start
        fields.update(exit=code, seconds=round(seconds, 1), timed_out=timed_out, killed=killed,
                      finished=now())
        self.record(fields)
        boxed = " (killed after its box)" if killed else " (its box ended it)" if timed_out else ""
        self.note(f"-- {r.name}: exit {code} in {seconds:.1f} s{boxed}: {shlex.join(r.argv)}")
        return fields

    def run_step(self, step):
        """The step's runs at once, each in its own thread; returns when all have ended."""
        if len(step) == 1:
            return [self.execute(step[0])]
        results = [None] * len(step)

        def one(i):
            results[i] = self.execute(step[i])
        threads = [threading.Thread(target=one, args=(i,)) for i in range(len(step))]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        return results

    # --- the Dao extension compiles on its own (nvcc, ~5 min), beside kprop's build ---------
    def start_extension(self):
        r = extension_run(self.s)
        env = dict(self.env, PYTHONPATH=os.path.join(ROOT, "examples", "upstream"))
        self.extension_started = time.time()
        thread = threading.Thread(target=self._extension, args=(r, env))
        thread.start()
        self.extension = thread

    def _extension(self, r, env):
        fields = self.execute(r, env=env, session=True)
        with open(os.path.join(self.s.results, r.name + ".log"), "a") as log:
            log.write(f"exit {fields['exit']}\n")
        self.extension_ok = fields["exit"] == 0

    def wait_for_extension(self):
        if self.extension is None:
            return True  # not compiled by this call: the adapter compiles or finds it
        self.extension.join()
        with self.lock:
            if not self.noted_extension:
                self.noted_extension = True
                print(f"dao extension: exit {0 if self.extension_ok else 'non-zero'} after "
                      f"{time.time() - self.extension_started:.1f} s", flush=True)
        return self.extension_ok

    def stop_extension(self):
        """Ends the Dao extension's compile (nvcc and all) when the driver stops early."""
        p = self.extension_proc
        if p is not None and p.poll() is None:
            self.note("gpu.py: stopping the Dao extension's compile")
            try:
                os.killpg(p.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass

    # --- kprop against this torch ----------------------------------------------------------
    def build(self):
        s = self.s
        if "dao" in s.kernels:
            self.start_extension()
        debs = sorted(glob.glob(os.path.join(s.debs, "*.deb")))
        if debs:
            os.makedirs(PREFIX, exist_ok=True)
            for deb in debs:
                if subprocess.run(["dpkg", "-x", deb, PREFIX]).returncode != 0:
                    raise BuildFailed(f"dpkg -x {deb} {PREFIX} failed")
        torch_prefix = self.probe("import torch; print(torch.utils.cmake_prefix_path)")
        if not torch_prefix:
            raise BuildFailed(f"{s.python} cannot import torch (PYTHON or --python: the "
                              "interpreter whose torch kprop builds against)")
        pybind_dir = self.probe("import pybind11; print(pybind11.get_cmake_dir())")
        for [r] in numbered([[r] for r in build_runs(s, torch_prefix, pybind_dir)]):
            fields = self.execute(r)
            if fields["exit"] != 0:
                log = os.path.join(s.results, fields["log"])
                raise BuildFailed(f"{r.name} failed (exit {fields['exit']}): "
                                  f"{shlex.join(r.argv)}\nthe end of {log}:\n" + tail(log, 15))
        self.note(f"kprop build: done; device test: {last_line(os.path.join(s.results, 'unit-device.log'))}")

    def check_entry(self):
        entry = os.path.join(self.s.build_dir, "python", "kprop")
        if not glob.glob(os.path.join(entry, "_kprop*.so")):
            raise BuildFailed(f"no kprop Python entry in {entry}: run `scripts/gpu.py build` "
                              "first (or --build-dir)")

    def mps(self):
        control = shutil.which("nvidia-cuda-mps-control", path=self.env["PATH"])
        if not control or subprocess.run([control, "-d"], env=self.env).returncode != 0:
            self.note("MPS: nvidia-cuda-mps-control missing or would not start")
            self.record({"record": "note", "part": "mps",
                         "text": "MPS: nvidia-cuda-mps-control missing or would not start"})
            return
        self.note("MPS daemon started")
        try:
            for step in numbered(scale_runs(self.s, "scale-mps")):
                self.scale_step(step)
        finally:
            subprocess.run([control], input="quit\n", text=True, env=self.env)

    def scale_step(self, step):
        group = step[0].meta["group"]
        shutil.rmtree(group["barrier"], ignore_errors=True)
        self.run_step(step)
        self.note("   " + together_line(self.s.results, [r.name for r in step], group))

    def main(self):
        s = self.s
        os.makedirs(os.path.join(s.results, "corpus"), exist_ok=True)
        for folder in (self.env["DAO_BUILD"], self.env["TRITON_CACHE_DIR"]):
            os.makedirs(folder, exist_ok=True)
        copy_missing(os.path.join(ROOT, "corpus", "upstream"), os.path.join(s.results, "corpus"))
        machine = ""
        if shutil.which("nvidia-smi"):
            p = subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True)
            machine = (p.stdout.splitlines() or [""])[0]
        versions = self.probe('import torch, triton; print(torch.__version__, "triton", triton.__version__)')
        self.note(f"== gpu.py {now()} on {machine or 'no nvidia-smi'}; torch: {versions}")
        settings = {k: v for k, v in vars(s).items() if k not in ("dry_run",)}
        self.record({"record": "invocation", "started": now(), "parts": s.parts, "machine": machine,
                     "torch": versions, "settings": settings})
        code, error = 0, None
        try:
            if "build" in s.parts:
                self.build()
            if any(p in s.parts for p in PLANS):
                self.check_entry()
            for part in s.parts:
                if part == "mps":
                    self.mps()
                elif part in PLANS:
                    for step in numbered(PLANS[part](s)):
                        (self.scale_step if part == "scale" else self.run_step)(step)
        except BuildFailed as e:
            code, error = 1, str(e)
            print(f"gpu.py: build failed: {e}", file=sys.stderr, flush=True)
            self.stop_extension()
        except KeyboardInterrupt:
            code, error = 130, "interrupted"
            self.stop_extension()
        if self.extension is not None and code == 0:
            self.wait_for_extension()
        problems = summarize(s.results)["problems"]
        if code == 0 and problems:
            code = 1
            print(f"gpu.py: {len(problems)} problems (summary.md lists them)", file=sys.stderr)
        self.record({"record": "end", "finished": now(), "exit": code, "error": error})
        self.note(f"== done {now()}: {os.path.join(s.results, 'summary.md')}")
        return code


def copy_missing(source, target):
    """cp -rn source/. target/: what target lacks."""
    for folder, _, files in os.walk(source):
        into = os.path.join(target, os.path.relpath(folder, source))
        os.makedirs(into, exist_ok=True)
        for f in files:
            if not os.path.exists(os.path.join(into, f)):
                shutil.copy2(os.path.join(folder, f), os.path.join(into, f))


# ---- the summary, from the results folder alone ----------------------------------------

def read_json(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def json_of_output(path):
    """A command's JSON document: the whole file, else from its last line that opens one
    (an adapter may print before kprop does)."""
    try:
        with open(path) as f:
            text = f.read()
    except OSError:
        return None
    try:
        return json.loads(text)
    except ValueError:
        pass
    lines = text.splitlines()
    for i in range(len(lines) - 1, -1, -1):
        if lines[i] == "{":
            try:
                return json.loads("\n".join(lines[i:]))
            except ValueError:
                continue
    return None


def json_lines(path):
    out = []
    try:
        with open(path) as f:
            for line in f:
                try:
                    out.append(json.loads(line))
                except ValueError:
                    pass
    except OSError:
        pass
    return out


def tail(path, n):
    try:
        with open(path, errors="replace") as f:
            lines = [line.rstrip() for line in f.read().replace("\r", "\n").splitlines()]
    except OSError:
        return ""
    return "\n".join([line for line in lines if line.strip()][-n:])


def last_line(path):
    return tail(path, 1)


def check_result(doc):
    """The numbers of one `kprop check --json` document."""
    tally = doc.get("tally", {})
    out = {k: tally.get(k) for k in ("cases", "passed", "failed", "known", "rejected", "skipped")}
    out["seconds"] = round(tally.get("seconds", 0.0), 2)
    if doc.get("interrupted"):
        out["interrupted"] = doc["interrupted"]
    if doc.get("mostly_refused"):
        out["mostly_refused"] = doc["mostly_refused"]
    failure = doc.get("failure")
    if failure:
        out["failure"] = {"identity": failure.get("identity"),
                          "case_number": failure.get("case_number"),
                          "shrink_steps": failure.get("shrink_steps"),
                          "kept": (doc.get("corpus") or {}).get("path")}
        out["also"] = [a.get("identity") for a in doc.get("also", [])]
    if doc.get("known_sightings"):
        out["known_sightings"] = doc["known_sightings"]
    if failure:
        out["verdict"] = "FAIL"
    elif doc.get("mostly_refused"):
        out["verdict"] = "refused"
    elif doc.get("interrupted"):
        out["verdict"] = "no new counterexample (box)"
    else:
        out["verdict"] = "PASS"
    return out


def report_result(doc):
    return {"impl": doc.get("impl"), "passed": doc.get("passed"),
            "first_deviation": doc.get("first_deviation"),
            "verdicts": {t.get("tensor"): t.get("verdict") for t in doc.get("tensors", [])},
            "seconds": round(doc.get("total_seconds", 0.0), 1)}


def together(records):
    """Several processes' measured runs, added up over the span they shared."""
    measured = [r for r in records if "measured_from" in r]
    if not measured:
        return None
    first = min(r["measured_from"] for r in measured)
    last = max(r["measured_to"] for r in measured)
    cases = sum(r["cases"] for r in measured)
    span = last - first
    return {"cases": cases, "span": round(span, 2),
            "rate": round(cases / span) if span > 0 else None,
            "each": [r["rate"] for r in measured]}


def together_line(results, names, group):
    records = [rec for n in names for rec in json_lines(os.path.join(results, n + ".jsonl"))]
    what = f"{group['label']}: {group['target']}, {group['size']}, {group['procs']} processes"
    t = together(records)
    if t is None:
        return f"{what}: no measured run"
    return (f"{what}: {t['rate']} cases/s together ({t['cases']} cases in {t['span']:.2f} s), "
            f"each {', '.join(str(r) for r in t['each'])}")


# A run's kind -> how its output is read, what is kept of it, and why none when unreadable.
RESULT_READERS = {
    "check": (json_of_output, check_result, "no JSON result"),
    "report": (read_json, report_result, "no JSON report"),
}


def summarize(results):
    """summary.json's content, from runs.jsonl and each run's own output files."""
    invocations, runs, notes, ends = [], {}, [], []
    for rec in json_lines(os.path.join(results, "runs.jsonl")):
        kind = rec.get("record")
        if kind == "invocation":
            invocations.append(rec)
        elif kind == "run":
            runs.pop(rec["name"], None)  # a later run of the same name replaces it, in order
            runs[rec["name"]] = rec
        elif kind == "note":
            notes.append(rec["text"])
        elif kind == "end":
            ends.append(rec)
    problems = []
    for end in ends:
        if end.get("error"):
            problems.append(f"the driver ended with exit {end.get('exit')}: "
                            f"{end['error'].splitlines()[0]}")
    out_runs, groups = [], {}
    for name, rec in runs.items():
        run = {k: rec.get(k) for k in ("name", "part", "kind", "command", "box", "exit",
                                       "seconds", "timed_out", "killed", "log", "output",
                                       "spec", "skipped")}
        run.update({k: v for k, v in (rec.get("meta") or {}).items() if k != "group"})
        output = os.path.join(results, rec["output"]) if rec.get("output") else None
        why_none = None
        if rec.get("skipped"):
            why_none = f"skipped: {rec['skipped']}"
        elif rec["kind"] in RESULT_READERS:
            read, judge, missing = RESULT_READERS[rec["kind"]]
            doc = read(output)
            if doc is None:
                why_none = missing
            else:
                run["result"] = judge(doc)
        elif rec["kind"] == "steady":
            records = json_lines(output)
            run["result"] = {"runs": records}
            if not any("measured_from" in r for r in records):
                why_none = "no measured run"
        elif rec["kind"] == "launch":
            lines = [line for line in tail(os.path.join(results, rec["log"]), 200).splitlines()
                     if "fwd+bwd/s" in line or " torch " in line or "Error" in line]
            run["result"] = {"lines": lines}
            if rec.get("exit") != 0:
                why_none = f"exit {rec.get('exit')}"
        elif rec["kind"] == "command":
            run["last_line"] = last_line(os.path.join(results, rec["log"]))
            if rec.get("exit") != 0:
                why_none = "failed"
        if why_none:
            run["problem"] = why_none
            run["log_tail"] = tail(os.path.join(results, rec["log"]), 5)
            problems.append(f"{name}: {why_none} (exit {rec.get('exit')}"
                            f"{', killed after its box' if rec.get('killed') else ''}; {rec['log']})")
        out_runs.append(run)
    where = {part: i for i, part in enumerate(PARTS)}
    out_runs.sort(key=lambda r: (where.get(r["part"], len(PARTS)), runs[r["name"]].get("order", 0)))
    for run in out_runs:
        group = (runs[run["name"]].get("meta") or {}).get("group")
        if group:
            key = (group["label"], group["target"], group["size"], group["procs"])
            groups.setdefault(key, []).extend((run.get("result") or {}).get("runs", []))
    scale = []
    for (label, target, size, procs), records in groups.items():
        entry = {"label": label, "target": target, "size": size, "procs": procs}
        entry.update(together(records) or {"problem": "no measured run"})
        scale.append(entry)
    return {"schema": "kprop-gpu-summary/1", "results": results, "invocations": invocations,
            "notes": notes, "exit": ends[-1].get("exit") if ends else None,
            "problems": problems, "runs": out_runs, "scale": scale}


def cell(x):
    return "-" if x is None or x == "" else str(x).replace("|", "\\|")


def table(header, rows):
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(cell(c) for c in row) + " |" for row in rows]
    return lines


def exit_cell(run):
    code = cell(run.get("exit"))
    if run.get("killed"):
        return code + " (killed)"
    return code + " (box)" if run.get("timed_out") else code


def markdown(summary):
    out = ["# GPU suite: " + os.path.basename(summary["results"].rstrip("/")), ""]
    for inv in summary["invocations"]:
        st = inv.get("settings", {})
        out.append(f"- {inv.get('started')}: `scripts/gpu.py {' '.join(inv.get('parts', []))}` on "
                   f"{inv.get('machine') or 'no GPU named'}, torch {inv.get('torch')}; kernels "
                   f"{' '.join(st.get('kernels', []))}, {st.get('cases')} cases per suite run, "
                   f"box {st.get('run_seconds', 0):g} s")
    if summary["exit"] is not None:
        out.append(f"- exit {summary['exit']}")
    out.append("")
    if summary["problems"]:
        out += ["## Problems", ""] + [f"- {p}" for p in summary["problems"]] + [""]
    runs = summary["runs"]
    by_part = lambda *parts: [r for r in runs if r["part"] in parts]
    if by_part("build"):
        out += ["## Build", ""]
        out += table(["step", "exit", "seconds", "last line of its log"],
                     [[r["name"], exit_cell(r), r.get("seconds"), r.get("last_line")]
                      for r in by_part("build")])
        out.append("")
    if by_part("suite"):
        out += ["## Suite: every property against each upstream kernel", ""]
        rows = []
        for r in by_part("suite"):
            res = r.get("result") or {}
            what = res.get("verdict") or r.get("problem")
            if res.get("failure"):
                what = f"FAIL `{res['failure']['identity']}` (case {res['failure']['case_number']})"
                if res.get("also"):
                    what += f", and {len(res['also'])} more"
            elif res.get("mostly_refused"):
                what = f"refused: {res['mostly_refused'].get('reason')}"
            rows.append([r["name"], r.get("impl"), r.get("property"), exit_cell(r), r.get("seconds"),
                         res.get("cases"), res.get("passed"), res.get("failed"), res.get("known"),
                         res.get("rejected"), res.get("skipped"), what])
        out += table(["run", "impl", "property", "exit", "s", "cases", "passed", "failed",
                      "known", "rejected", "skipped", "result"], rows)
        out.append("")
    if by_part("speed"):
        out += ["## Speed: cases/s of the measured run after a warm-up (bench/gpu/steady.py)", ""]
        rows = []
        for r in by_part("speed"):
            records = (r.get("result") or {}).get("runs", [])
            if not records:
                rows.append([r["name"], "-", "-", "-", "-", "-", r.get("problem")])
            for rec in records:
                rows.append([r["name"], rec.get("label"), rec.get("cases"), rec.get("seconds"),
                             rec.get("rate"), rec.get("warm_seconds"),
                             rec.get("error") or ("stopped at a new failure" if rec.get("stopped")
                                                  else f"exit {rec.get('exit')}")])
        out += table(["run", "label", "cases", "s", "cases/s", "warm-up s", ""], rows)
        out.append("")
    if summary["scale"]:
        out += ["## Several processes on the one GPU (measured together)", ""]
        out += table(["label", "kernel", "size", "processes", "cases/s together", "cases",
                      "span s", "each"],
                     [[g["label"], g["target"], g["size"], g["procs"], g.get("rate") or g.get("problem"),
                       g.get("cases"), g.get("span"), ", ".join(str(x) for x in g.get("each", []))]
                      for g in summary["scale"]])
        out.append("")
    if by_part("launch"):
        out += ["## Where a small case's time goes (bench/gpu/launch.py)", "", "```"]
        for r in by_part("launch"):
            out += (r.get("result") or {}).get("lines", []) or [r.get("problem") or "-"]
        out += ["```", ""]
    if by_part("precision"):
        out += ["## The GEGLU MLP at the seed's shape (kprop report precision)", ""]
        rows = []
        for r in by_part("precision"):
            res = r.get("result") or {}
            verdicts = {}
            for v in (res.get("verdicts") or {}).values():
                verdicts[v] = verdicts.get(v, 0) + 1
            rows.append([r["name"], r.get("impl"), exit_cell(r), res.get("passed", r.get("problem")),
                         res.get("first_deviation") if res else None,
                         ", ".join(f"{n} {v}" for v, n in verdicts.items()), res.get("seconds")])
        out += table(["run", "impl", "exit", "passed", "first deviation", "tensors", "s"], rows)
        out.append("")
    if summary["notes"]:
        out += ["## Notes", ""] + [f"- {n}" for n in summary["notes"]] + [""]
    out += ["Each run's command, log and output: summary.json (`runs`), runs.jsonl.", ""]
    return "\n".join(out)


def write_summary(results):
    summary = summarize(results)
    for name, text in (("summary.json", json.dumps(summary, indent=1) + "\n"),
                       ("summary.md", markdown(summary))):
        partial = os.path.join(results, name + ".partial")
        with open(partial, "w") as f:
            f.write(text)
        os.replace(partial, os.path.join(results, name))
    return summary


def main(argv=None):
    s = settings_from(sys.argv[1:] if argv is None else argv)
    if s.dry_run:
        return dry_run(s)
    if s.parts == ["summary"]:
        if not os.path.isfile(os.path.join(s.results, "runs.jsonl")):
            print(f"gpu.py: no runs.jsonl in {s.results}", file=sys.stderr)
            return 2
        summary = write_summary(s.results)
        print(f"{os.path.join(s.results, 'summary.md')}: {len(summary['runs'])} runs, "
              f"{len(summary['problems'])} problems")
        return 1 if summary["problems"] else 0
    return Driver(s).main()


if __name__ == "__main__":
    sys.exit(main())
