// Detection for geglu: from a cold start, kprop's search finds each variant of the
// flatten-1D port from several fixed seeds, shrinks it to a 1-minimal case of the
// expected shape and names it as the defect it is — a deviation from the policy within
// the derived bound (not a bug) apart from an error outside it (a bug) — while the
// correct port passes the same minimal case.
#include <gtest/gtest.h>

#include "harness/engine/runner.h"
#include "harness/model/kernel.h"
#include "kernels/geglu/shape.h"
#include "tests/detection/minimality.h"
#include "tests/test_names.h"

namespace kprop {
namespace {

const Kernel& geglu() { return find_kernel("geglu"); }

const std::vector<uint64_t> kSeeds{11, 22, 33};
constexpr int64_t kCases = 2000;

KnownDefect defect(const std::string& name) {
  for (const auto& d : geglu().known_defects())
    if (d.name == name) return d;
  throw std::runtime_error("no known defect " + name);
}

HuntResult hunt_for(const KnownDefect& d, const std::string& impl, uint64_t seed) {
  SearchOptions o;
  o.kernel = "geglu";
  o.impl = impl;
  o.properties = {d.property};
  o.limits = d.limits;
  o.cases = kCases;
  o.seed = seed;
  return hunt(o, [&](const Failure& f) { return shows(d, f); });
}

struct Expected {
  std::string defect, impl, identity;
  bool within_bound;           // a deviation from the policy, not an error outside the bound
  std::string rounding_point;  // what the deviation is named after
};

void PrintTo(const Expected& e, std::ostream* os) { *os << e.defect << " on " << e.impl; }

class VariantIsFound : public testing::TestWithParam<Expected> {};

TEST_P(VariantIsFound, FromSeveralSeedsShrunkAndNamed) {
  const Expected& e = GetParam();
  const KnownDefect d = defect(e.defect);
  for (uint64_t seed : kSeeds) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    const HuntResult h = hunt_for(d, e.impl, seed);
    ASSERT_TRUE(h.match) << e.defect << " not found in " << kCases << " cases";
    const Failure& f = *h.match;
    EXPECT_EQ(f.identity, e.identity);
    expect_one_minimal(f);
    const Verdict v = evaluate(f.minimal());
    const std::string text = summary(geglu().schema(), f.minimal());
    // Within the bound: vs_reference passes the minimal case, the policy row says by how
    // many ulps and how much of the bound the tensor uses. Outside: vs_reference fails.
    Case direct = f.minimal();
    direct.property = "vs_reference";
    EXPECT_EQ(evaluate(direct).failed(), !e.within_bound) << text;
    for (const auto& row : v.tensors)
      if (row.exact() && !row.passed()) {
        EXPECT_TRUE(e.within_bound) << text;
        EXPECT_GE(row.max_ulps, 1);
        EXPECT_LE(row.max_ulps, 2) << "a rounding point moved: an ulp or two";
        EXPECT_GT(row.error_over_bound, 0);
        EXPECT_LE(row.error_over_bound, 1);
        EXPECT_NE(row.rounding_point.find(e.rounding_point), std::string::npos)
            << row.rounding_point;
      }
    // The correct port passes the same case, property and data.
    Case fixed = f.minimal();
    fixed.impl = "flat";
    const Verdict after = evaluate(fixed);
    EXPECT_EQ(after.status, Verdict::Status::pass) << text << ": " << after.signature();
  }
}

INSTANTIATE_TEST_SUITE_P(
    Geglu, VariantIsFound,
    testing::Values(
        Expected{"gelu in the input dtype", "flat@gelu_in_dtype", "geglu/flat@gelu_in_dtype/c",
                 false, ""},
        Expected{"product from the fp32 gelu", "flat@fp32_product",
                 "geglu/flat@fp32_product/c deviates from policy", true,
                 "product from the fp32 gelu"},
        Expected{"db without the round trip", "flat@bwd_no_roundtrip",
                 "geglu/flat@bwd_no_roundtrip/db deviates from policy", true,
                 "db from the fp32 gelu"},
        Expected{"rows read as if contiguous", "flat@assumes_contiguous",
                 "geglu/flat@assumes_contiguous/c {layout=fused}", false, ""}),
    [](const auto& info) { return test_name(info.param.impl); });

// The contiguous-only port is right on contiguous inputs: only the fused layout shows it,
// in a case of two rows (the first row is read right).
TEST(GegluDetectionShape, ContiguousAssumptionNeedsTheFusedLayoutAndASecondRow) {
  const auto h = hunt_for(defect("rows read as if contiguous"), "flat@assumes_contiguous", 11);
  ASSERT_TRUE(h.match);
  const auto s = geglu::shape_of(h.match->minimal());
  EXPECT_EQ(s.layout, geglu::Layout::fused);
  EXPECT_EQ(s.kernel_rows(), 2);
  EXPECT_EQ(s.cols, 1);
  Case contiguous = h.match->minimal();
  contiguous.set("layout", std::string("contiguous"));
  EXPECT_FALSE(evaluate(contiguous).failed());
}

// The policy property keeps the two stories apart in the symptom: a tensor outside the
// bound is named as vs_reference names it, never as a policy deviation too (another
// tensor of the same case may deviate within its bound: that one says so).
TEST(GegluDetectionSymptoms, OutsideTheBoundIsNoPolicyDeviation) {
  const auto h = hunt_for(defect("gelu in the input dtype"), "flat@gelu_in_dtype", 22);
  ASSERT_TRUE(h.match);
  Case c = h.match->minimal();
  c.property = "policy";
  const Verdict v = evaluate(c);
  ASSERT_TRUE(v.failed());
  for (const auto& s : v.symptoms()) EXPECT_NE(s.rfind("c deviates", 0), 0u) << s;
  EXPECT_TRUE(v.shows("c")) << v.signature();
}

// Every variant has its own identity: four defects, four corpus entries.
TEST(GegluDetectionIdentity, EveryVariantHasItsOwnIdentity) {
  std::set<std::string> identities;
  for (const auto& d : geglu().known_defects()) {
    const auto h = hunt_for(d, d.impls.front(), kSeeds[0]);
    ASSERT_TRUE(h.match) << d.name;
    identities.insert(h.match->identity);
  }
  EXPECT_EQ(identities.size(), geglu().known_defects().size());
}

}  // namespace
}  // namespace kprop
