// algorithms: two implementations of one function by different algorithms give the same
// results. fla computes linear attention and the delta rule both in chunks (a parallel
// form within each chunk, the state handed between chunks) and token by token (the fused
// recurrent kernel): the same function, two algorithms, so each checks the other on the
// same inputs and cotangents, within the bound of two computations. An implementation
// declares its other algorithm (Takes::same_function_as); one that declares none, or a
// case the other does not take, is skipped. The float64 reference still holds each one on
// its own (vs_reference); this property sees a defect both share the shape of only where
// they disagree, and costs no float64 work beyond the bound.
#include <fmt/format.h>

#include "harness/engine/properties/calls.h"
#include "harness/execution/implementations.h"
#include "harness/execution/takes.h"

namespace kprop {

namespace {

class Algorithms final : public Property {
 public:
  std::string name() const override { return "algorithms"; }
  std::string about() const override {
    return "the implementation against another algorithm of the same function it declares "
           "(chunked vs fused recurrent), within the bound of two computations";
  }
  std::vector<DType> dtypes() const override {
    return {DType::float32, DType::bfloat16, DType::float16};
  }

  Verdict check(const Kernel& kernel, const Implementation& impl,
                const Case& c) const override {
    Verdict v = open_verdict(kernel, c);
    const Takes* takes = declared_takes(kernel.name(), impl.name);
    if (takes == nullptr || takes->same_function_as.empty()) {
      v.status = Verdict::Status::skipped;
      v.message = impl.name + " declares no other algorithm of its function";
      return v;
    }
    Case theirs_case = c;
    theirs_case.impl = takes->same_function_as;
    if (const auto why = not_taken(theirs_case)) {
      v.status = Verdict::Status::skipped;
      v.message = fmt::format("{} does not take it: {}", takes->same_function_as, *why);
      return v;
    }
    const Implementation other = resolve_implementation(kernel.name(), takes->same_function_as);
    Calls calls(kernel, impl, v), theirs(kernel, other, v);
    const Problem p = kernel.materialize(c);
    const NamedTensors outputs = calls.forward(p);
    const NamedTensors cot = random_cotangents(kernel, p, outputs);
    const NamedTensors mine = merged(outputs, calls.backward(p, cot));
    const NamedTensors other_results = merged(theirs.forward(p), theirs.backward(p, cot));
    append(v.tensors, compare(kernel, p, mine, other_results, calls.bounds_between_two(p, cot),
                              "against " + other.name));
    conclude(v);
    return v;
  }
};

const bool registered = register_property(std::make_unique<Algorithms>());

}  // namespace
}  // namespace kprop
