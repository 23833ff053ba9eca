// The property suites: the reference and kprop's own tiling must pass every property of
// causal_conv1d over thousands of generated cases. A failure here is a bug in kprop
// (or a tolerance that is not derived correctly), and the message is the shrunk case.
#include <gtest/gtest.h>

#include <iostream>

#include "harness/report.h"
#include "harness/runner.h"
#include "tests/test_names.h"

namespace kprop {
namespace {

struct Suite {
  std::string impl;
  std::string property;
  int64_t cases;
};

std::string name_of(const testing::TestParamInfo<Suite>& info) {
  return test_name(info.param.impl + "_" + info.param.property);
}

class CleanImplementation : public testing::TestWithParam<Suite> {};

TEST_P(CleanImplementation, PassesEveryGeneratedCase) {
  const Suite& s = GetParam();
  SearchOptions o;
  o.kernel = "causal_conv1d";
  o.impl = s.impl;
  o.properties = {s.property};
  o.cases = s.cases;
  o.seed = 20261130;
  const SearchResult r = search(o);
  ASSERT_FALSE(r.failure) << r.failure->verdict().signature() << "\n"
                          << format_case(r.failure->minimal())
                          << format_error_table(r.failure->verdict());
  EXPECT_EQ(r.tally.cases, s.cases);
  // Not vacuous: most cases were really checked (skips: a single sequence has nothing to
  // separate; rejections: D the device forward refuses).
  EXPECT_GT(r.tally.passed, s.cases / 2) << format_tally(r.tally);
  std::cout << s.impl << " " << s.property << ": " << format_tally(r.tally) << "\n";
}

std::vector<Suite> suites() {
  std::vector<Suite> all;
  for (const std::string property : {"chunked", "packed", "vs_reference", "cores"})
    all.push_back({"tiled", property, 1000});
  all.push_back({"tiled", "gradient", 400});
  // The reference against itself (vs_reference) or on a hint it ignores (cores) cannot
  // fail: only the relations that call it on other inputs say something about it.
  for (const std::string property : {"chunked", "packed"})
    all.push_back({"reference", property, 1000});
  all.push_back({"reference", "gradient", 400});
  return all;
}

INSTANTIATE_TEST_SUITE_P(Causal1d, CleanImplementation, testing::ValuesIn(suites()), name_of);

}  // namespace
}  // namespace kprop
