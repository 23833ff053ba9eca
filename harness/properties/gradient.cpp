// gradient: the implementation's backward against central finite differences of its own
// forward, in float64 (as torch.autograd.gradcheck and JAX's check_vjp).
//
// With a random cotangent v and f(inputs) = <v, forward(inputs)>, the backward must give
// grad f. For every differentiable input separately, a few random directions u compare
// <grad f, u> with (f(in + eps u) - f(in - eps u)) / 2 eps, so a failure names the
// gradient tensor at fault. On tiny cases the whole Jacobian is compared element by
// element (one backward per output element, two forwards per input element); on larger
// ones, a failing gradient is then located element by element when that is affordable.
#include <cmath>

#include "harness/properties/calls.h"
#include "harness/properties/registry.h"
#include "harness/random_tensor.h"

namespace kprop {

namespace {

constexpr double kStep = 1e-6;
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

  Verdict check(const KernelInfo& kernel, const Implementation& impl,
                const Case& c) const override {
    Verdict v = open_verdict(kernel, c);
    Calls calls(kernel, impl, v);
    const Problem p = kernel.in_dtype(kernel.materialize(c), DType::float64);
    const auto outputs = calls.forward(p);
    const auto cot = random_cotangents(kernel, p, outputs);
    const auto grads = calls.backward(p, cot);
    const Objective f{kernel, calls, cot};
    const double scale = f.magnitude(outputs);

    int64_t in_elements = 0, out_elements = 0;
    for (const auto& name : kernel.differentiable_inputs(p))
      in_elements += p.inputs.get(name).numel();
    for (const auto& name : kernel.outputs_with_cotangent(p))
      out_elements += outputs.get(name).numel();

    const auto inputs = kernel.differentiable_inputs(p);
    uint64_t stream = 200;
    for (const auto& name : inputs)
      v.tensors.push_back(directional(p, f, grads, name, scale, stream += 8));
    if (in_elements * out_elements <= kFullJacobianLimit) {
      full_jacobian(kernel, calls, p, outputs, grads, v);
    } else {
      for (size_t i = 0; i < inputs.size(); ++i)
        if (!v.tensors[i].passed() && p.inputs.get(inputs[i]).numel() <= kElementwiseLimit)
          v.tensors.push_back(elementwise(kernel, p, f, grads, inputs[i], scale));
    }
    conclude(v);
    return v;
  }

 private:
  // f(inputs) = <v, forward(inputs)>, summed over the outputs that take a cotangent.
  struct Objective {
    const KernelInfo& kernel;
    const Calls& calls;
    const NamedTensors& cot;
    double operator()(const Problem& q) const {
      const auto out = calls.forward(q);
      double sum = 0;
      for (const auto& name : kernel.outputs_with_cotangent(q))
        sum += (cot.get(grad_name(name)) * out.get(name)).sum().item<double>();
      return sum;
    }
    // sum |v| |out|: the size of the rounding noise in f.
    double magnitude(const NamedTensors& out) const {
      double sum = 0;
      for (const auto& [name, t] : out)
        if (cot.has(grad_name(name)))
          sum += (cot.get(grad_name(name)).abs() * t.abs()).sum().item<double>();
      return sum;
    }
  };

  static Problem perturbed(const Problem& p, const std::string& input, const at::Tensor& delta) {
    Problem q = p;
    q.inputs.set(input, p.inputs.get(input) + delta);
    return q;
  }

