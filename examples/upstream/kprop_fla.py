"""kprop adapter: flash-linear-attention's Triton causal_conv1d, as `fla::causal_conv1d`,
its gated norm (modules/fused_norm_gate.py), as `fla::gated_norm`, and its linear
attention (ops/linear_attn) as `fla::linear_attn` (chunk) and `fla_recurrent::linear_attn`
(fused_recurrent), and its delta rules (ops/delta_rule, ops/gated_delta_rule) as
`fla::delta_rule` (chunk) and `fla_recurrent::delta_rule` (fused_recurrent).

Registration and argument mapping only; the kernel is imported from your own checkout of
https://github.com/fla-org/flash-linear-attention, named by FLA_SRC (the folder holding
`fla/`). Nothing of it is copied here.

    FLA_SRC=~/src/flash-linear-attention PYTHONPATH=examples/upstream:build/python \
      python3 -m kprop check causal_conv1d --import kprop_fla --impl fla::causal_conv1d \
      --device cuda

Conventions match kprop's contract (docs/design.md §3 follows fla's layouts): x [B, T, D],
weight [D, W], initial and final state [N, D, W], packed sequences by cu_seqlens. The
`num_cores` hint is ignored (a GPU kernel picks its own grid). It is tested as models call
it: `CausalConv1dFunction.apply`, the backward by autograd (kprop.implementation).
"""
import inspect
import os
import sys

import torch

_src = os.environ.get("FLA_SRC")
if not _src:
    raise ImportError("kprop_fla: set FLA_SRC to your flash-linear-attention checkout")
sys.path.insert(0, _src)

# fp32 tl.dot runs in TF32 on Hopper unless TRITON_F32_DEFAULT=ieee (what fla's own varlen
# test sets): TF32 keeps 10 bits, so an fp32 case would be held to a bound its products
# never meet. fp32 is tested as IEEE; TF32 is a precision choice, not checkable against
# fp32's bound (kernels/linear_attn/README.md). Set TRITON_F32_DEFAULT yourself to test
# another. Declared with each implementation, so that `kprop repro` scripts set it too.
IEEE_FP32 = {"TRITON_F32_DEFAULT": "ieee"}
os.environ.setdefault("TRITON_F32_DEFAULT", "ieee")  # before anything below compiles


def _import_fla():
    """fla, as the checkout allows. Before a72f7425 (#897) fla/__init__ imported fla.layers
    and fla.models, and with them transformers, eagerly; where that fails under today's
    transformers, fla becomes a bare package over the checkout's folder, so that its
    kernels (fla.ops, fla.modules) import as they are. The one per-version mapping here."""
    try:
        import fla  # noqa: F401
    except Exception as e:  # noqa: BLE001 (any failure of the eager imports)
        import types
        for name in [m for m in sys.modules if m == "fla" or m.startswith("fla.")]:
            del sys.modules[name]
        bare = types.ModuleType("fla")
        bare.__path__ = [os.path.join(_src, "fla")]
        sys.modules["fla"] = bare
        print(f"kprop_fla: fla/__init__ failed ({type(e).__name__}: {e}); importing its "
              "kernels without it", file=sys.stderr)


_import_fla()


def _keep_configs(kernel, n):
    """Keep the first n of an autotuned kernel's configs (it may be wrapped by heuristics)."""
    while kernel is not None and not hasattr(kernel, "configs"):
        kernel = getattr(kernel, "fn", None)
    if kernel is not None and isinstance(kernel.configs, list):
        kernel.configs = kernel.configs[:n]


def _keep_configs_of_fla(n):
    """_keep_configs for every kernel of the fla modules imported so far."""
    for name, module in list(sys.modules.items()):
        if name.startswith("fla.") and module is not None:
            for value in list(vars(module).values()):
                if hasattr(value, "fn") or hasattr(value, "configs"):
                    _keep_configs(value, n)


import kprop  # noqa: E402


def _activation(activation):
    return None if activation == "none" else activation


def _public(x, weight, bias, initial_state, cu_seqlens, activation, num_cores):
    """What a model calls: fla's autograd Function (num_cores is an emulation's hint)."""
    from fla.modules.conv.triton.ops import CausalConv1dFunction
    y, final_state = CausalConv1dFunction.apply(
        x, weight, bias, None, initial_state, True, _activation(activation), cu_seqlens)
    return y, final_state


# Through autograd: kprop calls the public Function and derives the backward with
# torch.autograd.grad, so its backward wiring (ctx, saved tensors, dht) is tested too.
# Triton takes no float64 (fp_downcast_rounding on an up-cast): gradient then checks the
# backward in float32 against the float64 reference's gradient, and says so. A checkout
# from before fla.modules.conv (6552c17e) registers none: its other kernels stay testable.
try:
    import fla.modules.conv.triton.ops  # noqa: E402, F401
