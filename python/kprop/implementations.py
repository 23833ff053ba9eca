"""Any Python callable as a kprop implementation, tested through autograd.

``implementation(kernel, name, fn)`` registers ``name::kernel``: its forward calls ``fn``
with the kernel's forward arguments by name (the operator schema's names: ``x``,
``weight``, ``num_cores``...); its backward calls ``fn`` again on leaves that require
grad and takes ``torch.autograd.grad`` of its outputs with kprop's cotangents. So what
kprop tests is the autograd wiring a user calls (an ``autograd.Function.apply``, a
module's forward, a Triton wrapper): a backward that reads grad_output as a scalar, an
output without a grad_fn, a gradient routed to the wrong input.
"""
import os

import torch

from . import _kprop

_libraries = []  # torch.library.Library objects must outlive their registrations
_namespaces = {}  # namespace -> its torch.library.Library
_functions = {}  # "NS::kernel" -> the callable registered (kprop.repro writes out its source)
_environments = {}  # "NS::kernel" -> the environment it declares: {variable: value in effect}


def _tensor_type(arg):
    return str(arg.type) in ("Tensor", "Optional[Tensor]", "Tensor?")


def _by_name(tensors, name):
    for t in tensors:
        if name in (t["name"], t["argument"]):
            return t
    return None


class _Signature:
    """The kernel's operator schemas in kprop's names (as harness/spec/operator_signature.h)."""

    def __init__(self, kernel):
        d = _kprop.kernel_tensors(kernel)
        self.forward_schema, self.backward_schema = d["forward_schema"], d["backward_schema"]
        self.inputs, self.outputs = d["inputs"], d["outputs"]
        fwd = torch._C.parse_schema(self.forward_schema)
        bwd = torch._C.parse_schema(self.backward_schema)
        self.forward_args = [a.name for a in fwd.arguments]
        self.backward_args = [a.name for a in bwd.arguments]
        self.forward_returns = [r.name for r in fwd.returns]
        self.backward_returns = [r.name for r in bwd.returns]
        # The forward's tensor arguments that have a gradient among the backward's returns,
        # and for each backward return the argument it is the gradient of.
        self.differentiable = [a.name for a in fwd.arguments
                               if _tensor_type(a) and self._gradient_return(a.name) is not None]
        self.gradient_of = {self._gradient_return(a): a for a in self.differentiable}

    def _gradient_return(self, argument):
        t = _by_name(self.inputs, argument)
        if t is None or not t["differentiable"]:
            return None
        for r in self.backward_returns:
            if r in ("d" + t["name"], "d" + t["argument"]):
                return r
        return None

    def cotangent_argument(self, forward_return):
        t = _by_name(self.outputs, forward_return)
        for a in self.backward_args:
            if t is not None and a in ("d" + t["name"], "d" + t["argument"]):
                return a
        return None


def _as_outputs(result, names):
    """fn's result as a list in the schema's return order: a tensor, a sequence or a dict."""
    if isinstance(result, dict):
        return [result.get(n) for n in names]
    if isinstance(result, torch.Tensor):
        result = (result,)
    result = list(result)
    if len(result) != len(names):
        raise ValueError(f"the implementation returned {len(result)} values; the schema "
                         f"returns {len(names)} ({', '.join(names)})")
    return result


def _some_tensor(values, like):
    """A return the schema types as Tensor but the case has no use for: an empty tensor."""
    return values if values is not None else like.new_empty(0)


