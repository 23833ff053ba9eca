// The geglu operators through the dispatcher (kernels/geglu/ops.h):
//  - the float64 reference against central finite differences of itself;
//  - rows, flat and torch_policy bit-identical in fp32, bfloat16 and float16, for every
//    layout, block size and core count (the claim the `policy` and `invariance`
//    properties rest on), and within float64 rounding of each other in float64;
//  - each variant of the flatten-1D port doing what its name says, as a fact of it;
//  - the grid's block sizes and the errors the kernels raise.
#include <gtest/gtest.h>

#include <ATen/ATen.h>

#include <cmath>
#include <string>
#include <vector>

#include "harness/model/host_values.h"
#include "harness/model/random_tensor.h"
#include "harness/model/tolerance.h"
#include "kernels/geglu/grid.h"
#include "kernels/geglu/ops.h"

namespace kprop::geglu {
namespace {

constexpr const char* kReference = "kprop_reference";
constexpr const char* kPolicy = "kprop_torch_policy";
constexpr const char* kRows = "kprop_rows";
constexpr const char* kFlat = "kprop_flat";

// a and b of `shape`, from their own streams of `seed`, times `scale`, in `dtype`; fused:
// the two halves of one [..., 2·cols] tensor.
struct Inputs {
  at::Tensor a, b, dc;
};

Inputs inputs(std::vector<int64_t> shape, at::ScalarType dtype, uint64_t seed, bool fused,
              double scale = 1, Distribution dist = Distribution::normal) {
  auto draw = [&](uint64_t stream) {
    return converted(random_tensor(shape, dist, seed, stream, DType::float64) * scale, dtype);
  };
  Inputs in{draw(0), draw(1), converted(random_tensor(shape, Distribution::normal, seed, 2,
                                                      DType::float64), dtype)};
  if (fused) {
    const int64_t cols = shape.back();
    const auto both = at::cat({in.a, in.b}, -1);
    in.a = both.narrow(-1, 0, cols);
    in.b = both.narrow(-1, cols, cols);
  }
  return in;
}

bool bit_identical(const at::Tensor& x, const at::Tensor& y) {
  return x.scalar_type() == y.scalar_type() && x.sizes() == y.sizes() &&
         at::equal(x.contiguous().view({-1}).view(at::kByte), y.contiguous().view({-1}).view(at::kByte));
}

TEST(GegluKernel, RowsFlatAndPolicyAreBitIdenticalInLowPrecision) {
  int64_t cases = 0;
  for (auto dtype : {at::kFloat, at::kBFloat16, at::kHalf})
    for (uint64_t seed = 1; seed <= 60; ++seed) {
      const int64_t rows = 1 + seed % 7, cols = 1 + (seed * 13) % 41;
      const bool fused = seed % 2 == 0;
      const int64_t cores = 1 + seed % 5, buffer = seed % 3 == 0 ? kAscend910bBufferBytes : 64 * (1 + seed % 8);
      const double scale = seed % 4 == 0 ? 45 : 1;
      const auto in = inputs({rows, cols}, dtype, seed, fused, scale,
                             seed % 5 == 0 ? Distribution::heavy_tailed : Distribution::normal);
      const auto policy_c = geglu_forward(kPolicy, in.a, in.b, cores, buffer);
      const auto [policy_da, policy_db] = geglu_backward(kPolicy, in.dc, in.a, in.b, cores, buffer);
      for (const char* ns : {kRows, kFlat}) {
        const auto c = geglu_forward(ns, in.a, in.b, cores, buffer);
        const auto [da, db] = geglu_backward(ns, in.dc, in.a, in.b, cores, buffer);
        const std::string what = std::string(ns) + " " + c10::toString(dtype) + " seed " +
                                 std::to_string(seed) + (fused ? " fused" : "");
        EXPECT_TRUE(bit_identical(c, policy_c)) << what;
        EXPECT_TRUE(bit_identical(da, policy_da)) << what;
        EXPECT_TRUE(bit_identical(db, policy_db)) << what;
        ++cases;
      }
    }
  EXPECT_EQ(cases, 360);
}

TEST(GegluKernel, ReferenceMatchesFiniteDifferencesOfItself) {
  // Central differences of c = gelu(a) b in float64, element by element, including the
  // tail where 1 + tanh cancels (a < -5) and large magnitudes.
  for (double scale : {1.0, 8.0, 45.0}) {
    const auto in = inputs({3, 17}, at::kDouble, 5, false, scale);
    const auto [da, db] = geglu_backward(kReference, in.dc, in.a, in.b, 1, 1024);
    const double h = 1e-6;
    for (int64_t i = 0; i < in.a.numel(); ++i) {
      auto a_plus = in.a.clone(), a_minus = in.a.clone(), b_plus = in.b.clone(), b_minus = in.b.clone();
      a_plus.view({-1})[i] += h;
      a_minus.view({-1})[i] -= h;
      b_plus.view({-1})[i] += h;
      b_minus.view({-1})[i] -= h;
      auto directional = [&](const at::Tensor& ap, const at::Tensor& am, const at::Tensor& bp,
                             const at::Tensor& bm) {
        const auto up = geglu_forward(kReference, ap, bp, 1, 1024);
        const auto down = geglu_forward(kReference, am, bm, 1, 1024);
        return ((up - down) * in.dc).sum().item<double>() / (2 * h);
      };
      const double numeric_a = directional(a_plus, a_minus, in.b, in.b);
      const double numeric_b = directional(in.a, in.a, b_plus, b_minus);
      const double analytic_a = da.view({-1})[i].item<double>();
      const double analytic_b = db.view({-1})[i].item<double>();
      EXPECT_NEAR(analytic_a, numeric_a, 1e-6 * (1 + std::abs(analytic_a))) << "scale " << scale << " i " << i;
      EXPECT_NEAR(analytic_b, numeric_b, 1e-6 * (1 + std::abs(analytic_b))) << "scale " << scale << " i " << i;
    }
  }
}

TEST(GegluKernel, EmulationsAgreeWithThePolicyToFloat64RoundingInFloat64) {
  // In float64 nothing rounds after gelu but the product: the emulations (std::exp) and
  // torch_policy (ATen's exp) may differ in a last bit of float64, no more.
  const auto in = inputs({4, 33}, at::kDouble, 9, true, 8);
  const auto policy = geglu_forward(kPolicy, in.a, in.b, 4, 1024);
  for (const char* ns : {kRows, kFlat}) {
    const auto c = geglu_forward(ns, in.a, in.b, 4, 1024);
    EXPECT_TRUE(at::allclose(c, policy, 4e-16, 1e-300)) << ns;
  }
}

std::string ns_of(const std::string& variant) { return "kprop_flat_" + variant; }

int64_t max_ulps(const at::Tensor& x, const at::Tensor& y) {
  const auto a = float64_of(x), b = float64_of(y);
  int64_t most = 0;
  for (int64_t i = 0; i < a.numel(); ++i)
    most = std::max(most, ulps_between(a.data_ptr<double>()[i], b.data_ptr<double>()[i], x.scalar_type()));
  return most;
}

TEST(GegluKernel, ProductFromTheFp32GeluIsAnUlpFromThePolicyInLowPrecisionOnly) {
  const auto bf16 = inputs({8, 64}, at::kBFloat16, 3, false);
  const auto policy = geglu_forward(kPolicy, bf16.a, bf16.b, 1, 1024);
  const auto variant = geglu_forward(ns_of("fp32_product"), bf16.a, bf16.b, 1, 1024);
  EXPECT_FALSE(bit_identical(variant, policy));
  EXPECT_EQ(max_ulps(variant, policy), 1);
  // Its backward is the policy's; in float32 the rounding of gelu to the dtype is no rounding.
  EXPECT_TRUE(bit_identical(geglu_backward(ns_of("fp32_product"), bf16.dc, bf16.a, bf16.b, 1, 1024).first,
                            geglu_backward(kPolicy, bf16.dc, bf16.a, bf16.b, 1, 1024).first));
  const auto fp32 = inputs({8, 64}, at::kFloat, 3, false);
  EXPECT_TRUE(bit_identical(geglu_forward(ns_of("fp32_product"), fp32.a, fp32.b, 1, 1024),
                            geglu_forward(kPolicy, fp32.a, fp32.b, 1, 1024)));
}

TEST(GegluKernel, BackwardWithoutTheRoundTripChangesOnlyDb) {
  const auto in = inputs({8, 64}, at::kHalf, 4, false);
  const auto [da, db] = geglu_backward(ns_of("bwd_no_roundtrip"), in.dc, in.a, in.b, 1, 1024);
  const auto [pda, pdb] = geglu_backward(kPolicy, in.dc, in.a, in.b, 1, 1024);
  EXPECT_TRUE(bit_identical(da, pda));
  EXPECT_FALSE(bit_identical(db, pdb));
  EXPECT_EQ(max_ulps(db, pdb), 1);
}

TEST(GegluKernel, GeluInTheInputDtypeIsFarFromThePolicyForNegativeGates) {
  // a = -3: gelu(a) ~ -0.0036, where 1 + tanh is 0.0024 and bfloat16 steps 0.0039 near 1.
  const auto a = at::full({1, 4}, -3.0, at::kBFloat16), b = at::ones({1, 4}, at::kBFloat16);
  const auto variant = geglu_forward(ns_of("gelu_in_dtype"), a, b, 1, 1024);
  const auto policy = geglu_forward(kPolicy, a, b, 1, 1024);
  EXPECT_GT(max_ulps(variant, policy), 8);
  // float64 inputs are computed in float64 by every version of the port.
  const auto in = inputs({4, 16}, at::kDouble, 2, false);
  EXPECT_TRUE(bit_identical(geglu_forward(ns_of("gelu_in_dtype"), in.a, in.b, 1, 1024),
                            geglu_forward(kFlat, in.a, in.b, 1, 1024)));
}

TEST(GegluKernel, ContiguousAssumptionReadsTheOtherHalfOfAFusedProjection) {
  const auto contiguous = inputs({3, 5}, at::kFloat, 6, false);
  const auto fused = inputs({3, 5}, at::kFloat, 6, true);
  const char* ns = "kprop_flat_assumes_contiguous";
  EXPECT_TRUE(bit_identical(geglu_forward(ns, contiguous.a, contiguous.b, 2, 256),
                            geglu_forward(kFlat, contiguous.a, contiguous.b, 2, 256)));
  const auto wrong = geglu_forward(ns, fused.a, fused.b, 2, 256);
  const auto right = geglu_forward(kFlat, fused.a, fused.b, 2, 256);
  EXPECT_TRUE(at::equal(wrong[0], right[0])) << "the first row lies where it assumes";
  EXPECT_FALSE(at::equal(wrong[1], right[1]));
}

TEST(GegluKernel, OverflowInFloat16IsInfinityAsTheFrameworkGivesIt) {
  const auto a = at::full({1, 2}, 300.0, at::kHalf), b = at::full({1, 2}, 300.0, at::kHalf);
  for (const char* ns : {kPolicy, kRows, kFlat})
    EXPECT_TRUE(std::isinf(geglu_forward(ns, a, b, 1, 1024)[0][0].item<double>())) << ns;
}

TEST(GegluKernel, BlocksFromTheBufferBudget) {
  // bfloat16 forward: 3·2 + 2·4 = 14 bytes an element; backward 5·2 + 3·4 = 22.
  EXPECT_EQ(bytes_per_element(at::kBFloat16, Pass::forward), 14);
  EXPECT_EQ(bytes_per_element(at::kBFloat16, Pass::backward), 22);
  EXPECT_EQ(bytes_per_element(at::kDouble, Pass::backward), 64);
  EXPECT_EQ(buffer_block(256, at::kBFloat16, Pass::forward), 16);
  EXPECT_EQ(buffer_block(256, at::kBFloat16, Pass::backward), 8);
  EXPECT_EQ(buffer_block(kAscend910bBufferBytes, at::kBFloat16, Pass::forward), 8192);
  EXPECT_EQ(buffer_block(64, at::kDouble, Pass::backward), 1);
  EXPECT_THROW(buffer_block(63, at::kDouble, Pass::backward), c10::Error);
  EXPECT_EQ(rows_block(5, 1024, at::kFloat, Pass::forward), 8);
  EXPECT_EQ(rows_block(500, 1024, at::kFloat, Pass::forward), 32);  // 1024 / 20 = 51 -> 32
  const FlatGrid g = flat_grid(100, 48, 256, at::kBFloat16, Pass::forward);
  EXPECT_EQ(g.block, 16);
  EXPECT_EQ(g.blocks, 7);
  EXPECT_EQ(g.programs, 7);
  EXPECT_EQ(flat_grid(1000, 4, 256, at::kBFloat16, Pass::forward).programs, 4);
}

TEST(GegluKernel, ContractAcceptsFusedAndBatchedLayoutsAndRefusesOthers) {
  const auto in = inputs({2, 3, 7}, at::kFloat, 8, true);  // [batch, rows, cols] halves
  const auto c = geglu_forward(kFlat, in.a, in.b, 3, 256);
  EXPECT_TRUE(c.is_contiguous());
  EXPECT_EQ(c.sizes(), in.a.sizes());
  EXPECT_TRUE(bit_identical(c, geglu_forward(kPolicy, in.a, in.b, 3, 256)));
  const auto strided = at::randn({4, 6}).t();  // last dim stride 6
  EXPECT_THROW(geglu_forward(kFlat, strided, strided, 1, 256), c10::Error);
  EXPECT_THROW(geglu_forward(kFlat, in.a, in.b.to(at::kDouble), 1, 256), c10::Error);
  EXPECT_THROW(geglu_forward(kFlat, in.a, in.b, 0, 256), c10::Error);
}

}  // namespace
}  // namespace kprop::geglu