except Exception as e:  # noqa: BLE001 (an older or partial checkout must not stop the rest)
    print(f"kprop_fla: causal_conv1d not registered: {e}", file=sys.stderr)
else:
    kprop.implementation("causal_conv1d", "fla", _public,
                         dtypes=["float32", "bfloat16", "float16"], devices=["cuda"],
                         environment=IEEE_FP32)


def _gated_norm(x, g, w, b, residual, norm, activation, prenorm):
    """fla's rms_norm_gated / layer_norm_gated as FusedRMSNormGated calls them (eps 1e-5,
    residual_in_fp32 False): y, and the residual stream with prenorm."""
    from fla.modules.fused_norm_gate import layer_norm_gated, rms_norm_gated
    f = rms_norm_gated if norm == "rms" else layer_norm_gated
    out = f(x, g, w, b, activation, residual, prenorm, False, 1e-5)
    return {"y": out[0], "residual_out": out[1]} if prenorm else {"y": out}


kprop.implementation("gated_norm", "fla", _gated_norm,
                     dtypes=["float32", "bfloat16", "float16"], devices=["cuda"],
                     environment=IEEE_FP32)


def _linear_attn_state(h0, z0, normalize):
    """kprop's (h0, z0) as fla takes its initial state: with normalize the tuple
    (kv_state [N, H, K, V] or None, z_state [N, 1, H, K] or None), whichever is given."""
    if not normalize or (h0 is None and z0 is None):
        return h0
    return (h0, None if z0 is None else z0.unsqueeze(1))


def _linear_attn_results(o, state, normalize, final_state):
    """fla's (o, state) as kprop's {o, ht, zt}: with normalize, fla always returns the
    tuple (ht or None, z_state [N, 1, H, K])."""
    if not final_state:
        return {"o": o}
    if normalize:
        return {"o": o, "ht": state[0], "zt": state[1].squeeze(1)}
    return {"o": o, "ht": state}


def _scale(scale):
    return None if scale == "default" else float(scale)


def _varlen(cu_seqlens):
    """fla's cu_seqlens keyword where kprop packs the case (layout=packed), else none: a
    checkout from before fla's varlen kernels is then called as it was."""
    return {} if cu_seqlens is None else {"cu_seqlens": cu_seqlens}


def _dense_only(fn):
    """What a function without cu_seqlens takes: dense cases only (a declared refusal)."""
    return None if "cu_seqlens" in inspect.signature(fn).parameters else {"layout": ["dense"]}


def _chunk_linear_attn(q, k, v, h0, z0, cu_seqlens, scale, normalize, final_state):
    """fla.ops.linear_attn.chunk_linear_attn (chunks of 64 tokens)."""
    from fla.ops.linear_attn import chunk_linear_attn
    o, state = chunk_linear_attn(q, k, v, scale=_scale(scale),
                                 initial_state=_linear_attn_state(h0, z0, normalize),
                                 output_final_state=final_state, normalize=normalize,
                                 **_varlen(cu_seqlens))
    return _linear_attn_results(o, state, normalize, final_state)


def _fused_recurrent_linear_attn(q, k, v, h0, z0, cu_seqlens, scale, normalize, final_state):
    """fla.ops.linear_attn.fused_recurrent_linear_attn (one token at a time)."""
    from fla.ops.linear_attn import fused_recurrent_linear_attn
    o, state = fused_recurrent_linear_attn(q, k, v, scale=_scale(scale),
                                           initial_state=_linear_attn_state(h0, z0, normalize),
                                           output_final_state=final_state, normalize=normalize,
                                           **_varlen(cu_seqlens))
    return _linear_attn_results(o, state, normalize, final_state)


# Linear attention (issue 22), from fla's signatures at bc3b101d; run on the H200 there and
# at #875's commits. A checkout without fla.ops.linear_attn registers neither.
try:
    import fla.ops.linear_attn  # noqa: E402, F401
except Exception as e:  # noqa: BLE001 (an older or partial checkout must not stop the rest)
    print(f"kprop_fla: linear_attn not registered: {e}", file=sys.stderr)
else:
    kprop.implementation("linear_attn", "fla", _chunk_linear_attn,
                         dtypes=["float32", "bfloat16", "float16"], devices=["cuda"],
                         environment=IEEE_FP32,
                         choices=_dense_only(fla.ops.linear_attn.chunk_linear_attn),
                         same_function_as="fla_recurrent::linear_attn")
    kprop.implementation("linear_attn", "fla_recurrent", _fused_recurrent_linear_attn,
                         dtypes=["float32", "bfloat16", "float16"], devices=["cuda"],
                         environment=IEEE_FP32,
                         choices=_dense_only(fla.ops.linear_attn.fused_recurrent_linear_attn))

