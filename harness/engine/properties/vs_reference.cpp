// vs_reference: the implementation in the case's dtype against the float64 reference,
// outputs and gradients, each element within its derived rounding-error bound
// (docs/design.md §5) — never a hand-picked atol.
#include "harness/engine/properties/calls.h"

namespace kprop {

namespace {

class VsReference final : public Property {
 public:
  std::string name() const override { return "vs_reference"; }
  std::string about() const override {
    return "outputs and gradients vs the float64 reference, within derived error bounds";
  }
  std::vector<DType> dtypes() const override {
    return {DType::float32, DType::bfloat16, DType::float16, DType::float64};
  }

  Verdict check(const Kernel& kernel, const Implementation& impl,
                const Case& c) const override {
    Verdict v = open_verdict(kernel, c);
    Calls calls(kernel, impl, v);
    // On the oracle's device when the kernel's oracle runs there: the reference, the bounds
    // and the comparison stay on the device, and only the summaries come back.
    const Problem p = calls.materialized_on_oracle_device(c);
    const auto outputs = calls.forward(p);
    const auto cot = random_cotangents(kernel, p, outputs);
    const auto grads = calls.backward(p, cot);
    const auto reference = calls.reference(p, cot);
    const auto bounds = kernel.error_bounds(p, cot, reference, /*joined_partials=*/{0});
    append(v.tensors, compare(kernel, p, merged(outputs, grads), reference, bounds));
    conclude(v);
    return v;
  }
};

const bool registered = register_property(std::make_unique<VsReference>());

}  // namespace
}  // namespace kprop
