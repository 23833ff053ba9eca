// The cores property finds a result that depends on the core count from the tensors
// alone: a test-only variant of the correct tiled kernel whose y is scaled by a tiny
// factor unless num_cores == 1 (kprop_variant_core_skew, tests/kernels/
// causal_conv1d_variants/) fails `cores` with a tensor symptom and no memory finding,
// whether the case has one core (compared with 48) or many (compared with one).
#include <gtest/gtest.h>

#include <iostream>

#include "harness/engine/property.h"
#include "harness/engine/runner.h"
#include "harness/presentation/report.h"

namespace kprop {
namespace {

constexpr const char* kSkew = "kprop_variant_core_skew::causal_conv1d";

SearchOptions cores_search(const std::string& impl, DType dtype, int64_t cases) {
  SearchOptions o;
  o.kernel = "causal_conv1d";
  o.impl = impl;
  o.properties = {"cores"};
  o.dtypes = {dtype};
  o.cases = cases;
  o.seed = 5;
  o.shrink = false;
  return o;
}

void expect_tensor_symptom_only(const Verdict& v) {
  EXPECT_TRUE(v.failed());
  EXPECT_EQ(v.property, "cores");
  EXPECT_TRUE(v.memory.empty()) << v.signature();
  bool y_failed = false;
  for (const auto& t : v.tensors) {
    if (t.tensor == "y" && !t.passed()) {
      y_failed = true;
      EXPECT_EQ(t.check, "retiled");
    }
    // Only y is skewed: everything else agrees across tilings.
    if (t.tensor != "y") {
      EXPECT_TRUE(t.passed()) << t.label() << "\n" << format_error_table(v);
    }
  }
  EXPECT_TRUE(y_failed) << v.signature() << "\n" << format_error_table(v);
}

TEST(CoresProperty, FindsACoreDependentResultWithNoMemoryFinding) {
  for (const DType dtype : {DType::float32, DType::bfloat16}) {
    const SearchResult r = search(cores_search(kSkew, dtype, 200));
    ASSERT_TRUE(r.failure) << to_string(dtype) << ": " << format_tally(r.tally);
    expect_tensor_symptom_only(r.failure->found_verdict);
    std::cout << to_string(dtype) << ": failed at case " << r.failure->case_number << ": "
              << r.failure->found_verdict.signature() << "\n";
  }
}

// Both directions of the retiling: a one-core case is compared with 48 cores, any other
// with one core; the skewed call is on a different side each time.
TEST(CoresProperty, FailsForOneCoreAndForManyCores) {
  for (const int64_t cores : {int64_t{1}, int64_t{48}}) {
    SearchOptions o = cores_search(kSkew, DType::float32, 100);
    o.fixed["num_cores"] = ParamValue(cores);
    const SearchResult r = search(o);
    ASSERT_TRUE(r.failure) << cores << " cores: " << format_tally(r.tally);
    EXPECT_EQ(r.failure->found.integer("num_cores"), cores);
    expect_tensor_symptom_only(r.failure->found_verdict);
  }
}

// The control: the correct tiled kernel passes the same cases.
TEST(CoresProperty, TheCorrectKernelPassesTheSameCases) {
  for (const DType dtype : {DType::float32, DType::bfloat16}) {
    const SearchResult r = search(cores_search("tiled", dtype, 200));
    EXPECT_FALSE(r.failure) << r.failure->found_verdict.signature();
    EXPECT_GT(r.tally.passed, 100) << format_tally(r.tally);
  }
}

}  // namespace
}  // namespace kprop
