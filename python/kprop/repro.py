"""``kprop repro FILE``: a standalone PyTorch script that reproduces a kept finding.

The script needs torch and the kernel's own package, not kprop. It holds:

- the inputs and cotangents exactly as kprop handed them (their bits, dtypes and strides,
  embedded compressed; a kept case is shrunk, so they are small), each followed by a
  margin of NaN, so that a read past a tensor's end shows in every run, not only when the
  allocator left something nonzero there;
- the call as the adapter makes it: the source of the function registered with
  ``kprop.implementation`` and of what it uses, written out, through autograd;
- the float64 reference in a few lines of PyTorch (python/kprop/references.py, held to
  kprop's C++ oracle by the suite; kprop's results embedded for a kernel without one)
  and the derived bound of each element;
- the comparison that fails, printing its numbers, and an ``assert`` on the result the
  finding's identity names (another result that is off is printed, not asserted: another
  defect has its own identity, file and script);
- a watch over the inputs and cotangents the implementation does not declare it writes
  over, compared bit for bit after each call.

A ``vs_reference`` finding compares each output and gradient with the float64 reference;
a ``layout`` finding calls twice, the tensor laid out contiguously and as the symptom
names it, and compares the results bit for bit (within the bound of two calls where the
symptom says "beyond the bound"). An implementation that raises fails the script too.
Other properties need more than the kernel's own calls, and are refused (exit 2).
"""
import base64
import inspect
import json
import os
import tempfile
import textwrap
import types
import zlib

import torch

from . import _kprop
from .implementations import _by_name, _Signature, registered_environment, registered_function
from .references import REFERENCES

_BITS = {torch.float64: torch.int64, torch.float32: torch.int32, torch.float16: torch.int16,
         torch.bfloat16: torch.int16}


_WRITTEN_OUT = 16  # a tensor whose storage spans at most this many elements is written out


def _number(x):
    text = repr(x)
    return f"float({text!r})" if text in ("nan", "inf", "-inf") else text


def _storage_elements(t):
    """How many elements ``t``'s storage holds (torch 1.13 has no untyped_storage)."""
    if hasattr(t, "untyped_storage"):
        return t.untyped_storage().nbytes() // t.element_size()
    return t.storage().size()


def _encode(t):
    """Python source that rebuilds tensor ``t``: its whole storage (what lies around it
    too, where kprop handed it inside a larger buffer), size, strides and offset:
    ``values()`` with the storage written out when small, else ``tensor()`` with its bits
    compressed."""
    t = t.detach().cpu()
    flat = torch.as_strided(t, (_storage_elements(t),), (1,), 0).clone()
    where = f"{tuple(t.shape)}, {tuple(t.stride())}" + (f", {t.storage_offset()}" if t.storage_offset() else "")
    if flat.numel() <= _WRITTEN_OUT:
        items = ", ".join(_number(x) for x in (flat.double() if t.is_floating_point() else flat).tolist())
        return f"values([{items}], {t.dtype}, {where})"
    raw = (flat.view(_BITS[t.dtype]) if t.dtype in _BITS else flat).numpy().tobytes()
    data = base64.b64encode(zlib.compress(raw, 9)).decode()
    lines = [data[i:i + 88] for i in range(0, len(data), 88)] or [""]
    text = "\n".join(f'        "{line}"' for line in lines)
    return f"tensor(\n{text},\n        {t.dtype}, {where})"


def _global_names(code):
    names = set(code.co_names)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            names |= _global_names(const)
    return names


