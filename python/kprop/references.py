"""The float64 references of kprop's built-in kernels, as plain PyTorch: what a standalone
reproducer (``kprop repro``) shows its reader, a few lines each.

Each function takes the arguments of the kernel's forward schema (``kprop.schemas``), by
name, in any dtype; it computes in float64 and returns the forward's results in the
schema's order (None for one the case leaves out). Gradients are autograd's. They are
the C++ references (kernels/<name>/) said again: ``register()`` makes each an
implementation ``pyref::<kernel>``, and the suite (tests/python/test_references.sh)
holds them to the C++ reference with kprop's own ``vs_reference`` in float64.
"""
import torch


def _f64(t):
    return None if t is None else t.to(torch.float64)


def rms_norm(x, w, offset, casting):
    """y = x / sqrt(mean(x^2) + 1e-6) * (w + offset); the casting mode only rounds."""
    x, w = _f64(x), _f64(w)
    y = x * torch.rsqrt((x * x).mean(-1, keepdim=True) + 1e-6)
    return (y if w is None else y * (w + offset),)


def layer_norm(x, w, b):
    """y = (x - mean) / sqrt(var + 1e-6) * w + b, the variance biased."""
    x, w, b = _f64(x), _f64(w), _f64(b)
    xc = x - x.mean(-1, keepdim=True)
    y = xc * torch.rsqrt((xc * xc).mean(-1, keepdim=True) + 1e-6)
    y = y if w is None else y * w
    return (y if b is None else y + b,)


def gated_norm(x, g, w, b, residual, norm, activation, prenorm):
    """s = x + residual; y = norm(s) * w + b, gated by silu(g) ("swish") or sigmoid(g)."""
    x, g, w, b, residual = map(_f64, (x, g, w, b, residual))
    s = x if residual is None else x + residual
    xc = s - s.mean(-1, keepdim=True) if norm == "layer" else s
    y = xc * torch.rsqrt((xc * xc).mean(-1, keepdim=True) + 1e-5)
    y = y if w is None else y * w
    y = y if b is None else y + b
    y = y * g * torch.sigmoid(g) if activation == "swish" else y * torch.sigmoid(g)
    return y, (s * 1 if prenorm else None)


def swiglu(a, b):
    """c = silu(a) b."""
    a, b = _f64(a), _f64(b)
    return (a * torch.sigmoid(a) * b,)


def geglu(a, b, num_cores, buffer_bytes):
    """c = gelu_tanh(a) b; num_cores and buffer_bytes only tile."""
    a, b = _f64(a), _f64(b)
    inner = (2 / torch.pi) ** 0.5 * (a + 0.044715 * a ** 3)
    return 0.5 * a * (1 + torch.tanh(inner)) * b


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


def cross_entropy(x, target, reduction, ignore_index, label_smoothing, softcap,
                  lse_square_scale, return_z_loss):
    return _losses(_f64(x), target, reduction, ignore_index, label_smoothing, softcap,
                   lse_square_scale, return_z_loss)


def fused_linear_cross_entropy(h, w, target, b, reduction, ignore_index, label_smoothing,
                               softcap, lse_square_scale, return_z_loss):
    """cross_entropy of the logits h w^T + b."""
    logits = _f64(h) @ _f64(w).t()
    logits = logits if b is None else logits + _f64(b)
    return _losses(logits, target, reduction, ignore_index, label_smoothing, softcap,
                   lse_square_scale, return_z_loss)


def kl_div(y_pred, y_true, reduction, target):
    """KL(y_true || exp(y_pred)) per element, y_true as probabilities (log(0) floored at
    1e-10) or as log-probabilities; summed, and divided by rows (batchmean) or by every
    element (mean)."""
    y, t = _f64(y_pred), _f64(y_true)
    terms = t.exp() * (t - y) if target == "log_probs" else t * (t.clamp_min(1e-10).log() - y)
    if reduction == "none":
        return terms, None
    n = {"sum": 1, "mean": terms.numel(), "batchmean": terms.shape[0]}[reduction]
    return None, terms.sum() / n


def rope(q, k, cos, sin):
    """x cos + rotate_half(x) sin over the last dimension, cos and sin [1 or batch, seq,
    head_dim] holding each angle twice: the first half is read, broadcast over heads."""
    def rotated(x):
        x = _f64(x)
        half = x.shape[-1] // 2
        c = _f64(cos)[..., :half].unsqueeze(1)
        s = _f64(sin)[..., :half].unsqueeze(1)
        x1, x2 = x[..., :half], x[..., half:]
        return torch.cat([x1 * c - x2 * s, x2 * c + x1 * s], dim=-1)
    return rotated(q), rotated(k)


def causal_conv1d(x, weight, bias, initial_state, cu_seqlens, activation, num_cores):
    """Per sequence (the rows between consecutive cu_seqlens of batch 0, else each batch
    row): y[t] = act(bias + sum_k weight[:, k] xx[t + k]), where xx is the initial state's
    columns 1..W-1 (zeros without one) followed by the sequence's rows; final_state
    [sequences, D, W] is xx's last W positions. num_cores only tiles."""
    x, weight, bias, initial_state = map(_f64, (x, weight, bias, initial_state))
    B, T, D = x.shape
    W = weight.shape[1]
    if cu_seqlens is not None:
        cu = cu_seqlens.tolist()
        spans = [(0, cu[n], cu[n + 1]) for n in range(len(cu) - 1)]
    else:
        spans = [(b, 0, T) for b in range(B)]
    rows, finals = [], []
    for n, (b, start, end) in enumerate(spans):
        before = (initial_state[n, :, 1:].t() if initial_state is not None
                  else x.new_zeros(W - 1, D))
        xx = torch.cat([before, x[b, start:end]])
        pre = sum(weight[:, k] * xx[k:k + end - start] for k in range(W))
        pre = pre if bias is None else pre + bias
        rows.append(pre * torch.sigmoid(pre) if activation in ("silu", "swish") else pre)
        finals.append(xx[-W:].t())
    if cu_seqlens is not None:
        y = torch.cat(rows).reshape(1, T, D)
    else:
        y = torch.stack(rows)
    return y, torch.stack(finals)


