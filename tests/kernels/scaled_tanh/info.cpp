// KernelInfo for scaled_tanh: what the generic properties need to know about it. It has
// no tiling hint (retiled() stays std::nullopt) and no sequences (sequences() stays
// nullptr): `cores`, `chunked` and `packed` skip it, which is what they must do for an
// element-wise kernel.
#include <cmath>
#include <functional>

#include "harness/kernel_info.h"
#include "harness/random_tensor.h"
#include "harness/tolerance.h"
#include "kernels/common/host_values.h"
#include "tests/kernels/scaled_tanh/columns.h"
#include "tests/kernels/scaled_tanh/contract.h"
#include "tests/kernels/scaled_tanh/known_defects.h"
#include "tests/kernels/scaled_tanh/schema.h"

namespace kprop::scaled_tanh {

namespace {

// glibc's tanh and tanhf are within 2 ulp, and an ulp is at most 2u of the value:
// |fl(tanh x) - tanh x| <= 4u |tanh x|, four roundings' worth.
constexpr int kTanhRoundings = 4;

Args args_of(const Problem& p) {
  return {p.inputs.get("x"), p.inputs.get("s"), p.inputs.get("b")};
}

// Per element, the size of what each result is computed from (float64, from the
// float64 inputs and cotangent): what its rounding errors are proportional to.
struct Magnitudes {
  at::Tensor y;   // |tanh(x) s| + |b|
  at::Tensor dx;  // |dy s|: 1 - tanh(x)^2 keeps no relative accuracy where tanh saturates
  at::Tensor ds;  // |dy tanh(x)|
  at::Tensor db;  // sum over rows of |dy|
};

Magnitudes magnitudes(const at::Tensor& x, const at::Tensor& s, const at::Tensor& b,
                      const at::Tensor& dy) {
  const int64_t rows = x.size(0), cols = x.size(1);
  const auto f64 = at::TensorOptions().dtype(at::kDouble);
  Magnitudes m{at::empty({rows, cols}, f64), at::empty({rows, cols}, f64),
               at::empty({rows, cols}, f64), at::zeros({cols}, f64)};
  const double *px = x.data_ptr<double>(), *ps = s.data_ptr<double>(),
               *pdy = dy.data_ptr<double>();
  const double* pb = b.defined() ? b.data_ptr<double>() : nullptr;
  double *my = m.y.data_ptr<double>(), *mdx = m.dx.data_ptr<double>(),
         *mds = m.ds.data_ptr<double>(), *mdb = m.db.data_ptr<double>();
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) {
      const int64_t i = r * cols + c;
      const double t = std::tanh(px[i]);
      my[i] = std::abs(t * ps[i]) + (pb ? std::abs(pb[c]) : 0.0);
      mdx[i] = std::abs(pdy[i] * ps[i]);
      mds[i] = std::abs(pdy[i] * t);
      mdb[c] += std::abs(pdy[i]);
    }
  return m;
}

class ScaledTanhInfo final : public KernelInfo {
 public:
  std::string name() const override { return "scaled_tanh"; }
  std::vector<DType> dtypes() const override {
    return {DType::float64, DType::float32, DType::bfloat16, DType::float16};
  }
  // All five: the three it cannot take part in must say so (skipped), not fail or crash.
  std::vector<std::string> properties() const override {
    return {"gradient", "vs_reference", "chunked", "packed", "cores"};
  }

  std::vector<Implementation> implementations() const override {
    return {
        {"reference", "kprop_reference", "float64 loops over the contract's formulas (oracle)"},
        {"toy", "kprop_toy", "8-wide blocks and a masked remainder, fp32 math"},
        {"toy@tail", "kprop_toy_tail", "planted: the remainder mask for 7 columns drops a lane"},
        {"toy@bias", "kprop_toy_bias", "planted: the block step adds the bias twice"},
    };
  }
  std::string default_implementation() const override { return "toy"; }

  const Schema& schema() const override { return scaled_tanh::schema(); }

  std::vector<KnownDefect> known_defects() const override {
    return scaled_tanh::known_defects();
  }

  // Each input from its own stream of the case's seed.
  Problem materialize(const Case& c) const override {
    const int64_t rows = c.integer("rows"), cols = c.integer("cols");
    auto draw = [&](std::vector<int64_t> sizes, uint64_t stream) {
      return random_tensor(sizes, c.distribution, c.seed, stream, c.dtype);
    };
    Problem p{c, {}};
    p.inputs.set("x", draw({rows, cols}, 0));
    p.inputs.set("s", draw({rows, cols}, 1));
    p.inputs.set("b", c.flag("bias") ? draw({cols}, 2) : at::Tensor());
    return p;
  }

