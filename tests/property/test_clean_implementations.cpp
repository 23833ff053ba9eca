// The property suites: the reference and kprop's own implementations must pass every
// property of causal_conv1d and geglu over thousands of generated cases. A failure here is a bug in kprop
// (or a tolerance that is not derived correctly), and the message is the shrunk case.
#include <gtest/gtest.h>

#include <iostream>

#include "harness/engine/runner.h"
#include "harness/presentation/report.h"
#include "tests/test_names.h"

namespace kprop {
namespace {

struct Suite {
  std::string kernel;
  std::string impl;
  std::string property;
  int64_t cases;
};

std::string name_of(const testing::TestParamInfo<Suite>& info) {
  return test_name(info.param.kernel + "_" + info.param.impl + "_" + info.param.property);
}

class CleanImplementation : public testing::TestWithParam<Suite> {};

TEST_P(CleanImplementation, PassesEveryGeneratedCase) {
  const Suite& s = GetParam();
  SearchOptions o;
  o.kernel = s.kernel;
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
  std::cout << s.kernel << " " << s.impl << " " << s.property << ": " << format_tally(r.tally) << "\n";
}

std::vector<Suite> suites() {
  std::vector<Suite> all;
  for (const std::string property : {"chunked", "packed", "vs_reference", "cores"})
    all.push_back({"causal_conv1d", "tiled", property, 1000});
  all.push_back({"causal_conv1d", "tiled", "gradient", 400});
  // The reference against itself (vs_reference) or on a hint it ignores (cores) cannot
  // fail: only the relations that call it on other inputs say something about it.
  for (const std::string property : {"chunked", "packed"})
    all.push_back({"causal_conv1d", "reference", property, 1000});
  all.push_back({"causal_conv1d", "reference", "gradient", 400});

  // geglu: both device grids and the policy itself. `policy` skips the policy and the
  // reference (nothing to compare), vs_reference the reference (itself).
  for (const std::string impl : {"flat", "rows"}) {
    for (const std::string property : {"vs_reference", "policy"})
      all.push_back({"geglu", impl, property, 3000});
    all.push_back({"geglu", impl, "invariance", 1500});
    all.push_back({"geglu", impl, "gradient", 1000});
  }
  all.push_back({"geglu", "torch_policy", "vs_reference", 3000});
  all.push_back({"geglu", "torch_policy", "invariance", 1500});
  all.push_back({"geglu", "torch_policy", "gradient", 1000});
  all.push_back({"geglu", "reference", "invariance", 1500});
  all.push_back({"geglu", "reference", "gradient", 1000});
  return all;
}

INSTANTIATE_TEST_SUITE_P(Kernels, CleanImplementation, testing::ValuesIn(suites()), name_of);

}  // namespace
}  // namespace kprop
