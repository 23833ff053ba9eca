"""Test-only kernels in PyTorch with planted defects that only scale shows, for the search
over sizes (bench/gpu/scale_edges.sh).

`planted::rms_norm` computes what kprop's `rows` emulation computes (the row in fp32; llama: x rstd rounded
to x's dtype; then times offset + w), through autograd, on any device. From 2^15 rows on,
its backward writes the dx of each row r >= 2^15 from row r - 2^15, as a kernel that keeps
a row index in 15 bits would: the first 2^15 rows are right, so only a case at the edge
(Liger's block kernel takes rows >= 2^15) can show it.

`planted::cross_entropy` computes the loss and its options in fp32, as kprop's reference
does. Past 2^16 classes its backward leaves the gradient of every
class from 2^16 on at zero, as a kernel that loops over blocks of the vocabulary and stops
one short would: only a vocabulary past the edge shows it.
"""
import torch

import kprop

EDGE = 1 << 15


def _rows(x, w, offset, casting):
    xf = x.float()
    rstd = torch.rsqrt(xf.pow(2).sum(-1, keepdim=True) / x.shape[-1] + 1e-6)
    n = xf * rstd
    if casting == "llama":  # rounded in the forward only: a kernel's backward stays in fp32
        n = n + (n.to(x.dtype).float() - n).detach()
    y = n * (w.float() + offset) if w is not None else n
    return y.to(x.dtype)


class _WrapsRowsPastTheEdge(torch.autograd.Function):
    """Identity forward; its backward hands dx of row r - 2^15 to each row r >= 2^15."""

    @staticmethod
    def forward(ctx, x):
        return x.view_as(x)

    @staticmethod
    def backward(ctx, dx):
        if dx.shape[0] <= EDGE:
            return dx
        wrapped = dx.clone()
        wrapped[EDGE:] = dx[:dx.shape[0] - EDGE]
        return wrapped


def _planted(x, w, offset, casting):
    return _rows(_WrapsRowsPastTheEdge.apply(x), w, offset, casting)


kprop.implementation("rms_norm", "planted", _planted, devices=["cuda", "cpu"],
                     dtypes=[torch.float32, torch.bfloat16, torch.float16])


VOCAB_EDGE = 1 << 16


def _cross_entropy(x, target, reduction, ignore_index, label_smoothing, softcap,
                   lse_square_scale, return_z_loss):
    if x.shape[1] > VOCAB_EDGE:  # the blocks past the edge are never reached in the backward
        x = torch.cat([x[:, :VOCAB_EDGE], x[:, VOCAB_EDGE:].detach()], 1)
    z = x.float()
    if softcap != "none":
        z = torch.tanh(z / float(softcap)) * float(softcap)
    ls, lss = float(label_smoothing), float(lse_square_scale)
    valid = target != ignore_index
    lse = torch.logsumexp(z, 1)
    z_y = z.gather(1, torch.where(valid, target, 0).unsqueeze(1)).squeeze(1)
    z_loss = lss * lse * lse
    loss = (lse - z_y) * (1 - ls) + (lse - z.mean(1)) * ls + z_loss
    scale = valid.float() / (max(1, int(valid.sum())) if reduction == "mean" else 1)
    loss, z_loss = loss * scale, z_loss * scale
    if reduction != "none":
        loss, z_loss = loss.sum(), z_loss.sum()
    return loss, (z_loss.detach() if return_z_loss else None)


kprop.implementation("cross_entropy", "planted", _cross_entropy, devices=["cuda", "cpu"],
                     dtypes=[torch.float32, torch.bfloat16, torch.float16])
