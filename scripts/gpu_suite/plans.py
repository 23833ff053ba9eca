"""The runs the matrix expands to: one Run per process, grouped in steps (a step's runs go
together), per part (PLANS); the build's steps; the environment every run gets.
"""
from __future__ import annotations

import dataclasses
import os
import shlex
from typing import Dict, List, Optional

from .matrix import PRECISION, SIZES, TARGETS
from .settings import PREFIX, ROOT


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
