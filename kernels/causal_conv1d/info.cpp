// KernelInfo for causal_conv1d: what the generic properties need to know about it.
#include <fmt/format.h>

#include <cmath>
#include <functional>

#include "generators/causal_conv1d.h"
#include "harness/kernel_info.h"
#include "harness/random_tensor.h"
#include "harness/tolerance.h"
#include "kernels/causal_conv1d/contract.h"
#include "kernels/causal_conv1d/implementations.h"
#include "kernels/causal_conv1d/tiling.h"
#include "kernels/common/host_values.h"

namespace kprop {

namespace {

using causal_conv1d::Args;

// Where one sequence of a case lies in x: x[batch, bos : bos + length].
struct Span {
  int64_t batch, bos, length;
};

std::vector<Span> spans(const Case& c) {
  std::vector<Span> out;
  int64_t bos = 0;
  for (size_t n = 0; n < c.lengths.size(); ++n) {
    if (c.layout == Layout::dense) {
      out.push_back({static_cast<int64_t>(n), 0, c.lengths[n]});
    } else {
      out.push_back({0, bos, c.lengths[n]});
      bos += c.lengths[n];
    }
  }
  return out;
}

// Rows [from, to) of sequence `s` of an x-shaped tensor: [to - from, D].
at::Tensor rows(const at::Tensor& t, const Span& s, int64_t from, int64_t to) {
  return t[s.batch].narrow(0, s.bos + from, to - from);
}

// An x-shaped tensor in the layout of case `c` from per-sequence blocks [L_n, D].
at::Tensor assemble(const Case& c, const std::vector<at::Tensor>& blocks) {
  return c.layout == Layout::dense ? at::stack(blocks, 0) : at::cat(blocks, 0).unsqueeze(0);
}

at::Tensor cu_seqlens_of(const Case& c) {
  auto cu = at::zeros({c.num_sequences() + 1}, at::kLong);
  auto* p = cu.data_ptr<int64_t>();
  for (int64_t n = 0; n < c.num_sequences(); ++n) p[n + 1] = p[n] + c.lengths[n];
  return cu;
}

// A problem of case `c` with the given tensors (cu_seqlens derived from the case).
Problem make_problem(const Case& c, const at::Tensor& x, const at::Tensor& w,
                     const at::Tensor& b, const at::Tensor& h0) {
  Problem p{c, {}};
  p.inputs.set("x", x);
  p.inputs.set("w", w);
  p.inputs.set("b", b);
  p.inputs.set("h0", h0);
  p.inputs.set("cu_seqlens", c.layout == Layout::packed ? cu_seqlens_of(c) : at::Tensor());
  return p;
}

Args args_of(const Problem& p) {
  Args a;
  a.x = p.inputs.get("x");
  a.weight = p.inputs.get("w");
  a.bias = p.inputs.get("b");
  a.initial_state = p.inputs.get("h0");
  a.cu_seqlens = p.inputs.get("cu_seqlens");
  a.activation = to_string(p.c.activation);
  a.num_cores = p.c.num_cores;
  return a;
}

// |t| in float64; undefined stays undefined.
at::Tensor abs64(const at::Tensor& t) {
  return t.defined() ? elementwise_float64([](double v) { return std::abs(v); }, t) : t;
}

// Applies f to every defined tensor of a NamedTensors.
template <typename F>
NamedTensors map(const NamedTensors& in, F f) {
  NamedTensors out;
  for (const auto& [name, t] : in) out.set(name, t.defined() ? f(t) : t);
  return out;
}

class CausalConv1dInfo final : public KernelInfo {
 public:
  std::string name() const override { return "causal_conv1d"; }
  std::vector<DType> dtypes() const override {
    return {DType::float64, DType::float32, DType::bfloat16, DType::float16};
  }
  std::vector<std::string> properties() const override {
    return {"gradient", "chunked", "packed", "vs_reference", "cores"};
  }

  rc::Shrinkable<Case> draw(const CaseSpace& space, uint64_t seed, int size) const override {
    return draw_causal_conv1d_case(space, seed, size);
  }

