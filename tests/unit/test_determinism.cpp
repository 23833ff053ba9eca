// `determinism` (harness/engine/properties/determinism.cpp): the same call repeated gives the same
// bits. A backward that sums db in an order drawn anew on every call
// (tests/kernels/scaled_tanh_variants/random_order.cpp) is within every bound, so every
// other property passes it; this one fails it, and passes it once it is declared
// nondeterministic (then held to the bound, and the rows say so).
#include <gtest/gtest.h>

#include "harness/engine/property.h"
#include "harness/execution/takes.h"
#include "harness/model/kernel.h"
#include "harness/presentation/report.h"
#include "tests/scaled_tanh_case.h"

namespace kprop {
namespace {

const char* kRandomOrder = "kprop_variant_random_order::scaled_tanh";

Case many_rows(const std::string& impl, const std::string& property) {
  Case c = tanh_case(impl, 9, property, 5);
  c.set("rows", int64_t{64});
  return c;
}

TEST(Determinism, ASumInARandomOrderDiffersBetweenCallsAndOnlyThisPropertySeesIt) {
  const Verdict v = evaluate(many_rows(kRandomOrder, "determinism"));
  ASSERT_TRUE(v.failed()) << format_error_table(v);
  ASSERT_EQ(v.symptoms().size(), 1u) << v.signature();
  EXPECT_EQ(v.symptoms()[0].rfind("db differs between calls", 0), 0u) << v.symptoms()[0];
  for (const std::string property : {"vs_reference", "gradient", "layout"})
    EXPECT_FALSE(evaluate(many_rows(kRandomOrder, property)).failed()) << property;
}

TEST(Determinism, DeclaredNondeterministicItIsHeldToTheBoundAndTheRowsSaySo) {
  Takes t;
  t.nondeterministic = true;
  declare_takes("scaled_tanh", kRandomOrder, t);
  const Verdict v = evaluate(many_rows(kRandomOrder, "determinism"));
  declare_takes("scaled_tanh", kRandomOrder, Takes{});
  EXPECT_EQ(v.status, Verdict::Status::pass) << v.message;
  ASSERT_FALSE(v.tensors.empty());
  EXPECT_EQ(v.tensors[0].check, "twice, within the bound: declared nondeterministic");
}

TEST(Determinism, TheCorrectToyGivesTheSameBitsAndSaysItWasHeldToThem) {
  for (uint64_t seed : {1, 2}) {
    const Verdict v = evaluate(tanh_case("toy", 9, "determinism", seed));
    EXPECT_EQ(v.status, Verdict::Status::pass) << v.message;
    ASSERT_FALSE(v.tensors.empty());
    EXPECT_EQ(v.tensors[0].check, "twice, bit for bit");
  }
}

}  // namespace
}  // namespace kprop
