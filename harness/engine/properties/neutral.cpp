// neutral: an optional input left out equals its neutral value passed. No bias must equal a
// zero bias, no initial state a zero state (Kernel::neutral_inputs). A kernel takes
// two code paths for the two (a HAS_BIAS branch, a kernel variant without the state), and
// a branch that forgets a term in one of them is invisible to every test that only takes
// the other; here neither needs a reference. Adding a zero is exact, so the results (the
// outputs and the gradients of the inputs both calls have) must agree bit for bit, a zero
// of either sign counting as zero. A sum whose order follows the tiling a path takes (the
// kernel's reordered_by_layout results: causal_conv1d tiles otherwise with a state) and
// every result of an implementation declared nondeterministic are held to the derived
// bound. A difference is the symptom "y differs from b 0 passed".
#include <fmt/format.h>

#include <algorithm>

#include "generators/schema.h"
#include "harness/engine/properties/calls.h"
#include "harness/execution/takes.h"

namespace kprop {

namespace {

// `t` with -0 as +0 (x + 0 is x for every other x, NaN included).
NamedTensors signless_zeros(const NamedTensors& t) {
  NamedTensors out;
  for (const auto& [name, x] : t) out.set(name, x.defined() && x.is_floating_point() ? x + 0 : x);
  return out;
}

class Neutral final : public Property {
 public:
  std::string name() const override { return "neutral"; }
  std::string about() const override {
    return "an optional input left out equals its neutral value passed (no bias = a zero "
           "bias), bit for bit";
  }
  std::vector<DType> dtypes() const override {
    return {DType::float32, DType::bfloat16, DType::float16};
  }

  Verdict check(const Kernel& kernel, const Implementation& impl,
                const Case& c) const override {
    Verdict v = open_verdict(kernel, c);
    const bool nondeterministic = declared_nondeterministic(kernel, impl);
    Calls calls(kernel, impl, v);
    int compared = 0;
    std::string refused;  // why a call with the flag changed was refused
    for (const auto& n : kernel.neutral_inputs()) {
      Case with = c, without = c;
      with.set(n.flag, true);
      without.set(n.flag, false);
      if (!validate(kernel.schema(), with).empty() || !validate(kernel.schema(), without).empty())
        continue;  // the flag cannot change alone here
      // An implementation that takes only one side of the flag (Liger's LayerNorm always
      // needs w and b) has no other path to compare with.
      if (not_taken(with) || not_taken(without)) {
        refused = *(not_taken(with) ? not_taken(with) : not_taken(without));
        continue;
      }
      Problem passed = kernel.materialize(with);
      const at::Tensor given = passed.inputs.get(n.tensor);
      passed.inputs.set(n.tensor, at::full_like(given, n.value));
      Problem left_out{without, passed.inputs};  // the same values for every other input
      left_out.inputs.set(n.tensor, at::Tensor());

      NamedTensors expected, actual, cot;
      try {
        const NamedTensors outputs = calls.forward(passed);
        cot = random_cotangents(kernel, passed, outputs);
        expected = merged(outputs, calls.backward(passed, cot));
        NamedTensors cot_left_out;  // the cotangents of the outputs it still has
        for (const auto& out : kernel.outputs_with_cotangent(left_out))
          if (cot.has(grad_name(out))) cot_left_out.set(grad_name(out), cot.get(grad_name(out)));
        actual = merged(calls.forward(left_out), calls.backward(left_out, cot_left_out));
      } catch (const ImplementationRefused& e) {
        // Either call may tile otherwise and be refused where `c` is not: then not compared.
        const bool derived_only = !declared_refusal(c, e.what()) &&
                                  (declared_refusal(with, e.what()) || declared_refusal(without, e.what()));
        if (!derived_only) throw;
        refused = e.what();
        continue;
      }
      NamedTensors both;  // what both calls give: not the neutral input's own gradient
      for (const auto& [name, t] : expected)
        if (name != grad_name(n.tensor) && actual.has(name)) both.set(name, t);

      const std::string deviation = "differs from " + n.tensor + " " + fmt::format("{}", n.value) + " passed";
      const std::string check = "without " + n.tensor;
      // Sums whose order follows the path (another tiling with a state: causal_conv1d's dw)
      // and every result of a nondeterministic implementation: within the bound.
      const auto reordered = kernel.reordered_by_layout();
      NamedTensors exact, bounded;
      for (const auto& [name, t] : both)
        (nondeterministic || std::count(reordered.begin(), reordered.end(), name) ? bounded : exact)
            .set(name, t);
      append(v.tensors, compare_exact(kernel, passed, signless_zeros(actual), signless_zeros(exact),
                                      deviation, check));
      if (bounded.size() > 0) {
        const auto bounds = calls.bounds_between_two(passed, cot);
        append(v.tensors, compare_exact_within(kernel, passed, signless_zeros(actual),
                                               signless_zeros(bounded), bounds,
                                               deviation + " beyond the bound", check));
      }
      ++compared;
    }
    if (compared == 0) {
      v.status = Verdict::Status::skipped;
      v.message = kernel.neutral_inputs().empty()
                      ? kernel.name() + " declares no neutral values of optional inputs"
                  : refused.empty() ? "no optional input of this case can be left out alone"
                                    : "with an optional input left out or passed, " + impl.name +
                                          " refuses this case: " + refused;
      return v;
    }
    conclude(v);
    return v;
  }
};

const bool registered = register_property(std::make_unique<Neutral>());

}  // namespace
}  // namespace kprop
