"""kprop adapter: Liger-Kernel's Triton GEGLU, as `liger::geglu` and `liger_ascend::geglu`.

Registration and argument mapping only; the kernels are imported from your own checkout of
https://github.com/linkedin/Liger-Kernel, named by LIGER_SRC (the folder holding `src/`).

- `liger::geglu`: liger_kernel.ops.geglu's LigerGELUMulFunction, the row-based kernel (one
  program per row), called as models call it, its backward derived by autograd
  (kprop.implementation). It is given copies of a and b: its backward writes da and db over
  the tensors it saved, which are the inputs kprop compares.
- `liger_ascend::geglu`: liger_kernel/ops/backends/_ascend/ops/geglu.py, the flatten-1D
  grid-stride rewrite for Ascend NPUs — the port whose bf16 test needed atol = 1e4. It is
  plain Triton, so it runs on a GPU too; its grid is min(cores, cdiv(total, BLOCK)) with
  the core count from the NPU, here kprop's `num_cores` hint instead (the mapping).
- `liger::swiglu`: liger_kernel.ops.swiglu's LigerSiLUMulFunction (gate and down
  multipliers 1). Like GEGLU's, its backward stores da and db over the a and b it saved:
  declared. It takes fp32, bf16 and fp16.
- `liger::rms_norm`: liger_kernel.ops.rms_norm's LigerRMSNormFunction as its module calls
  it (eps 1e-6, in_place=True, the default): its backward stores dx over the dy it
  receives, declared (`composition` tells where that is unsafe). kprop's `offset` (0 or 1)
  and `casting` ("llama", "gemma") are its own arguments. It takes fp32, bf16 and fp16 (a
  float64 row is computed in fp32).
- `liger::layer_norm`: liger_kernel.ops.layer_norm's LigerLayerNormFunction (eps 1e-6);
  it always takes w and b, so cases without them are not taken. fp32, bf16, fp16.
- `liger::cross_entropy`: liger_kernel.ops.cross_entropy's LigerCrossEntropyFunction
  (no class weights). Its forward stores the gradient over the logits x when x requires
  grad: declared (`composition` says where that is unsafe). fp32, bf16, fp16.
- `liger::kl_div`: liger_kernel.ops.kl_div's LigerKLDivLossFunction (eps 1e-10; kprop's
  `target` log_probs is its log_target). It takes fp32, bf16 and fp16.
- `liger::rope`: liger_kernel.ops.rope's LigerRopeFunction, as liger_rotary_pos_emb calls
  it. It writes its results over q and k (and the gradients over the cotangents) wherever
  they are stored token-major, as Hugging Face's attention hands them, or have one head or
  one token: declared. It takes fp32, bf16, fp16.
- `liger::fused_linear_cross_entropy`: LigerFusedLinearCrossEntropyFunction (no class
  weights); it writes over none of its inputs. fp32, bf16, fp16. Its matmuls are cuBLAS's,
  whose order of summation follows the operands' layouts: declared, so `layout` holds
  another layout to the derived bound.

    LIGER_SRC=~/src/Liger-Kernel PYTHONPATH=examples/upstream:build/python \
      python3 -m kprop check geglu --import kprop_liger --impl liger::geglu --device cuda
"""
import os
import sys

import torch

_src = os.environ.get("LIGER_SRC")
if not _src:
    raise ImportError("kprop_liger: set LIGER_SRC to your Liger-Kernel checkout")
sys.path.insert(0, os.path.join(_src, "src"))

import importlib  # noqa: E402
import inspect  # noqa: E402

import kprop  # noqa: E402


def _ops(name):
    """liger_kernel.ops.<name>, or None where this checkout has no such kernel or it does
    not import here (an older commit, another Triton): the others are still registered."""
    try:
        return importlib.import_module(f"liger_kernel.ops.{name}")
    except Exception as e:
        print(f"kprop_liger: liger::{name} not registered: {e}", file=sys.stderr)
        return None


