"""kprop from Python: the command line (``python3 -m kprop COMMAND ...``) and an API.

The command line is kprop's own (the same C++ code as the ``kprop`` executable, linked
from libkprop.so) inside this interpreter, so that the operators a module registers with
``torch.library`` under kprop's schema are implementations kprop can test
(``--impl NS::kernel``). Every command and option is the executable's; ``--import`` (repeatable)
imports a module after the ``--load`` libraries. Isolation workers are this entry again:
``python3 -m kprop __worker --import MODULE ...`` with the same environment and folder.

The API (docs/adding-a-kernel.md):

- ``Kernel(name, params=..., inputs=..., outputs=..., reference=..., bounds=...)``: a
  kernel declared from Python, the same spec as kprop's built-in ones;
- ``implementation(kernel, name, fn, dtypes=..., accepts=...)``: any callable a user
  calls, tested through autograd, declaring what it takes;
- ``check(kernel, impl=..., cases=..., ...)``: a search through kprop's engine itself (no
  command line), returning a ``CheckResult`` dataclass (passed, tally, what was not taken and
  why, findings with identity, minimal case, verdict and kept file); with
  ``raise_on_failure=True`` a check that does not pass raises ``kprop.Failure``;
- bad usage (an unknown kernel, implementation, property, dtype or setting) raises
  ``kprop.UsageError`` (a ValueError) with kprop's message;
- ``replay(paths)``, ``shrink(paths)``, ``hunt(kernel)``, ``nightly(out)``: the other
  commands, each returning its result object (``kprop.results``); the CLI is one caller
  of the same commands;
- ``main(argv)``: one command line, returning its exit code.
"""
import json as _json
import os
import sys

# torch first: it loads libtorch (and registers its Python kernels' machinery) before
# kprop's library, which links the same libtorch.
import torch  # noqa: F401

from . import _kprop
from .implementations import dtype_name, implementation, takes
from .kernel import Kernel, choice, elementwise, flag, integer, sum_over, tensor
from .results import (CheckResult, Failure, Finding, HuntResult, NightlyResult, Replayed,
                      ReplayResult, ShrinkResult, Tally)

UsageError = _kprop.UsageError  # bad usage, with kprop's message (a ValueError)
CaseError = _kprop.CaseError    # a case that cannot be run (a ValueError)

__all__ = ["main", "check", "replay", "shrink", "hunt", "nightly", "implementation", "takes",
           "load", "kernels", "schemas", "Kernel", "integer", "flag", "choice", "tensor",
           "elementwise", "sum_over", "CheckResult", "ReplayResult", "ShrinkResult",
           "HuntResult", "NightlyResult", "Finding", "Tally", "Failure", "UsageError",
           "CaseError"]


def _flushed():
    # Flush what Python buffered: kprop writes to the same file descriptors.
    sys.stdout.flush()
    sys.stderr.flush()


def _worker_command():
    return [sys.executable, "-m", "kprop"]


def main(argv=None):
    """Runs one kprop command line (``argv`` without the program's name; default
    ``sys.argv[1:]``) and returns its exit code: 0 pass, 1 a property failed, 2 bad usage."""
    args = list(sys.argv[1:] if argv is None else argv)
    _flushed()
    return _kprop.main(["python3 -m kprop"] + args, _worker_command())


def kernels():
    """The registered kernels' names."""
    return list(_kprop.kernel_names())


def schemas(kernel):
    """The kernel's operator schema strings ``(forward, backward)``, as its spec declares
    them: what a library registers ``NS::<kernel>_fwd/_bwd`` with."""
    d = _kprop.kernel_tensors(kernel)
    return d["forward_schema"], d["backward_schema"]


def load(path):
    """Loads a shared library that registers kernels or operators (as ``--load``)."""
    _kprop.load_library(str(path))


def _options(name, values):
    args = []
    for v in values:
        args += [name, str(v)]
    return args


def check(kernel=None, impl=None, *, cases=None, seed=None, properties=(), dtypes=(), set=None,
          limits=None, corpus=None, device="cpu", oracle_device="auto", isolate=False,
          imports=(), libraries=(), refusals=(), case_timeout=20.0, shrink=True,
          shrink_seconds=60.0, echo=True, raise_on_failure=False):
    """Searches ``kernel``'s cases against ``impl`` as ``kprop check`` does, through kprop's
    engine (harness/api/check.h), and returns a ``CheckResult``. ``corpus=None`` keeps
    nothing and knows nothing (a folder keeps each new defect there and looks past those it
    holds); ``cases`` defaults to 1000 and ``seed`` to 0; ``set`` pins parameters
    (``{"W": 4}``), ``limits`` sets generator limits. Outside implementations run in this process unless ``isolate`` (their workers import
    ``imports`` and load ``libraries``); ``refusals`` are the error texts they declare.
    ``echo`` prints what ``kprop check`` prints (its plan, then its report); ``echo=False``
    prints nothing. Bad usage raises ``kprop.UsageError`` with kprop's message;
    ``raise_on_failure`` raises ``kprop.Failure`` (carrying the result) when the check does
    not pass."""
    _flushed()
    out = _kprop.check(
        kernel or "", impl or "", 1000 if cases is None else int(cases),
        0 if seed is None else int(seed), [str(p) for p in properties],
        [dtype_name(d) for d in dtypes], [f"{k}={_text(v)}" for k, v in (set or {}).items()],
        [f"{k}={v}" for k, v in (limits or {}).items()], bool(shrink), float(shrink_seconds),
        str(corpus) if corpus else "",
        _run_options(device, oracle_device, isolate, imports, libraries, refusals, case_timeout),
        bool(echo), _worker_command())
    result = CheckResult.of(out["exit_code"], out["report"])
    if raise_on_failure and not result.passed:
        raise Failure(result)
    return result


