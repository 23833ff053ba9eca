#include "kernels/cross_entropy/liger_rows.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "harness/model/host_values.h"

namespace kprop::cross_entropy {

namespace {
using T = at::Tensor;

double number(const std::string& text) { return text == "none" ? 0.0 : std::stod(text); }

int64_t next_pow2(int64_t v) {
  int64_t p = 1;
  while (p < v) p <<= 1;
  return p;
}

// log2(e), as Liger's LOG2_E: e^x = 2^(x log2 e), the hardware's ex2.
constexpr double kLog2E = 1.4426950408889634;
}  // namespace

Options options_of(const OpArgs& a) {
  Options o;
  o.reduction = a.text("reduction");
  o.ignore_index = a.integer("ignore_index");
  o.label_smoothing = number(a.text("label_smoothing"));
  o.softcap = number(a.text("softcap"));
  o.lse_square_scale = number(a.text("lse_square_scale"));
  o.return_z_loss = a.flag("return_z_loss");
  return o;
}

Options options_of(const Case& c) {
  Options o;
  o.reduction = c.choice("reduction");
  o.ignore_index = c.integer("ignore_index");
  o.label_smoothing = number(c.choice("label_smoothing"));
  o.softcap = number(c.choice("softcap"));
  o.lse_square_scale = number(c.choice("lse_square_scale"));
  o.return_z_loss = c.flag("return_z_loss");
  return o;
}

std::vector<ParamSpec> option_params() {
  return {choice_param("reduction", "mean (over the rows not ignored), sum, or none (a loss per row)",
                       {"mean", "sum", "none"}, {40, 25, 35}),
          param_spec("ignore_index", ParamType::integer,
                     "the target of an ignored row: Liger's default -100, or 0 (a padding class "
                     "inside the vocabulary)",
                     int64_t{-100})
              .within(-100, 0)
              .drawn(std::vector<IntOption>{IntOption::just(80, -100), IntOption::just(20, 0)}),
          choice_param("ignored",
                       "rows whose target is ignore_index: none, some (a third), all (a mean over "
                       "no rows: Liger returns 0)",
                       {"none", "some", "all"}, {50, 35, 15}),
          choice_param("label_smoothing", "eps = label_smoothing / V on every class", {"0", "0.1"},
                       {70, 30}),
          choice_param("softcap", "logits as softcap tanh(x / softcap) (Gemma 2), or none",
                       {"none", "30", "3"}, {60, 20, 20}),
          choice_param("lse_square_scale", "PaLM's z-loss lse_square_scale lse^2, added to the loss",
                       {"0", "1e-4"}, {70, 30}),
          flag_param("return_z_loss", "z_loss returned too (for logging: its gradient is dropped)")
              .true_in_percent(30)};
}

std::vector<std::string> option_arguments() {
  return {"reduction", "ignore_index", "label_smoothing", "softcap", "lse_square_scale", "return_z_loss"};
}

int ignored_percent(const Case& c) {
  const std::string& ignored = c.choice("ignored");
  return ignored == "all" ? 100 : ignored == "some" ? 33 : 0;
}

bool reduces(const Case& c) { return c.choice("reduction") != "none"; }

Rows liger_rows(const T& logits, const T& target, const Options& o, at::ScalarType loss_dtype,
                TrueClass true_class, bool gradients, Padding padding) {
  const at::ScalarType dtype = logits.scalar_type();
  const T X = in_accumulation_type(logits);  // a row is loaded and cast to fp32
  const bool fp32 = X.scalar_type() == at::kFloat;
  // A Python float (a constexpr or a scalar argument) as the kernel holds it: fp32.
  const auto k = [fp32](double v) { return fp32 ? static_cast<double>(static_cast<float>(v)) : v; };
  const int64_t rows = X.size(0), V = X.size(1);
  const T t = target.contiguous();
  const T valid = t.ne(o.ignore_index);
  Rows r;
  r.non_ignored = valid.sum().item<int64_t>();
  const double n = k(static_cast<double>(r.non_ignored));
  const T y = at::where(valid, t, at::zeros_like(t)).unsqueeze(1);  // an ignored row: any class
  const bool softcapping = o.softcap > 0;
  const double softcap = k(o.softcap), log2e = k(kLog2E);
  // softcap * tanh(X / softcap), the same in both passes and for ori_X_y.
  T inter, Z = X;
  if (softcapping) {
    inter = (X / softcap).tanh();
    Z = inter * softcap;
  }
  const double neg_eps = -k(k(o.label_smoothing) / k(static_cast<double>(V)));  // eps = ls / n_cols

  // First pass: the online softmax over blocks (masked lanes hold -inf and add nothing;
  // softcapped, the last block's padding holds softcap tanh(-inf) = -softcap).
  const int64_t block = std::min(kMaxFused, next_pow2(V));
  T m = at::full({rows}, -std::numeric_limits<double>::infinity(), X.options());
  T d = at::zeros({rows}, X.options()), scaled_x_sum = at::zeros({rows}, X.options());
  for (int64_t i = 0; i < V; i += block) {
    T Zb = Z.narrow(1, i, std::min(block, V - i));
    if (o.label_smoothing > 0) scaled_x_sum = scaled_x_sum + (Zb * neg_eps).sum(1);
    if (padding == Padding::softcapped && softcapping && Zb.size(1) < block)
      Zb = at::cat({Zb, at::full({rows, block - Zb.size(1)}, -softcap, X.options())}, 1);
    const T m_new = at::maximum(m, Zb.amax(1));
    d = d * at::exp2((m - m_new) * log2e) + at::exp2((Zb - m_new.unsqueeze(1)) * log2e).sum(1);
    m = m_new;
  }
  const T lse = m + d.log();
  const T ori_x_y = Z.gather(1, y).squeeze(1);

  // The loss and z-loss of each row, stored in their buffers; 0 where ignored.
  T loss = lse - ori_x_y;
  if (o.label_smoothing > 0)
    loss = loss * k(1 - o.label_smoothing) + (scaled_x_sum + lse * k(o.label_smoothing));
  T z_loss = lse * k(o.lse_square_scale) * lse;
  if (o.mean()) {
    loss = loss / n;
    z_loss = z_loss / n;
  }
  loss = loss + z_loss;
  r.loss_1d = at::where(valid, loss, at::zeros_like(loss)).to(loss_dtype);
  r.z_loss_1d = at::where(valid, z_loss, at::zeros_like(z_loss)).to(dtype);
  if (!gradients) return r;

  // Second pass: the gradient over every class, written over the logits in their dtype.
  const T two_lss_lse = (lse * k(2 * o.lse_square_scale)).unsqueeze(1);  // 2 lse_square_scale lse
  const T P = at::exp2((Z - m.unsqueeze(1)) * log2e) / d.unsqueeze(1);
  T G = P + two_lss_lse * P;
  G = G + neg_eps;
  if (o.mean()) G = G / n;
  if (softcapping) G = G * (1 - inter * inter);
  T grad = G.to(dtype);

  // Then the true class, after the loop.
  const T dxy_softcap = softcapping ? 1 - (ori_x_y / softcap) * (ori_x_y / softcap) : T();
  T dxy;
  if (true_class == TrueClass::once_in_fp32) {
    const T s = at::exp2((ori_x_y - m) * log2e) / d;
    dxy = s + two_lss_lse.squeeze(1) * s;
    dxy = dxy + neg_eps;
    dxy = dxy + (-k(1 - o.label_smoothing));
    if (o.mean()) dxy = dxy / n;
    if (softcapping) dxy = dxy * dxy_softcap;
  } else {
    T correction = at::full({rows}, -k(1 - o.label_smoothing), X.options());
    if (o.mean()) correction = correction / n;
    if (softcapping) correction = correction * dxy_softcap;
    // tl.load(X_ptr + y): the value the loop stored, in the logits' dtype.
    dxy = in_accumulation_type(grad.gather(1, y).squeeze(1)) + correction;
  }
  grad.scatter_(1, y, dxy.to(dtype).unsqueeze(1));
  r.grad = at::where(valid.unsqueeze(1), grad, at::zeros_like(grad));  // an ignored row: 0.0
  return r;
}

T reduced(const T& loss_1d, const Options& o) {
  if (!o.reduced()) return loss_1d;
  return in_accumulation_type(loss_1d).sum().to(loss_1d.scalar_type());
}

namespace {
// What both the reference and the magnitudes read off float64 logits.
struct Exact64 {
  T valid, y, z, lse, z_y, scale;  // scale: 1/n per row for 'mean', 1 else; 0 where ignored
};
Exact64 exact(const T& x, const T& target, const Options& o) {
  Exact64 e;
  e.valid = target.ne(o.ignore_index);
  e.y = at::where(e.valid, target, at::zeros_like(target)).unsqueeze(1);
  e.z = o.softcap > 0 ? (x / o.softcap).tanh() * o.softcap : x;
  e.lse = e.z.logsumexp(1);
  e.z_y = e.z.gather(1, e.y).squeeze(1);
  const int64_t n = std::max<int64_t>(1, e.valid.sum().item<int64_t>());
  e.scale = e.valid.to(x.scalar_type()) / (o.mean() ? static_cast<double>(n) : 1.0);
  return e;
}
}  // namespace

NamedTensors reference_losses(const T& x, const T& target, const Options& o) {
  const Exact64 e = exact(x, target, o);
  const double ls = o.label_smoothing;
  // H(q', p) = (1 - ls) H(q, p) + ls H(u, p), H(u, p) = lse - mean(z); PaLM's z-loss.
  const T z_loss = e.lse * e.lse * o.lse_square_scale;
  T loss = (e.lse - e.z_y) * (1 - ls) + (e.lse - e.z.mean(1)) * ls + z_loss;
  loss = loss * e.scale;
  T z = z_loss * e.scale;
  if (o.reduced()) {
    loss = loss.sum();
    z = z.sum();
  }
  return NamedTensors{{"loss", loss}, {"z_loss", o.return_z_loss ? z : T()}};
}

Magnitudes magnitudes(const T& x, const T& target, const Options& o) {
  const Exact64 e = exact(x, target, o);
  const double ls = o.label_smoothing, eps = ls / static_cast<double>(x.size(1));
  const double lss = o.lse_square_scale;
  // 1 + max |z|: what an absolute error in the exponents (z - m, the blocks' rescaling) and
  // in lse = m + log d (d's relative error) is proportional to.
  const T big = e.z.abs().amax(1) + 1, m = e.z.amax(1);
  const T lse_big = e.lse.abs() + big;
  Magnitudes out;
  out.z_loss_row = e.scale * lss * lse_big * lse_big;
  out.z_loss_slope = e.scale * 2 * lss * lse_big;
  out.loss_row = e.scale * ((e.lse.abs() + e.z_y.abs()) * (1 - ls) + e.lse.abs() * ls +
                            e.z.abs().sum(1) * eps + big) +
                 out.z_loss_row;
  // Each class: softmax p (relative error of its exponent's absolute error), its z-loss
  // term, eps, and at the target the 1 - ls that p - 1 cancels against; the softcap's
  // 1 - tanh^2 cancels too: 1 + tanh^2.
  const T p = (e.z - e.lse.unsqueeze(1)).exp();
  const T exponent = 1 + (e.z - m.unsqueeze(1)).abs() + e.z.abs() + big.unsqueeze(1);
  const T onehot = at::zeros_like(e.z).scatter_(1, e.y, 1.0);
  T g = p * exponent * (1 + 2 * lss * lse_big).unsqueeze(1) + eps + onehot * (1 - ls);
  if (o.softcap > 0) g = g * (1 + (x / o.softcap).tanh().pow(2));
  out.dlogits = g * e.scale.unsqueeze(1);
  out.softmax = p;
  return out;
}

}  // namespace kprop::cross_entropy
