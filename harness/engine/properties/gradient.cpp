// gradient: the implementation's backward against central finite differences of its own
// forward, in float64 (as torch.autograd.gradcheck and JAX's check_vjp).
//
// With a random cotangent v and f(inputs) = <v, forward(inputs)>, the backward must give
// grad f. For every differentiable input separately, a few random directions u compare
// <grad f, u> with (f(in + eps u) - f(in - eps u)) / 2 eps, so a failure names the
// gradient tensor at fault. On tiny cases the whole Jacobian is compared element by
// element (one backward per output element, two forwards per input element); on larger
// ones, a failing gradient is then located element by element when that is affordable.
// An implementation that takes no float64 is checked in its own dtype instead (below).
#include <fmt/format.h>

#include <cmath>

#include "harness/engine/properties/calls.h"
#include "harness/execution/takes.h"
#include "harness/model/host_values.h"
#include "harness/model/random_tensor.h"

namespace kprop {

namespace {

// sum_i f(a_i, b_i) with Neumaier's compensated summation: f's rounding noise must stay
// far below the differences that finite differences resolve. A loop, because the
// gradient check evaluates it hundreds of times per case on small tensors.
template <typename F>
double compensated_sum(const at::Tensor& a, const at::Tensor& b, F f) {
  const auto x = float64_of(a), y = float64_of(b);
  TORCH_CHECK(x.numel() == y.numel(), "gradient: cotangent and output differ in size");
  const double *px = x.data_ptr<double>(), *py = y.data_ptr<double>();
  double sum = 0, compensation = 0;
  for (int64_t i = 0; i < x.numel(); ++i) {
    const double term = f(px[i], py[i]), t = sum + term;
    compensation += std::abs(sum) >= std::abs(term) ? (sum - t) + term : (term - t) + sum;
    sum = t;
  }
  return sum + compensation;
}

double inner_product(const at::Tensor& a, const at::Tensor& b) {
  return compensated_sum(a, b, [](double x, double y) { return x * y; });
}

// Float64 values of t, flattened.
std::vector<double> flat_values(const at::Tensor& t) {
  std::vector<double> v(static_cast<size_t>(t.numel()));
  read_values(t, v.data());
  return v;
}

constexpr double kStep = 1e-6;

// Central differences at steps h and 2h: D(h) = D + c h^2 + O(h^4), so |D(h) - D(2h)| / 3
// estimates the truncation error of D(h), the forward's curvature that the fixed
// tolerance does not know (rms_norm of one column, y = x / sqrt(x^2 + eps), bends on the
// scale sqrt(eps) ~ 1e-3: a correct backward failed by 1.75x). The bound takes
// |D(h) - D(2h)|, three times the estimate: the h^4 term the estimate neglects is not
// negligible where the curvature changes within a few steps. It comes
// from the forward alone, so it cannot hide a wrong backward where the forward is smooth.
// Computed only for a comparison that fails without it: a passing case costs nothing more.
// `moved(step)` evaluates the objective with its input moved by `step`.
template <typename Moved>
double with_truncation(double analytic, double narrow, double bound, Moved moved) {
  if (std::abs(analytic - narrow) <= bound) return bound;
  const double wide = (moved(2 * kStep) - moved(-2 * kStep)) / (4 * kStep);
  return bound + std::abs(narrow - wide);
}
constexpr int kDirections = 3;
constexpr int64_t kFullJacobianLimit = 20000;  // |inputs| x |outputs| of a tiny case
constexpr int64_t kElementwiseLimit = 4096;    // input elements worth locating one by one

class Gradient final : public Property {
 public:
  std::string name() const override { return "gradient"; }
  std::string about() const override {
    return "backward vs central finite differences of the forward, float64";
  }
  std::vector<DType> dtypes() const override { return {DType::float64}; }
  bool adapts_dtype() const override { return true; }

