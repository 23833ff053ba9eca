// layer_norm (kernels/layer_norm/layer_norm.cpp), a kernel declared in one file: its
// emulation of Liger's row kernel passes every property, with and without w and b, also at
// the backward grid's edge; each planted variant is found from a cold start and shrunk to
// its known 1-minimal case, which the correct emulation passes.
#include <gtest/gtest.h>

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
                      std::vector<std::string> properties = {},
                      std::map<std::string, int64_t> limits = {}) {
  return search_options("layer_norm", impl, cases, seed, std::move(properties), std::move(limits));
}

const KnownDefect& defect_of(const std::string& impl) { return known_defect_of("layer_norm", impl); }

// 1400 cases over the seven properties, 200 each. neutral skips none: w and b can each
// be left out alone in every case.
TEST(LayerNorm, TheRowEmulationPassesEveryProperty) {
  const SearchResult r = search(options("rows", 1400, 5));
  ASSERT_FALSE(r.failure) << r.failure->verdict().signature() << "\n"
                          << format_case(r.failure->minimal());
  EXPECT_EQ(r.tally.failed, 0);
  EXPECT_EQ(r.tally.passed, 1400);
}

// At the grid's edge (131 to 133 rows: past 132, a program sums two rows into its partial),
// in every dtype, within the bound.
TEST(LayerNorm, TheRowEmulationPassesAtTheGridsEdge) {
  for (const int64_t rows : {131, 132, 133}) {
    SearchOptions o = options("rows", 8, 3, {"vs_reference"}, {{"max_cols", 8}});
    o.fixed = {{"rows", rows}};
    const SearchResult r = search(o);
    ASSERT_FALSE(r.failure) << rows << ": " << r.failure->verdict().signature();
    EXPECT_EQ(r.tally.passed, 8);
  }
}

struct Planted {
  std::string impl;
  std::string identity;
};
void PrintTo(const Planted& p, std::ostream* os) { *os << p.impl; }

class LayerNormPlanted : public testing::TestWithParam<Planted> {};

// hunt: past any other defect the variant shows on the way (rows@bf16 also shows dx and dw).
TEST_P(LayerNormPlanted, IsFoundFromAColdStartAndShrunkToOneMinimal) {
  const Planted& planted = GetParam();
  const KnownDefect& d = defect_of(planted.impl);
  for (uint64_t seed : {1, 2, 3}) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    const HuntResult h = hunt(options(planted.impl, 400, seed, {d.property}, d.limits),
                              [&](const Failure& f) { return symptom_of(f.identity) == d.symptom; });
    ASSERT_TRUE(h.match) << planted.impl << " showed no " << d.symptom << " in 400 cases";
    const Failure& f = *h.match;
    const Case& m = f.minimal();
    const std::string text = format_case(m);
    EXPECT_EQ(f.identity, planted.identity);
    expect_minimal_finding(d, f, "rows");
  }
}

INSTANTIATE_TEST_SUITE_P(
    Variants, LayerNormPlanted,
    testing::Values(Planted{"rows@pow2", "layer_norm/rows@pow2/y"},
                    Planted{"rows@bf16", "layer_norm/rows@bf16/db {bias}"}),
    [](const testing::TestParamInfo<Planted>& info) {
      return info.param.impl == "rows@pow2" ? std::string("pow2") : std::string("bf16");
    });

}  // namespace
}  // namespace kprop
