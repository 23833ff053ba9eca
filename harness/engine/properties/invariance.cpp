// invariance: an implementation must give bit-identical results on the cases the kernel
// declares equivalent (Kernel::equivalent_cases): the same inputs on other hardware
// (core counts, buffer budgets: other blocks and grids) or in another memory layout. An
// element-wise kernel owes exactness there, not a bound: nothing is summed in another
// order. A difference is the symptom "c varies with layout"; an equivalent call that is
// wrong on its own is localized to it (harness/engine/diagnosis.h) and named as vs_reference names it.
#include "harness/engine/properties/calls.h"

namespace kprop {

namespace {

class Invariance final : public Property {
 public:
  std::string name() const override { return "invariance"; }
  std::string about() const override {
    return "bit-identical results on the kernel's equivalent cases (core counts, buffer "
           "budgets, layouts)";
  }
  std::vector<DType> dtypes() const override {
    return {DType::float32, DType::bfloat16, DType::float16};
  }

  // The case, then each equivalent one.
  std::vector<Case> calls(const Kernel& kernel, const Case& c) const override {
    std::vector<Case> out{c};
    for (const auto& e : kernel.equivalent_cases(c)) out.push_back(e.c);
    return out;
  }

  Verdict check(const Kernel& kernel, const Implementation& impl,
                const Case& c) const override {
    Verdict v = open_verdict(kernel, c);
    const auto equivalents = kernel.equivalent_cases(c);
    if (equivalents.empty()) {
      v.status = Verdict::Status::skipped;
      v.message = kernel.name() + " declares no equivalent cases";
      return v;
    }
    Calls calls(kernel, impl, v);
    const Problem p = kernel.materialize(c);
    const auto outputs = calls.forward(p);
    const auto cot = random_cotangents(kernel, p, outputs);
    const auto results = merged(outputs, calls.backward(p, cot));
    for (const auto& e : equivalents) {
      const Problem q = kernel.materialize(e.c);
      const auto other = merged(calls.forward(q), calls.backward(q, cot));
      for (auto& row : compare_exact(kernel, p, other, results, "varies with " + e.varies, e.varies))
        v.tensors.push_back(std::move(row));
    }
    conclude(v);
    return v;
  }
};

const bool registered = register_property(std::make_unique<Invariance>());

}  // namespace
}  // namespace kprop