  Verdict check(const Kernel& kernel, const Implementation& impl,
                const Case& c) const override {
    const DType dtype = taken_dtype(c, DType::float64);
    if (dtype != DType::float64) return in_its_dtype(kernel, impl, c, dtype);
    Verdict v = open_verdict(kernel, c);
    Calls calls(kernel, impl, v);
    const Problem p = kernel.in_dtype(kernel.materialize(c), DType::float64);
    const auto outputs = calls.forward(p);
    const auto cot = random_cotangents(kernel, p, outputs);
    const auto grads = calls.backward(p, cot);
    const Objective f{kernel, calls, cot};
    const double scale = f.magnitude(outputs);
    // f's rounding noise, from each output's derived float64 bound: it knows what an output
    // computed by cancellation is rounded from (a loss lse - x_y near 0 from lse's size),
    // where |output| alone does not.
    const double noise = f.noise(kernel.error_bounds(p, cot, calls.reference(p, cot), {0}));

    int64_t in_elements = 0, out_elements = 0;
    for (const auto& name : kernel.differentiable_inputs(p))
      in_elements += p.inputs.get(name).numel();
    for (const auto& name : kernel.outputs_with_cotangent(p))
      out_elements += outputs.get(name).numel();

    const auto inputs = kernel.differentiable_inputs(p);
    uint64_t stream = 200;
    for (const auto& name : inputs)
      v.tensors.push_back(directional(p, f, grads, name, scale, noise, stream += 8));
    if (in_elements * out_elements <= kFullJacobianLimit) {
      full_jacobian(kernel, calls, p, outputs, grads, v);
    } else {
      for (size_t i = 0; i < inputs.size(); ++i)
        if (!v.tensors[i].passed() && p.inputs.get(inputs[i]).numel() <= kElementwiseLimit)
          v.tensors.push_back(elementwise(kernel, p, f, grads, inputs[i], scale, noise));
    }
    conclude(v);
    return v;
  }

 private:
  // An implementation that takes no float64 (a Triton kernel) cannot be differentiated
  // numerically at float64's precision: its backward in a dtype it takes is held to the
  // float64 reference's gradient instead, within the derived bound, and the verdict says so.
  Verdict in_its_dtype(const Kernel& kernel, const Implementation& impl, const Case& c,
                       DType dtype) const {
    Verdict v = open_verdict(kernel, c);
    Calls calls(kernel, impl, v);
    const Problem p = kernel.in_dtype(kernel.materialize(c), dtype);
    const auto outputs = calls.forward(p);
    const auto cot = random_cotangents(kernel, p, outputs);
    const auto grads = calls.backward(p, cot);
    const auto reference = calls.reference(p, cot);
    const auto bounds = kernel.error_bounds(p, cot, reference, /*joined_partials=*/{0});
    NamedTensors reference_grads, grad_bounds;  // the gradients alone: outputs are vs_reference's
    for (const auto& name : kernel.differentiable_inputs(p)) {
      reference_grads.set(grad_name(name), reference.get(grad_name(name)));
      grad_bounds.set(grad_name(name), bounds.get(grad_name(name)));
    }
    append(v.tensors, compare(kernel, p, grads, reference_grads, grad_bounds));
    conclude(v);
    const std::string how = fmt::format(
        "{} takes no float64: its backward in {} against the float64 reference's gradient, "
        "within the derived bound",
        impl.name, to_string(dtype));
    v.message = v.message.empty() ? how : how + "; " + v.message;
    return v;
  }