_rows_module = _ops("geglu")
_cross_entropy_module = _ops("cross_entropy")
_flce_module = _ops("fused_linear_cross_entropy")
_kl_div_module = _ops("kl_div")
_layer_norm_module = _ops("layer_norm")
_rms_norm_module = _ops("rms_norm")
_rope_module = _ops("rope")
_swiglu_module = _ops("swiglu")


def _register(namespace, forward, backward):
    """The explicit operator pair, for the Ascend port's forward/backward entry points."""
    fwd, bwd = kprop.schemas("geglu")
    lib = torch.library.Library(namespace, "DEF")
    lib.define(fwd)
    lib.define(bwd)
    lib.impl("geglu_fwd", forward, "CUDA")
    lib.impl("geglu_bwd", backward, "CUDA")
    return lib


def _rows(a, b, num_cores, buffer_bytes):
    del num_cores, buffer_bytes  # tiling hints for emulations
    return _rows_module.LigerGELUMulFunction.apply(a, b)


# Its backward stores da and db over the a and b it saved, by design: every single-call
# property hands it copies of them; `composition` hands them as a model would, beside an op
# that saved them too.
if _rows_module:
    kprop.implementation("geglu", "liger", _rows, devices=["cuda"], overwrites=["a", "b"])


def _swiglu(a, b):
    return _swiglu_module.LigerSiLUMulFunction.apply(a, b)


if _swiglu_module:
    kprop.implementation("swiglu", "liger", _swiglu, devices=["cuda"], overwrites=["a", "b"],
                         dtypes=[torch.float32, torch.bfloat16, torch.float16])


def _rms_norm(x, w, offset, casting):
    return _rms_norm_module.LigerRMSNormFunction.apply(x, w, 1e-6, float(offset), casting, True, None)


if _rms_norm_module:
    kprop.implementation("rms_norm", "liger", _rms_norm, devices=["cuda"], overwrites=["dy"],
                         dtypes=[torch.float32, torch.bfloat16, torch.float16])


def _kl_div(y_pred, y_true, reduction, target):
    # eps (1e-10, its default) is an argument since Liger's #262; before it there was none.
    f = _kl_div_module.LigerKLDivLossFunction
    eps = (1e-10,) if "eps" in inspect.signature(f.forward).parameters else ()
    loss = f.apply(y_pred, y_true, reduction, target == "log_probs", *eps)
    return {"loss": loss} if reduction == "none" else {"total": loss}


if _kl_div_module:
    kprop.implementation("kl_div", "liger", _kl_div, devices=["cuda"],
                         dtypes=[torch.float32, torch.bfloat16, torch.float16])


# As Hugging Face's attention calls it (liger_rotary_pos_emb): q and k [batch, heads, seq,
# head_dim], cos and sin [1 or batch, seq, head_dim].
# It writes q_rot, k_rot over q, k, and dq, dk over the cotangents, wherever q transposed
# to [batch, seq, heads, head_dim] is contiguous: Hugging Face's storage, one head or one
# token (bench/gpu/RESULTS.md). Declared: `composition` says where that is unsafe.
def _rope(q, k, cos, sin):
    return _rope_module.LigerRopeFunction.apply(q, k, cos, sin)


if _rope_module:
    kprop.implementation("rope", "liger", _rope,
                         devices=["cuda"], overwrites=["q", "k", "dq_rot", "dk_rot"],
                         dtypes=[torch.float32, torch.bfloat16, torch.float16])

# LigerLayerNorm's call (eps 1e-6, its default). Its kernel always takes w and b: a case
# without either is not taken.
def _layer_norm(x, w, b):
    return _layer_norm_module.LigerLayerNormFunction.apply(x, w, b, 1e-6)


if _layer_norm_module:
    kprop.implementation("layer_norm", "liger", _layer_norm,
                         devices=["cuda"], flags={"weight": True, "bias": True},
                         dtypes=[torch.float32, torch.bfloat16, torch.float16])


