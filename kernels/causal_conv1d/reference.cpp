// The causal_conv1d oracle: docs/design.md §3's formulas as plain float64 loops, one sequence
// at a time. Every other implementation is judged against this file, so it favours
// being obviously right over being fast. Where the oracle runs on a device, the same
// formulas run as ATen operations over every row at once (the second half of the file).
#include <ATen/ATen.h>

#include <algorithm>
#include <cmath>
#include <optional>
#include <utility>
#include <vector>

#include "harness/model/host_values.h"
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

// ---- The same formulas over every row at once, as ATen operations (the oracle on a
// device: docs/oracle_device.md). Where the loops above read xx[s] of a sequence, these
// gather rows by index tables built on the host: one gather and one multiply-add per tap
// whatever the number of sequences. Each sum adds its terms in the loops' order, except
// dw and db, which ATen reduces over rows in its own order (float64 either way); a tap
// past a sequence's end adds w · 0 where the loops stop (the same for a finite w).

at::Tensor index_tensor(const std::vector<int64_t>& v, int64_t rows, int64_t cols,
                        const at::Device& device) {
  return at::tensor(v, at::TensorOptions().dtype(at::kLong)).view({rows, cols}).to(device);
}

// The rows of a call as the loops visit them: sequence by sequence, t = 0 .. L-1.
class Rows {
 public:
  Rows(const Args& args, std::vector<Sequence> seqs)
      : seqs_(std::move(seqs)),
        T_(args.x.size(1)),
        D_(args.x.size(2)),
        W_(args.weight.size(1)),
        R_(args.x.size(0) * T_),
        device_(args.x.device()) {
    for (size_t n = 0; n < seqs_.size(); ++n) {
      first_.push_back(static_cast<int64_t>(rows_.size()));
      for (int64_t t = 0; t < seqs_[n].length; ++t) rows_.push_back(row(seqs_[n], t));
    }
  }

  int64_t N() const { return static_cast<int64_t>(seqs_.size()); }
  int64_t M() const { return static_cast<int64_t>(rows_.size()); }
  int64_t W() const { return W_; }
  int64_t D() const { return D_; }
  const Sequence& seq(int64_t n) const { return seqs_[n]; }
  // Row t of sequence n among the M rows visited (its place in g, dx).
  int64_t visited(int64_t n, int64_t t) const { return first_[n] + t; }
  at::Tensor visited_rows() const { return index_tensor(rows_, M(), 1, device_).view({M()}); }

  // xx as one table: x's rows, then h0's columns (row R + n W + c), then a zero row.
  at::Tensor sources(const at::Tensor& x, const at::Tensor& h0) const {
    std::vector<at::Tensor> parts{x.reshape({R_, D_})};
    if (h0.defined()) parts.push_back(h0.permute({0, 2, 1}).reshape({N() * W_, D_}));
    parts.push_back(at::zeros({1, D_}, x.options()));
    return at::cat(parts);
  }
  // Where xx[s] of sequence n lies in sources().
  int64_t source(int64_t n, int64_t s, bool has_h0) const {
    if (s >= 0) return row(seqs_[n], s);
    const int64_t zero = R_ + (has_h0 ? N() * W_ : 0);
    return has_h0 ? R_ + n * W_ + s + W_ : zero;
  }
  // tap k of every visited row: xx[t - (W-1) + k], as [M, W].
  at::Tensor taps(bool has_h0) const {
    std::vector<int64_t> v;
    for (int64_t n = 0; n < N(); ++n)
      for (int64_t t = 0; t < seqs_[n].length; ++t)
        for (int64_t k = 0; k < W_; ++k) v.push_back(source(n, t - (W_ - 1) + k, has_h0));
    return index_tensor(v, M(), W_, device_);
  }
  at::Device device() const { return device_; }

 private:
  int64_t row(const Sequence& seq, int64_t t) const { return seq.batch * T_ + seq.bos + t; }

  std::vector<Sequence> seqs_;
  int64_t T_, D_, W_, R_;
  at::Device device_;
  std::vector<int64_t> rows_, first_;
};

at::Tensor float64_or_undefined(const at::Tensor& t) {
  return t.defined() ? float64_of(t) : at::Tensor();
}

