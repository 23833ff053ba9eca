// chunked: a call split in two, the first part's final state handed on as the second
// part's initial state, must equal the whole call — outputs and gradients. The loss
// touches only the later part, so every gradient of the earlier part flows through the
// handed-on state: a wrong dh0 cannot hide.
#include "harness/engine/properties/chunked_run.h"
#include "harness/engine/property.h"
#include "harness/model/sequence_family.h"

namespace kprop {

namespace {

class Chunked final : public Property {
 public:
  std::string name() const override { return "chunked"; }
  std::string about() const override {
    return "whole call vs two calls with the state handed on (loss on the later part)";
  }
  std::vector<DType> dtypes() const override { return {DType::float32, DType::bfloat16}; }

  // The whole call, the first part and the second (which takes the handed-on state).
  std::vector<Case> calls(const Kernel& kernel, const Case& c) const override {
    if (!kernel.sequences()) return {c};
    const auto split = kernel.sequences()->split(kernel.materialize(c));
    if (!split) return {c};
    return {c, split->first.c, split->second.c};
  }

  Verdict check(const Kernel& kernel, const Implementation& impl,
                const Case& c) const override {
    Verdict v = open_verdict(kernel, c);
    if (!kernel.sequences()) {
      v.status = Verdict::Status::skipped;
      v.message = kernel.name() + " has no state to hand on";
      return v;
    }
    Calls calls(kernel, impl, v);
    const Problem whole = kernel.materialize(c);
    const auto run = run_chunked(kernel, calls, whole);
    if (!run) {
      v.status = Verdict::Status::skipped;
      v.message = "no sequence continues past its split point";
      return v;
    }
    // Each side is within its derived bound of the exact result; the joined side sums
    // partial results that were rounded to the output dtype first.
    const auto& cot = run->cotangents;
    const auto reference = calls.reference(whole, cot);
    const auto allowed =
        kernel.error_bounds(whole, cot, reference, /*joined_partials=*/{0, 1});
    append(v.tensors, compare(kernel, whole, run->joined, run->whole, allowed, "chunked"));
    conclude(v);
    return v;
  }
};

const bool registered = register_property(std::make_unique<Chunked>());

}  // namespace
}  // namespace kprop