def _write_out(fn, imports, definitions, seen):
    """Appends the source of ``fn`` and, first, of what it takes from its module's globals:
    modules and imported names become imports, the module's own functions their source."""
    if fn.__name__ == "<lambda>":
        raise ValueError(f"the implementation is a lambda ({fn.__code__.co_filename}:"
                         f"{fn.__code__.co_firstlineno}): define it with def, so that its "
                         "source can be written out")
    for name in sorted(_global_names(fn.__code__)):
        if name not in fn.__globals__:
            continue
        value = fn.__globals__[name]
        if name in seen:
            if seen[name] is not value:
                raise ValueError(f"{fn.__name__} uses the global {name}, which the script "
                                 "defines already as something else: rename one")
            continue
        seen[name] = value
        if isinstance(value, types.ModuleType):
            module = value.__name__
            imports.append(f"import {module}" if module == name else f"import {module} as {name}")
        elif inspect.isfunction(value) and value.__module__ == fn.__module__:
            _write_out(value, imports, definitions, seen)
        elif getattr(value, "__module__", None) and getattr(value, "__qualname__", None):
            imports.append(f"from {value.__module__} import {value.__qualname__}"
                           + ("" if value.__qualname__ == name else f" as {name}"))
        elif isinstance(value, (bool, int, float, str, type(None))):
            definitions.append(f"{name} = {value!r}")
        else:
            raise ValueError(f"{fn.__name__} uses the global {name} ({type(value).__name__}), "
                             "which cannot be written out")
    definitions.append(textwrap.dedent(inspect.getsource(fn)).rstrip())


def _python_value(v):
    return _encode(v) if isinstance(v, torch.Tensor) else repr(v)


