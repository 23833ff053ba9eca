"""Declaring a kernel from Python: the same declaration as a C++ KernelSpec
(harness/spec/kernel_spec.h), compiled into the same Kernel, so every property,
shrinking, the corpus, replay and reports work on it.

    kprop.Kernel(
        "scaled_tanh_py",
        params=[kprop.integer("rows", 1, 64, default=4, edges=[1, 2]),
                kprop.integer("cols", 1, 64, default=16, edges=[7, 8, 9], blocks=8),
                kprop.flag("bias", default=True)],
        inputs=[kprop.tensor("x", "rows", "cols"), kprop.tensor("s", "rows", "cols"),
                kprop.tensor("b", "cols", when="bias")],
        outputs=[kprop.tensor("y", "rows", "cols")],
        reference=lambda x, s, b: torch.tanh(x) * s + (0 if b is None else b),
        bounds={"y": kprop.elementwise(6), "dx": kprop.elementwise(11),
                "ds": kprop.elementwise(5), "db": kprop.sum_over("rows")})

Dimensions are the integer parameters of the same name. The reference takes the inputs
(None for an absent one) and the ``operator_params`` by name, in float64, and returns the
outputs (a tensor, a tuple in ``outputs`` order, or a dict); its backward is autograd's.
The operator schemas are derived: ``kprop.schemas(name)``.
"""
from . import _kprop
from .implementations import dtype_name


def integer(name, lo, hi, *, meaning=None, simplest=None, default=None, edges=(),
            edge_weight=40, uniform_weight=50, blocks=0):
    """An integer parameter in lo..hi. ``edges`` are values drawn often (the edges of
    blocks and tiles, where bugs live); ``blocks`` shrinks along blocks of that width."""
    return {"name": name, "type": "integer", "lo": lo, "hi": hi, "meaning": meaning,
            "simplest": simplest, "default": default,
            "edges": [(edge_weight, list(edges))] if edges else [],
            "uniform_weight": uniform_weight, "blocks": blocks}


def flag(name, *, meaning=None, default=None, percent_true=50):
    """A flag parameter (an optional input is present when its flag is)."""
    return {"name": name, "type": "flag", "meaning": meaning, "default": default,
            "percent_true": percent_true}


def choice(name, choices, *, meaning=None, default=None, weights=None):
    """A choice among names; shrinking moves toward the first."""
    return {"name": name, "type": "choice", "choices": list(choices), "meaning": meaning,
            "default": default, "weights": weights}


def tensor(name, *dims, when=None, differentiable=True, neutral=None):
    """An input or output with named dimensions; ``when`` names the flag that makes an
    optional input present; ``neutral`` the value that leaving it out equals (0 for a
    bias: the property ``neutral`` compares the two)."""
    return {"name": name, "dims": list(dims), "when": when, "differentiable": differentiable,
            "neutral": neutral}


def elementwise(roundings, magnitude=None):
    """An element-wise result with ``roundings`` roundings in the accumulation type;
    ``magnitude(e)`` (e: the float64 inputs, cotangents and reference results by name)
    gives what its errors are proportional to, default |result|."""
    return {"kind": "elementwise", "roundings": roundings, "magnitude": magnitude}


def sum_over(dim, magnitude=None):
    """A sum over dimension ``dim`` (K = its size); ``magnitude(e)``: the sum of |terms|."""
    return {"kind": "sum", "over": dim, "magnitude": magnitude}


class Kernel:
    """Declares and registers a kernel; ``Kernel(...).name`` is what the commands take."""

    def __init__(self, name, *, params, inputs, outputs, reference, bounds, regions=None,
                 properties=None, dtypes=None, operator_params=(), reordered_by_layout=()):
        description = {"name": name, "params": list(params), "inputs": list(inputs),
                       "outputs": list(outputs), "reference": reference, "bounds": dict(bounds),
                       "regions": dict(regions or {}), "operator_params": list(operator_params),
                       # results summed in an order that may follow the layout ("db"):
                       # `layout` holds them to their bound, the rest bit for bit
                       "reordered_by_layout": list(reordered_by_layout)}
        if properties is not None:
            description["properties"] = list(properties)
        if dtypes is not None:
            description["dtypes"] = [dtype_name(d) for d in dtypes]
        if not _kprop.register_kernel(description):
            raise ValueError(f"kernel {name} is registered already")
        self.name = name

    def __repr__(self):
        return f"kprop.Kernel({self.name!r})"