def _each_sequence(fn, cu_seqlens, tokens, states, **rest):
    """``fn`` on each sequence of a packed call (the tokens between consecutive cu_seqlens
    of batch 0, with its entry of each state), its first result (per token) joined along
    the time, the others (states) along the sequences."""
    cu = cu_seqlens.tolist()
    parts = []
    for n in range(len(cu) - 1):
        args = {name: None if t is None else t[:, cu[n]:cu[n + 1]] for name, t in tokens.items()}
        args.update({name: None if t is None else t[n:n + 1] for name, t in states.items()})
        parts.append(fn(cu_seqlens=None, **args, **rest))
    return tuple(None if parts[0][i] is None else torch.cat([p[i] for p in parts], 1 if i == 0 else 0)
                 for i in range(len(parts[0])))


def linear_attn(q, k, v, h0, z0, cu_seqlens, scale, normalize, final_state):
    """Per head, the state S starts at h0 (zeros without one); at each token
    S += k_t v_t^T and o_t = S^T (scale q_t), scale k_dim^-0.5 by default; with normalize,
    o_t / (scale q_t . z_t + 1e-10), z_t = z0 + k_0 + ... + k_t. ht is the last S, zt the
    last z (with normalize). Packed (cu_seqlens): each sequence on its own."""
    if cu_seqlens is not None:
        return _each_sequence(linear_attn, cu_seqlens, dict(q=q, k=k, v=v), dict(h0=h0, z0=z0),
                              scale=scale, normalize=normalize, final_state=final_state)
    q, k, v, h0, z0 = map(_f64, (q, k, v, h0, z0))
    s = k.shape[-1] ** -0.5 if scale == "default" else float(scale)
    S = h0 if h0 is not None else q.new_zeros(q.shape[0], q.shape[2], q.shape[3], v.shape[3])
    o = []
    for t in range(q.shape[1]):
        S = S + k[:, t, :, :, None] * v[:, t, :, None, :]
        o.append((s * q[:, t, :, :, None] * S).sum(-2))
    o, zt = torch.stack(o, 1), None
    if normalize:
        z = k.cumsum(1) + (0 if z0 is None else z0[:, None])
        o = o / ((s * q * z).sum(-1, keepdim=True) + 1e-10)
        zt = z[:, -1] if final_state else None
    return o, (S if final_state else None), zt


def delta_rule(q, k, v, beta, g, h0, cu_seqlens, scale, groups, l2norm, final_state):
    """Per value head (head h reads key head h // groups), the state S starts at h0 (zeros
    without one); at each token S = exp(g_t) S (gated), u = beta_t (v_t - S^T k_t),
    S += k_t u^T and o_t = S^T (scale q_t), scale k_dim^-0.5 by default; with l2norm, q and
    k are divided by sqrt(sum x^2 + 1e-6) first. ht is the last S. Packed (cu_seqlens):
    each sequence on its own."""
    if cu_seqlens is not None:
        return _each_sequence(delta_rule, cu_seqlens, dict(q=q, k=k, v=v, beta=beta, g=g),
                              dict(h0=h0), scale=scale, groups=groups, l2norm=l2norm,
                              final_state=final_state)
    q, k, v, beta, g, h0 = map(_f64, (q, k, v, beta, g, h0))
    if l2norm:
        q, k = (x / (x * x).sum(-1, keepdim=True).add(1e-6).sqrt() for x in (q, k))
    s = q.shape[-1] ** -0.5 if scale == "default" else float(scale)
    q, k = q.repeat_interleave(groups, 2) * s, k.repeat_interleave(groups, 2)
    S = h0 if h0 is not None else q.new_zeros(q.shape[0], q.shape[2], q.shape[3], v.shape[3])
    o = []
    for t in range(q.shape[1]):
        if g is not None:
            S = S * g[:, t].exp()[..., None, None]
        u = beta[:, t, :, None] * (v[:, t] - (S * k[:, t, :, :, None]).sum(-2))
        S = S + k[:, t, :, :, None] * u[:, :, None, :]
        o.append((S * q[:, t, :, :, None]).sum(-2))
    return torch.stack(o, 1), (S if final_state else None)


REFERENCES = {f.__name__: f for f in (rms_norm, layer_norm, gated_norm, swiglu, geglu,
                                      cross_entropy, fused_linear_cross_entropy, kl_div,
                                      rope, causal_conv1d, linear_attn, delta_rule)}


def register(kernels=None):
    """Registers each reference as implementation ``pyref::<kernel>`` (float64 only), for
    kprop to hold it to the C++ reference; returns their names."""
    from .implementations import implementation
    return [implementation(k, "pyref", REFERENCES[k], dtypes=[torch.float64])
            for k in (kernels or REFERENCES)]