_HELPERS = '''
def values(items, dtype, size, stride, offset=0):
    """A tensor from its storage written out (each value exact in its dtype), on DEVICE,
    with the strides and storage offset kprop handed it in."""
    exact = torch.tensor(items, dtype=torch.float64 if dtype.is_floating_point else dtype)
    return before_a_margin(exact.to(dtype).to(DEVICE), size, stride, offset)


def tensor(data, dtype, size, stride, offset=0):
    """A tensor from its embedded storage's bits, on DEVICE, with the strides and storage
    offset kprop handed it in."""
    raw = bytearray(zlib.decompress(base64.b64decode(data)))
    bits = {torch.float64: torch.int64, torch.float32: torch.int32,
            torch.float16: torch.int16, torch.bfloat16: torch.int16}.get(dtype, dtype)
    flat = (torch.frombuffer(raw, dtype=bits) if raw else torch.empty(0, dtype=bits)).view(dtype)
    return before_a_margin(flat.to(DEVICE), size, stride, offset)


def before_a_margin(flat, size, stride, offset):
    """The tensor over `flat`, its floating storage followed by a margin of NaN as kprop's
    guard property lays tensors out: a read past its end shows as a NaN in the results,
    whatever the allocator happens to place there. The storage still starts where kprop's
    did (its offset is part of the case)."""
    if flat.is_floating_point():
        margin = torch.full((max(1024, flat.numel()),), float("nan"), dtype=flat.dtype,
                            device=flat.device)
        flat = torch.cat([flat, margin])
    return flat.as_strided(size, stride, offset)


def run(call, arguments, cotangents):
    """The outputs of one call, and the gradients of another through autograd with the
    cotangents, as kprop makes them: ({name: tensor}, how many watched inputs and
    cotangents the calls wrote over)."""
    def as_list(result):
        if isinstance(result, dict):
            return [result.get(r) for r in RETURNS]
        return [result] if isinstance(result, torch.Tensor) else list(result)

    results = {}
    handed = arguments()
    before = snapshot(handed)
    with torch.no_grad():
        outputs = as_list(call(**handed))
    written = overwritten(handed, before, "forward")
    for r, y in zip(RETURNS, outputs):
        if y is not None and OUTPUT_NAMES.get(r):
            results[OUTPUT_NAMES[r]] = y.detach()
    kwargs = arguments()
    before = snapshot(kwargs)
    leaves = {}
    for a in GRADIENT_NAMES:
        t = kwargs.get(a)
        if isinstance(t, torch.Tensor) and t.is_floating_point():
            leaves[a] = kwargs[a] = t.detach().requires_grad_(True)
    outputs = as_list(call(**kwargs))
    ys, cots = [], []
    for r, y in zip(RETURNS, outputs):
        if y is not None and cotangents.get(r) is not None:
            ys.append(y)
            cots.append(cotangents[r])
    cotangents_before = snapshot(cotangents, COTANGENT_NAMES)
    grads = torch.autograd.grad(ys, list(leaves.values()), cots, allow_unused=True)
    for a, g in zip(leaves, grads):
        results[GRADIENT_NAMES[a]] = torch.zeros_like(leaves[a]) if g is None else g
    # What the forward wrote over is reported once.
    for a in list(before):
        if not same_bits(before[a], handed[a]):
            del before[a]
    written += overwritten(kwargs, before, "backward")
    written += overwritten(cotangents, cotangents_before, "backward", COTANGENT_NAMES)
    return results, written


def in_float64(arguments):
    """The arguments with every floating tensor in float64: the reference's."""
    def handed(**kwargs):
        return {a: t.to(torch.float64) if isinstance(t, torch.Tensor) and t.is_floating_point()
                else t for a, t in arguments(**kwargs).items()}
    return handed


def same_bits(a, b):
    x, y = a.detach().reshape(-1).contiguous(), b.detach().reshape(-1).contiguous()
    if x.is_floating_point():
        bits = {8: torch.int64, 4: torch.int32, 2: torch.int16}[x.element_size()]
        x, y = x.view(bits), y.view(bits)
    return bool((x == y).all())


def snapshot(handed, names=None):
    """Copies of the tensors a call must leave unchanged: all but those the implementation
    declares it writes over."""
    names = WATCHED if names is None else names
    return {a: t.detach().clone() for a, t in handed.items()
            if a in names and isinstance(t, torch.Tensor)}


def overwritten(handed, before, side, names=None):
    """Prints each watched tensor the call wrote over; returns how many."""
    names = WATCHED if names is None else names
    n = 0
    for a, was in before.items():
        now = handed[a].detach()
        if same_bits(was, now):
            continue
        n += 1
        x, y = was.reshape(-1), now.reshape(-1)
        changed = ~((x == y) | (x.isnan() & y.isnan())) if x.is_floating_point() else x != y
        i = int(changed.nonzero()[0]) if changed.any() else 0
        print(f"{names[a]} overwritten by the {side}: {int(changed.sum())} of {x.numel()} "
              f"elements changed; first at {index_of(i, tuple(was.shape))}: "
              f"{float(y[i]):.9g}, was {float(x[i]):.9g}")
    return n


def index_of(flat, shape):
    index = []
    for n in reversed(shape):
        index.append(flat % n)
        flat //= n
    return tuple(reversed(index))


def over_bound(name, got, expected, bound):
    """Prints how far `got` is from `expected` against the per-element bound; returns the
    number of elements over it (equal values, two NaNs or an infinite bound are within)."""
    g, e, b = got.double().cpu().reshape(-1), expected.double().cpu().reshape(-1), bound.double().cpu().reshape(-1)
    if got.shape != expected.shape:
        print(f"{name}: shape {tuple(got.shape)}, expected {tuple(expected.shape)}")
        return max(1, e.numel())
    same = (g == e) | (g.isnan() & e.isnan())
    diff = torch.where(same, torch.zeros_like(g), (g - e).abs().nan_to_num(float("inf")))
    ratio = torch.where((diff == 0) | b.isinf(), torch.zeros_like(diff), diff / b)
    over = int((ratio > 1).sum())
    if e.numel() == 0:
        return 0
    worst = int(ratio.nan_to_num(float("inf")).argmax())
    print(f"{name}: {over} of {e.numel()} elements over their bound; max |error| "
          f"{float(diff.max()):.3e}; worst at {index_of(worst, tuple(expected.shape))}: got "
          f"{float(g[worst]):.9g}, float64 {float(e[worst]):.9g}, bound {float(b[worst]):.3e}")
    return over


def differing(name, a, b, bound=None):
    """Prints and returns how many elements of `b` differ from `a`: in their bits, or by more
    than `bound` when one is given."""
    if a.shape != b.shape:
        print(f"{name}: shape {tuple(b.shape)} against {tuple(a.shape)}")
        return max(1, a.numel())
    if bound is not None:
        return over_bound(name, b, a, bound)
    x, y = a.reshape(-1), b.reshape(-1)
    if x.is_floating_point():
        bits = {8: torch.int64, 4: torch.int32, 2: torch.int16}[x.element_size()]
        x, y = x.contiguous().view(bits), y.contiguous().view(bits)
    n = int((x != y).sum())
    if n:
        i = int((x != y).nonzero()[0])
        print(f"{name}: {n} of {a.numel()} elements differ; first at "
              f"{index_of(i, tuple(a.shape))}: {float(b.reshape(-1)[i]):.9g} against "
              f"{float(a.reshape(-1)[i]):.9g}")
    else:
        print(f"{name}: bit-identical")
    return n


def this_defect(counts, written):
    """The counts that are this script's defect: the result its identity names (DEFECT),
    where the call returned it; otherwise every result and the overwrites. What else is
    off is printed, not asserted: another defect has its own identity and script."""
    if DEFECT not in counts:
        return counts, written
    others = sorted(name for name, n in counts.items() if n and name != DEFECT)
    if others or written:
        print(f"also off, not this defect ({DEFECT}): {', '.join(others)}"
              + (f"{', ' if others else ''}{written} inputs written over" if written else ""))
    return {DEFECT: counts[DEFECT]}, 0
'''

