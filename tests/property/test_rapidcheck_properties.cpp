// The same properties driven by RapidCheck itself (rc::check): RapidCheck draws from the
// kernel's schema through kprop's one generator (generators/rapidcheck_cases.h), shrinks
// along the schema's steps and reports the minimal case in its usual format. kprop's
// runner adds identity-keeping shrinking and the corpus; this suite keeps kprop honest as
// a plain RapidCheck user.
//
// A skipped case (packed on one sequence) or a rejected one (a D the device refuses) is
// discarded, never counted as a pass, and each property must really check a minimum
// share of what RapidCheck drew: a generator that drifted into cases a property cannot
// use would otherwise pass vacuously.
#include <gtest/gtest.h>
#include <rapidcheck.h>

#include <iostream>

#include "generators/rapidcheck_cases.h"
#include "harness/kernel_info.h"
#include "harness/property.h"

namespace kprop {
namespace {

struct Counts {
  int drawn = 0, checked = 0, skipped = 0, rejected = 0;
};

Counts holds_for_tiled(const std::string& property, std::vector<DType> dtypes) {
  const KernelInfo& kernel = find_kernel("causal_conv1d");
  CaseSpace space;
  space.impl = "tiled";
  space.property = property;
  space.dtypes = std::move(dtypes);
  Counts counts;
  const bool ok = rc::check(property, [&] {
    const Case c = *cases_of(kernel.schema(), space);
    const Verdict v = evaluate(c);
    ++counts.drawn;
    if (v.status == Verdict::Status::skipped) ++counts.skipped;
    if (v.status == Verdict::Status::rejected) ++counts.rejected;
    RC_PRE(v.status == Verdict::Status::pass || v.status == Verdict::Status::fail);
    ++counts.checked;
    RC_ASSERT_FALSE(v.failed());
  });
  EXPECT_TRUE(ok) << property << ": RapidCheck found a counterexample (see above)";
  std::cout << property << ": " << counts.checked << " of " << counts.drawn
            << " drawn cases checked (" << counts.skipped << " skipped, " << counts.rejected
            << " rejected)\n";
  testing::Test::RecordProperty("checked", counts.checked);
  testing::Test::RecordProperty("drawn", counts.drawn);
  return counts;
}

// RapidCheck runs 100 successful cases; discards come on top of them.
constexpr int kRapidCheckCases = 100;

TEST(RapidCheckTiled, MatchesReferenceWithinDerivedBounds) {
  const Counts n = holds_for_tiled("vs_reference", {DType::float32, DType::bfloat16, DType::float16});
  EXPECT_EQ(n.checked, kRapidCheckCases);
  EXPECT_GE(n.checked, n.drawn * 0.8) << "rejections crowd out vs_reference";
}

TEST(RapidCheckTiled, ChunkedEqualsWhole) {
  const Counts n = holds_for_tiled("chunked", {DType::float32, DType::bfloat16});
  EXPECT_EQ(n.checked, kRapidCheckCases);
  EXPECT_GE(n.checked, n.drawn * 0.7) << "most chunked draws had nothing to split";
}

TEST(RapidCheckTiled, PackedEqualsSeparate) {
  const Counts n = holds_for_tiled("packed", {DType::float32});
  EXPECT_EQ(n.checked, kRapidCheckCases);
  // A single sequence has nothing to separate: about 40% of draws.
  EXPECT_GE(n.checked, n.drawn * 0.45) << "most packed draws were a single sequence";
  EXPECT_GT(n.skipped, 0) << "single sequences were never drawn";
}

TEST(RapidCheckTiled, GradientMatchesFiniteDifferences) {
  const Counts n = holds_for_tiled("gradient", {DType::float64});
  EXPECT_EQ(n.checked, kRapidCheckCases);
  EXPECT_GE(n.checked, n.drawn * 0.8);
}

}  // namespace
}  // namespace kprop
