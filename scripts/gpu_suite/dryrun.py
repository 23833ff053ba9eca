"""--dry-run: the commands each part would run, and their environment, printed; nothing run.
"""
from __future__ import annotations

import glob
import os
import shlex

from .plans import PLANS, SHOWN_ENV, build_runs, environment, extension_run
from .settings import PREFIX, ROOT


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