_EXPECTED_COMPUTED = '''
def expected():
    """The reference's outputs, and its gradients by autograd with the same cotangents,
    all in float64."""
    cots = {r: None if c is None else c.to(torch.float64) for r, c in cotangents().items()}
    exact, _ = run({name}, in_float64(arguments), cots)
    return exact
'''

_EXPECTED_EMBEDDED = '''
def expected():
    return REFERENCE
'''

_MAIN_VS_REFERENCE = '''

def main():
    results, written = run(call, arguments, cotangents())
    exact = expected()
    missing = sorted(set(exact) ^ set(results))
    for name in missing:
        print(f"{name}: returned by {'the reference' if name in exact else 'the call'} only")
    over = {name: over_bound(name, results[name], exact[name], BOUND[name])
            for name in exact if name in results}
    over, written = this_defect(over, written)
    over = len(missing) + sum(over.values())
    assert over == 0, f"{over} elements outside their derived error bound"
    assert written == 0, f"{written} inputs or cotangents written over"
    print("every result within its derived bound of the float64 reference; no input "
          "written over")
'''

_MAIN_LAYOUT = '''

def main():
    plain, written = run(call, lambda: arguments(laid_out=False), cotangents(laid_out=False))
    other, written_laid_out = run(call, lambda: arguments(laid_out=True), cotangents(laid_out=True))
    exact = expected()
    print("-- contiguous call against the float64 reference:")
    for name in exact:
        if name in plain:
            over_bound(name, plain[name], exact[name], BOUND[name])
    print(f"-- {LAID_OUT} against the contiguous call:")
    n = {name: differing(name, plain[name], other[name], BOUND_BETWEEN_TWO[name] if WITHIN_BOUND else None)
         for name in plain if name in other}
    n, written = this_defect(n, written + written_laid_out)
    n = sum(n.values())
    assert n == 0, f"{n} elements change with {LAID_OUT}"
    assert written == 0, "inputs or cotangents written over"
    print(f"the results do not change with {LAID_OUT}")
'''


def _defect_result(identity):
    """The result a kept identity names ("kernel/impl/dw [rows] {flags}" -> "dw"), or ""."""
    parts = identity.split("/", 2)
    return parts[2].split()[0] if len(parts) == 3 and parts[2].split() else ""