  NamedTensors forward(const std::string& ns, const Problem& p) const override {
    NamedTensors out;
    out.set("y", call_forward(ns, args_of(p)));
    return out;
  }

  NamedTensors backward(const std::string& ns, const Problem& p,
                        const NamedTensors& cot) const override {
    const Gradients g = call_backward(ns, args_of(p), cot.get("dy"));
    NamedTensors out;
    out.set("dx", g.dx);
    out.set("ds", g.ds);
    if (p.c.flag("bias")) out.set("db", g.db);
    return out;
  }

  std::vector<std::string> differentiable_inputs(const Problem& p) const override {
    if (p.c.flag("bias")) return {"x", "s", "b"};
    return {"x", "s"};
  }
  std::vector<std::string> outputs_with_cotangent(const Problem&) const override {
    return {"y"};
  }

  // DESIGN.md §5 for one product and a tanh in the accumulation type (fp32, or float64
  // for float64 inputs), then one rounding to the output dtype:
  //   y  = fl(fl(t s) + b)       (kTanhRoundings + 2) u_acc (|t s| + |b|)
  //   ds = fl(dy t)              (kTanhRoundings + 1) u_acc |dy t|
  //   dx = fl(fl(dy s) q),  q = fl(1 - fl(t t)): |q - (1 - tanh^2)| <= (2 kTanhRoundings
  //        + 1) u_acc, since t^2 + (1 - t^2) = 1; with the two products
  //                              (2 kTanhRoundings + 3) u_acc |dy s|
  //   db = a sum over rows       sum_error_bound, K = rows
  // each plus u_out |value| and the output's smallest normal.
  NamedTensors error_bounds(const Problem& p, const NamedTensors& cot, const NamedTensors& ref,
                            const std::vector<int>& joined_partials) const override {
    TORCH_CHECK(!joined_partials.empty(), "error_bounds: no computation to bound");
    const at::ScalarType out = scalar_type(p.c.dtype);
    const at::ScalarType acc = out == at::kDouble ? at::kDouble : at::kFloat;
    const double u_acc = unit_roundoff(acc), u_out = unit_roundoff(out);
    const double tiny = smallest_normal(out);
    const Problem exact = in_dtype(p, DType::float64);
    const Magnitudes m = magnitudes(exact.inputs.get("x"), exact.inputs.get("s"),
                                    exact.inputs.get("b"), float64_of(cot.get("dy")));

    // One bound per computation compared. The output's rounding is u_out of the computed
    // value, which lies within gamma * magnitude of the exact one: hence (1 + u_out). A
    // partial result rounded to the output dtype on the way adds u_out * magnitude.
    auto elementwise_bound = [&](const at::Tensor& magnitude, const at::Tensor& value,
                                 int roundings) {
      const double gamma = gamma_bound(roundings, u_acc) * (1 + u_out);
      double per_magnitude = 0;
      for (int j : joined_partials) per_magnitude += gamma + j * u_out;
      const double computations = static_cast<double>(joined_partials.size());
      return elementwise_float64(
          [=](double mag, double v) {
            return per_magnitude * mag + computations * (u_out * std::abs(v) + tiny);
          },
          magnitude, value);
    };

    NamedTensors bounds;
    bounds.set("y", elementwise_bound(m.y, ref.get("y"), kTanhRoundings + 2));
    bounds.set("dx", elementwise_bound(m.dx, ref.get("dx"), 2 * kTanhRoundings + 3));
    bounds.set("ds", elementwise_bound(m.ds, ref.get("ds"), kTanhRoundings + 1));
    if (p.c.flag("bias")) {
      const int64_t rows = p.c.integer("rows");
      at::Tensor db;
      for (int j : joined_partials) {
        const auto b = sum_error_bound(m.db, ref.get("db"), rows, acc, out, j);
        db = db.defined() ? elementwise_float64(std::plus<double>(), db, b) : b;
      }
      bounds.set("db", db);
    }
    return bounds;
  }

  // Failures are named after the code path that computed the element (columns.h).
  std::string region(const Problem& p, const std::string& tensor,
                     int64_t flat) const override {
    const int64_t cols = p.c.integer("cols");
    if (tensor == "y" || tensor == "dx" || tensor == "ds") return column_region(cols, flat % cols);
    if (tensor == "db") return column_region(cols, flat);
    return "";
  }
};

const bool registered = register_kernel(std::make_unique<ScaledTanhInfo>());

}  // namespace
}  // namespace kprop::scaled_tanh