def replay(paths, impl=None, *, builtin_only=False, device="cpu", oracle_device="auto",
           isolate=False, imports=(), libraries=(), refusals=(), case_timeout=20.0):
    """Replays case files or folders (a path or a list of them) as ``kprop replay`` does,
    through kprop's engine (harness/api/replay.h), and returns a ``ReplayResult``; ``impl``
    runs that implementation alone, judged like check. A path that cannot be replayed is in
    ``errors`` with kprop's message (exit code 2); bad usage raises ``kprop.UsageError``."""
    _flushed()
    out = _kprop.replay(_paths(paths), impl or "", bool(builtin_only),
                        _run_options(device, oracle_device, isolate, imports, libraries, refusals,
                                     case_timeout),
                        _worker_command())
    files = [f["report"] for f in out["files"] if f["report"] is not None]
    errors = {f["path"]: f["error"] for f in out["files"] if f["report"] is None}
    return ReplayResult(out["exit_code"], [Replayed.of(f) for f in files], errors, files)


def shrink(paths, impl=None, *, corpus=None, keep_as=None, shrink_seconds=None, isolate=False,
           imports=(), extra=()):
    """Shrinks every failing case file (a path or a list of them) as ``kprop shrink`` does
    and returns a ``ShrinkResult``. ``corpus=None`` keeps nothing; ``keep_as`` also keeps
    the case as given (one file, with a corpus)."""
    args = ["shrink"] + _paths(paths)
    if impl:
        args += ["--impl", impl]
    args += ["--corpus", str(corpus)] if corpus else ["--no-corpus"]
    if keep_as:
        args += ["--keep-as", keep_as]
    if shrink_seconds is not None:
        args += ["--shrink-seconds", str(shrink_seconds)]
    return _run(args + _isolation(isolate, imports) + list(extra), ShrinkResult)


def hunt(kernel=None, *, defects=(), cases=None, seed=None, corpus=None, device="cpu",
         oracle_device="auto", imports=(), libraries=(), echo=True):
    """Hunts the kernel's known defects (``defects``: some of them by name) as ``kprop hunt``
    does, through kprop's engine (harness/api/hunt.h), and returns a ``HuntResult``;
    ``cases`` per hunt defaults to 5000 and ``seed`` to 0. ``corpus=None`` keeps nothing.
    ``echo`` prints each hunt as ``kprop hunt`` does. Bad usage (an unknown kernel or
    defect) raises ``kprop.UsageError`` with kprop's message."""
    _flushed()
    out = _kprop.hunt(kernel or "", [str(d) for d in defects], 5000 if cases is None else int(cases),
                      0 if seed is None else int(seed), str(corpus) if corpus else "",
                      _run_options(device, oracle_device, False, imports, libraries, (), 20.0),
                      bool(echo), _worker_command())
    return HuntResult.of(out["exit_code"], out["hunts"])


def nightly(out, *, kernels=(), impls=(), budget="90s", jobs=None, corpus=None, seed=None,
            fuzzers=None, shard=None, isolate=False, imports=(), extra=()):
    """Runs ``kprop nightly`` into the folder ``out`` for ``budget`` and returns a
    ``NightlyResult`` (its summary.json). ``corpus=None`` uses a new folder ``out/corpus``.
    ``shard="I/N"`` runs shard I of N into ``out/shard-<I+1>-of-<N>`` (docs/sharding.md).
    ``isolate`` as for ``check``: off, the searches call implementations registered in
    this process."""
    if not corpus:
        corpus = os.path.join(str(out), "corpus")
        os.makedirs(corpus, exist_ok=True)
    args = ["nightly", "--out", str(out), "--budget", str(budget)]
    args += _options("--kernel", kernels) + _options("--impl", impls)
    if jobs is not None:
        args += ["--jobs", str(jobs)]
    args += ["--corpus", str(corpus)]
    if seed is not None:
        args += ["--seed", str(seed)]
    if fuzzers:
        args += ["--fuzzers", str(fuzzers)]
    if shard:
        args += ["--shard", str(shard)]
    return _run(args + _isolation(isolate, imports) + list(extra), NightlyResult)


def _run_options(device, oracle_device, isolate, imports, libraries, refusals, case_timeout):
    """The engine's RunOptions of a call's keywords (harness/api/run_options.h)."""
    run = _kprop.RunOptions()
    run.device, run.oracle_device = str(device or "cpu"), str(oracle_device or "auto")
    run.isolate, run.case_timeout = bool(isolate), float(case_timeout)
    run.imports, run.libraries = [str(m) for m in imports], [str(p) for p in libraries]
    run.refusals = [str(t) for t in refusals]
    return run


def _paths(paths):
    return [str(paths)] if isinstance(paths, (str, bytes)) or hasattr(paths, "__fspath__") \
        else [str(p) for p in paths]


def _isolation(isolate, imports):
    return ([] if isolate else ["--no-isolation"]) + _options("--import", imports)


def _run(args, result_type):
    """Runs one command line and returns its result object; a command that ends before it
    has a result (bad usage) raises ValueError with the command line (kprop printed why)."""
    _flushed()
    code, text = _kprop.run_for_result(["python3 -m kprop"] + args, _worker_command())
    if not text:
        raise ValueError(f"kprop {' '.join(args)}: exit {code} (see its message above)")
    return result_type(code, _json.loads(text))


def _text(v):
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (list, tuple)):
        return ",".join(str(x) for x in v)
    return str(v)