def write(path, impl=None, device="cuda"):
    """The script's text for case file ``path`` and implementation ``impl`` (default: the
    case's), registered in this process by ``kprop.implementation``. ValueError names the
    file and what is wrong."""
    m = _kprop.repro_material(str(path), impl or "")
    record = json.loads(m["case"])
    case = record["case"]
    kernel, impl = case["kernel"], impl or case["impl"]
    fn = registered_function(impl)
    if fn is None:
        raise ValueError(f"{path}: case.impl: {impl} is not registered by kprop.implementation "
                         "in this process (pass --import with its adapter module)")
    sig = _Signature(kernel)
    output_names = {r: (_by_name(sig.outputs, r) or {"name": r})["name"] for r in sig.forward_returns}
    gradient_names = {a: "d" + _by_name(sig.inputs, a)["name"] for a in sig.differentiable}
    backward = dict(zip(sig.backward_args, m["backward_arguments"]))
    cotangents = {r: backward.get(sig.cotangent_argument(r)) for r in sig.forward_returns}
    forward = dict(zip(sig.forward_args, m["forward_arguments"]))
    forward_names = {a: _by_name(sig.inputs, a)["name"] for a in sig.forward_args
                     if isinstance(forward[a], torch.Tensor) and _by_name(sig.inputs, a)}
    laid_out = m["laid_out"]

    # The script's own names: an adapter global of the same name would replace them.
    imports, definitions = [], []
    seen = {name: object() for name in ("values", "tensor", "run", "in_float64", "same_bits",
                                        "snapshot", "overwritten", "index_of", "over_bound",
                                        "differing", "before_a_margin", "this_defect", "DEFECT",
                                        "expected", "main", "call", "arguments",
                                        "cotangents", "DEVICE", "RETURNS", "OUTPUT_NAMES",
                                        "GRADIENT_NAMES", "WATCHED", "COTANGENT_NAMES",
                                        "REFERENCE", "BOUND", "BOUND_BETWEEN_TWO", "LAID_OUT",
                                        "WITHIN_BOUND", "base64", "zlib")}
    _write_out(fn, imports, definitions, seen)
    definitions.append(f"call = {fn.__name__}")
    reference = REFERENCES.get(kernel)
    reference_definitions = []
    if reference is not None:
        if reference.__name__ in seen or reference.__name__ == fn.__name__:
            raise ValueError(f"the adapter defines {reference.__name__}, the name of "
                             "kprop's reference: rename it")
        _write_out(reference, imports, reference_definitions, seen)

    lines = []
    identity = record.get("identity", "")
    found_by = record.get("provenance", {}).get("found_by", "")
    lines.append(f'"""{kernel} through {impl}: {identity}\n')
    lines.append(textwrap.fill(
        f"A standalone reproducer that kprop wrote (python3 -m kprop repro "
        f"{os.path.basename(str(path))}) from the case it kept and shrank. It needs torch and "
        f"the kernel's package importable, not kprop. Its inputs are embedded bit for bit; "
        f"the call is the adapter's; the expected values are "
        + ("the float64 reference written out below, computed from the same inputs"
           if reference is not None else "kprop's float64 reference, embedded")
        + ", each element with its derived rounding-error bound (no hand-set tolerance).", 88))
    lines.append("")
    lines.append(f"Property: {case['property']}; signature: {record.get('signature', '')}")
    if found_by:
        lines.append(f"Found by: {found_by}")
    lines.append("Case: " + json.dumps(case, sort_keys=True))
    lines.append('"""')
    environment = registered_environment(impl)
    if environment:  # before anything imports the kernel's compiler
        lines += ["import os", ""]
        lines += [f"os.environ[{k!r}] = {v!r}  # as it was when kprop found it"
                  for k, v in sorted(environment.items())]
    lines += ["import base64", "import zlib", "", "import torch"]
    lines += sorted(set(imports) - {"import torch", "import base64", "import zlib"}
                    - ({"import os"} if environment else set()))
    lines += ["", f"DEVICE = {device!r}"]
    lines.append(_HELPERS)
    lines.append("# The call, as kprop's adapter makes it:")
    lines += [d + "\n" for d in definitions]
    lines.append(f"RETURNS = {sig.forward_returns!r}  # the call's results, in order")
    lines.append(f"OUTPUT_NAMES = {output_names!r}")
    lines.append(f"GRADIENT_NAMES = {gradient_names!r}  # argument -> its gradient")
    # Watched as kprop watches them: every input and cotangent but those the
    # implementation declares it writes over.
    declared = set(m["overwrites"])
    watched = {a: forward_names[a] for a in sig.forward_args
               if a in forward_names and forward_names[a] not in declared}
    cotangent_names = {r: "d" + output_names[r] for r in sig.forward_returns
                       if "d" + output_names[r] not in declared}
    lines.append(f"WATCHED = {watched!r}  # argument -> kprop's name")
    lines.append(f"COTANGENT_NAMES = {cotangent_names!r}")
    lines.append(f"DEFECT = {_defect_result(identity)!r}  # the result the identity names")

    def tensor_block(fname, values, swap=None):
        """def fname(laid_out=False): {name: value}, one value replaced when laid out."""
        out = [f"\n\ndef {fname}(laid_out=False):", "    handed = {"]
        for name, v in values.items():
            out.append(f"        {name!r}: {_python_value(v)},")
        out.append("    }")
        if swap:
            key, value = swap
            out.append("    if laid_out:")
            out.append(f"        handed[{key!r}] = {_python_value(value)}")
            out.append("    else:  # the same values, contiguous")
            out.append(f"        handed[{key!r}] = {_python_value(value.clone(memory_format=torch.contiguous_format))}")
        out.append("    return handed")
        return out

    swap_input = swap_cot = None
    if laid_out:
        if laid_out["cotangent"]:
            r = next(r for r in sig.forward_returns
                     if "d" + output_names[r] == laid_out["tensor"])
            swap_cot = (r, laid_out["value"])
        else:
            a = next(a for a in sig.forward_args
                     if _by_name(sig.inputs, a) and _by_name(sig.inputs, a)["name"] == laid_out["tensor"])
            swap_input = (a, laid_out["value"])
    if reference is not None:
        lines.append("\n\n# The float64 reference (kprop's python/kprop/references.py, held to its "
                     "C++ oracle by kprop's suite):")
        lines += [d + "\n" for d in reference_definitions]
        lines.append(_EXPECTED_COMPUTED.replace("{name}", reference.__name__))
    lines.append("\n# The inputs and cotangents as kprop handed them.")
    lines += tensor_block("arguments", forward, swap_input)
    lines += tensor_block("cotangents", cotangents, swap_cot)
    blocks = [("BOUND", m["bounds"])]
    if reference is None:
        lines.append("\n\n# kprop's float64 reference and each element's derived bound.")
        blocks.insert(0, ("REFERENCE", m["reference"]))
        lines.append(_EXPECTED_EMBEDDED)
    else:
        lines.append("\n\n# Each element's derived bound: |result - float64| <= bound.")
    for block, values in blocks:
        lines.append(f"{block} = {{")
        for name, v in values.items():
            if v is not None:
                lines.append(f"    {name!r}: {_encode(v.clone())},")
        lines.append("}")
    if laid_out:
        lines.append("BOUND_BETWEEN_TWO = {")
        for name, v in m["bounds_between_two"].items():
            if v is not None:
                lines.append(f"    {name!r}: {_encode(v.clone())},")
        lines.append("}")
        lines.append(f"LAID_OUT = {laid_out['tensor'] + ' ' + laid_out['layout']!r}")
        lines.append(f"WITHIN_BOUND = {'beyond the bound' in (identity or record.get('signature', ''))!r}")
        lines.append(_MAIN_LAYOUT)
    else:
        lines.append(_MAIN_VS_REFERENCE)
    lines.append('\nif __name__ == "__main__":\n    main()\n')
    return "\n".join(lines)


