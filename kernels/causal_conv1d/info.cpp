// causal_conv1d's spec (harness/spec/kernel_spec.h): what the generic properties need to
// know about it. Its bounds, regions and materializer are its own (the h0 taps, the
// packed layout); the rest is derived from the declaration.
#include <fmt/format.h>

#include <cmath>
#include <functional>

#include "harness/model/formula.h"
#include "harness/model/host_values.h"
#include "harness/model/random_tensor.h"
#include "harness/model/tolerance.h"
#include "harness/spec/kernel_spec.h"
#include "kernels/causal_conv1d/implementations.h"
#include "kernels/causal_conv1d/known_defects.h"
#include "kernels/causal_conv1d/problem.h"
#include "kernels/causal_conv1d/schema.h"
#include "kernels/causal_conv1d/sequences.h"
#include "kernels/causal_conv1d/tiling.h"

namespace kprop::causal_conv1d {

namespace {

// |t| in float64; undefined stays undefined.
at::Tensor abs64(const at::Tensor& t) {
  return t.defined() ? elementwise_float64([](auto v) { return abs_of(v); }, t) : t;
}

// What the tiled implementations raise on, and nothing else: a channel count their
// channel blocks do not divide (ascend_forward.cpp, ascend_grid.cpp: the forward
// without h0 takes 256 channels per block, every other call 32; a property's later
// calls may carry a state, so both widths apply), and W > 8 in the states after the BT
// clamp (history.cpp). The forward runs first, so a case with both raises the first.
// The reference takes every case.
std::optional<std::string> refusal(const Case& c, const std::string& impl) {
  if (impl.rfind("tiled", 0) != 0) return std::nullopt;
  const Shape s = conv_shape(c);
  const int64_t first_call_BD = forward_tiles(1, s.has_initial_state, 1).BD;
  const int64_t with_state_BD = forward_tiles(1, true, 1).BD;
  const int64_t backward_BD = backward_tiles(1, s.W, s.has_initial_state, 1, false).BD;
  for (int64_t BD : {first_call_BD, with_state_BD, backward_BD})
    if (s.D % BD != 0) return std::string("D must be divisible by BD");
  if ((impl == "tiled@clamped" || impl == "tiled@fixed") && s.W > 8)
    return std::string("W > 8 is not supported");
  return std::nullopt;
}

// Inputs each come from their own stream of the case's seed.
Problem materialize(const Case& c, const c10::Device& device) {
  const Shape s = conv_shape(c);
  const int64_t N = s.num_sequences();
  const bool dense = s.layout == Layout::dense;
  const int64_t B = dense ? N : 1, T = dense ? s.lengths[0] : s.total_length();
  auto draw = [&](std::vector<int64_t> sizes, uint64_t stream) {
    return random_tensor(sizes, c.distribution, c.seed, stream, c.dtype, device);
  };
  return make_problem(c, draw({B, T, s.D}, 0), draw({s.D, s.W}, 1),
                      s.has_bias ? draw({s.D}, 2) : at::Tensor(),
                      s.has_initial_state ? draw({N, s.D, s.W}, 3) : at::Tensor());
}

// docs/design.md §5: each output is a short sum; its bound is gamma_K of the accumulation
// type times the sum of |terms| — computed by running the float64 reference on
// absolute values — plus the output's rounding. With silu, the error of the
// recomputed, rounded pre-activation passes through silu'' (|silu''| <= 1/2) into g.
NamedTensors error_bounds(const Problem& p, const NamedTensors& cot, const NamedTensors& ref,
                          const std::vector<int>& joined_partials) {
  TORCH_CHECK(!joined_partials.empty(), "error_bounds: no computation to bound");
  const at::ScalarType out = scalar_type(p.c.dtype);
  const at::ScalarType acc = out == at::kDouble ? at::kDouble : at::kFloat;
  const double u_acc = unit_roundoff(acc), u_out = unit_roundoff(out);
  const Shape s = conv_shape(p.c);
  const int64_t W = s.W, T = s.total_length();

  // Element-wise work below is generic lambdas (elementwise_float64): loops on the host,
  // where a chain of ATen ops on a small case cost more than the kernel under test; ATen
  // operations where the oracle runs on a device.
  Args magnitude = args_of(p);
  magnitude.activation = "none";
  magnitude.x = abs64(magnitude.x);
  magnitude.weight = abs64(magnitude.weight);
  magnitude.bias = abs64(magnitude.bias);
  magnitude.initial_state = abs64(magnitude.initial_state);

  const bool silu = s.activation == Activation::silu;
  const auto pre_magnitude = reference_forward(magnitude).y;
  const double gamma_pre = gamma_bound(W + 1, u_acc);

  // A bound that does not depend on joined partials, once per computation.
  auto for_each_computation = [&](const at::Tensor& b) {
    at::Tensor total = b;
    for (size_t i = 1; i < joined_partials.size(); ++i)
      total = elementwise_float64(std::plus<>(), total, b);
    return total;
  };

  NamedTensors bounds;
  const auto y = ref.get("y");
  if (silu)
    bounds.set("y", for_each_computation(elementwise_float64(
                        [&](auto m, auto v) {
                          return gamma_pre * m * 1.1 + (4 * u_acc + u_out) * abs_of(v) +
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
    Args exact = args_of(Kernel::in_dtype(p, DType::float64));
    exact.activation = "none";
    const auto pre = reference_forward(exact).y;
    g_magnitude = elementwise_float64(
        [](auto dy, auto pre) {
          const auto s = 1.0 / (1.0 + exp_of(-pre));
          return abs_of(dy * s * (1 + pre * (1 - s)));  // |dy silu'(pre)|
        },
        dy, pre);
    // pre is recomputed in fp32 and stored in the input dtype before silu' is taken.
    g_error = elementwise_float64(
        [&](auto dy, auto pre, auto m, auto g) {
          return abs_of(dy) * 0.5 * (gamma_pre * m + u_out * abs_of(pre)) + 4 * u_acc * g;
        },
        dy, pre, pre_magnitude, g_magnitude);
  } else {
    g_magnitude = abs64(dy);
  }
  const auto dht = cot.get("dht");
  const auto terms = reference_backward(magnitude, g_magnitude, abs64(dht));
  // Without silu, g = dy exactly and nothing is carried.
  const auto propagated =
      silu ? reference_backward(magnitude, g_error, at::Tensor())
           : BackwardResult{};
  auto grad_bound = [&](const char* name, const at::Tensor& m, const at::Tensor& carried,
                        int64_t k, int rounded_partials) {
    at::Tensor total;
    for (int j : joined_partials) {
      auto b = sum_error_bound(m, ref.get(name), k, acc, out, rounded_partials + j);
      if (carried.defined()) b = elementwise_float64(std::plus<>(), b, carried);
      total = total.defined() ? elementwise_float64(std::plus<>(), total, b) : b;
    }
    bounds.set(name, total);
  };
  grad_bound("dx", terms.dx, propagated.dx, W + 1, 0);
  // dw and db: a sum over all rows, then over the per-chunk partials.
  grad_bound("dw", terms.dweight, propagated.dweight, 2 * T + W, 0);
  if (s.has_bias) grad_bound("db", terms.dbias, propagated.dbias, 2 * T, 0);
  // dh0: at most W terms plus dht, partials per head chunk stored in h0's dtype.
  if (s.has_initial_state)
    grad_bound("dh0", terms.dinitial_state, propagated.dinitial_state, 2 * W + 1, 1);
  return bounds;
}

std::string region(const Problem& p, const std::string& tensor, int64_t flat) {
  const Shape shape = conv_shape(p.c);
  const int64_t W = shape.W, D = shape.D;
  if (tensor == "y" || tensor == "dx") {
    // flat indexes [B, T, D]: find the sequence holding the row.
    const int64_t row = flat / D;
    const int64_t T = p.inputs.get("x").size(1);
    for (const Span& s : spans(shape)) {
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
    if (n < shape.num_sequences() && shape.lengths[n] < W) return "sequence shorter than W";
  }
  return "";
}

// The contract's arguments of an operator call (the spec's names: x, w, b, h0, cu_seqlens).
Args args_of(const OpArgs& a) {
  Args args;
  args.x = a["x"];
  args.weight = a["w"];
  args.bias = a["b"];
  args.initial_state = a["h0"];
  args.cu_seqlens = a["cu_seqlens"];
  args.activation = a.text("activation");
  args.num_cores = a.integer("num_cores");
  return args;
}

using ForwardFn = ForwardResult (*)(const Args&);
using BackwardFn = BackwardResult (*)(const Args&, const at::Tensor&, const at::Tensor&);

template <ForwardFn F>
NamedTensors forward(const OpArgs& a) {
  const ForwardResult r = F(args_of(a));
  return {{"y", r.y}, {"ht", r.final_state}};
}

template <BackwardFn F>
NamedTensors backward(const OpArgs& a) {
  const BackwardResult r = F(args_of(a), a["dy"], a["dht"]);
  return {{"dx", r.dx}, {"dw", r.dweight}, {"db", r.dbias}, {"dh0", r.dinitial_state}};
}

template <Revision R>
BackwardResult historical(const Args& a, const at::Tensor& dy, const at::Tensor& dht) {
  return historical_backward(R, a, dy, dht);
}

KernelSpec spec() {
  KernelSpec k;
  k.name = "causal_conv1d";
  k.forward_schema = kForwardSchema;
  k.backward_schema = kBackwardSchema;
  k.schema = &causal_conv1d::schema();
  k.properties = {"gradient", "chunked", "packed", "vs_reference", "cores", "layout",
                  "determinism", "guard", "neutral", "composition"};
  // Models that run time-major ([T, B, D]) hand x and dy as transposed views.
  k.inputs = {TensorSpec("x").stored_as("time-major", {1, 0, 2}), TensorSpec("w").as("weight"),
              TensorSpec("b").as("bias").when_flag("bias").neutral(0.0),
              TensorSpec("h0").as("initial_state").when_flag("initial_state").neutral(0.0),
              TensorSpec("cu_seqlens").no_gradient()};
  k.outputs = {TensorSpec("y").stored_as("time-major", {1, 0, 2}),
               TensorSpec("ht").as("final_state").cotangent_when([](const Case& c) {
                 return c.flag("final_state_grad");
               })};
  // dw and db sum over time: a kernel may sum them in another order for another layout of
  // dy (Triton compiles anew for unit strides; fla's differ by up to 16 ulps), within bound.
  k.reordered_by_layout = {"dw", "db"};
  k.reference = forward<reference_forward>;
  k.reference_backward = backward<reference_backward>;
  k.reference_about = "float64 loops over the contract's formulas (oracle; ATen on a device)";
  k.oracle_runs_on_any_device = true;  // the same formulas over all rows as ATen ops there
  k.implementations = {
      {"tiled", "Ascend grid and tiles, kprop's correct backward", forward<tiled_forward>,
       backward<tiled_backward>},
      {"tiled@original", "Ascend backward as vendored", forward<tiled_forward>,
       backward<historical<Revision::original>>},
      {"tiled@clamped", "+ BT >= next_pow2(W), W <= 8", forward<tiled_forward>,
       backward<historical<Revision::clamped>>},
      {"tiled@fixed", "+ o_t < T_len in head-row and dh0 loads", forward<tiled_forward>,
       backward<historical<Revision::fixed>>},
  };
  k.default_implementation = "tiled";
  k.known_defects = causal_conv1d::known_defects();
  k.materialize = materialize;
  k.error_bounds = error_bounds;
  k.region = region;
  k.refusal = refusal;
  // Another core count changes only the tiling: one core (the widest tiles), or 48 when
  // the case already has one.
  k.retiled = [](const Case& c) -> std::optional<Case> {
    Case other = c;
    other.set("num_cores", int64_t{c.integer("num_cores") == 1 ? 48 : 1});
    return other;
  };
  k.sequences = &sequence_family();
  return k;
}

const bool registered = register_builtin_spec(spec());

}  // namespace
}  // namespace kprop::causal_conv1d