  // f(inputs) = <v, forward(inputs)>, summed over the outputs that take a cotangent.
  struct Objective {
    const Kernel& kernel;
    const Calls& calls;
    const NamedTensors& cot;
    double operator()(const Problem& q) const {
      const auto out = calls.forward(q);
      double sum = 0;
      for (const auto& name : kernel.outputs_with_cotangent(q))
        sum += inner_product(cot.get(grad_name(name)), out.get(name));
      return sum;
    }
    // sum |v| |out|: the size of the rounding noise in f.
    double magnitude(const NamedTensors& out) const {
      double sum = 0;
      for (const auto& [name, t] : out)
        if (cot.has(grad_name(name)))
          sum += compensated_sum(cot.get(grad_name(name)), t,
                                 [](double v, double o) { return std::abs(v) * std::abs(o); });
      return sum;
    }
    // sum |v| bound: how far f may lie from the exact <v, forward> by rounding.
    double noise(const NamedTensors& bounds) const {
      double sum = 0;
      for (const auto& [name, b] : bounds)
        if (cot.has(grad_name(name)) && b.defined())
          sum += compensated_sum(cot.get(grad_name(name)), b,
                                 [](double v, double e) { return std::abs(v) * e; });
      return sum;
    }
  };

  // p with input moved by step * direction.
  static Problem perturbed(const Problem& p, const std::string& input,
                           const at::Tensor& direction, double step) {
    Problem q = p;
    q.inputs.set(input, elementwise_float64([step](double x, double u) { return x + step * u; },
                                            p.inputs.get(input), direction));
    return q;
  }

  // p with input[i] moved by `step` (the problem is float64 and contiguous).
  static Problem nudged(const Problem& p, const std::string& input, int64_t i, double step) {
    Problem q = p;
    auto x = p.inputs.get(input).clone();
    x.data_ptr<double>()[i] += step;
    q.inputs.set(input, x);
    return q;
  }

  // Truncation error is O(eps^2); rounding noise in f is O(u * magnitude / eps), and at
  // most f's noise / eps.
  static double tolerance(double analytic, double numeric, double scale, double noise) {
    return 1e-6 * (std::abs(analytic) + std::abs(numeric)) + 1e-7 * scale + noise / kStep + 1e-12;
  }

  static void account(TensorError& row, double analytic, double numeric, double bound,
                      std::vector<int64_t> index) {
    const double err = std::abs(analytic - numeric);
    const double ratio = std::isfinite(err) ? err / bound : INFINITY;
    row.max_abs = std::max(row.max_abs, err);
    if (numeric != 0) row.max_rel = std::max(row.max_rel, err / std::abs(numeric));
    if (!(ratio <= 1)) ++row.mismatches;
    ++row.elements;
    if (row.index.empty() || ratio > row.error_over_bound || std::isnan(ratio)) {
      row.error_over_bound = std::isnan(ratio) ? INFINITY : ratio;
      row.index = std::move(index);
      row.actual = analytic;
      row.expected = numeric;
    }
  }

  TensorError directional(const Problem& p, const Objective& f, const NamedTensors& grads,
                          const std::string& input, double scale, double noise,
                          uint64_t stream) const {
    TensorError row;
    row.tensor = grad_name(input);
    row.check = "v^T J u";
    row.located = false;
    const auto x = p.inputs.get(input);
    const auto g = grads.get(grad_name(input));
    for (int k = 0; k < kDirections; ++k) {
      const auto u = random_tensor(x.sizes().vec(), Distribution::normal, p.c.seed,
                                   stream + k, DType::float64);
      const auto moved = [&](double step) { return f(perturbed(p, input, u, step)); };
      const double numeric = (moved(kStep) - moved(-kStep)) / (2 * kStep);
      const double analytic = g.defined() ? inner_product(g, u) : NAN;
      const double bound = tolerance(analytic, numeric, scale, noise);
      account(row, analytic, numeric, with_truncation(analytic, numeric, bound, moved), {k});
    }
    return row;
  }

  // d f / d input[i] for every element i, against the backward's gradient.
  TensorError elementwise(const Kernel& kernel, const Problem& p, const Objective& f,
                          const NamedTensors& grads, const std::string& input,
                          double scale, double noise) const {
    TensorError row;
    row.tensor = grad_name(input);
    row.check = "elementwise";
    const auto x = p.inputs.get(input);
    const auto g = flat_values(grads.get(grad_name(input)));
    for (int64_t i = 0; i < x.numel(); ++i) {
      const auto moved = [&](double step) { return f(nudged(p, input, i, step)); };
      const double numeric = (moved(kStep) - moved(-kStep)) / (2 * kStep);
      const double analytic = g[i];
      const double bound = tolerance(analytic, numeric, scale / x.numel(), noise);
      account(row, analytic, numeric, with_truncation(analytic, numeric, bound, moved), {i});
    }
    if (!row.passed()) row.region = kernel.region(p, grad_name(input), row.index[0]);
    return row;
  }

