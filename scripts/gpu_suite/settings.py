"""The driver's settings: each an option, the environment variable that scripts/gpu.sh read,
and a default (KNOBS); settings_from() reads them and checks them.
"""
from __future__ import annotations

import argparse
import os
import shutil
import sys

from .matrix import DEFAULT_PARTS, PARTS, UPSTREAMS

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


VENV_PYTHON = "/opt/torch/.venv/bin/python3"
PREFIX = "/tmp/kprop-pfx"  # where .debs/*.deb are unpacked

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


def words(text):
    return [w for w in text.replace(",", " ").split() if w]


def settings_from(argv, doc):
    """The settings of one invocation: its options, else their environment variables, else
    the defaults; `doc` (the driver's docstring) is its --help."""
    parser = argparse.ArgumentParser(
        description=doc.split("\n\n")[0], epilog=doc.split("\n\n", 1)[1],
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