def implementation(kernel, name, fn, *, dtypes=None, devices=None, accepts=None, choices=None,
                   flags=None, overwrites=None, layouts=None, layout_changes_reduction_order=False,
                   nondeterministic=False, environment=None, dispatch_key=None,
                   same_function_as=None):
    """Registers ``fn`` as the implementation ``name::kernel`` and returns that name.

    ``fn`` takes the kernel's forward arguments by name and returns its outputs (a tensor,
    a sequence in the schema's order, or a dict by name). Its backward is derived by
    autograd. What it takes is declared as OpInfo declares it: ``dtypes`` (e.g.
    ``[torch.float32, torch.bfloat16]``), ``devices`` (``["cuda"]``), ``accepts`` (integer
    parameters within inclusive bounds, ``{"W": (2, 4)}``), ``choices``
    (``{"activation": ["silu"]}``) and ``flags`` (``{"bias": False}``): a case outside is
    not run, counted as "not taken", never a failure. ``overwrites`` names the tensors it
    writes over by design (``["a", "b"]``, or ``"dy"`` for a cotangent): it is handed copies
    of them, and every other tensor it is handed must come back unchanged. ``layouts`` names
    the layouts it takes its tensors in (``["offset", "stride-0"]``; default every one:
    docs/bug-classes.md), and ``layout_changes_reduction_order`` says that another layout
    of the same values may be summed in another order (``layout`` then holds it to the
    derived bound instead of bit-identity). ``nondeterministic`` says that it may return
    another rounding on every call (atomics): ``determinism`` then holds its repeated calls
    to the derived bound instead of the same bits. ``environment`` names the variables
    the kernel's numerics depend on (``{"TRITON_F32_DEFAULT": "ieee"}``): each is set
    where it is not set yet, and ``kprop repro`` writes the values in effect into its
    scripts. ``same_function_as`` names another implementation of the kernel that computes
    the same function by another algorithm (``"fla_recurrent::linear_attn"``):
    ``algorithms`` holds the two to each other."""
    if not name.isidentifier():
        raise ValueError(f"implementation name {name!r} must be an identifier (it names the "
                         "operator namespace)")
    sig = _Signature(kernel)

    def forward(*args):
        kwargs = dict(zip(sig.forward_args, args))
        outputs = _as_outputs(fn(**kwargs), sig.forward_returns)
        like = next(a for a in args if isinstance(a, torch.Tensor))
        return tuple(_some_tensor(o, like) for o in outputs) if len(outputs) > 1 \
            else _some_tensor(outputs[0], like)

    def backward(*args):
        given = dict(zip(sig.backward_args, args))
        kwargs = {a: given[a] for a in sig.forward_args}
        leaves = {}
        for a in sig.differentiable:
            t = kwargs.get(a)
            if isinstance(t, torch.Tensor) and t.is_floating_point():
                leaves[a] = kwargs[a] = t.detach().requires_grad_(True)
        with torch.enable_grad():
            outputs = _as_outputs(fn(**kwargs), sig.forward_returns)
        ys, cotangents = [], []
        for r, y in zip(sig.forward_returns, outputs):
            cot = given.get(sig.cotangent_argument(r))
            if cot is None or y is None:
                continue
            if not y.requires_grad:
                raise RuntimeError(f"output {r} does not require grad: autograd cannot reach "
                                   "the inputs (no grad_fn)")
            ys.append(y)
            cotangents.append(cot)
        names = list(leaves)
        grads = torch.autograd.grad(ys, [leaves[n] for n in names], cotangents,
                                    allow_unused=True) if ys else [None] * len(names)
        by_input = dict(zip(names, grads))
        like = next(a for a in args if isinstance(a, torch.Tensor))
        out = []
        for r in sig.backward_returns:
            argument = sig.gradient_of.get(r)
            g = by_input.get(argument)
            if g is None and argument in leaves:
                g = torch.zeros_like(leaves[argument])
            out.append(_some_tensor(None if g is None else g.detach(), like))
        # One gradient (kl_div's dy_pred) is the schema's single Tensor, not a tuple.
        return tuple(out) if len(out) > 1 else out[0]

    full = f"{name}::{kernel}"
    # Declared first: a bad declaration leaves nothing registered.
    if any(x is not None for x in (dtypes, devices, accepts, choices, flags, overwrites, layouts,
                                   same_function_as)) \
            or layout_changes_reduction_order or nondeterministic:
        takes(kernel, full, dtypes=dtypes, devices=devices, accepts=accepts, choices=choices,
              flags=flags, overwrites=overwrites, layouts=layouts,
              layout_changes_reduction_order=layout_changes_reduction_order,
              nondeterministic=nondeterministic, same_function_as=same_function_as)
    # One library per namespace, which may hold several kernels' implementations
    # (liger::geglu, liger::rms_norm): torch allows one DEF library per namespace.
    lib = _namespaces.get(name)
    if lib is None:
        lib = _namespaces[name] = torch.library.Library(name, "DEF")
    lib.define(sig.forward_schema)
    lib.define(sig.backward_schema)
    fwd_op = sig.forward_schema.split("(", 1)[0]
    bwd_op = sig.backward_schema.split("(", 1)[0]
    # Above autograd (one kernel for every device): the backward's own graph is recorded
    # there, where a CPU or CUDA kernel would run with autograd excluded.
    key = dispatch_key or "CompositeImplicitAutograd"
    lib.impl(fwd_op, forward, key)
    lib.impl(bwd_op, backward, key)
    _libraries.append(lib)
    _functions[full] = fn
    _environments[full] = {k: os.environ.setdefault(k, str(v)) for k, v in (environment or {}).items()}
    return full


def registered_function(impl):
    """The callable registered as ``impl`` (``NS::kernel``) by ``implementation()``, or None."""
    return _functions.get(impl)


def registered_environment(impl):
    """The environment ``impl`` declared, as it is in effect: {variable: value}."""
    return dict(_environments.get(impl, {}))


def takes(kernel, impl, *, dtypes=None, devices=None, accepts=None, choices=None, flags=None,
          overwrites=None, layouts=None, layout_changes_reduction_order=False,
          nondeterministic=False, same_function_as=None):
    """Declares what implementation ``impl`` (``NS::kernel``, however it was registered)
    takes; ``implementation()``'s keywords. A bad declaration raises ValueError naming the
    kernel, the implementation and the field."""
    _kprop.declare_takes(kernel, impl, [dtype_name(d) for d in (dtypes or [])],
                         list(devices or []), {k: tuple(v) for k, v in (accepts or {}).items()},
                         {k: list(v) for k, v in (choices or {}).items()}, dict(flags or {}),
                         list(overwrites or []), list(layouts or []),
                         bool(layout_changes_reduction_order), bool(nondeterministic),
                         same_function_as or "")


_DTYPES = {torch.float64: "float64", torch.float32: "float32", torch.bfloat16: "bfloat16",
           torch.float16: "float16"}


def dtype_name(d):
    """kprop's name of a dtype: a torch dtype or a name as kprop writes it."""
    if isinstance(d, str):
        return d
    if d not in _DTYPES:
        raise ValueError(f"dtype {d} is not one kprop draws ({', '.join(_DTYPES.values())})")
    return _DTYPES[d]
