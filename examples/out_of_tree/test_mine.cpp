// A GoogleTest suite that checks its own kernel (mine_kernels.cpp) with kprop's properties,
// through the installed library (find_package(kprop): kprop::harness): search() draws
// cases from causal_conv1d's schema and runs every property on the kernel; evaluate()
// judges one case.
#include <gtest/gtest.h>

#include "harness/engine/property.h"
#include "harness/engine/runner.h"

namespace {

kprop::SearchOptions search_of(const std::string& impl, int64_t cases) {
  kprop::SearchOptions o;
  o.kernel = "causal_conv1d";
  o.impl = impl;
  o.cases = cases;
  o.shrink_seconds = 20;
  return o;
}

TEST(MineCausalConv1d, PassesEveryProperty) {
  const kprop::SearchResult r = kprop::search(search_of("mine::causal_conv1d", 300));
  EXPECT_FALSE(r.failure) << "kprop found " << r.failure->identity;
  EXPECT_EQ(r.tally.cases, 300);
  // Every case passed, or was one a property does not apply to (packed on one sequence).
  EXPECT_EQ(r.tally.failed + r.tally.rejected, 0);
  EXPECT_EQ(r.tally.passed + r.tally.skipped, 300);
  EXPECT_GT(r.tally.passed, 200);
}

TEST(MineCausalConv1d, PlantedDefectIsFoundAndShrunk) {
  const kprop::SearchResult r = kprop::search(search_of("mine_buggy::causal_conv1d", 300));
  ASSERT_TRUE(r.failure) << "the bias added after the activation went unseen";
  // The bias after a silu: the minimal case needs both.
  EXPECT_NE(r.failure->identity.find("mine_buggy::causal_conv1d/y"), std::string::npos)
      << r.failure->identity;
  const kprop::Case& minimal = r.failure->minimal();
  EXPECT_EQ(kprop::evaluate(minimal).status, kprop::Verdict::Status::fail);
  // The same case on the correct kernel passes.
  kprop::Case fixed = minimal;
  fixed.impl = "mine::causal_conv1d";
  EXPECT_EQ(kprop::evaluate(fixed).status, kprop::Verdict::Status::pass);
}

}  // namespace