  // Inputs each come from their own stream of the case's seed.
  Problem materialize(const Case& c) const override {
    const int64_t N = c.num_sequences();
    const bool dense = c.layout == Layout::dense;
    const int64_t B = dense ? N : 1, T = dense ? c.lengths[0] : c.total_length();
    auto draw = [&](std::vector<int64_t> sizes, uint64_t stream) {
      return random_tensor(sizes, c.distribution, c.seed, stream, c.dtype);
    };
    return make_problem(c, draw({B, T, c.D}, 0), draw({c.D, c.W}, 1),
                        c.has_bias ? draw({c.D}, 2) : at::Tensor(),
                        c.has_initial_state ? draw({N, c.D, c.W}, 3) : at::Tensor());
  }

  NamedTensors forward(const std::string& ns, const Problem& p) const override {
    auto r = causal_conv1d::call_forward(ns, args_of(p));
    NamedTensors out;
    out.set("y", r.y);
    out.set("ht", r.final_state);
    return out;
  }

  NamedTensors backward(const std::string& ns, const Problem& p,
                        const NamedTensors& cot) const override {
    at::Tensor dy = cot.get("dy");
    if (!dy.defined()) dy = at::zeros_like(p.inputs.get("x"));
    auto r = causal_conv1d::call_backward(ns, args_of(p), dy, cot.get("dht"));
    NamedTensors g;
    g.set("dx", r.dx);
    g.set("dw", r.dweight);
    if (p.c.has_bias) g.set("db", r.dbias);
    if (p.c.has_initial_state) g.set("dh0", r.dinitial_state);
    return g;
  }

  std::vector<std::string> differentiable_inputs(const Problem& p) const override {
    std::vector<std::string> names{"x", "w"};
    if (p.c.has_bias) names.push_back("b");
    if (p.c.has_initial_state) names.push_back("h0");
    return names;
  }

  std::vector<std::string> outputs_with_cotangent(const Problem& p) const override {
    if (p.c.has_final_state_grad) return {"y", "ht"};
    return {"y"};
  }

  // DESIGN.md §5: each output is a short sum; its bound is gamma_K of the accumulation
  // type times the sum of |terms| — computed by running the float64 reference on
  // absolute values — plus the output's rounding. With silu, the error of the
  // recomputed, rounded pre-activation passes through silu'' (|silu''| <= 1/2) into g.
  NamedTensors error_bounds(const Problem& p, const NamedTensors& cot, const NamedTensors& ref,
                            const std::vector<int>& joined_partials) const override {
    TORCH_CHECK(!joined_partials.empty(), "error_bounds: no computation to bound");
    const at::ScalarType out = scalar_type(p.c.dtype);
    const at::ScalarType acc = out == at::kDouble ? at::kDouble : at::kFloat;
    const double u_acc = unit_roundoff(acc), u_out = unit_roundoff(out);
    const int64_t W = p.c.W, T = p.c.total_length();

    // Element-wise work below is written as loops (elementwise_float64): on small cases
    // a chain of ATen ops here cost more than the kernel under test.
    Args magnitude = args_of(p);
    magnitude.activation = "none";
    magnitude.x = abs64(magnitude.x);
    magnitude.weight = abs64(magnitude.weight);
    magnitude.bias = abs64(magnitude.bias);
    magnitude.initial_state = abs64(magnitude.initial_state);

    const bool silu = p.c.activation == Activation::silu;
    const auto pre_magnitude = causal_conv1d::reference_forward(magnitude).y;
    const double gamma_pre = gamma_bound(W + 1, u_acc);

    // A bound that does not depend on joined partials, once per computation.
    auto for_each_computation = [&](const at::Tensor& b) {
      at::Tensor total = b;
      for (size_t i = 1; i < joined_partials.size(); ++i)
        total = elementwise_float64(std::plus<double>(), total, b);
      return total;
    };

    NamedTensors bounds;
    const auto y = ref.get("y");
    if (silu)
      bounds.set("y", for_each_computation(elementwise_float64(
                          [&](double m, double v) {
                            return gamma_pre * m * 1.1 + (4 * u_acc + u_out) * std::abs(v) +
                                   smallest_normal(out);
                          },
                          pre_magnitude, y)));
    else
      bounds.set("y", for_each_computation(sum_error_bound(pre_magnitude, y, W + 1, acc, out)));
    // ht is an exact copy.
    bounds.set("ht", for_each_computation(at::full_like(ref.get("ht"), smallest_normal(out))));

    const at::Tensor dy = cot.get("dy");
    at::Tensor g_magnitude, g_error;
    if (silu) {
      Args exact = args_of(in_dtype(p, DType::float64));
      exact.activation = "none";
      const auto pre = causal_conv1d::reference_forward(exact).y;
      g_magnitude = elementwise_float64(
          [](double dy, double pre) {
            const double s = 1.0 / (1.0 + std::exp(-pre));
            return std::abs(dy * s * (1 + pre * (1 - s)));  // |dy silu'(pre)|
          },
          dy, pre);
      // pre is recomputed in fp32 and stored in the input dtype before silu' is taken.
      g_error = elementwise_float64(
          [&](double dy, double pre, double m, double g) {
            return std::abs(dy) * 0.5 * (gamma_pre * m + u_out * std::abs(pre)) + 4 * u_acc * g;
          },
          dy, pre, pre_magnitude, g_magnitude);
    } else {
      g_magnitude = abs64(dy);
    }
    const auto dht = cot.get("dht");
    const auto terms = causal_conv1d::reference_backward(magnitude, g_magnitude, abs64(dht));
    // Without silu, g = dy exactly and nothing is carried.
    const auto propagated =
        silu ? causal_conv1d::reference_backward(magnitude, g_error, at::Tensor())
             : causal_conv1d::BackwardResult{};
    auto grad_bound = [&](const char* name, const at::Tensor& m, const at::Tensor& carried,
                          int64_t k, int rounded_partials) {
      at::Tensor total;
      for (int j : joined_partials) {
        auto b = sum_error_bound(m, ref.get(name), k, acc, out, rounded_partials + j);
        if (carried.defined()) b = elementwise_float64(std::plus<double>(), b, carried);
        total = total.defined() ? elementwise_float64(std::plus<double>(), total, b) : b;
      }
      bounds.set(name, total);
    };
    grad_bound("dx", terms.dx, propagated.dx, W + 1, 0);
    // dw and db: a sum over all rows, then over the per-chunk partials.
    grad_bound("dw", terms.dweight, propagated.dweight, 2 * T + W, 0);
    if (p.c.has_bias) grad_bound("db", terms.dbias, propagated.dbias, 2 * T, 0);
    // dh0: at most W terms plus dht, partials per head chunk stored in h0's dtype.
    if (p.c.has_initial_state)
      grad_bound("dh0", terms.dinitial_state, propagated.dinitial_state, 2 * W + 1, 1);
    return bounds;
  }

