// packed: sequences packed into one call (cu_seqlens) must give what each sequence gives
// in a call of its own — outputs, gradients, states. Catches rows of one sequence
// leaking into another's results.
#include "harness/engine/properties/calls.h"
#include "harness/model/sequence_family.h"

namespace kprop {

namespace {

class PackedVsSeparate final : public Property {
 public:
  std::string name() const override { return "packed"; }
  std::string about() const override {
    return "packed sequences vs one call per sequence";
  }
  std::vector<DType> dtypes() const override { return {DType::float32, DType::bfloat16}; }

  // The packed call, then each sequence on its own.
  std::vector<Case> calls(const Kernel& kernel, const Case& c) const override {
    std::vector<Case> out{c};
    if (!kernel.sequences()) return out;
    if (const auto parts = kernel.sequences()->separate(kernel.materialize(c)))
      for (const auto& part : *parts) out.push_back(part.c);
    return out;
  }

  Verdict check(const Kernel& kernel, const Implementation& impl,
                const Case& c) const override {
    Verdict v = open_verdict(kernel, c);
    const SequenceFamily* sequences = kernel.sequences();
    if (!sequences) {
      v.status = Verdict::Status::skipped;
      v.message = kernel.name() + " has no packed sequences";
      return v;
    }
    Calls calls(kernel, impl, v);
    const Problem packed = kernel.materialize(c);
    const auto parts = sequences->separate(packed);
    if (!parts) {
      v.status = Verdict::Status::skipped;
      v.message = "a single sequence has nothing to be separated from";
      return v;
    }
    const auto out = calls.forward(packed);
    const auto cot = random_cotangents(kernel, packed, out);
    const auto grads = calls.backward(packed, cot);

    std::vector<NamedTensors> part_out, part_grads;
    for (size_t i = 0; i < parts->size(); ++i) {
      part_out.push_back(calls.forward((*parts)[i]));
      part_grads.push_back(
          calls.backward((*parts)[i], sequences->separate_cotangents(packed, i, cot)));
    }
    const auto separate = merged(sequences->join_separate_outputs(packed, part_out),
                                 sequences->join_separate_grads(packed, part_grads));
    // Each side is within its derived bound of the exact result; the joined side sums
    // partial results that were rounded to the output dtype first.
    const auto reference = calls.reference(packed, cot);
    const auto allowed =
        kernel.error_bounds(packed, cot, reference, /*joined_partials=*/{0, 1});
    append(v.tensors, compare(kernel, packed, merged(out, grads), separate, allowed, "packed"));
    conclude(v);
    return v;
  }
};

const bool registered = register_property(std::make_unique<PackedVsSeparate>());

}  // namespace
}  // namespace kprop
