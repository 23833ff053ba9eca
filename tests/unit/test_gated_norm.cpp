// gated_norm (kernels/gated_norm/gated_norm.cpp), a kernel declared in one file: its
// emulation of fla's fused norm-and-gate passes every property for both norms and both
// gates, with and without w, b, a residual and prenorm; each planted variant is found from
// a cold start and shrunk to its known 1-minimal case, which the correct emulation passes.
#include <gtest/gtest.h>

#include <algorithm>

#include "generators/shrink.h"
#include "harness/engine/property.h"
#include "harness/engine/runner.h"
#include "harness/model/identity.h"
#include "harness/model/kernel.h"
#include "harness/presentation/report.h"
#include "tests/planted.h"
#include "tests/search_options.h"

namespace kprop {
namespace {

SearchOptions options(const std::string& impl, int64_t cases, uint64_t seed,
                      std::vector<std::string> properties = {}) {
  return search_options("gated_norm", impl, cases, seed, std::move(properties));
}

const KnownDefect& defect_of(const std::string& impl) { return known_defect_of("gated_norm", impl); }

// 1400 cases over the seven properties, 200 each. neutral skips none: w, b and the residual can each
// be left out alone in every case.
TEST(GatedNorm, TheRowEmulationPassesEveryProperty) {
  const SearchResult r = search(options("rows", 1400, 5));
  ASSERT_FALSE(r.failure) << r.failure->verdict().signature() << "\n"
                          << format_case(r.failure->minimal());
  EXPECT_EQ(r.tally.failed, 0);
  EXPECT_EQ(r.tally.passed, 1400);
}

struct Planted {
  std::string impl;
  std::vector<std::string> identities;  // of its minimal cases, by the data drawn
};
void PrintTo(const Planted& p, std::ostream* os) { *os << p.impl; }

class GatedNormPlanted : public testing::TestWithParam<Planted> {};

TEST_P(GatedNormPlanted, IsFoundFromAColdStartAndShrunkToOneMinimal) {
  const Planted& planted = GetParam();
  const KnownDefect& d = defect_of(planted.impl);
  for (uint64_t seed : {1, 2, 3}) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    const HuntResult h = hunt(options(planted.impl, 400, seed, {d.property}),
                              [&](const Failure& f) { return symptom_of(f.identity) == d.symptom; });
    ASSERT_TRUE(h.match) << planted.impl << " showed no " << d.symptom << " in 400 cases";
    const Failure& f = *h.match;
    const Case& m = f.minimal();
    const std::string text = format_case(m);
    EXPECT_NE(std::find(planted.identities.begin(), planted.identities.end(), f.identity),
              planted.identities.end()) << f.identity;
    expect_minimal_finding(d, f, "rows");
  }
}

INSTANTIATE_TEST_SUITE_P(
    Variants, GatedNormPlanted,
    // rows@eps shows where a row's rms is small: one column for RMS norm, two for layer norm.
    testing::Values(Planted{"rows@eps", {"gated_norm/rows@eps/y", "gated_norm/rows@eps/y {norm=layer}"}},
                    Planted{"rows@residual", {"gated_norm/rows@residual/dx {residual}"}}),
    [](const testing::TestParamInfo<Planted>& info) {
      return info.param.impl == "rows@eps" ? std::string("eps") : std::string("residual");
    });

}  // namespace
}  // namespace kprop