  // Truncation error is O(eps^2); rounding noise in f is O(u * magnitude / eps).
  static double tolerance(double analytic, double numeric, double scale) {
    return 1e-6 * (std::abs(analytic) + std::abs(numeric)) + 1e-7 * scale + 1e-12;
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
                          const std::string& input, double scale, uint64_t stream) const {
    TensorError row;
    row.tensor = grad_name(input);
    row.check = "v^T J u";
    const auto x = p.inputs.get(input);
    const auto g = grads.get(grad_name(input));
    for (int k = 0; k < kDirections; ++k) {
      const auto u = random_tensor(x.sizes().vec(), Distribution::normal, p.c.seed,
                                   stream + k, DType::float64);
      const double numeric =
          (f(perturbed(p, input, kStep * u)) - f(perturbed(p, input, -kStep * u))) /
          (2 * kStep);
      const double analytic = g.defined() ? (g.to(at::kDouble) * u).sum().item<double>() : NAN;
      account(row, analytic, numeric, tolerance(analytic, numeric, scale), {k});
    }
    return row;
  }

  // d f / d input[i] for every element i, against the backward's gradient.
  TensorError elementwise(const KernelInfo& kernel, const Problem& p, const Objective& f,
                          const NamedTensors& grads, const std::string& input,
                          double scale) const {
    TensorError row;
    row.tensor = grad_name(input);
    row.check = "elementwise";
    const auto x = p.inputs.get(input);
    const auto g = grads.get(grad_name(input)).to(at::kDouble).contiguous();
    for (int64_t i = 0; i < x.numel(); ++i) {
      auto e = at::zeros_like(x);
      e.view(-1)[i] = kStep;
      const double numeric =
          (f(perturbed(p, input, e)) - f(perturbed(p, input, -e))) / (2 * kStep);
      const double analytic = g.view(-1)[i].item<double>();
      account(row, analytic, numeric, tolerance(analytic, numeric, scale / x.numel()), {i});
    }
    if (!row.passed()) row.region = kernel.region(p, grad_name(input), row.index[0]);
    return row;
  }

  // J[o, i] from finite differences (per input element) and from the backward (per
  // output element, a unit cotangent), compared element by element for each input.
  void full_jacobian(const KernelInfo& kernel, const Calls& calls, const Problem& p,
                     const NamedTensors& outputs, const NamedTensors&, Verdict& v) const {
    const auto out_names = kernel.outputs_with_cotangent(p);
    auto flatten = [&](const NamedTensors& out) {
      std::vector<at::Tensor> parts;
      for (const auto& name : out_names) parts.push_back(out.get(name).reshape(-1));
      return at::cat(parts).to(at::kDouble);
    };
    const auto out_flat = flatten(outputs);
    const int64_t n_out = out_flat.numel();
    // Rows of the analytic Jacobian: the backward of each unit cotangent (float64,
    // contiguous, so that elements can be read directly).
    std::vector<NamedTensors> rows_of_j;
    for (int64_t o = 0; o < n_out; ++o) {
      NamedTensors unit;
      int64_t offset = 0;
      for (const auto& name : out_names) {
        auto t = at::zeros_like(outputs.get(name));
        if (o >= offset && o < offset + t.numel()) t.view(-1)[o - offset] = 1.0;
        offset += t.numel();
        unit.set(grad_name(name), t);
      }
      rows_of_j.push_back(to_float64(calls.backward(p, unit)));
    }
    const double scale = out_flat.abs().max().item<double>() + 1.0;
    for (const auto& input : kernel.differentiable_inputs(p)) {
      TensorError row;
      row.tensor = grad_name(input);
    row.check = "full Jacobian";
      const auto x = p.inputs.get(input);
      for (int64_t i = 0; i < x.numel(); ++i) {
        auto e = at::zeros_like(x);
        e.view(-1)[i] = kStep;
        const auto column = (flatten(calls.forward(perturbed(p, input, e))) -
                             flatten(calls.forward(perturbed(p, input, -e)))) /
                            (2 * kStep);
        const double* num = column.data_ptr<double>();
        for (int64_t o = 0; o < n_out; ++o) {
          const auto g = rows_of_j[o].get(grad_name(input));
          const double analytic = g.defined() ? g.contiguous().data_ptr<double>()[i] : NAN;
          account(row, analytic, num[o], 1e-6 * (std::abs(analytic) + std::abs(num[o])) +
                                             1e-7 * scale,
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
