// layout: the same case with one tensor at a time handed in another layout of the same
// values (harness/execution/layout_variants.h): transposed storage, a slice of a larger buffer, a
// broadcast cotangent as `y.sum().backward()` gives, a storage order the kernel declares.
// Nothing is summed differently for another layout, so the results must be the contiguous
// call's bit for bit; a result the kernel declares a sum whose order follows the strides
// (Kernel::reordered_by_layout; every result of an implementation that declares
// Takes::layout_changes_reduction_order) is held to the derived bound instead. A
// difference is the symptom "dh0 varies with dy stride-0": the result that differs, the
// tensor laid out and how.
// A broadcast cotangent holds new values: it is compared with the same values made
// contiguous. A layout the implementation does not take (Takes::layouts) is not tried.
#include <algorithm>

#include "harness/engine/properties/calls.h"
#include "harness/execution/layout_variants.h"
#include "harness/execution/takes.h"

namespace kprop {

namespace {

class Layout final : public Property {
 public:
  std::string name() const override { return "layout"; }
  std::string about() const override {
    return "bit-identical results with inputs and cotangents in other layouts (transposed, a "
           "slice with an offset, stride-0 and expanded cotangents, declared storage orders)";
  }
  std::vector<DType> dtypes() const override {
    return {DType::float32, DType::bfloat16, DType::float16};
  }

  Verdict check(const Kernel& kernel, const Implementation& impl,
                const Case& c) const override {
    Verdict v = open_verdict(kernel, c);
    const Takes* takes = declared_takes(kernel.name(), impl.name);
    const bool reorders_all = takes != nullptr && takes->layout_changes_reduction_order;
    const auto reordered = kernel.reordered_by_layout();
    auto by_bound = [&](const std::string& result) {
      return reorders_all || std::count(reordered.begin(), reordered.end(), result) > 0;
    };
    auto taken = [&](const LayoutVariant& l) {
      return takes == nullptr || takes->layouts.empty() ||
             std::count(takes->layouts.begin(), takes->layouts.end(), l.name) > 0;
    };
    Calls calls(kernel, impl, v);
    const Problem p = kernel.materialize(c);
    const NamedTensors outputs = calls.forward(p);
    const NamedTensors cot = random_cotangents(kernel, p, outputs);
    const NamedTensors grads = calls.backward(p, cot);
    const NamedTensors results = merged(outputs, grads);

    // Compares `actual` with `expected`, both computed with cotangents `used`: bit for bit,
    // or within the bound of two computations where a result may be summed in another order.
    auto judge = [&](const NamedTensors& actual, const NamedTensors& expected,
                     const NamedTensors& used, const std::string& label) {
      NamedTensors exact, bounded;
      for (const auto& [name, t] : expected) (by_bound(name) ? bounded : exact).set(name, t);
      append(v.tensors, compare_exact(kernel, p, actual, exact, "varies with " + label, label));
      if (bounded.size() == 0) return;
      const auto bounds = calls.bounds_between_two(p, used);
      append(v.tensors, compare_exact_within(kernel, p, actual, bounded, bounds,
                                             "varies with " + label + " beyond the bound", label));
    };

    int tried = 0;
    for (const auto& [name, t] : p.inputs)
      for (const auto& l : layout_variants(kernel, name, t, /*cotangent=*/false)) {
        if (!taken(l)) continue;
        Problem q = p;
        q.inputs.set(name, l.make(t));
        judge(merged(calls.forward(q), calls.backward(q, cot)), results, cot, name + " " + l.name);
        ++tried;
      }
    for (const auto& [name, t] : cot)
      for (const auto& l : layout_variants(kernel, name, t, /*cotangent=*/true)) {
        if (!taken(l)) continue;
        NamedTensors laid_out = cot;
        laid_out.set(name, l.make(t));
        NamedTensors dense = cot;  // the same values, contiguous
        dense.set(name, laid_out.get(name).contiguous());
        const NamedTensors expected = l.keeps_values ? grads : calls.backward(p, dense);
        judge(calls.backward(p, laid_out), expected, dense, name + " " + l.name);
        ++tried;
      }
    if (tried == 0) {
      v.status = Verdict::Status::skipped;
      v.message = "no tensor of this case has another layout that " + impl.name + " takes";
      return v;
    }
    conclude(v);
    return v;
  }
};

const bool registered = register_property(std::make_unique<Layout>());

}  // namespace
}  // namespace kprop
