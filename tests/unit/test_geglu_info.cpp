// geglu's Kernel as the generic properties see it: materialized layouts, equivalent
// cases, the derived bounds (tight enough that the correct grid uses a visible share of
// them, never more than all of them; infinite where float16 overflows) and the names of
// the rounding points a deviation from the policy is explained by.
#include <gtest/gtest.h>

#include <algorithm>
#include <iostream>

#include "generators/draw.h"
#include "harness/engine/properties/calls.h"
#include "harness/engine/property.h"
#include "harness/model/host_values.h"
#include "harness/model/kernel.h"
#include "harness/model/verdict.h"

namespace kprop {
namespace {

const Kernel& geglu() { return find_kernel("geglu"); }

Case case_of(int64_t rows, int64_t cols, const std::string& layout, DType dtype,
             const std::string& impl = "flat", int64_t scale = 1) {
  Case base;
  base.impl = impl;
  Case c = default_case(geglu().schema(), base);
  c.set("rows", rows);
  c.set("cols", cols);
  c.set("layout", layout);
  c.set("scale", scale);
  c.dtype = dtype;
  c.seed = 42;
  c.property = "vs_reference";
  return c;
}

TEST(GegluInfo, FusedLayoutHoldsTheSameValuesAsHalvesOfOneProjection) {
  const Problem contiguous = geglu().materialize(case_of(3, 5, "contiguous", DType::bfloat16));
  const Problem fused = geglu().materialize(case_of(3, 5, "fused", DType::bfloat16));
  const auto a = fused.inputs.get("a"), b = fused.inputs.get("b");
  EXPECT_FALSE(a.is_contiguous());
  EXPECT_EQ(a.stride(0), 10);
  EXPECT_EQ(b.data_ptr<at::BFloat16>() - a.data_ptr<at::BFloat16>(), 5);
  EXPECT_TRUE(at::equal(a, contiguous.inputs.get("a")));
  EXPECT_TRUE(at::equal(b, contiguous.inputs.get("b")));
}

TEST(GegluInfo, EquivalentCasesChangeHardwareOrLayoutOnly) {
  const Case c = case_of(2, 7, "contiguous", DType::float16);
  const auto equivalents = geglu().equivalent_cases(c);
  std::vector<std::string> varies;
  for (const auto& e : equivalents) {
    varies.push_back(e.varies);
    EXPECT_TRUE(validate(geglu().schema(), e.c).empty());
    EXPECT_EQ(e.c.seed, c.seed);
    EXPECT_NE(e.c, c);
  }
  EXPECT_EQ(varies, (std::vector<std::string>{"num_cores", "buffer_bytes", "layout"}));
}

// Per tensor, the largest error / bound of the correct grid over many drawn cases: above
// a few percent (a bound 100x too loose would show), never above 1.
TEST(GegluInfo, CorrectGridUsesAVisibleShareOfEachBound) {
  for (DType dtype : {DType::float32, DType::bfloat16, DType::float16}) {
    std::map<std::string, double> largest;
    CaseSpace space;
    space.impl = "flat";
    space.dtypes = {dtype};
    for (uint64_t seed = 1; seed <= 300; ++seed) {
      RandomChoices choices(seed);
      Verdict v = evaluate(draw_case(geglu().schema(), choices, space));
      ASSERT_EQ(v.status, Verdict::Status::pass) << v.message;
      for (const auto& row : v.tensors)
        largest[row.tensor] = std::max(largest[row.tensor], row.error_over_bound);
    }
    for (const std::string tensor : {"c", "da", "db"}) {
      std::cout << to_string(dtype) << " " << tensor << ": " << largest[tensor] << " of the bound\n";
      EXPECT_GT(largest[tensor], 0.2) << to_string(dtype) << " " << tensor;
      EXPECT_LE(largest[tensor], 1.0) << to_string(dtype) << " " << tensor;
    }
  }
}

// Where the exact c lies past float16's 65504, the framework answers infinity: the bound
// there is infinite, and vs_reference passes what the policy computes.
TEST(GegluInfo, OverflowInFloat16IsNoError) {
  Case c = case_of(8, 64, "contiguous", DType::float16, "flat", 64);
  c.distribution = Distribution::heavy_tailed;
  const auto out = float64_of(geglu().forward("kprop_flat", geglu().materialize(c)).get("c"));
  const double* values = out.data_ptr<double>();
  // Heavy tails at scale 64: some |a b| past 65504.
  EXPECT_TRUE(std::any_of(values, values + 512, [](double v) { return std::isinf(v); })) << out;
  const Verdict v = evaluate(c);
  EXPECT_EQ(v.status, Verdict::Status::pass) << v.message;
}

TEST(GegluInfo, RoundingPointsNameEachVariantsDeviation) {
  const Case c = case_of(4, 32, "contiguous", DType::bfloat16);
  const Problem p = geglu().materialize(c);
  NamedTensors cot;
  cot.set("dc", geglu().forward("kprop_reference", geglu().in_dtype(p, DType::float64)).get("c").to(at::kBFloat16));
  const auto policy = merged(geglu().forward("kprop_torch_policy", p),
                             geglu().backward("kprop_torch_policy", p, cot));
  auto named = [&](const std::string& ns, const std::string& tensor) {
    const auto actual = merged(geglu().forward(ns, p), geglu().backward(ns, p, cot));
    return geglu().rounding_point(p, cot, tensor, actual.get(tensor), policy.get(tensor));
  };
  EXPECT_EQ(named("kprop_flat_fp32_product", "c"), "product from the fp32 gelu");
  EXPECT_EQ(named("kprop_flat_bwd_no_roundtrip", "db"), "db from the fp32 gelu");
  EXPECT_EQ(named("kprop_flat_gelu_in_dtype", "c"), "gelu in the input dtype");
  EXPECT_EQ(named("kprop_flat_gelu_in_dtype", "da"), "gelu' in the input dtype");
  // Identical to the policy: nothing to name; a deviation no rounding point explains is
  // named by none.
  EXPECT_EQ(named("kprop_flat_fp32_product", "db"), "");
  auto wrong = policy.get("c").clone();
  wrong.view({-1})[0] = 1234.0;
  EXPECT_EQ(geglu().rounding_point(p, cot, "c", wrong, policy.get("c")), "");
}

}  // namespace
}  // namespace kprop