  std::string region(const Problem& p, const std::string& tensor,
                     int64_t flat) const override {
    const int64_t W = p.c.W, D = p.c.D;
    if (tensor == "y" || tensor == "dx") {
      // flat indexes [B, T, D]: find the sequence holding the row.
      const int64_t row = flat / D;
      const int64_t T = p.inputs.get("x").size(1);
      for (const Span& s : spans(p.c)) {
        const int64_t t = row - s.batch * T - s.bos;
        if (t < 0 || t >= s.length) continue;
        if (t < W - 1) return "head rows";
        if (t >= s.length - W) return "tail rows";
        return "body rows";
      }
      return "";
    }
    if (tensor == "dw") return flat % W == W - 1 ? "last tap" : "taps that read h0";
    if (tensor == "dh0" || tensor == "ht") {
      const int64_t n = flat / (D * W);
      if (n < p.c.num_sequences() && p.c.lengths[n] < W) return "sequence shorter than W";
    }
    return "";
  }

  // ---- whole vs chunked ----------------------------------------------------------
  // Sequence n is split at s_n: rows [0, s_n) go to `first`, rows [s_n, L_n) to `second`,
  // whose initial state is first's final state. A sequence with s_n = L_n ends in `first`.
  // Dense layouts split every sequence at the smallest split point.

  static std::vector<int64_t> split_points(const Case& c) {
    auto s = c.effective_splits();
    if (c.layout == Layout::dense) s.assign(s.size(), *std::min_element(s.begin(), s.end()));
    return s;
  }
  static std::vector<int64_t> continued(const Case& c) {
    std::vector<int64_t> idx;
    const auto s = split_points(c);
    for (int64_t n = 0; n < c.num_sequences(); ++n)
      if (s[n] < c.lengths[n]) idx.push_back(n);
    return idx;
  }
  static at::Tensor index_tensor(const std::vector<int64_t>& idx) {
    return at::tensor(idx, at::kLong);
  }

