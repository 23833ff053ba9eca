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

#include <functional>
#include <iostream>

#include "generators/rapidcheck_cases.h"
#include "harness/engine/properties/calls.h"
#include "harness/engine/property.h"
#include "harness/model/kernel.h"
#include "harness/model/verdict.h"

namespace kprop {
namespace {

struct Counts {
  int drawn = 0, checked = 0, skipped = 0, rejected = 0;
};

// RapidCheck's own loop over `max_success` passing cases (its default: 100).
bool rc_check(const std::string& description, int max_success, const std::function<void()>& body) {
  rc::detail::TestParams params = rc::detail::configuration().testParams;
  params.maxSuccess = max_success;
  rc::detail::TestMetadata metadata;
  metadata.id = metadata.description = description;
  const auto result = rc::detail::checkTestable(body, metadata, params);
  rc::detail::printResultMessage(result, std::cerr);
  std::cerr << std::endl;
  return result.is<rc::detail::SuccessResult>();
}

Counts holds_for(const std::string& kernel_name, const std::string& impl,
                 const std::string& property, std::vector<DType> dtypes, int max_success = 100) {
  const Kernel& kernel = find_kernel(kernel_name);
  CaseSpace space;
  space.impl = impl;
  space.property = property;
  space.dtypes = std::move(dtypes);
  Counts counts;
  const bool ok = rc_check(property, max_success, [&] {
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
  std::cout << kernel_name << " " << impl << " " << property << ": " << counts.checked << " of "
            << counts.drawn << " drawn cases checked (" << counts.skipped << " skipped, "
            << counts.rejected << " rejected)\n";
  testing::Test::RecordProperty("checked", counts.checked);
  testing::Test::RecordProperty("drawn", counts.drawn);
  return counts;
}

Counts holds_for_tiled(const std::string& property, std::vector<DType> dtypes) {
  return holds_for("causal_conv1d", "tiled", property, std::move(dtypes));
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

// geglu owes exactness: the device grids round where the framework rounds, bit for bit,
// over thousands of RapidCheck cases (block edges, layouts, core counts, magnitudes).
constexpr int kExactCases = 2000;

TEST(RapidCheckGeglu, RowsAndFlatAreBitExactWithThePolicy) {
  for (const std::string impl : {"rows", "flat"}) {
    const Counts n = holds_for("geglu", impl, "policy", {DType::bfloat16, DType::float16}, kExactCases);
    EXPECT_EQ(n.checked, kExactCases) << impl;
    EXPECT_EQ(n.drawn, kExactCases) << impl << ": policy skipped cases it should check";
  }
}

TEST(RapidCheckGeglu, RowsAndFlatAreInvariantAcrossBlocksCoresAndLayouts) {
  for (const std::string impl : {"rows", "flat"}) {
    const Counts n = holds_for("geglu", impl, "invariance",
                               {DType::float32, DType::bfloat16, DType::float16}, kExactCases / 2);
    EXPECT_EQ(n.checked, kExactCases / 2) << impl;
  }
}

// In float32 the `policy` property does not look (the product is then the only rounding
// after gelu); the emulations still agree with torch_policy bit for bit, since all three
// take gelu as the float64 value rounded to fp32 (kernels/geglu/gelu.h).
TEST(RapidCheckGeglu, RowsAndFlatAreBitExactWithThePolicyInFloat32) {
  const Kernel& kernel = find_kernel("geglu");
  CaseSpace space;
  space.impl = "flat";
  space.dtypes = {DType::float32};
  const auto resolve = [&](const std::string& name) {
    for (const auto& impl : kernel.implementations())
      if (impl.name == name) return impl.op_namespace;
    throw std::runtime_error("no implementation " + name);
  };
  int checked = 0;
  const bool ok = rc_check("float32 bit-exact", kExactCases, [&] {
    const Problem p = kernel.materialize(*cases_of(kernel.schema(), space));
    const auto policy = kernel.forward(resolve("torch_policy"), p);
    const NamedTensors cot = random_cotangents(kernel, p, policy);
    const auto policy_grads = kernel.backward(resolve("torch_policy"), p, cot);
    for (const std::string impl : {"rows", "flat"}) {
      const auto rows = compare_exact(kernel, p, kernel.forward(resolve(impl), p), policy, "deviates", "");
      const auto grads = compare_exact(kernel, p, kernel.backward(resolve(impl), p, cot),
                                       policy_grads, "deviates", "");
      for (const auto* set : {&rows, &grads})
        for (const auto& row : *set) RC_ASSERT(row.passed());
    }
    ++checked;
  });
  EXPECT_TRUE(ok);
  EXPECT_EQ(checked, kExactCases);
}

}  // namespace
}  // namespace kprop
