"""Test-only kernels and implementations for tests/python/test_python_api.py, declared with
kprop's Python API (an importable module, so that ``--import py_api_ops`` replays them):

- ``py_scaled_tanh``, a kernel declared with ``kprop.Kernel``: y = tanh(x) s (+ b).
  ``py_good`` computes it; ``py_planted`` never writes the last column of a row of 7 mod 8
  columns (a remainder mask typo, as the C++ test kernel's toy@tail). ``py_overwrites_x``
  returns the right y but then stores 2x over the x it was handed, as a memory-saving
  kernel reuses a buffer; ``py_overwrites_x_declared`` does the same and declares it.
  ``py_contiguous_dy``, an ``autograd.Function`` whose backward reads the grad_output's
  memory as if it were contiguous (no strides), right on every contiguous dy.
  ``py_random_order`` sums db over rows in an order drawn anew on every call, as atomics do.
  ``py_unit_scalar_dy`` takes a grad_output that holds one value everywhere for ones, as a
  kernel that assumes its loss is the last op does: right for random values and ones.
  ``py_reads_past_end`` sums db with an unmasked load that reads one element past dy's end
  (zero where dy's storage ends there, as a fresh GPU allocation mostly holds).
- implementations of kprop's own ``geglu`` registered with ``kprop.implementation``, both
  taking float32 only: ``py_geglu``, a plain function; ``py_scalar_grad``, an
  ``autograd.Function`` whose backward reads grad_output as a scalar (its mean), the bug
  of a loss kernel that assumed reduction='mean'. One element hides it.
"""
import torch

import kprop

WIDTH = 8


def column_region(case, col):
    cols = case["cols"]
    if col < cols - cols % WIDTH:
        return "8-wide blocks"
    return "last column" if col == cols - 1 else "remainder"


def _bias_magnitude(e):
    return e["b"].abs() if e.get("b") is not None else 0


KERNEL = kprop.Kernel(
    "py_scaled_tanh",
    params=[kprop.integer("rows", 1, 64, default=4, edges=[1, 2]),
            kprop.integer("cols", 1, 64, default=16, edges=[7, 8, 9, 15, 16, 17], blocks=WIDTH),
            kprop.flag("bias", default=True)],
    inputs=[kprop.tensor("x", "rows", "cols"), kprop.tensor("s", "rows", "cols"),
            kprop.tensor("b", "cols", when="bias", neutral=0)],
    outputs=[kprop.tensor("y", "rows", "cols")],
    reference=lambda x, s, b: torch.tanh(x) * s + (0 if b is None else b),
    bounds={"y": kprop.elementwise(6, lambda e: (torch.tanh(e["x"]) * e["s"]).abs() + _bias_magnitude(e)),
            "dx": kprop.elementwise(11, lambda e: (e["dy"] * e["s"]).abs()),
            "ds": kprop.elementwise(5, lambda e: (e["dy"] * torch.tanh(e["x"])).abs()),
            "db": kprop.sum_over("rows", lambda e: e["dy"].abs().sum(0))},
    regions={"cols": column_region},
    properties=["gradient", "vs_reference", "layout", "determinism", "guard", "neutral",
                "composition"],
    reordered_by_layout=["db"])  # db = dy summed over rows by torch, in an order that follows dy's strides


def good(x, s, b):
    acc = torch.float64 if x.dtype == torch.float64 else torch.float32  # as at::opmath_type
    y = torch.tanh(x.to(acc)) * s.to(acc)
    return (y if b is None else y + b.to(acc)).to(x.dtype)


def planted(x, s, b):
    y = good(x, s, b)
    if x.shape[1] % WIDTH == 7:
        y = torch.cat([y[:, :-1], torch.zeros_like(y[:, -1:])], 1)
    return y


def overwrites_x(x, s, b):
    y = good(x, s, b)
    with torch.no_grad():
        x.mul_(2)  # x's buffer reused once it has been read
    return y


def _stored_elements(t):
    """How many elements t's storage holds (torch 1.13 has no untyped_storage)."""
    if hasattr(t, "untyped_storage"):
        return t.untyped_storage().nbytes() // t.element_size()
    return t.storage().size()


def _one_past_end(t):
    """The element after contiguous t's last one, or zero where its storage ends there."""
    after = t.storage_offset() + t.numel()
    if after >= _stored_elements(t):
        return t.new_zeros(1)
    return t.as_strided((1,), (1,), after).clone()


def _tanh_forward(ctx, x, s, b):
    """The forward of the planted autograd Functions below: good's, x and s saved."""
    ctx.save_for_backward(x, s)
    ctx.has_bias = b is not None
    return good(x, s, b)