  std::optional<ChunkedProblem> split(const Problem& whole) const override {
    const Case& c = whole.c;
    const auto s = split_points(c);
    const auto cont = continued(c);
    if (cont.empty()) return std::nullopt;
    Case first = c, second = c;
    first.lengths = s;
    first.splits.clear();
    first.has_final_state_grad = true;  // receives the gradient of the handed-on state
    second.lengths.clear();
    second.splits.clear();
    second.has_initial_state = true;
    if (c.layout == Layout::dense && cont.size() != c.lengths.size()) return std::nullopt;
    const auto x = whole.inputs.get("x");
    const auto sp = spans(c);
    std::vector<at::Tensor> x1, x2;
    for (int64_t n = 0; n < c.num_sequences(); ++n) x1.push_back(rows(x, sp[n], 0, s[n]));
    for (int64_t n : cont) {
      second.lengths.push_back(c.lengths[n] - s[n]);
      x2.push_back(rows(x, sp[n], s[n], c.lengths[n]));
    }
    const auto w = whole.inputs.get("w"), b = whole.inputs.get("b");
    ChunkedProblem chunked{whole,
                           make_problem(first, assemble(first, x1), w, b, whole.inputs.get("h0")),
                           make_problem(second, assemble(second, x2), w, b, at::Tensor())};
    return chunked;
  }

  void hand_on(ChunkedProblem& ch, const NamedTensors& first_outputs) const override {
    ch.second.inputs.set("h0",
                         first_outputs.get("ht").index_select(0, index_tensor(continued(ch.whole.c))));
  }

  NamedTensors later_part_only(const ChunkedProblem& ch,
                               const NamedTensors& cot) const override {
    const Case& c = ch.whole.c;
    const auto s = split_points(c);
    const auto sp = spans(c);
    auto dy = cot.get("dy").clone();
    for (int64_t n = 0; n < c.num_sequences(); ++n) rows(dy, sp[n], 0, s[n]).zero_();
    NamedTensors out;
    out.set("dy", dy);
    if (cot.has("dht")) {
      auto dht = cot.get("dht").clone();
      for (int64_t n = 0; n < c.num_sequences(); ++n)
        if (s[n] == c.lengths[n]) dht[n].zero_();
      out.set("dht", dht);
    }
    return out;
  }

  NamedTensors second_cotangents(const ChunkedProblem& ch,
                                 const NamedTensors& cot) const override {
    const Case& c = ch.whole.c;
    const auto s = split_points(c);
    const auto sp = spans(c);
    const auto cont = continued(c);
    std::vector<at::Tensor> blocks;
    for (int64_t n : cont) blocks.push_back(rows(cot.get("dy"), sp[n], s[n], c.lengths[n]));
    NamedTensors out;
    out.set("dy", assemble(ch.second.c, blocks));
    if (cot.has("dht")) out.set("dht", cot.get("dht").index_select(0, index_tensor(cont)));
    return out;
  }

  NamedTensors first_cotangents(const ChunkedProblem& ch, const NamedTensors& cot,
                                const NamedTensors& second_grads) const override {
    const Case& c = ch.whole.c;
    const auto s = split_points(c);
    const auto sp = spans(c);
    std::vector<at::Tensor> blocks;
    for (int64_t n = 0; n < c.num_sequences(); ++n)
      blocks.push_back(rows(cot.get("dy"), sp[n], 0, s[n]));
    const auto ht = ch.first.inputs.get("x");
    auto dht = cot.has("dht") ? cot.get("dht").clone()
                              : at::zeros({c.num_sequences(), c.D, c.W}, ht.options());
    dht.index_copy_(0, index_tensor(continued(c)), second_grads.get("dh0").to(dht.dtype()));
    NamedTensors out;
    out.set("dy", assemble(ch.first.c, blocks));
    out.set("dht", dht);
    return out;
  }

  // Rows of the whole layout from the two parts' x-shaped tensors.
  at::Tensor join_rows(const ChunkedProblem& ch, const at::Tensor& first,
                       const at::Tensor& second) const {
    const Case& c = ch.whole.c;
    const auto s = split_points(c);
    const auto sp = spans(c), sp1 = spans(ch.first.c), sp2 = spans(ch.second.c);
    std::vector<at::Tensor> blocks;
    size_t k = 0;
    for (int64_t n = 0; n < c.num_sequences(); ++n) {
      auto head = rows(first, sp1[n], 0, s[n]);
      if (s[n] == c.lengths[n]) {
        blocks.push_back(head);
      } else {
        blocks.push_back(at::cat({head, rows(second, sp2[k], 0, sp2[k].length)}, 0));
        ++k;
      }
    }
    return assemble(c, blocks);
  }

