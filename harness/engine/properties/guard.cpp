// guard: what a kernel does with memory that is not its tensors'. A kernel whose tail is
// not a multiple of its block and whose loads are not masked reads past a tensor's end; on
// a GPU nothing faults, and the values read are whatever lies there (mostly zeros in a
// test, another tensor's data in a model). Here every input and cotangent is handed as a
// slice of a larger buffer whose margins hold NaN (harness/model/tensor_layouts.h:
// guard_sentinel, the largest value for an integer tensor): a read of a margin changes
// the results, which must equal the plain call's bit for bit (within the derived bound
// for an implementation declared nondeterministic, or seen to be: a repeated plain call
// that differs). On the CPU the outputs and the
// buffers a call makes get margins too (harness/execution/guarded_allocations.h).
// A store into a margin is an out-of-bounds store naming the tensor and the side
// (harness/engine/properties/handed_tensors.h); a read is the symptom "dx varies with what lies
// past x's end", found by guarding one tensor and one side at a time (the other side
// holds zeros, what a masked load reads).
// The emulations' memory checker (harness/model/memcheck.h) sees every stray access;
// `guard` is the detector for kernels kprop cannot instrument.
#include <algorithm>
#include <optional>

#include "harness/engine/properties/calls.h"
#include "harness/execution/device.h"
#include "harness/execution/guarded_allocations.h"
#include "harness/model/tensor_layouts.h"

namespace kprop {

namespace {

// Margin elements on each side: a whole tensor's worth (an unmasked tile reads up to a
// block past the end), a multiple of 64 so that the data keeps its alignment (Triton
// specializes a kernel on 16-byte-aligned pointers).
int64_t margin_for(const at::Tensor& t) { return std::max<int64_t>(64, (t.numel() + 63) / 64 * 64); }

enum class Side { both, past_end, before_start };

at::Tensor guarded(const at::Tensor& t, Side side) {
  const at::Scalar sentinel = guard_sentinel(t.scalar_type());
  const at::Scalar neutral = 0;  // what a masked load reads
  return between_margins(t, margin_for(t), side == Side::past_end ? neutral : sentinel,
                         side == Side::before_start ? neutral : sentinel);
}

// "past x's end", "before x's start".
std::string beside(Side side, const std::string& tensor) {
  return side == Side::past_end ? "past " + tensor + "'s end" : "before " + tensor + "'s start";
}

NamedTensors all_guarded(const NamedTensors& tensors) {
  NamedTensors out;
  for (const auto& [name, t] : tensors) out.set(name, t.defined() ? guarded(t, Side::both) : t);
  return out;
}

bool any_failed(const std::vector<TensorError>& rows) {
  return std::any_of(rows.begin(), rows.end(), [](const TensorError& r) { return !r.passed(); });
}

class Guard final : public Property {
 public:
  std::string name() const override { return "guard"; }
  std::string about() const override {
    return "inputs and cotangents between NaN margins (and CPU outputs with margins): results "
           "bit-identical, no store outside a tensor";
  }
  std::vector<DType> dtypes() const override {
    return {DType::float32, DType::bfloat16, DType::float16};
  }

  Verdict check(const Kernel& kernel, const Implementation& impl,
                const Case& c) const override {
    Verdict v = open_verdict(kernel, c);
    bool nondeterministic = declared_nondeterministic(kernel, impl);
    const bool on_cpu = device_of(c).is_cpu();
    Calls calls(kernel, impl, v);
    const Problem p = kernel.materialize(c);
    const NamedTensors outputs = calls.forward(p);
    const NamedTensors cot = random_cotangents(kernel, p, outputs);
    const NamedTensors plain = merged(outputs, calls.backward(p, cot));
    NamedTensors bounds;
    if (nondeterministic) bounds = calls.bounds_between_two(p, cot);

    // The results with inputs `in` and cotangents `dy`, outputs guarded where asked.
    auto call = [&](const NamedTensors& in, const NamedTensors& dy, bool guard_outputs) {
      std::optional<GuardedAllocations> scope;
      if (guard_outputs && on_cpu) scope.emplace();
      const Problem q{p.c, in};
      const NamedTensors out = merged(calls.forward(q), calls.backward(q, dy));
      if (scope)
        for (const auto& f : scope->strays(out)) fold(v.memory, f);
      return out;
    };
    auto judge = [&](const NamedTensors& actual, const std::string& what) {
      const std::string deviation = "varies with what lies " + what;
      return nondeterministic
                 ? compare_exact_within(kernel, p, actual, plain, bounds,
                                        deviation + " beyond the bound", "guarded")
                 : compare_exact(kernel, p, actual, plain, deviation, "guarded");
    };

    const NamedTensors guarded_results = call(all_guarded(p.inputs), all_guarded(cot), true);
    auto everything = judge(guarded_results, "around its tensors");
    if (any_failed(everything) && !nondeterministic) {
      // A kernel that sums with atomics differs without any margin read: `determinism`
      // reports that; here it is held to the bound, as if it had declared it.
      const NamedTensors again = merged(calls.forward(p), calls.backward(p, cot));
      if (any_failed(compare_exact(kernel, p, again, plain, "", ""))) {
        nondeterministic = true;
        bounds = calls.bounds_between_two(p, cot);
        everything = judge(guarded_results, "around its tensors");
      }
    }
    if (!any_failed(everything)) {
      append(v.tensors, std::move(everything));
      conclude(v);
      return v;
    }
    // Which tensor, which side: one at a time, the outputs last.
    bool named = false;
    auto probe = [&](const NamedTensors& in, const NamedTensors& dy, bool guard_outputs,
                     const std::string& what) {
      auto rows = judge(call(in, dy, guard_outputs), what);
      if (!any_failed(rows)) return;
      for (auto& r : rows)
        if (!r.passed()) v.tensors.push_back(std::move(r));
      named = true;
    };
    for (const Side side : {Side::past_end, Side::before_start}) {
      for (const auto& [name, t] : p.inputs) {
        if (!t.defined()) continue;
        NamedTensors in = p.inputs;
        in.set(name, guarded(t, side));
        probe(in, cot, false, beside(side, name));
      }
      for (const auto& [name, t] : cot) {
        NamedTensors dy = cot;
        dy.set(name, guarded(t, side));
        probe(p.inputs, dy, false, beside(side, name));
      }
    }
    if (on_cpu) probe(p.inputs, cot, true, "around its outputs");
    if (!named) append(v.tensors, std::move(everything));
    conclude(v);
    return v;
  }
};

const bool registered = register_property(std::make_unique<Guard>());

}  // namespace
}  // namespace kprop