def main(argv):
    """``repro FILE [--impl NS::kernel] [--import MODULE]... [--out PATH] [--device D]``;
    returns the exit code (2: bad usage, naming the file and field)."""
    import argparse
    import importlib
    import sys

    parser = argparse.ArgumentParser(
        prog="python3 -m kprop repro",
        description="Writes a standalone PyTorch script that reproduces a kept finding "
                    "(docs/repro.md).")
    parser.add_argument("file", help="a kept case file (corpus/upstream/...)")
    parser.add_argument("--impl", help="the implementation (default: the case's)")
    parser.add_argument("--import", dest="imports", action="append", default=[],
                        metavar="MODULE", help="a module that registers the implementation")
    parser.add_argument("--out", help="where to write the script (default: standard output)")
    parser.add_argument("--device", default="cuda", help="where the script runs the call")
    args = parser.parse_args(argv)
    try:
        for module in args.imports:
            importlib.import_module(module)
        text = write(args.file, args.impl, args.device)
    except (ValueError, ImportError, OSError) as e:
        print(f"kprop repro: {e}", file=sys.stderr)
        return 2
    if not args.out:
        sys.stdout.write(text)
        return 0
    folder = os.path.dirname(os.path.abspath(args.out))
    with tempfile.NamedTemporaryFile("w", dir=folder, delete=False, suffix=".tmp") as f:
        f.write(text)
    os.replace(f.name, args.out)
    print(f"kprop repro: wrote {args.out}", file=sys.stderr)
    return 0
