// composition: the implementation inside the small graphs real models build. Each call
// alone can be right and the model still wrong: a kernel that writes dx over the dy it
// receives corrupts the residual branch that shares that dy; one that writes over an
// input corrupts the op that saved it for its own backward. Here the implementation runs,
// handed every buffer as the graph holds it (no copies, Calls::hand_as_given), inside
//   p_t = t ⊙ t           for each differentiable input t, made first: it saves t;
//   r_y = 3/2 · q_y       for each output y, made first (a residual stream, q_y a leaf);
//   z_y = y + r_y         the residual: autograd hands the same dy to both branches;
//   (used twice) u_y = k_y ⊙ y, so that y's cotangent is an accumulated, fresh buffer.
// The backward runs as autograd orders it: the implementation's first (made last), then
// r's and p's, which read the shared dy and the saved t as the implementation left them.
// Every leaf's gradient must equal the same graph's in float64 (the reference for the
// kernel, the accumulated cotangent rounded to the case's dtype as autograd rounds it):
// t's within the implementation's derived bound, q's bit for bit. A declared overwrite
// (Takes::overwrites) is handed as it is too: this property tells whether it is safe here.
#include "harness/engine/properties/calls.h"
#include "harness/execution/device.h"
#include "harness/model/host_values.h"
#include "harness/model/random_tensor.h"
#include "harness/model/tensor_layouts.h"

namespace kprop {

namespace {

enum class Graph { residual, used_twice };

class Composition final : public Property {
 public:
  std::string name() const override { return "composition"; }
  std::string about() const override {
    return "inside a residual and an output used twice, with an op that saved its inputs: "
           "every leaf's gradient as the float64 graph's";
  }
  std::vector<DType> dtypes() const override {
    return {DType::float32, DType::bfloat16, DType::float16};
  }

  Verdict check(const Kernel& kernel, const Implementation& impl,
                const Case& c) const override {
    Verdict v = open_verdict(kernel, c);
    for (const Graph g : {Graph::residual, Graph::used_twice}) run(kernel, impl, c, g, v);
    conclude(v);
    return v;
  }

 private:
  static void run(const Kernel& kernel, const Implementation& impl, const Case& c, Graph graph,
                  Verdict& v) {
    const std::string label = graph == Graph::residual ? "in a residual" : "used twice";
    Calls calls(kernel, impl, v);
    calls.hand_as_given();
    const c10::Device device = device_of(c);
    const Problem original = kernel.materialize(c);
    // The graph's tensors, where the implementation runs: what it is handed is what the
    // graph's other ops read afterwards.
    Problem p{original.c, {}};
    for (const auto& [name, t] : original.inputs)
      p.inputs.set(name, t.defined() ? same_layout_on(t, device) : t);
    uint64_t stream = 200;
    auto draw = [&](const at::Tensor& like) {
      return random_tensor(like.sizes().vec(), Distribution::normal, c.seed, stream++, c.dtype);
    };

    const NamedTensors outputs = calls.forward(p);
    // Cotangents of z_y (shared with r_y's backward), and for used_twice u_y's and k_y.
    const NamedTensors dz = random_cotangents(kernel, original, outputs);
    NamedTensors handed_dy, dy_values;  // what the implementation receives; its values
    for (const auto& [name, g] : dz) {
      at::Tensor dy = same_layout_on(g, device);
      if (graph == Graph::used_twice) {
        const at::Tensor k = draw(g), du = draw(g);
        dy = same_layout_on((g + k * du).to(g.scalar_type()), device);  // accumulated
      }
      handed_dy.set(name, dy);
      dy_values.set(name, dy.to(at::kCPU, false, /*copy=*/true));
    }
    NamedTensors dp;  // cotangents of p_t
    for (const auto& name : kernel.differentiable_inputs(original))
      dp.set(name, float64_of(draw(original.inputs.get(name))));
    // z_y's cotangent as r_y's backward will read it: the same buffer the implementation got
    // in a residual; its own buffer when y is used twice.
    NamedTensors dz_there;
    for (const auto& [name, g] : dz)
      dz_there.set(name, graph == Graph::residual ? handed_dy.get(name) : same_layout_on(g, device));

    const NamedTensors grads = calls.backward(p, handed_dy);

    // Then r's and p's backward, on the buffers as the implementation left them.
    NamedTensors actual, expected, exact_actual, exact_expected;
    const NamedTensors reference = calls.reference(original, dy_values);
    for (const auto& [name, d] : dp) {
      const at::Tensor saved_now = float64_of(p.inputs.get(name).to(at::kCPU));
      const at::Tensor saved = float64_of(original.inputs.get(name));
      const std::string grad = grad_name(name);
      actual.set(grad, float64_of(grads.get(grad)) + d * 2 * saved_now);
      expected.set(grad, reference.get(grad) + d * 2 * saved);
    }
    // q_y's gradient, 3/2 of dy as r_y's backward reads it: a row named after that dy.
    for (const auto& [name, g] : dz) {
      exact_actual.set(name, 1.5 * float64_of(dz_there.get(name).to(at::kCPU)));
      exact_expected.set(name, 1.5 * float64_of(g));
    }
    for (const auto& [name, y] : outputs) {
      actual.set(name, float64_of(y));
      expected.set(name, reference.get(name));
    }
    NamedTensors bounds = kernel.error_bounds(original, dy_values, reference, {0});
    // Each leaf's gradient is the kernel's plus p's, added in float64 on both sides: that
    // sum rounds too, which matters where p's term is large (heavy-tailed inputs).
    for (const auto& [name, d] : dp) {
      const std::string grad = grad_name(name);
      bounds.set(grad, bounds.get(grad) + 0x1.0p-51 * expected.get(grad).abs());
    }
    std::vector<TensorError> rows = compare(kernel, original, actual, expected, bounds, label);
    append(rows, compare_exact(kernel, original, exact_actual, exact_expected,
                               "differs from the float64 graph", label));
    // The graph is part of the symptom: a failure here that the plain call does not show
    // (the runner tries it first) is a defect of its own, never one the plain call has.
    for (TensorError& r : rows) r.setting = label;
    append(v.tensors, rows);
  }
};

const bool registered = register_property(std::make_unique<Composition>());

}  // namespace
}  // namespace kprop
