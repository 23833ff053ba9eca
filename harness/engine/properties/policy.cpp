// policy: an implementation must round where the framework rounds. The kernel names its
// policy implementation (Kernel::policy_implementation, e.g. geglu's torch_policy,
// built from the framework's own ops), and every output and gradient is compared with it
// bit for bit in the low-precision dtypes, where its rounding points decide the result.
//
// Two findings are kept apart, per tensor, in the verdict and in its symptoms:
//   - outside the derived bound of the float64 reference: a bug, whatever the policy does.
//     The symptom is the tensor alone ("c"), as vs_reference names it: one defect, one
//     identity, whichever property sees it;
//   - within the bound but not bit-exact: the implementation rounds elsewhere than the
//     framework. The symptom says so ("c deviates from policy [rounding point]"), the row
//     says by how many ulps, in how many elements, where, and how much of the bound the
//     tensor uses; the kernel names the rounding point that explains the difference.
// Bit-exact in every tensor: pass.
#include <algorithm>

#include "harness/engine/properties/calls.h"
#include "harness/execution/implementations.h"

namespace kprop {

namespace {

constexpr const char* kReferenceNamespace = "kprop_reference";

class Policy final : public Property {
 public:
  std::string name() const override { return "policy"; }
  std::string about() const override {
    return "bit-exact with the kernel's policy implementation (the framework's rounding "
           "points); a deviation in ulps kept apart from an error outside the derived bound";
  }
  // Where the policy's rounding to the input dtype decides the result. In float32 and
  // float64 nothing rounds after gelu but the output: bit-exactness there would test how
  // a device approximates tanh, which kprop does not model.
  std::vector<DType> dtypes() const override { return {DType::bfloat16, DType::float16}; }

  Verdict check(const Kernel& kernel, const Implementation& impl,
                const Case& c) const override {
    Verdict v = open_verdict(kernel, c);
    const auto policy_name = kernel.policy_implementation();
    if (!policy_name) return skipped(v, kernel.name() + " declares no policy implementation");
    if (impl.name == *policy_name) return skipped(v, "the policy implementation itself");
    if (impl.op_namespace == kReferenceNamespace)
      return skipped(v, "the float64 reference is held to no low-precision policy");
    const Implementation policy = resolve_implementation(kernel.name(), *policy_name);

    Calls calls(kernel, impl, v);
    const Problem p = kernel.materialize(c);
    const auto outputs = calls.forward(p);
    const auto cot = random_cotangents(kernel, p, outputs);
    const auto actual = merged(outputs, calls.backward(p, cot));
    // The policy's own calls, outside `calls`: what its memory checker sees is not the
    // implementation's.
    const auto expected =
        merged(kernel.forward(policy.op_namespace, p), kernel.backward(policy.op_namespace, p, cot));
    const auto reference = calls.reference(p, cot);
    const auto bounds = kernel.error_bounds(p, cot, reference, /*joined_partials=*/{0});

    const auto within = compare(kernel, p, actual, reference, bounds);
    const auto exact = compare_exact(kernel, p, actual, expected, "deviates from policy", "policy");
    for (TensorError bound_row : within) {
      const auto same = std::find_if(exact.begin(), exact.end(), [&](const TensorError& e) {
        return e.tensor == bound_row.tensor;
      });
      if (same == exact.end()) {
        v.tensors.push_back(bound_row);
        continue;
      }
      bound_row.max_ulps = same->max_ulps;
      const bool outside = !bound_row.passed();
      v.tensors.push_back(bound_row);
      // Outside the bound, the deviation is no separate finding: the bug is.
      if (outside) continue;
      TensorError row = *same;
      row.error_over_bound = bound_row.error_over_bound;
      if (!row.passed())
        row.rounding_point = kernel.rounding_point(p, cot, row.tensor, actual.get(row.tensor),
                                                   expected.get(row.tensor));
      v.tensors.push_back(row);
    }
    conclude(v);
    return v;
  }

 private:
  static Verdict skipped(Verdict v, std::string why) {
    v.status = Verdict::Status::skipped;
    v.message = std::move(why);
    return v;
  }
};

const bool registered = register_property(std::make_unique<Policy>());

}  // namespace
}  // namespace kprop
