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

#include "harness/random_tensor.h"
#include "harness/tolerance.h"
#include "kernels/common/host_values.h"
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

}  // namespace
}  // namespace kprop::geglu
