// rms_norm (kernels/rms_norm/rms_norm.cpp), a kernel declared in one file: its row
// emulation passes every property in both casting modes, with and without an offset, also
// at Liger's block-kernel edge of 2^15 rows; each planted variant is found from a cold
// start and shrunk to its known 1-minimal case, which the correct emulation passes.
#include <gtest/gtest.h>

#include "generators/shrink.h"
#include "harness/engine/property.h"
#include "harness/engine/runner.h"
#include "harness/model/kernel.h"
#include "harness/presentation/report.h"
#include "tests/planted.h"
#include "tests/search_options.h"

namespace kprop {
namespace {

SearchOptions options(const std::string& impl, int64_t cases, uint64_t seed,
                      std::vector<std::string> properties, std::map<std::string, int64_t> limits) {
  return search_options("rms_norm", impl, cases, seed, std::move(properties), std::move(limits));
}

const KnownDefect& defect_of(const std::string& impl) { return known_defect_of("rms_norm", impl); }

// Away from the scale edge: 700 cases over the seven properties (neutral skips: no input
// of rms_norm declares a neutral value).
TEST(RmsNorm, TheRowEmulationPassesEveryProperty) {
  const SearchResult r = search(options("rows", 700, 5, {}, {{"rows_at_scale", 0}}));
  ASSERT_FALSE(r.failure) << r.failure->verdict().signature() << "\n"
                          << format_case(r.failure->minimal());
  EXPECT_EQ(r.tally.failed, 0);
  EXPECT_EQ(r.tally.skipped, 100);
  EXPECT_EQ(r.tally.passed, 600);
}

// At the edge (2^15 +- 1 rows), in every dtype and both casting modes, within the bound.
TEST(RmsNorm, TheRowEmulationPassesAtScale) {
  const SearchResult r =
      search(options("rows", 12, 3, {"vs_reference"}, {{"rows_at_scale", 60}, {"max_cols", 8}}));
  ASSERT_FALSE(r.failure) << r.failure->verdict().signature();
  EXPECT_EQ(r.tally.passed, 12);
}

struct Planted {
  std::string impl;
  std::string identity;
  int64_t rows, min_cols;  // its minimal case: these rows, min_cols..2 columns
};
void PrintTo(const Planted& p, std::ostream* os) { *os << p.impl; }

class RmsNormPlanted : public testing::TestWithParam<Planted> {};

TEST_P(RmsNormPlanted, IsFoundFromAColdStartAndShrunkToOneMinimal) {
  const Planted& planted = GetParam();
  const KnownDefect& d = defect_of(planted.impl);
  for (uint64_t seed : {1, 2}) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    const SearchResult r = search(options(planted.impl, 400, seed, {d.property}, d.limits));
    ASSERT_TRUE(r.failure) << planted.impl << " passed 400 cases";
    const Failure& f = *r.failure;
    EXPECT_EQ(f.identity, planted.identity);
    const Case& m = f.minimal();
    const std::string text = format_case(m);
    EXPECT_EQ(m.integer("rows"), planted.rows) << text;
    EXPECT_GE(m.integer("cols"), planted.min_cols) << text;
    EXPECT_LE(m.integer("cols"), 2) << text;
    expect_minimal_finding(d, f, "rows");
  }
}

INSTANTIATE_TEST_SUITE_P(
    Variants, RmsNormPlanted,
    testing::Values(Planted{"rows@offset", "rms_norm/rows@offset/dx {weight}", 1, 2},
                    Planted{"rows@block_tail", "rms_norm/rows@block_tail/dx [last rows]", 32769, 1}),
    [](const testing::TestParamInfo<Planted>& info) {
      return info.param.impl == "rows@offset" ? std::string("offset") : std::string("block_tail");
    });

}  // namespace
}  // namespace kprop
