// `guard` (harness/engine/properties/guard.cpp): inputs and cotangents between NaN margins, CPU
// outputs with margins. A backward whose sum reads one element past dy's end
// (tests/kernels/scaled_tanh_variants/reads_past_end.cpp) and one that stores past it
// (writes_past_end.cpp) are right on every fresh tensor, so only this property finds them,
// naming the tensor and the side.
#include <gtest/gtest.h>

#include <cstring>
#include <limits>

#include "harness/engine/properties/handed_tensors.h"
#include "harness/engine/property.h"
#include "harness/execution/guarded_allocations.h"
#include "harness/model/tensor_layouts.h"
#include "harness/presentation/report.h"
#include "tests/scaled_tanh_case.h"

namespace kprop {
namespace {

Case wide(const std::string& impl, const std::string& property) {
  return tanh_case(impl, 9, property, 3);
}

TEST(TensorLayouts, BetweenMarginsHoldsTheValuesAndACopyCarriesTheMargins) {
  const at::Tensor t = at::arange(6, at::kFloat).view({2, 3});
  const at::Tensor g = between_margins(t, 4, guard_sentinel(at::kFloat), 0);
  EXPECT_TRUE(g.equal(t));
  EXPECT_TRUE(g.is_contiguous());
  EXPECT_EQ(g.storage_offset(), 4);
  for (const at::Tensor& s : {whole_storage(g), whole_storage(same_layout_on(g, c10::Device(c10::kCPU)))}) {
    ASSERT_EQ(s.numel(), 4 + 6 + 4);
    EXPECT_TRUE(s.narrow(0, 0, 4).isnan().all().item<bool>());
    EXPECT_TRUE(s.narrow(0, 10, 4).eq(0).all().item<bool>());
  }
  EXPECT_EQ(guard_sentinel(at::kInt).toLong(), std::numeric_limits<int32_t>::max());
}

TEST(HandedTensors, AStoreAroundAHandedTensorIsAStrayNamingItsSide) {
  const at::Tensor g = between_margins(at::ones({2, 3}), 4, 0, 0);
  NamedTensors in;
  in.set("x", g);
  const HandedTensors watched(in, {}, {});
  whole_storage(g)[4 + 6 + 1] = 5.0;  // the second element past the end
  const auto changes = watched.changes();
  EXPECT_EQ(changes.now.size(), 0u);  // x itself holds what it held
  ASSERT_EQ(changes.strays.size(), 1u);
  EXPECT_EQ(changes.strays[0].side, "past its end");
  EXPECT_EQ(changes.strays[0].offset, 7);
  watched.restore();
  EXPECT_EQ(whole_storage(g)[11].item<float>(), 0.0f);
}

TEST(GuardedAllocations, AStorePastAnOutputsEndOrBeforeItsStartIsFound) {
  NamedTensors out;
  {
    GuardedAllocations scope;
    const at::Tensor y = at::empty({5}, at::kFloat);
    out.set("y", y);
    EXPECT_TRUE(scope.strays(out).empty());
    float* data = y.data_ptr<float>();
    data[5] = 1.0f;  // into the margin the allocator left: never past the allocation
    auto found = scope.strays(out);
    ASSERT_EQ(found.size(), 1u);
    EXPECT_EQ(found[0].tensor, "y");
    EXPECT_EQ(found[0].site, "past its end");
    EXPECT_EQ(found[0].offset, 5);
    data[-1] = 1.0f;
    EXPECT_EQ(scope.strays(out).size(), 2u);
  }
  GuardedAllocations later;  // a tensor made outside a scope has no margins to check
  NamedTensors plain;
  plain.set("y", at::empty({5}, at::kFloat));
  EXPECT_TRUE(later.strays(plain).empty());
}

// Two rows: `layout` hands a one-row dy as a slice whose padding lies past its end, and
// finds the read too.
TEST(Guard, AnUnmaskedReadPastDysEndIsFoundOnlyByGuard) {
  const char* impl = "kprop_variant_reads_past_end::scaled_tanh";
  for (const std::string property : {"vs_reference", "gradient", "layout", "determinism"})
    EXPECT_FALSE(evaluate(wide(impl, property)).failed()) << property;
  const Verdict v = evaluate(wide(impl, "guard"));
  ASSERT_TRUE(v.failed()) << format_error_table(v);
  ASSERT_EQ(v.symptoms().size(), 1u) << v.signature();
  EXPECT_EQ(v.symptoms()[0].rfind("db varies with what lies past dy's end", 0), 0u) << v.symptoms()[0];
}

TEST(Guard, AStorePastDysEndIsAnOutOfBoundsStoreNamingDyAndTheSide) {
  const char* impl = "kprop_variant_writes_past_end::scaled_tanh";
  for (const std::string property : {"vs_reference", "gradient", "layout", "determinism"})
    EXPECT_FALSE(evaluate(wide(impl, property)).failed()) << property;
  const Verdict v = evaluate(wide(impl, "guard"));
  ASSERT_TRUE(v.failed()) << format_error_table(v);
  EXPECT_EQ(v.symptoms(), (std::vector<std::string>{"out-of-bounds store"})) << v.signature();
  ASSERT_EQ(v.memory.size(), 1u);
  EXPECT_EQ(v.memory[0].tensor, "dy");
  EXPECT_EQ(v.memory[0].site, "past its end, in the backward");
}

// A sum in a new order on every call (random_order.cpp) differs with or without margins:
// that is `determinism`'s finding, and `guard` holds such a kernel to the bound.
TEST(Guard, AKernelSeenToBeNondeterministicIsHeldToTheBound) {
  Case c = wide("kprop_variant_random_order::scaled_tanh", "guard");
  c.set("rows", int64_t{64});
  const Verdict v = evaluate(c);
  EXPECT_EQ(v.status, Verdict::Status::pass) << format_error_table(v);
  EXPECT_TRUE(evaluate([&] { Case d = c; d.property = "determinism"; return d; }()).failed());
}

TEST(Guard, TheCorrectToyPassesWithEveryTensorGuarded) {
  for (uint64_t seed : {1, 2, 3}) {
    const Verdict v = evaluate(tanh_case("toy", 9, "guard", seed));
    EXPECT_EQ(v.status, Verdict::Status::pass) << v.message;
    ASSERT_FALSE(v.tensors.empty());
    EXPECT_EQ(v.tensors[0].check, "guarded");
  }
}

}  // namespace
}  // namespace kprop
