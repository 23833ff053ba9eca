// The causal_conv1d oracle: docs/design.md §3's formulas as plain float64 loops, one sequence
// at a time. Every other implementation is judged against this file, so it favours
// being obviously right over being fast.
#include <ATen/ATen.h>

#include <algorithm>
#include <cmath>
#include <optional>

#include "kernels/causal_conv1d/implementations.h"

namespace kprop::causal_conv1d {
namespace {

using Accessor1 = at::TensorAccessor<double, 1>;
using Accessor2 = at::TensorAccessor<double, 2>;
using Accessor3 = at::TensorAccessor<double, 3>;

// Absent optional inputs stay undefined.
at::Tensor as_float64(const at::Tensor& t) {
  return t.defined() ? t.to(at::kDouble).contiguous() : at::Tensor();
}

template <size_t Rank>
std::optional<at::TensorAccessor<double, Rank>> optional_accessor(at::Tensor& t) {
  if (!t.defined()) return std::nullopt;
  return t.accessor<double, Rank>();
}

double sigmoid(double p) { return 1.0 / (1.0 + std::exp(-p)); }

// The call's inputs in float64, indexed the way §3 writes them.
class Problem {
 public:
  explicit Problem(const Args& args)
      : x_tensor_(as_float64(args.x)),
        weight_tensor_(as_float64(args.weight)),
        bias_tensor_(as_float64(args.bias)),
        h0_tensor_(as_float64(args.initial_state)),
        x_(x_tensor_.accessor<double, 3>()),
        weight_(weight_tensor_.accessor<double, 2>()),
        bias_(optional_accessor<1>(bias_tensor_)),
        h0_(optional_accessor<3>(h0_tensor_)),
        silu_(args.activation == "silu" || args.activation == "swish") {}

  int64_t D() const { return weight_.size(0); }
  int64_t W() const { return weight_.size(1); }
  bool has_bias() const { return bias_.has_value(); }
  bool has_initial_state() const { return h0_.has_value(); }

  double w(int64_t d, int64_t k) const { return weight_[d][k]; }

  // xx[s] of sequence n: its own rows for s >= 0, h0 column s + W for -W < s < 0, and
  // zero there without an initial state.
  double xx(const Sequence& seq, int64_t n, int64_t s, int64_t d) const {
    if (s >= 0) return x_[seq.batch][seq.bos + s][d];
    return h0_ ? (*h0_)[n][d][s + W()] : 0.0;
  }

  double pre_activation(const Sequence& seq, int64_t n, int64_t t, int64_t d) const {
    double acc = bias_ ? (*bias_)[d] : 0.0;
    for (int64_t k = 0; k < W(); ++k) acc += w(d, k) * xx(seq, n, t - (W() - 1) + k, d);
    return acc;
  }

  double activate(double pre) const { return silu_ ? pre * sigmoid(pre) : pre; }

  // d act / d pre at (t, d); silu'(p) = s (1 + p (1 - s)) with s = sigmoid(p).
  double activation_slope(const Sequence& seq, int64_t n, int64_t t, int64_t d) const {
    if (!silu_) return 1.0;
    const double pre = pre_activation(seq, n, t, d), s = sigmoid(pre);
    return s * (1.0 + pre * (1.0 - s));
  }

