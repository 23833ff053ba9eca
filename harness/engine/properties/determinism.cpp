// determinism: the same call, made again on the same inputs and cotangents, gives the same
// bits. A kernel that sums with atomics, or picks a split by the free hardware, returns
// another rounding on every call: a training run is then not reproducible, and a search
// that compares two calls (chunked, packed) sees noise. Such an implementation declares it
// (Takes::nondeterministic; a spec for all its implementations): its repeated calls are
// then held to the derived bound of two computations instead, and the rows say which rule
// held ("twice, bit for bit" or "twice, within the bound: declared nondeterministic").
// A difference is the symptom "dw differs between calls".
#include <algorithm>

#include "harness/engine/properties/calls.h"

namespace kprop {

namespace {

// Calls after the first: an atomic race shows on some calls only.
constexpr int kRepeats = 3;

class Determinism final : public Property {
 public:
  std::string name() const override { return "determinism"; }
  std::string about() const override {
    return "the same call repeated gives the same bits (within the bound where the "
           "implementation declares atomics or other nondeterminism)";
  }
  std::vector<DType> dtypes() const override {
    return {DType::float32, DType::bfloat16, DType::float16};
  }

  Verdict check(const Kernel& kernel, const Implementation& impl,
                const Case& c) const override {
    Verdict v = open_verdict(kernel, c);
    const bool declared = declared_nondeterministic(kernel, impl);
    Calls calls(kernel, impl, v);
    const Problem p = kernel.materialize(c);
    const NamedTensors outputs = calls.forward(p);
    const NamedTensors cot = random_cotangents(kernel, p, outputs);
    const NamedTensors first = merged(outputs, calls.backward(p, cot));
    NamedTensors bounds;
    if (declared) bounds = calls.bounds_between_two(p, cot);
    const std::string check = declared ? "twice, within the bound: declared nondeterministic"
                                       : "twice, bit for bit";
    const std::string deviation = declared ? "differs between calls beyond the bound"
                                           : "differs between calls";
    for (int i = 0; i < kRepeats; ++i) {
      const NamedTensors again = merged(calls.forward(p), calls.backward(p, cot));
      auto rows = declared ? compare_exact_within(kernel, p, again, first, bounds, deviation, check)
                           : compare_exact(kernel, p, again, first, deviation, check);
      const bool differs = std::any_of(rows.begin(), rows.end(),
                                       [](const TensorError& r) { return !r.passed(); });
      // One differing call says it; else the last call's rows, all passed, say what was held.
      if (differs || i + 1 == kRepeats) {
        append(v.tensors, std::move(rows));
        break;
      }
    }
    conclude(v);
    return v;
  }
};

const bool registered = register_property(std::make_unique<Determinism>());

}  // namespace
}  // namespace kprop