def _tanh_backward(ctx, dy, db_of=lambda dy, acc: dy.to(acc).sum(0)):
    """dx, ds and db for `dy` (db summed by `db_of`, in the accumulation type)."""
    x, s = ctx.saved_tensors
    acc = torch.float64 if x.dtype == torch.float64 else torch.float32
    t = torch.tanh(x.to(acc))
    dx = (dy.to(acc) * s.to(acc) * (1 - t * t)).to(x.dtype)
    ds = (dy.to(acc) * t).to(s.dtype)
    return dx, ds, db_of(dy, acc).to(x.dtype) if ctx.has_bias else None


class ReadsPastEndTanh(torch.autograd.Function):
    forward = staticmethod(_tanh_forward)

    @staticmethod
    def backward(ctx, dy):
        dy = dy.contiguous()

        def unmasked_sum(d, acc):  # the planted bug: the sum's tail reads past d's end
            db = d.to(acc).sum(0)
            db[-1] += _one_past_end(d).to(acc)[0]
            return db
        return _tanh_backward(ctx, dy, unmasked_sum)


class UnitScalarDyTanh(torch.autograd.Function):
    forward = staticmethod(_tanh_forward)

    @staticmethod
    def backward(ctx, dy):
        if dy.numel() > 1 and bool((dy == dy.reshape(-1)[0]).all()):
            dy = torch.ones_like(dy)  # the planted bug: a scalar loss's gradient taken for 1
        return _tanh_backward(ctx, dy)


def _as_if_contiguous(t):
    """t's memory from its first element, t.numel() elements of it, shaped as t: how a kernel
    handed a pointer and no strides reads it (zeros past the end of its storage here)."""
    n = min(t.numel(), _stored_elements(t) - t.storage_offset())
    read = t.as_strided((n,), (1,), t.storage_offset())
    return torch.cat([read, read.new_zeros(t.numel() - n)]).view(t.shape)


class ContiguousDyTanh(torch.autograd.Function):
    forward = staticmethod(_tanh_forward)

    @staticmethod
    def backward(ctx, dy):
        return _tanh_backward(ctx, _as_if_contiguous(dy))  # the planted bug: strides ignored


class RandomOrderTanh(torch.autograd.Function):
    forward = staticmethod(_tanh_forward)

    @staticmethod
    def backward(ctx, dy):
        def random_order_sum(d, acc):  # the planted nondeterminism
            db = torch.zeros(d.shape[1], dtype=acc)
            for r in torch.randperm(d.shape[0]).tolist():
                db = db + d[r].to(acc)
            return db
        return _tanh_backward(ctx, dy, random_order_sum)


kprop.implementation("py_scaled_tanh", "py_good", good)
kprop.implementation("py_scaled_tanh", "py_planted", planted)
kprop.implementation("py_scaled_tanh", "py_overwrites_x", overwrites_x)
kprop.implementation("py_scaled_tanh", "py_overwrites_x_declared", overwrites_x, overwrites=["x"])
kprop.implementation("py_scaled_tanh", "py_random_order",
                     lambda x, s, b: RandomOrderTanh.apply(x, s, b))
kprop.implementation("py_scaled_tanh", "py_contiguous_dy",
                     lambda x, s, b: ContiguousDyTanh.apply(x, s, b))
kprop.implementation("py_scaled_tanh", "py_unit_scalar_dy",
                     lambda x, s, b: UnitScalarDyTanh.apply(x, s, b))
kprop.implementation("py_scaled_tanh", "py_reads_past_end",
                     lambda x, s, b: ReadsPastEndTanh.apply(x, s, b))


def gelu_tanh(a):
    return torch.nn.functional.gelu(a, approximate="tanh")


def geglu(a, b, num_cores, buffer_bytes):
    del num_cores, buffer_bytes  # tiling hints for emulations
    return gelu_tanh(a) * b


class ScalarGradGeglu(torch.autograd.Function):
    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return gelu_tanh(a) * b

    @staticmethod
    def backward(ctx, dc):
        a, b = ctx.saved_tensors
        dc = dc.mean()  # the planted bug: grad_output read as a scalar
        with torch.enable_grad():
            a_ = a.detach().requires_grad_(True)
            g = gelu_tanh(a_)
            (slope,) = torch.autograd.grad(g.sum(), a_)
        return dc * b * slope, dc * g.detach()


kprop.implementation("geglu", "py_geglu", geglu, dtypes=[torch.float32])
kprop.implementation("geglu", "py_scalar_grad",
                     lambda a, b, num_cores, buffer_bytes: ScalarGradGeglu.apply(a, b),
                     dtypes=[torch.float32])