 private:
  // The float64 copies must outlive the accessors into them, so they come first.
  at::Tensor x_tensor_, weight_tensor_, bias_tensor_, h0_tensor_;
  Accessor3 x_;
  Accessor2 weight_;
  std::optional<Accessor1> bias_;
  std::optional<Accessor3> h0_;
  bool silu_;
};

at::TensorOptions float64() { return at::TensorOptions().dtype(at::kDouble); }

}  // namespace

ForwardResult reference_forward(const Args& args) {
  check_args(args);
  const Problem problem(args);
  const std::vector<Sequence> seqs = sequences(args);
  const int64_t N = static_cast<int64_t>(seqs.size()), D = problem.D(), W = problem.W();

  at::Tensor y = at::zeros(args.x.sizes(), float64());
  at::Tensor final_state = at::zeros({N, D, W}, float64());
  auto y_at = y.accessor<double, 3>();
  auto final_at = final_state.accessor<double, 3>();

  for (int64_t n = 0; n < N; ++n) {
    const Sequence& seq = seqs[n];
    for (int64_t t = 0; t < seq.length; ++t)
      for (int64_t d = 0; d < D; ++d)
        y_at[seq.batch][seq.bos + t][d] = problem.activate(problem.pre_activation(seq, n, t, d));
    // Column j is xx[L-W+j]; L >= 1 keeps that position above -W, so h0 column 0 is unread.
    for (int64_t d = 0; d < D; ++d)
      for (int64_t j = 0; j < W; ++j)
        final_at[n][d][j] = problem.xx(seq, n, seq.length - W + j, d);
  }
  return {y, final_state};
}

BackwardResult reference_backward(const Args& args, const at::Tensor& dy_in,
                                  const at::Tensor& dht_in) {
  check_args(args);
  const Problem problem(args);
  const std::vector<Sequence> seqs = sequences(args);
  const int64_t N = static_cast<int64_t>(seqs.size()), D = problem.D(), W = problem.W();
  TORCH_CHECK(dy_in.defined() && dy_in.sizes() == args.x.sizes(),
              "causal_conv1d: dy must have x's shape ", args.x.sizes());
  TORCH_CHECK(!dht_in.defined() || dht_in.sizes() == at::IntArrayRef({N, D, W}),
              "causal_conv1d: dht must be [N, D, W] = [", N, ", ", D, ", ", W, "]");

  at::Tensor dy = as_float64(dy_in);
  at::Tensor dht = as_float64(dht_in);
  auto dy_at = dy.accessor<double, 3>();
  const auto dht_at = optional_accessor<3>(dht);

  // g = dy * act'(pre), kept for the whole call because dx[t] reads g[t .. t+W-1].
  at::Tensor g = at::zeros(args.x.sizes(), float64());
  at::Tensor dx = at::zeros(args.x.sizes(), float64());
  at::Tensor dweight = at::zeros({D, W}, float64());
  at::Tensor dbias = problem.has_bias() ? at::zeros({D}, float64()) : at::Tensor();
  at::Tensor dh0 = problem.has_initial_state() ? at::zeros({N, D, W}, float64()) : at::Tensor();
  auto g_at = g.accessor<double, 3>();
  auto dx_at = dx.accessor<double, 3>();
  auto dweight_at = dweight.accessor<double, 2>();
  auto dbias_at = optional_accessor<1>(dbias);
  auto dh0_at = optional_accessor<3>(dh0);

  for (int64_t n = 0; n < N; ++n) {
    const Sequence& seq = seqs[n];
    const int64_t L = seq.length;
    // Rows of this sequence inside g, dy and dx.
    auto g_row = [&](int64_t t) { return g_at[seq.batch][seq.bos + t]; };
    auto dx_row = [&](int64_t t) { return dx_at[seq.batch][seq.bos + t]; };

    for (int64_t t = 0; t < L; ++t)
      for (int64_t d = 0; d < D; ++d)
        g_row(t)[d] = dy_at[seq.batch][seq.bos + t][d] * problem.activation_slope(seq, n, t, d);

    // dx[t] = sum_i w[W-1-i] g[t+i], stopping at the end of the sequence.
    for (int64_t t = 0; t < L; ++t)
      for (int64_t d = 0; d < D; ++d) {
        double acc = 0.0;
        for (int64_t i = 0; i < W && t + i < L; ++i)
          acc += problem.w(d, W - 1 - i) * g_row(t + i)[d];
        dx_row(t)[d] = acc;
      }

    // final_state[j] = xx[L-W+j]: its gradient reaches x where that position is a row.
    if (dht_at)
      for (int64_t d = 0; d < D; ++d)
        for (int64_t j = 0; j < W; ++j)
          if (L - W + j >= 0) dx_row(L - W + j)[d] += (*dht_at)[n][d][j];

    // pre[t] reads xx[t-(W-1)+k] through tap k; negative positions read h0 (or zero).
    for (int64_t d = 0; d < D; ++d)
      for (int64_t k = 0; k < W; ++k)
        for (int64_t t = 0; t < L; ++t)
          dweight_at[d][k] += problem.xx(seq, n, t - (W - 1) + k, d) * g_row(t)[d];

    if (dbias_at)
      for (int64_t t = 0; t < L; ++t)
        for (int64_t d = 0; d < D; ++d) (*dbias_at)[d] += g_row(t)[d];

    if (dh0_at) {
      // h0 column c is position c - W, which pre[t] reads through tap c-1-t; that tap
      // exists for t < c, and column 0 (tap -1 at t = 0) is never read.
      for (int64_t d = 0; d < D; ++d)
        for (int64_t c = 1; c < W; ++c) {
          double acc = 0.0;
          for (int64_t t = 0; t < std::min(c, L); ++t)
            acc += g_row(t)[d] * problem.w(d, c - 1 - t);
          (*dh0_at)[n][d][c] = acc;
        }
      // A sequence shorter than W passes h0 columns L..W-1 straight into final_state.
      if (dht_at)
        for (int64_t d = 0; d < D; ++d)
          for (int64_t j = 0; j < W - L; ++j) (*dh0_at)[n][d][L + j] += (*dht_at)[n][d][j];
    }
  }
  return {dx, dweight, dbias, dh0};
}

}  // namespace kprop::causal_conv1d