  // J[o, i] from finite differences (per input element) and from the backward (per
  // output element, a unit cotangent), compared element by element for each input.
  void full_jacobian(const Kernel& kernel, const Calls& calls, const Problem& p,
                     const NamedTensors& outputs, const NamedTensors&, Verdict& v) const {
    const auto out_names = kernel.outputs_with_cotangent(p);
    // The outputs that take a cotangent, flattened one after another into float64.
    auto flatten = [&](const NamedTensors& out) {
      std::vector<double> flat;
      for (const auto& name : out_names) {
        const auto part = flat_values(out.get(name));
        flat.insert(flat.end(), part.begin(), part.end());
      }
      return flat;
    };
    const auto out_flat = flatten(outputs);
    const int64_t n_out = static_cast<int64_t>(out_flat.size());
    const auto inputs = kernel.differentiable_inputs(p);
    // Rows of the analytic Jacobian, per input: jacobian[input][o] is the backward of the
    // unit cotangent of output element o (empty when the backward gives no gradient).
    std::vector<std::vector<std::vector<double>>> jacobian(inputs.size());
    for (int64_t o = 0; o < n_out; ++o) {
      NamedTensors unit;
      int64_t offset = 0;
      for (const auto& name : out_names) {
        auto t = at::zeros(outputs.get(name).sizes(), at::kDouble);
        if (o >= offset && o < offset + t.numel()) t.data_ptr<double>()[o - offset] = 1.0;
        offset += t.numel();
        unit.set(grad_name(name), t);
      }
      const auto row = calls.backward(p, unit);
      for (size_t k = 0; k < inputs.size(); ++k) {
        const auto g = row.get(grad_name(inputs[k]));
        jacobian[k].push_back(g.defined() ? flat_values(g) : std::vector<double>());
      }
    }
    double scale = 1.0;
    for (double y : out_flat) scale = std::max(scale, std::abs(y) + 1.0);
    for (size_t k = 0; k < inputs.size(); ++k) {
      const std::string& input = inputs[k];
      TensorError row;
      row.tensor = grad_name(input);
      row.check = "full Jacobian";
      const auto x = p.inputs.get(input);
      for (int64_t i = 0; i < x.numel(); ++i) {
        const auto moved = [&](double step) {
          return flatten(calls.forward(nudged(p, input, i, step)));
        };
        const auto plus = moved(kStep), minus = moved(-kStep);
        std::vector<double> wide_plus, wide_minus;  // at 2 kStep, once an element fails
        for (int64_t o = 0; o < n_out; ++o) {
          const double numeric = (plus[o] - minus[o]) / (2 * kStep);
          const auto& j_row = jacobian[k][o];
          const double analytic = j_row.empty() ? NAN : j_row[i];
          const double bound = 1e-6 * (std::abs(analytic) + std::abs(numeric)) + 1e-7 * scale;
          const auto moved_o = [&](double step) {  // the forwards at 2 kStep run once per i
            if (wide_plus.empty()) wide_plus = moved(2 * kStep), wide_minus = moved(-2 * kStep);
            return step > 0 ? wide_plus[o] : wide_minus[o];
          };
          account(row, analytic, numeric, with_truncation(analytic, numeric, bound, moved_o),
                  {o, i});
        }
      }
      if (!row.passed()) row.region = kernel.region(p, grad_name(input), row.index[1]);
      v.tensors.push_back(row);
    }
  }
};

const bool registered = register_property(std::make_unique<Gradient>());

}  // namespace
}  // namespace kprop