bool silu_of(const Args& args) { return args.activation == "silu" || args.activation == "swish"; }

// pre[t] = b + sum_k w[k] xx[t-(W-1)+k] of every visited row, [M, D], gathered from the
// table xx through rows.taps().
at::Tensor pre_activation_over_rows(const Args& args, const Rows& rows, const at::Tensor& xx,
                                    const at::Tensor& taps) {
  const at::Tensor w = float64_of(args.weight), b = float64_or_undefined(args.bias);
  at::Tensor acc = b.defined() ? b.expand({rows.M(), rows.D()})
                               : at::zeros({rows.M(), rows.D()}, w.options());
  for (int64_t k = 0; k < rows.W(); ++k)
    acc = acc + w.select(1, k) * xx.index_select(0, taps.select(1, k));
  return acc;
}

at::Tensor sigmoid_of(const at::Tensor& p) { return 1.0 / (1.0 + (-p).exp()); }

ForwardResult reference_forward_over_rows(const Args& args) {
  const Rows rows(args, sequences(args));
  const int64_t N = rows.N(), D = rows.D(), W = rows.W();
  const at::Tensor x = float64_of(args.x), h0 = float64_or_undefined(args.initial_state);
  const at::Tensor xx = rows.sources(x, h0);
  const at::Tensor pre = pre_activation_over_rows(args, rows, xx, rows.taps(h0.defined()));
  const at::Tensor act = silu_of(args) ? pre * sigmoid_of(pre) : pre;
  at::Tensor y = at::zeros({x.size(0) * x.size(1), D}, x.options());
  y.index_copy_(0, rows.visited_rows(), act);
  // Column j of final_state is xx[L-W+j].
  std::vector<int64_t> last;
  for (int64_t n = 0; n < N; ++n)
    for (int64_t j = 0; j < W; ++j)
      last.push_back(rows.source(n, rows.seq(n).length - W + j, h0.defined()));
  const at::Tensor final_state =
      xx.index_select(0, index_tensor(last, N * W, 1, rows.device()).view({N * W}))
          .view({N, W, D})
          .permute({0, 2, 1})
          .contiguous();
  return {y.view(x.sizes()), final_state};
}

