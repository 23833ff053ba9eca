// The derived bounds are tight enough to fail: test-only variants of the correct tiled
// causal_conv1d with one extra rounding or one dropped term
// (tests/kernels/causal_conv1d_variants/) fail vs_reference (and packed where the defect
// differs between the calls it compares) within a few hundred generated cases, and the
// correct tiled kernel uses a visible share of every bound, so that bounds made many times
// looser than derived would be caught here.
#include <gtest/gtest.h>

#include <algorithm>
#include <iostream>
#include <map>

#include "generators/choices.h"
#include "generators/draw.h"
#include "harness/kernel_info.h"
#include "harness/property.h"
#include "harness/report.h"
#include "harness/runner.h"
#include "tests/test_names.h"

namespace kprop {
namespace {

constexpr int64_t kCases = 300;

struct Detect {
  std::string impl;
  std::string property;
  std::vector<DType> dtypes;  // empty: the property's own
  std::string tensor;         // the failing tensor the defect must show
};

void PrintTo(const Detect& d, std::ostream* os) { *os << d.impl << " " << d.property; }

std::string name_of(const testing::TestParamInfo<Detect>& info) {
  std::string name = info.param.impl.substr(0, info.param.impl.find("::")) + "_" +
                     info.param.property;
  for (const DType d : info.param.dtypes) name += "_" + to_string(d);
  return test_name(name);
}

class VariantFails : public testing::TestWithParam<Detect> {};

TEST_P(VariantFails, WithinAFewHundredCases) {
  const Detect& d = GetParam();
  SearchOptions o;
  o.kernel = "causal_conv1d";
  o.impl = d.impl;
  o.properties = {d.property};
  o.dtypes = d.dtypes;
  o.cases = kCases;
  o.seed = 7;
  o.shrink = false;  // the found case is enough: detection is the point here
  const SearchResult r = search(o);
  ASSERT_TRUE(r.failure) << d.impl << " passed " << kCases << " cases of " << d.property << ": "
                         << format_tally(r.tally);
  const Verdict& v = r.failure->found_verdict;
  EXPECT_EQ(v.property, d.property);
  bool tensor_failed = false;
  for (const auto& t : v.tensors)
    if (t.tensor == d.tensor && !t.passed()) tensor_failed = true;
  EXPECT_TRUE(tensor_failed) << v.signature() << "\n" << format_error_table(v);
  EXPECT_TRUE(v.memory.empty()) << v.signature();
  std::cout << d.impl << " " << d.property << ": failed at case " << r.failure->case_number
            << ": " << v.signature() << "\n";
}

std::vector<Detect> detections() {
  return {
      {"kprop_variant_y_rounded::causal_conv1d", "vs_reference", {DType::float32}, "y"},
      {"kprop_variant_y_coarse::causal_conv1d", "vs_reference", {DType::float32}, "y"},
      {"kprop_variant_dw_rounded::causal_conv1d", "vs_reference", {DType::float32}, "dw"},
      {"kprop_variant_dw_dropped::causal_conv1d", "vs_reference", {}, "dw"},
      {"kprop_variant_dw_dropped::causal_conv1d", "vs_reference", {DType::bfloat16}, "dw"},
      // Packed drops the last row of every sequence's own call but only the last row of
      // the packed call: the relation sees it too.
      {"kprop_variant_dw_dropped::causal_conv1d", "packed", {}, "dw"},
      {"kprop_variant_core_skew::causal_conv1d", "vs_reference", {DType::float32}, "y"},
      // Rounding to bfloat16 after two tilings summed in different orders: the two calls
      // `cores` compares land on different bfloat16 neighbours, 2^-8 apart.
      {"kprop_variant_dw_rounded::causal_conv1d", "cores", {DType::float32}, "dw"},
  };
}

INSTANTIATE_TEST_SUITE_P(Causal1d, VariantFails, testing::ValuesIn(detections()), name_of);

// The correct kernel's largest error over a few hundred cases, as a share of its bound,
// per tensor and dtype. A bound 100 times looser than derived leaves every share below
// 1/100 of what it is now; these floors sit well above that.
TEST(BoundUsage, CorrectTiledUsesAVisibleShareOfEveryBound) {
  const KernelInfo& kernel = find_kernel("causal_conv1d");
  std::map<std::string, double> worst;  // "dtype tensor" -> max error/bound
  std::map<std::string, int64_t> seen;
  for (const DType dtype : {DType::float32, DType::bfloat16}) {
    SearchOptions o;
    o.kernel = "causal_conv1d";
    o.impl = "tiled";
    o.properties = {"vs_reference"};
    o.dtypes = {dtype};
    for (int64_t i = 0; i < kCases; ++i) {
      const CaseSpace space = search_space(o, "vs_reference", i);
      RandomChoices choices(case_seed(11, i));
      const Case c = draw_case(kernel.schema(), choices, space);
      const Verdict v = evaluate(c);
      if (v.status == Verdict::Status::rejected || v.status == Verdict::Status::skipped) continue;
      ASSERT_FALSE(v.failed()) << v.signature() << "\n" << format_error_table(v);
      for (const auto& t : v.tensors) {
        const std::string key = to_string(dtype) + " " + t.tensor;
        worst[key] = std::max(worst[key], t.error_over_bound);
        ++seen[key];
      }
    }
  }
  for (const auto& [key, share] : worst) {
    std::cout << key << ": max error/bound " << share << " over " << seen[key] << " cases\n";
    // ht is an exact copy: its bound is the smallest normal and its error zero.
    if (key.size() >= 3 && key.compare(key.size() - 3, 3, " ht") == 0) {
      EXPECT_EQ(share, 0.0) << key;
      continue;
    }
    EXPECT_GE(share, 0.05) << key << ": the correct kernel never comes near this bound";
  }
  for (const std::string tensor : {"y", "dx", "dw", "db", "dh0"})
    for (const DType dtype : {DType::float32, DType::bfloat16})
      EXPECT_GT(seen[to_string(dtype) + " " + tensor], 20) << to_string(dtype) << " " << tensor;
}

}  // namespace
}  // namespace kprop
