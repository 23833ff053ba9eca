"""fused_linear_cross_entropy through liger::fused_linear_cross_entropy: fused_linear_cross_entropy/liger::fused_linear_cross_entropy/loss {softcap=3}

A standalone reproducer that kprop wrote (python3 -m kprop repro flce-softcap.json) from
the case it kept and shrank. It needs torch and the kernel's package importable, not
kprop. Its inputs are embedded bit for bit; the call is the adapter's; the expected
values are the float64 reference written out below, computed from the same inputs, each
element with its derived rounding-error bound (no hand-set tolerance).

Property: vs_reference; signature: fused_linear_cross_entropy/liger::fused_linear_cross_entropy/vs_reference/loss, dh, dw
Found by: bench/realbugs/run.py run (liger-1298 fixed side, 9ac26bb8)
Case: {"H": 1, "V": 3, "bias": false, "distribution": "normal", "dtype": "float32", "ignore_index": -100, "ignored": "none", "impl": "liger::fused_linear_cross_entropy", "kernel": "fused_linear_cross_entropy", "label_smoothing": "0", "lse_square_scale": "0", "property": "vs_reference", "reduction": "mean", "return_z_loss": false, "rows": 1, "seed": 9368194341451274499, "softcap": "3"}
"""
import base64
import zlib

import torch
import liger_kernel.ops.fused_linear_cross_entropy as _flce_module

DEVICE = 'cuda'

def values(items, dtype, size, stride):
    """A tensor from its storage written out (each value exact in its dtype), on DEVICE,
    with the strides kprop handed it in."""
    exact = torch.tensor(items, dtype=torch.float64 if dtype.is_floating_point else dtype)
    return exact.to(dtype).to(DEVICE).as_strided(size, stride)


def tensor(data, dtype, size, stride):
    """A tensor from its embedded bits, on DEVICE, with the strides kprop handed it in."""
    raw = bytearray(zlib.decompress(base64.b64decode(data)))
    bits = {torch.float64: torch.int64, torch.float32: torch.int32,
            torch.float16: torch.int16, torch.bfloat16: torch.int16}.get(dtype, dtype)
    flat = (torch.frombuffer(raw, dtype=bits) if raw else torch.empty(0, dtype=bits)).view(dtype)
    return flat.to(DEVICE).as_strided(size, stride)


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

# The call, as kprop's adapter makes it:
def _flce(h, w, target, b, reduction, ignore_index, label_smoothing, softcap, lse_square_scale,
          return_z_loss):
    # forward(_input, weight, target, bias, ce_weight, ignore_index, lse_square_scale,
    # label_smoothing, reduction, softcap, return_z_loss, ...) -> (loss, z_loss, ...).
    out = _flce_module.LigerFusedLinearCrossEntropyFunction.apply(
        h, w, target, b, None, ignore_index, float(lse_square_scale), float(label_smoothing),
        reduction, None if softcap == "none" else float(softcap), return_z_loss)
    return out[0], out[1]

call = _flce

RETURNS = ['loss', 'z_loss']  # the call's results, in order
OUTPUT_NAMES = {'loss': 'loss', 'z_loss': 'z_loss'}
GRADIENT_NAMES = {'h': 'dh', 'w': 'dw', 'b': 'db'}  # argument -> its gradient
WATCHED = {'h': 'h', 'w': 'w', 'target': 'target'}  # argument -> kprop's name
COTANGENT_NAMES = {'loss': 'dloss', 'z_loss': 'dz_loss'}


# The float64 reference (kprop's python/kprop/references.py, held to its C++ oracle by kprop's suite):
def _f64(t):
    return None if t is None else t.to(torch.float64)

def _losses(z, target, reduction, ignore_index, label_smoothing, softcap, lse_square_scale,
            return_z_loss):
    """Cross entropy of logits z against class indices, with Liger's options (numbers as
    text, "none" for no softcap)."""
    ls, lss = float(label_smoothing), float(lse_square_scale)
    cap = 0.0 if softcap == "none" else float(softcap)
    if cap > 0:
        z = torch.tanh(z / cap) * cap
    valid = target != ignore_index
    y = torch.where(valid, target, torch.zeros_like(target)).unsqueeze(1)
    lse = z.logsumexp(1)
    z_loss = lse * lse * lss
    loss = (lse - z.gather(1, y).squeeze(1)) * (1 - ls) + (lse - z.mean(1)) * ls + z_loss
    n = max(1, int(valid.sum())) if reduction == "mean" else 1
    scale = valid.to(z.dtype) / n  # an ignored row counts for nothing
    loss, z_loss = loss * scale, z_loss * scale
    if reduction != "none":
        loss, z_loss = loss.sum(), z_loss.sum()
    return loss, (z_loss if return_z_loss else None)

def fused_linear_cross_entropy(h, w, target, b, reduction, ignore_index, label_smoothing,
                               softcap, lse_square_scale, return_z_loss):
    """cross_entropy of the logits h w^T + b."""
    logits = _f64(h) @ _f64(w).t()
    logits = logits if b is None else logits + _f64(b)
    return _losses(logits, target, reduction, ignore_index, label_smoothing, softcap,
                   lse_square_scale, return_z_loss)


def expected():
    """The reference's outputs, and its gradients by autograd with the same cotangents,
    all in float64."""
    cots = {r: None if c is None else c.to(torch.float64) for r, c in cotangents().items()}
    exact, _ = run(fused_linear_cross_entropy, in_float64(arguments), cots)
    return exact


# The inputs and cotangents as kprop handed them.


def arguments(laid_out=False):
    handed = {
        'h': values([-0.10717777907848358], torch.float32, (1, 1), (1, 1)),
        'w': values([0.9233959317207336, -0.23588138818740845, -0.9470281600952148], torch.float32, (3, 1), (1, 1)),
        'target': values([1], torch.int64, (1,), (1,)),
        'b': None,
        'reduction': 'mean',
        'ignore_index': -100,
        'label_smoothing': '0',
        'softcap': '3',
        'lse_square_scale': '0',
        'return_z_loss': False,
    }
    return handed


def cotangents(laid_out=False):
    handed = {
        'loss': values([-0.8046104907989502], torch.float32, (), ()),
        'z_loss': None,
    }
    return handed


# Each element's derived bound: |result - float64| <= bound.
BOUND = {
    'dh': values([3.1357032974584908e-06], torch.float64, (1, 1), (1, 1)),
    'dw': values([1.3710901106869292e-07, 2.9735803129217477e-07, 1.5460533459569198e-07], torch.float64, (3, 1), (1, 1)),
    'loss': values([3.6717269910145204e-06], torch.float64, (), ()),
}


def main():
    results, written = run(call, arguments, cotangents())
    exact = expected()
    over = sum(over_bound(name, results[name], exact[name], BOUND[name])
               for name in exact if name in results)
    assert over == 0, f"{over} elements outside their derived error bound"
    assert written == 0, f"{written} inputs or cotangents written over"
    print("every result within its derived bound of the float64 reference; no input "
          "written over")


if __name__ == "__main__":
    main()
