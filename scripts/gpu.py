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
import os
import sys

sys.dont_write_bytecode = True  # no __pycache__ beside the modules in the work tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gpu_suite.driver import Driver  # noqa: E402
from gpu_suite.dryrun import dry_run  # noqa: E402
from gpu_suite.settings import settings_from  # noqa: E402
from gpu_suite.summary import write_summary  # noqa: E402


def main(argv=None):
    s = settings_from(sys.argv[1:] if argv is None else argv, __doc__)
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