BackwardResult reference_backward_over_rows(const Args& args, std::vector<Sequence> seqs,
                                            const at::Tensor& dy_in, const at::Tensor& dht_in) {
  const Rows rows(args, std::move(seqs));
  const int64_t N = rows.N(), D = rows.D(), W = rows.W(), M = rows.M();
  const at::Tensor x = float64_of(args.x), w = float64_of(args.weight);
  const at::Tensor h0 = float64_or_undefined(args.initial_state);
  const at::Tensor dht = float64_or_undefined(dht_in);
  const at::Tensor xx = rows.sources(x, h0);
  const at::Tensor taps = rows.taps(h0.defined());  // for pre (silu) and dw
  const at::Tensor visited = rows.visited_rows();
  const int64_t all_rows = x.size(0) * x.size(1);
  const at::Tensor dy = float64_of(dy_in).reshape({all_rows, D}).index_select(0, visited);

  // g = dy act'(pre); silu'(p) = s (1 + p (1 - s)).
  at::Tensor g = dy;
  if (silu_of(args)) {
    const at::Tensor pre = pre_activation_over_rows(args, rows, xx, taps), s = sigmoid_of(pre);
    g = dy * (s * (1.0 + pre * (1.0 - s)));
  }
  // g's rows and a zero row: g[t + i] past the sequence's end reads the zero row.
  const at::Tensor g0 = at::cat({g, at::zeros({1, D}, g.options())});
  std::vector<int64_t> ahead;  // [M, W]: where g[t + i] lies in g0
  for (int64_t n = 0; n < N; ++n) {
    const int64_t L = rows.seq(n).length;
    for (int64_t t = 0; t < L; ++t)
      for (int64_t i = 0; i < W; ++i) ahead.push_back(t + i < L ? rows.visited(n, t + i) : M);
  }
  const at::Tensor ahead_rows = index_tensor(ahead, M, W, rows.device());

  // dx[t] = sum_i w[W-1-i] g[t+i]; then final_state's gradient where xx[L-W+j] is a row.
  at::Tensor dx = at::zeros({M, D}, g.options());
  for (int64_t i = 0; i < W; ++i)
    dx = dx + w.select(1, W - 1 - i) * g0.index_select(0, ahead_rows.select(1, i));
  std::vector<int64_t> state_to_row, state_from, state_to_h0, h0_from;
  for (int64_t n = 0; n < N; ++n) {
    const int64_t L = rows.seq(n).length;
    for (int64_t j = 0; j < W; ++j)
      if (L - W + j >= 0) {
        state_to_row.push_back(rows.visited(n, L - W + j));
        state_from.push_back(n * W + j);
      } else {  // a sequence shorter than W passes h0 column L + j into final_state
        state_to_h0.push_back(n * W + L + j);
        h0_from.push_back(n * W + j);
      }
  }
  auto as_index = [&](const std::vector<int64_t>& v) {
    return index_tensor(v, static_cast<int64_t>(v.size()), 1, rows.device())
        .view({static_cast<int64_t>(v.size())});
  };
  // dht as [N W, D]: row n W + j is column j of sequence n.
  const at::Tensor dht_rows =
      dht.defined() ? dht.permute({0, 2, 1}).reshape({N * W, D}) : at::Tensor();
  if (dht.defined() && !state_to_row.empty())
    dx.index_add_(0, as_index(state_to_row), dht_rows.index_select(0, as_index(state_from)));

  at::Tensor dweight = at::zeros({D, W}, g.options());
  for (int64_t k = 0; k < W; ++k)
    dweight.select(1, k).copy_((xx.index_select(0, taps.select(1, k)) * g).sum(0));
  const at::Tensor dbias = args.bias.defined() ? g.sum(0) : at::Tensor();

  at::Tensor dh0;
  if (h0.defined()) {
    // h0 column c is xx[c - W], read by row t through tap c-1-t (t < c): column 0 never.
    // As [N, W, D] (column-major in W) while summing, t ascending as in the loops.
    at::Tensor cols = at::zeros({N, W, D}, g.options());
    for (int64_t t = 0; t + 1 < W; ++t) {
      std::vector<int64_t> row_t;  // row t of each sequence, or the zero row past its end
      for (int64_t n = 0; n < N; ++n)
        row_t.push_back(t < rows.seq(n).length ? rows.visited(n, t) : M);
      const at::Tensor gt = g0.index_select(0, as_index(row_t)).unsqueeze(1);  // [N, 1, D]
      const at::Tensor taps_w = w.narrow(1, 0, W - 1 - t).t().unsqueeze(0);  // [1, W-1-t, D]
      cols.narrow(1, t + 1, W - 1 - t).add_(gt * taps_w);
    }
    if (dht.defined() && !state_to_h0.empty()) {
      at::Tensor flat = cols.view({N * W, D});
      flat.index_add_(0, as_index(state_to_h0), dht_rows.index_select(0, as_index(h0_from)));
    }
    dh0 = cols.permute({0, 2, 1}).contiguous();
  }
  const at::Tensor dx_all = dx.new_zeros({all_rows, D}).index_copy_(0, visited, dx);
  return {dx_all.view(x.sizes()), dweight, dbias, dh0};
}

}  // namespace

ForwardResult reference_forward(const Args& args) {
  check_args(args);
  if (evaluated_as_aten_ops(args.x)) return reference_forward_over_rows(args);
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
  const std::vector<Sequence> seqs = sequences(args);
  const int64_t N = static_cast<int64_t>(seqs.size()), D = args.weight.size(0),
                W = args.weight.size(1);
  TORCH_CHECK(dy_in.defined() && dy_in.sizes() == args.x.sizes(),
              "causal_conv1d: dy must have x's shape ", args.x.sizes());
  TORCH_CHECK(!dht_in.defined() || dht_in.sizes() == at::IntArrayRef({N, D, W}),
              "causal_conv1d: dht must be [N, D, W] = [", N, ", ", D, ", ", W, "]");
  if (evaluated_as_aten_ops(args.x)) return reference_backward_over_rows(args, seqs, dy_in, dht_in);
  const Problem problem(args);

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