def _cross_entropy(x, target, reduction, ignore_index, label_smoothing, softcap,
                   lse_square_scale, return_z_loss):
    # forward(_input, target, weight, ignore_index, lse_square_scale, label_smoothing,
    # reduction, softcap, return_z_loss, ...) -> (loss, z_loss, token_accuracy, ...).
    out = _cross_entropy_module.LigerCrossEntropyFunction.apply(
        x, target, None, ignore_index, float(lse_square_scale), float(label_smoothing),
        reduction, None if softcap == "none" else float(softcap), return_z_loss)
    return out[0], out[1]


# Its forward writes the gradient over x in place when x requires grad: declared.
if _cross_entropy_module:
    kprop.implementation("cross_entropy", "liger", _cross_entropy, devices=["cuda"],
                         overwrites=["x"], dtypes=[torch.float32, torch.bfloat16, torch.float16])


def _flce(h, w, target, b, reduction, ignore_index, label_smoothing, softcap, lse_square_scale,
          return_z_loss):
    # forward(_input, weight, target, bias, ce_weight, ignore_index, lse_square_scale,
    # label_smoothing, reduction, softcap, return_z_loss, ...) -> (loss, z_loss, ...).
    out = _flce_module.LigerFusedLinearCrossEntropyFunction.apply(
        h, w, target, b, None, ignore_index, float(lse_square_scale), float(label_smoothing),
        reduction, None if softcap == "none" else float(softcap), return_z_loss)
    return out[0], out[1]


if _flce_module:
    # Its matmuls are torch's: cuBLAS picks its algorithm, and so its order of summation,
    # by the operands' layouts (a transposed h moved dh by 1 ulp at Liger's head).
    kprop.implementation("fused_linear_cross_entropy", "liger", _flce, devices=["cuda"],
                         dtypes=[torch.float32, torch.bfloat16, torch.float16],
                         layout_changes_reduction_order=True)
_libs = []

def _load_flat():
    # The file alone: its package's __init__ imports every Ascend operator, and some of
    # those may not import off an NPU. It takes `tanh` from triton.language.math, where
    # Triton for Ascend has it; Triton for CUDA keeps it in libdevice, where Liger's own
    # CUDA kernel takes it from: the same name is provided there first (a shim of the
    # import, not of the kernel).
    import importlib.util
    import triton.language.math as tl_math
    if not hasattr(tl_math, "tanh"):
        try:
            from triton.language.extra.libdevice import tanh
        except ImportError:
            from triton.language.extra.cuda.libdevice import tanh
        tl_math.tanh = tanh
    path = os.path.join(_src, "src/liger_kernel/ops/backends/_ascend/ops/geglu.py")
    spec = importlib.util.spec_from_file_location("kprop_liger_ascend_geglu", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# Its tiling reads the NPU's unified-buffer size, or ASCEND_UB_CAPACITY_BITS off an NPU:
# the 192 KiB of an Ascend 910B, kprop's default `buffer_bytes` (the hint is not passed
# per call: the size is read once).
os.environ.setdefault("ASCEND_UB_CAPACITY_BITS", str(192 * 1024 * 8))

try:
    _flat = _load_flat()
except Exception as e:  # an NPU-only import on this machine: say so, keep liger::geglu
    print(f"kprop_liger: liger_ascend::geglu not registered: {e}", file=sys.stderr)
    _flat = None


def _with_cores(num_cores, call):
    saved = _flat.get_npu_core_count
    _flat.get_npu_core_count = lambda default=20: num_cores
    try:
        return call()
    finally:
        _flat.get_npu_core_count = saved


def _flat_forward(a, b, num_cores, buffer_bytes):
    return _with_cores(num_cores, lambda: _flat.geglu_forward(a, b))


def _flat_backward(dc, a, b, num_cores, buffer_bytes):
    return tuple(_with_cores(num_cores, lambda: _flat.geglu_backward(a, b, dc)))


if _flat is not None:
    _libs.append(_register("liger_ascend", _flat_forward, _flat_backward))
