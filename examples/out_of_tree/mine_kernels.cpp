// mine::causal_conv1d: a user's own causal_conv1d, registered with TORCH_LIBRARY under
// kprop's schema (the operator contract), composed of ATen operations in
// float64 and rounded once to the input's dtype. mine_buggy::causal_conv1d is the same
// kernel with a planted defect: it adds the bias after the activation.
#include <ATen/ATen.h>
#include <torch/library.h>

#include "harness/spec/registered_schema.h"

#include <tuple>
#include <vector>

namespace {

using OptTensor = c10::optional<at::Tensor>;

// kprop's operator schemas, read from kprop's own registration (written once, in its
// causal_conv1d spec): kprop is loaded before this library.
std::string schema(const char* op) { return kprop::registered_schema(op); }

struct Sequence {
  int64_t batch, bos, length;
};

std::vector<Sequence> sequences(const at::Tensor& x, const OptTensor& cu) {
  std::vector<Sequence> out;
  if (!cu) {
    for (int64_t b = 0; b < x.size(0); ++b) out.push_back({b, 0, x.size(1)});
    return out;
  }
  const at::Tensor c = cu->to(at::kLong);
  for (int64_t n = 0; n + 1 < c.size(0); ++n) {
    const int64_t bos = c[n].item<int64_t>();
    out.push_back({0, bos, c[n + 1].item<int64_t>() - bos});
  }
  return out;
}

// Positions -W..L-1 of sequence n as rows [W + L, D] in float64.
at::Tensor history(const at::Tensor& x, const OptTensor& h0, int64_t W, int64_t n, const Sequence& s) {
  const at::Tensor rows = x[s.batch].narrow(0, s.bos, s.length).to(at::kDouble);
  const at::Tensor before = h0 ? (*h0)[n].to(at::kDouble).t()
                               : at::zeros({W, x.size(2)}, rows.options());
  return at::cat({before, rows});
}

at::Tensor pre_activation(const at::Tensor& full, const at::Tensor& w, int64_t L) {
  at::Tensor z = at::zeros({L, w.size(0)}, full.options());
  for (int64_t k = 0; k < w.size(1); ++k) z += w.select(1, k) * full.narrow(0, 1 + k, L);
  return z;
}

bool silu(c10::string_view activation) { return activation == "silu" || activation == "swish"; }

template <bool BiasAfterActivation>
std::tuple<at::Tensor, at::Tensor> forward(const at::Tensor& x, const at::Tensor& weight,
                                           const OptTensor& bias, const OptTensor& h0,
                                           const OptTensor& cu, c10::string_view activation,
                                           int64_t /*num_cores: a hint for emulations*/) {
  const int64_t W = weight.size(1);
  const at::Tensor w = weight.to(at::kDouble);
  const auto seqs = sequences(x, cu);
  at::Tensor y = at::zeros_like(x);
  at::Tensor final_state = at::zeros({int64_t(seqs.size()), x.size(2), W}, x.options());
  for (int64_t n = 0; n < int64_t(seqs.size()); ++n) {
    const Sequence& s = seqs[n];
    const at::Tensor full = history(x, h0, W, n, s);
    at::Tensor z = pre_activation(full, w, s.length);
    if (bias && !BiasAfterActivation) z += bias->to(at::kDouble);
    if (silu(activation)) z = z * at::sigmoid(z);
    if (bias && BiasAfterActivation) z += bias->to(at::kDouble);
    y[s.batch].narrow(0, s.bos, s.length).copy_(z);
    final_state[n].copy_(full.narrow(0, s.length, W).t());
  }
  return {y, final_state};
}

std::tuple<at::Tensor, at::Tensor, at::Tensor, at::Tensor> backward(
    const at::Tensor& x, const at::Tensor& weight, const OptTensor& bias, const OptTensor& h0,
    const OptTensor& cu, c10::string_view activation, const at::Tensor& dy, const OptTensor& dht,
    int64_t /*num_cores*/) {
  const int64_t W = weight.size(1);
  const at::Tensor w = weight.to(at::kDouble);
  const auto seqs = sequences(x, cu);
  at::Tensor dx = at::zeros_like(x);
  at::Tensor dw = at::zeros(weight.sizes(), w.options());
  at::Tensor db = at::zeros({weight.size(0)}, w.options());
  at::Tensor dh0 = h0 ? at::zeros_like(*h0) : at::Tensor();
  for (int64_t n = 0; n < int64_t(seqs.size()); ++n) {
    const Sequence& s = seqs[n];
    const at::Tensor full = history(x, h0, W, n, s);
    at::Tensor g = dy[s.batch].narrow(0, s.bos, s.length).to(at::kDouble);
    if (silu(activation)) {
      at::Tensor z = pre_activation(full, w, s.length);
      if (bias) z += bias->to(at::kDouble);
      const at::Tensor sig = at::sigmoid(z);
      g = g * sig * (1 + z * (1 - sig));
    }
    db += g.sum(0);
    at::Tensor dfull = at::zeros_like(full);
    for (int64_t k = 0; k < W; ++k) {
      dw.select(1, k) += (g * full.narrow(0, 1 + k, s.length)).sum(0);
      dfull.narrow(0, 1 + k, s.length) += g * w.select(1, k);
    }
    // final_state holds positions L-W..L-1: rows of x, or columns of h0.
    if (dht) dfull.narrow(0, s.length, W) += (*dht)[n].to(at::kDouble).t();
    dx[s.batch].narrow(0, s.bos, s.length).copy_(dfull.narrow(0, W, s.length));
    if (h0) dh0[n].copy_(dfull.narrow(0, 0, W).t());
  }
  return {dx, dw.to(weight.scalar_type()), bias ? db.to(bias->scalar_type()) : at::Tensor(), dh0};
}

}  // namespace

TORCH_LIBRARY(mine, m) {
  m.def(schema("causal_conv1d_fwd").c_str());
  m.def(schema("causal_conv1d_bwd").c_str());
  m.impl("causal_conv1d_fwd", forward<false>);
  m.impl("causal_conv1d_bwd", backward);
}

TORCH_LIBRARY(mine_buggy, m) {
  m.def(schema("causal_conv1d_fwd").c_str());
  m.def(schema("causal_conv1d_bwd").c_str());
  m.impl("causal_conv1d_fwd", forward<true>);
  m.impl("causal_conv1d_bwd", backward);
}
