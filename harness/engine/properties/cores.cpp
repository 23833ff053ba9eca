// cores: the result may not depend on the hardware's core count, which only changes the
// tiling. The kernel says which other hardware to compare with (Kernel::retiled; for
// causal_conv1d one core, the widest tiles, or 48 when the case has one core); kernels
// without tiling hints skip the property.
#include "harness/engine/properties/calls.h"

namespace kprop {

namespace {

class CoreInvariance final : public Property {
 public:
  std::string name() const override { return "cores"; }
  std::string about() const override {
    return "same results for the case's core count and for one core (or 48)";
  }
  std::vector<DType> dtypes() const override { return {DType::float32, DType::bfloat16}; }

  std::vector<Case> calls(const Kernel& kernel, const Case& c) const override {
    std::vector<Case> out{c};
    if (const auto other = kernel.retiled(c)) out.push_back(*other);
    return out;
  }

  Verdict check(const Kernel& kernel, const Implementation& impl,
                const Case& c) const override {
    Verdict v = open_verdict(kernel, c);
    const auto retiled = kernel.retiled(c);
    if (!retiled) {
      v.status = Verdict::Status::skipped;
      v.message = kernel.name() + " has no tiling hint to vary";
      return v;
    }
    Calls calls(kernel, impl, v);
    const Problem p = kernel.materialize(c);
    Problem other = p;
    other.c = *retiled;

    const auto out = calls.forward(p);
    const auto cot = random_cotangents(kernel, p, out);
    const auto grads = calls.backward(p, cot);
    const auto other_out = calls.forward(other);
    const auto other_grads = calls.backward(other, cot);
    // Each tiling is within the derived bound of the exact result: two bounds apart.
    const auto reference = calls.reference(p, cot);
    const auto allowed = kernel.error_bounds(p, cot, reference, /*joined_partials=*/{0, 0});
    append(v.tensors, compare(kernel, p, merged(out, grads), merged(other_out, other_grads),
                        allowed, "retiled"));
    conclude(v);
    return v;
  }
};

const bool registered = register_property(std::make_unique<CoreInvariance>());

}  // namespace
}  // namespace kprop
