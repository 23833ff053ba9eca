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
- ``check(kernel, impl=..., cases=..., ...)``: a search, returning a ``CheckResult``
  (passed, findings with identity, minimal case and kept file);
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
from .results import (CheckResult, Finding, HuntResult, NightlyResult, ReplayResult,
                      ShrinkResult)

__all__ = ["main", "check", "replay", "shrink", "hunt", "nightly", "implementation", "takes",
           "load", "kernels", "schemas", "Kernel", "integer", "flag", "choice", "tensor",
           "elementwise", "sum_over", "CheckResult", "ReplayResult", "ShrinkResult",
           "HuntResult", "NightlyResult", "Finding"]


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


def check(kernel=None, impl=None, *, cases=None, seed=None, properties=(), dtypes=(),
          set=None, limits=None, corpus=None, device=None, isolate=False, imports=(),
          shrink=True, extra=()):
    """Searches ``kernel``'s cases against ``impl`` as ``kprop check`` does and returns a
    ``CheckResult``. ``corpus=None`` keeps nothing (a folder keeps each new defect there);
    ``set`` pins parameters (``{"W": 4}``), ``limits`` sets generator limits. Outside
    implementations run in this process unless ``isolate`` (their workers import
    ``imports``). A usage error raises ValueError with kprop's message."""
    args = ["check"] + ([kernel] if kernel else [])
    if impl:
        args += ["--impl", impl]
    if cases is not None:
        args += ["--cases", str(cases)]
    if seed is not None:
        args += ["--seed", str(seed)]
    args += _options("--property", properties)
    args += _options("--dtype", [dtype_name(d) for d in dtypes])
    args += _options("--set", [f"{k}={_text(v)}" for k, v in (set or {}).items()])
    args += _options("--limit", [f"{k}={v}" for k, v in (limits or {}).items()])
    args += ["--corpus", str(corpus)] if corpus else ["--no-corpus"]
    if device:
        args += ["--device", device]
    args += _isolation(isolate, imports)
    if not shrink:
        args += ["--no-shrink"]
    args += list(extra)
    return _run(args, CheckResult)


def replay(paths, impl=None, *, builtin_only=False, isolate=False, imports=(), extra=()):
    """Replays case files or folders (a path or a list of them) as ``kprop replay`` does
    and returns a ``ReplayResult``; ``impl`` runs that implementation alone."""
    args = ["replay"] + _paths(paths)
    if impl:
        args += ["--impl", impl]
    if builtin_only:
        args += ["--builtin-only"]
    return _run(args + _isolation(isolate, imports) + list(extra), ReplayResult)


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


def hunt(kernel=None, *, defects=(), cases=None, seed=None, corpus=None, imports=(), extra=()):
    """Hunts the kernel's known defects (``defects``: some of them by name) as ``kprop hunt``
    does and returns a ``HuntResult``. ``corpus=None`` keeps nothing."""
    args = ["hunt"] + ([kernel] if kernel else []) + _options("--defect", defects)
    if cases is not None:
        args += ["--cases", str(cases)]
    if seed is not None:
        args += ["--seed", str(seed)]
    args += ["--corpus", str(corpus)] if corpus else ["--no-corpus"]
    return _run(args + _options("--import", imports) + list(extra), HuntResult)


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