  NamedTensors join_outputs(const ChunkedProblem& ch, const NamedTensors& first,
                            const NamedTensors& second) const override {
    NamedTensors out;
    out.set("y", join_rows(ch, first.get("y"), second.get("y")));
    auto ht = first.get("ht").clone();
    ht.index_copy_(0, index_tensor(continued(ch.whole.c)), second.get("ht"));
    out.set("ht", ht);
    return out;
  }

  NamedTensors join_grads(const ChunkedProblem& ch, const NamedTensors& first,
                          const NamedTensors& second) const override {
    NamedTensors g;
    g.set("dx", join_rows(ch, first.get("dx"), second.get("dx")));
    g.set("dw", first.get("dw").to(at::kDouble) + second.get("dw").to(at::kDouble));
    if (ch.whole.c.has_bias)
      g.set("db", first.get("db").to(at::kDouble) + second.get("db").to(at::kDouble));
    if (ch.whole.c.has_initial_state) g.set("dh0", first.get("dh0"));
    return g;
  }

  // ---- packed vs separate ---------------------------------------------------------

  std::optional<std::vector<Problem>> separate(const Problem& packed) const override {
    const Case& c = packed.c;
    if (c.num_sequences() < 2) return std::nullopt;
    const auto sp = spans(c);
    const auto x = packed.inputs.get("x"), h0 = packed.inputs.get("h0");
    std::vector<Problem> parts;
    for (int64_t n = 0; n < c.num_sequences(); ++n) {
      Case one = c;
      one.layout = Layout::packed;
      one.lengths = {c.lengths[n]};
      one.splits.clear();
      parts.push_back(make_problem(one, rows(x, sp[n], 0, sp[n].length).unsqueeze(0),
                                   packed.inputs.get("w"), packed.inputs.get("b"),
                                   h0.defined() ? h0.narrow(0, n, 1) : h0));
    }
    return parts;
  }

  NamedTensors separate_cotangents(const Problem& packed, size_t part,
                                   const NamedTensors& cot) const override {
    const auto sp = spans(packed.c)[part];
    NamedTensors out;
    out.set("dy", rows(cot.get("dy"), sp, 0, sp.length).unsqueeze(0));
    if (cot.has("dht")) out.set("dht", cot.get("dht").narrow(0, part, 1));
    return out;
  }

  at::Tensor join_separate_rows(const Problem& packed, const std::vector<NamedTensors>& parts,
                                const char* name) const {
    std::vector<at::Tensor> blocks;
    for (const auto& part : parts) blocks.push_back(part.get(name)[0]);
    return assemble(packed.c, blocks);
  }

  at::Tensor sum_parts(const std::vector<NamedTensors>& parts, const char* name) const {
    at::Tensor sum = parts[0].get(name).to(at::kDouble);
    for (size_t i = 1; i < parts.size(); ++i) sum = sum + parts[i].get(name).to(at::kDouble);
    return sum;
  }

  at::Tensor cat_parts(const std::vector<NamedTensors>& parts, const char* name) const {
    std::vector<at::Tensor> all;
    for (const auto& part : parts) all.push_back(part.get(name));
    return at::cat(all, 0);
  }

  NamedTensors join_separate_outputs(const Problem& packed,
                                     const std::vector<NamedTensors>& parts) const override {
    NamedTensors out;
    out.set("y", join_separate_rows(packed, parts, "y"));
    out.set("ht", cat_parts(parts, "ht"));
    return out;
  }

  NamedTensors join_separate_grads(const Problem& packed,
                                   const std::vector<NamedTensors>& parts) const override {
    NamedTensors g;
    g.set("dx", join_separate_rows(packed, parts, "dx"));
    g.set("dw", sum_parts(parts, "dw"));
    if (packed.c.has_bias) g.set("db", sum_parts(parts, "db"));
    if (packed.c.has_initial_state) g.set("dh0", cat_parts(parts, "dh0"));
    return g;
  }
};

}  // namespace

const KernelInfo& causal_conv1d_info() {
  static const CausalConv1dInfo info;
  return info;
}

}  // namespace kprop