def _gated_chunk_backward_refused():
    """fla's guard for #640: chunk_gated_delta_rule's backward raises on Hopper with Triton
    >= 3.4 and < 3.7.1 (a miscompile of chunk_bwd_dqkwg), unless TileLang takes it."""
    try:
        from fla import utils
        guarded = utils.IS_NVIDIA_HOPPER and utils.TRITON_ABOVE_3_4_0 and not utils.TRITON_ABOVE_3_7_1
    except Exception:  # noqa: BLE001 (an older fla without the flags: no guard)
        return False
    try:  # as fla's dispatch decides: installed, with a usable nvcc, and not FLA_TILELANG=0
        from fla.ops.common.backends.tilelang import TileLangBackend
        tilelang = TileLangBackend.is_available() and TileLangBackend.is_enabled()
    except Exception:  # noqa: BLE001 (no TileLang backend in this fla)
        tilelang = False
    return guarded and not tilelang


def _chunk_delta_rule(q, k, v, beta, g, h0, cu_seqlens, scale, groups, l2norm, final_state):
    """fla.ops.delta_rule.chunk_delta_rule, or chunk_gated_delta_rule with g (chunks of 64
    tokens, the WY form)."""
    if g is None:
        from fla.ops.delta_rule import chunk_delta_rule
        o, ht = chunk_delta_rule(q, k, v, beta, scale=_scale(scale), initial_state=h0,
                                 output_final_state=final_state, use_qk_l2norm_in_kernel=l2norm,
                                 **_varlen(cu_seqlens))
    else:
        from fla.ops.gated_delta_rule import chunk_gated_delta_rule
        o, ht = chunk_gated_delta_rule(q, k, v, g, beta, scale=_scale(scale), initial_state=h0,
                                       output_final_state=final_state,
                                       use_qk_l2norm_in_kernel=l2norm, **_varlen(cu_seqlens))
    return {"o": o, "ht": ht} if final_state else {"o": o}


def _fused_recurrent_delta_rule(q, k, v, beta, g, h0, cu_seqlens, scale, groups, l2norm,
                                final_state):
    """fla.ops.delta_rule.fused_recurrent_delta_rule (one token at a time)."""
    from fla.ops.delta_rule import fused_recurrent_delta_rule
    o, ht = fused_recurrent_delta_rule(q, k, v, beta, scale=_scale(scale), initial_state=h0,
                                       output_final_state=final_state,
                                       use_qk_l2norm_in_kernel=l2norm, **_varlen(cu_seqlens))
    return {"o": o, "ht": ht} if final_state else {"o": o}


# The delta rules (issue 22). What they take, declared so that a refusal is never a finding:
# - chunk_delta_rule asserts q.dtype != float32, K <= 256, and has no value heads of its
#   own (GVA only in the gated kernel): bf16 and fp16, groups 1.
# - chunk_gated_delta_rule's backward raises here (#640 guard): gated is not taken where
#   the guard holds, so the gated chunk is tested only elsewhere.
# - fused_recurrent_gated_delta_rule has no backward (NotImplementedError) and kprop tests
#   gradients: the recurrent adapter is the plain rule only.
try:
    import fla.ops.delta_rule  # noqa: E402, F401
    import fla.ops.gated_delta_rule  # noqa: E402, F401
except Exception as e:  # noqa: BLE001
    print(f"kprop_fla: delta_rule not registered: {e}", file=sys.stderr)
else:
    kprop.implementation("delta_rule", "fla", _chunk_delta_rule,
                         dtypes=["bfloat16", "float16"], devices=["cuda"],
                         environment=IEEE_FP32, accepts={"k_dim": (1, 256), "groups": (1, 1)},
                         flags={"gated": False} if _gated_chunk_backward_refused() else None,
                         same_function_as="fla_recurrent::delta_rule")
    kprop.implementation("delta_rule", "fla_recurrent", _fused_recurrent_delta_rule,
                         dtypes=["float32", "bfloat16", "float16"], devices=["cuda"],
                         environment=IEEE_FP32, accepts={"groups": (1, 1)},
                         flags={"gated": False})

# KPROP_FLA_CONFIGS=N: autotune over the first N configs only, for every fla kernel imported
# above. Each new shape (D, W, head dims, dtype, flags: constexprs) compiles every config
# (16 for causal_conv1d; dozens per kernel of the chunked linear attention, whose first
# case took over 60 s so with 16 processes compiling), which dominates a search over many
# shapes; a run with one config tests that config's tiling in a fraction of the time.
if os.environ.get("KPROP_FLA_CONFIGS"):
    _keep_configs_of_fla(int(os.environ["KPROP_FLA_CONFIGS"]))
