// Rounding-error bounds (harness/model/tolerance.h): the constants, the gamma_K formula, the
// composition of sum_error_bound, and an empirical check that gamma_K * sum|x| really
// bounds a sequential float32 sum, while a wrong result does not fit under it.
#include <gtest/gtest.h>

#include <ATen/ATen.h>

#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "harness/model/tolerance.h"

namespace kprop {
namespace {

TEST(ToleranceTest, UnitRoundoffOfEachDtype) {
  EXPECT_EQ(unit_roundoff(at::kDouble), std::ldexp(1.0, -53));
  EXPECT_EQ(unit_roundoff(at::kFloat), std::ldexp(1.0, -24));
  EXPECT_EQ(unit_roundoff(at::kBFloat16), std::ldexp(1.0, -8));
  EXPECT_EQ(unit_roundoff(at::kHalf), std::ldexp(1.0, -11));
  // u is half the machine epsilon of the type.
  EXPECT_EQ(unit_roundoff(at::kDouble), std::numeric_limits<double>::epsilon() / 2);
  EXPECT_EQ(unit_roundoff(at::kFloat), std::numeric_limits<float>::epsilon() / 2);
  // Integers are exact.
  EXPECT_EQ(unit_roundoff(at::kInt), 0.0);
  EXPECT_EQ(unit_roundoff(at::kLong), 0.0);
}

TEST(ToleranceTest, UnitRoundoffBoundsRoundingToTheDtype) {
  // |fl(x) - x| <= u |x| for the rounding ATen does, for every floating dtype.
  auto x = at::randn({20000}, at::detail::createCPUGenerator(3), at::kDouble) * 100;
  for (auto dtype : {at::kFloat, at::kBFloat16, at::kHalf}) {
    const auto rounded = x.to(dtype).to(at::kDouble);
    const auto rel = ((rounded - x).abs() / x.abs()).max().item<double>();
    EXPECT_LE(rel, unit_roundoff(dtype)) << dtype;
    EXPECT_GT(rel, 0.5 * unit_roundoff(dtype)) << dtype << ": u is not larger than needed";
  }
}

TEST(ToleranceTest, GammaBoundFormula) {
  const double u = std::ldexp(1.0, -24);
  EXPECT_EQ(gamma_bound(0, u), 0.0);
  EXPECT_DOUBLE_EQ(gamma_bound(1, u), u / (1 - u));
  EXPECT_DOUBLE_EQ(gamma_bound(10, u), 10 * u / (1 - 10 * u));
  EXPECT_DOUBLE_EQ(gamma_bound(1000, u), 1000 * u / (1 - 1000 * u));
  // gamma_K > K u, and close to it while K u is small.
  EXPECT_GT(gamma_bound(1000, u), 1000 * u);
  EXPECT_LT(gamma_bound(1000, u), 1000 * u * 1.0001);
  // Bfloat16: K u = 0.5 gives exactly 1; K u -> 1 grows without bound.
  const double ub = std::ldexp(1.0, -8);
  EXPECT_EQ(gamma_bound(128, ub), 1.0);
  EXPECT_EQ(gamma_bound(255, ub), 255.0);
  EXPECT_TRUE(std::isinf(gamma_bound(256, ub)));
  EXPECT_TRUE(std::isinf(gamma_bound(257, ub)));
  EXPECT_TRUE(std::isinf(gamma_bound(100000, ub)));
  EXPECT_GT(gamma_bound(256, ub), 0);
  // Monotone in K.
  double previous = 0;
  for (int64_t k = 1; k < 256; ++k) {
    const double g = gamma_bound(k, ub);
    ASSERT_GT(g, previous) << k;
    previous = g;
  }
  // u = 0 (integers): no error.
  EXPECT_EQ(gamma_bound(1000, 0.0), 0.0);
}

TEST(ToleranceTest, ProbabilisticBoundIsSqrtKTimesU) {
  const double u = std::ldexp(1.0, -24);
  EXPECT_DOUBLE_EQ(probabilistic_bound(100, u), 10 * u);
  EXPECT_DOUBLE_EQ(probabilistic_bound(1, u), u);
  EXPECT_LT(probabilistic_bound(10000, u), gamma_bound(10000, u));
}

TEST(ToleranceTest, SmallestNormal) {
  EXPECT_EQ(smallest_normal(at::kDouble), std::numeric_limits<double>::min());
  EXPECT_EQ(smallest_normal(at::kFloat), static_cast<double>(std::numeric_limits<float>::min()));
  EXPECT_EQ(smallest_normal(at::kBFloat16), static_cast<double>(std::numeric_limits<float>::min()));
  EXPECT_EQ(smallest_normal(at::kHalf), std::ldexp(1.0, -14));
}

TEST(ToleranceTest, SumErrorBoundComposition) {
  const auto magnitude = at::tensor({0.0, 1.0, 3.0, 100.0}, at::kDouble);
  const auto value = at::tensor({0.0, -0.5, 2.0, -7.0}, at::kDouble);
  struct Row {
    int64_t k;
    at::ScalarType acc, out;
    int partials;
  };
  for (const Row& r : {Row{5, at::kFloat, at::kBFloat16, 0}, Row{5, at::kFloat, at::kBFloat16, 2},
                       Row{33, at::kFloat, at::kFloat, 1}, Row{9, at::kDouble, at::kDouble, 0},
                       Row{17, at::kFloat, at::kHalf, 3}}) {
    const double g = gamma_bound(r.k, unit_roundoff(r.acc));
    const double u_out = unit_roundoff(r.out);
    const auto bound = sum_error_bound(magnitude, value, r.k, r.acc, r.out, r.partials);
    ASSERT_EQ(bound.scalar_type(), at::kDouble);
    ASSERT_EQ(bound.sizes(), magnitude.sizes());
    const auto m = magnitude.accessor<double, 1>(), v = value.accessor<double, 1>();
    const auto b = bound.accessor<double, 1>();
    for (int64_t i = 0; i < 4; ++i) {
      const double expected =
          m[i] * (g + u_out * r.partials) + std::abs(v[i]) * u_out + smallest_normal(r.out);
      EXPECT_DOUBLE_EQ(b[i], expected) << "k=" << r.k << " partials=" << r.partials << " i=" << i;
    }
  }
  // The floor: nothing to sum still allows the output's smallest normal.
  const auto zero = at::zeros({3}, at::kDouble);
  EXPECT_TRUE(at::equal(sum_error_bound(zero, zero, 4, at::kFloat, at::kFloat),
                        at::full({3}, smallest_normal(at::kFloat), at::kDouble)));
  // Inputs of other dtypes are widened first.
  const auto bf = sum_error_bound(magnitude.to(at::kFloat), value.to(at::kBFloat16), 5,
                                  at::kFloat, at::kBFloat16);
  EXPECT_EQ(bf.scalar_type(), at::kDouble);
  EXPECT_TRUE(at::allclose(bf, sum_error_bound(magnitude, value, 5, at::kFloat, at::kBFloat16)));
  // Each term adds: more partials, a larger K, or a narrower output never shrink it.
  const auto base = sum_error_bound(magnitude, value, 5, at::kFloat, at::kFloat);
  EXPECT_TRUE(at::all(sum_error_bound(magnitude, value, 5, at::kFloat, at::kFloat, 1) >= base)
                  .item<bool>());
  EXPECT_TRUE(at::all(sum_error_bound(magnitude, value, 50, at::kFloat, at::kFloat) >= base)
                  .item<bool>());
  const auto narrow = sum_error_bound(magnitude, value, 5, at::kFloat, at::kBFloat16);
  EXPECT_TRUE(at::all(narrow >= base).item<bool>());
  EXPECT_TRUE(at::all(narrow.narrow(0, 1, 3) > base.narrow(0, 1, 3)).item<bool>());
}

// Sequential float32 sum of `x`, and the float64 sum of the same values (exact to far
// below float32's bound).
struct Sums {
  double float32_sum, float64_sum, magnitude;
};
Sums sums(const std::vector<float>& x) {
  float s32 = 0;
  double s64 = 0, m = 0;
  for (float v : x) {
    s32 += v;
    s64 += static_cast<double>(v);
    m += std::abs(static_cast<double>(v));
  }
  return {s32, s64, m};
}

TEST(ToleranceTest, GammaKBoundsSequentialFloat32Sums) {
  const double u = unit_roundoff(at::kFloat);
  std::mt19937_64 rng(42);
  std::normal_distribution<double> normal(0.0, 1.0);
  std::uniform_real_distribution<double> positive(0.0, 1.0);
  std::student_t_distribution<double> heavy(3.0);
  double largest_ratio = 0;
  for (int64_t K : {1, 2, 3, 7, 10, 31, 100, 257, 1000, 4096, 10000, 100000}) {
    for (int trial = 0; trial < 6; ++trial) {
      std::vector<float> x(K);
      for (auto& v : x) {
        const double d = trial % 3 == 0 ? normal(rng) : trial % 3 == 1 ? positive(rng) : heavy(rng);
        v = static_cast<float>(d * (trial < 3 ? 1.0 : 1e3));
      }
      const Sums s = sums(x);
      const double bound = gamma_bound(K, u) * s.magnitude;
      const double error = std::abs(s.float32_sum - s.float64_sum);
      EXPECT_LE(error, bound) << "K=" << K << " trial=" << trial;
      if (bound > 0) largest_ratio = std::max(largest_ratio, error / bound);
      // sum_error_bound with a float32 output is no smaller.
      const auto b = sum_error_bound(at::tensor({s.magnitude}, at::kDouble),
                                     at::tensor({s.float64_sum}, at::kDouble), K, at::kFloat,
                                     at::kFloat);
      EXPECT_LE(error, b.item<double>()) << "K=" << K << " trial=" << trial;

      // A result off by 1% of the magnitude (for positive data: by 1% of the sum) is
      // caught as long as gamma_K < 1%.
      const double wrong = s.float32_sum + 0.01 * s.magnitude;
      EXPECT_GT(std::abs(wrong - s.float64_sum), bound) << "K=" << K << " trial=" << trial;
      if (trial % 3 == 1) {
        const double scaled = s.float32_sum * 1.01;
        EXPECT_GT(std::abs(scaled - s.float64_sum), bound) << "K=" << K;
      }
    }
  }
  // The bound is not vacuous: some sums use a visible part of it.
  EXPECT_GT(largest_ratio, 1e-3);
}

TEST(ToleranceTest, BfloatSixteenSumsStayWithinTheirBoundToo) {
  // Sequential summation with every partial sum rounded to bfloat16.
  const double u = unit_roundoff(at::kBFloat16);
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> positive(0.0, 1.0);
  for (int64_t K : {2, 8, 32, 100}) {
    std::vector<double> x(K);
    for (auto& v : x) v = static_cast<float>(c10::BFloat16(static_cast<float>(positive(rng))));
    float s = 0;
    double exact = 0, m = 0;
    for (double v : x) {
      s = static_cast<float>(c10::BFloat16(s + static_cast<float>(v)));
      exact += v;
      m += std::abs(v);
    }
    EXPECT_LE(std::abs(s - exact), gamma_bound(K, u) * m) << "K=" << K;
  }
}

TEST(ToleranceTest, UlpsBetweenValuesOfADtype) {
  EXPECT_EQ(ulps_between(1.0, 1.0, at::kBFloat16), 0);
  EXPECT_EQ(ulps_between(1.0, 1.0078125, at::kBFloat16), 1);  // 1 + 2^-7
  EXPECT_EQ(ulps_between(1.0, 1.0 + std::ldexp(1.0, -10), at::kHalf), 1);
  EXPECT_EQ(ulps_between(1.0, std::nextafter(1.0f, 2.0f), at::kFloat), 1);
  EXPECT_EQ(ulps_between(1.0, std::nextafter(1.0, 2.0), at::kDouble), 1);
  // Across zero: -0 and +0 are one apart, the smallest subnormals one more each side.
  EXPECT_EQ(ulps_between(-0.0, 0.0, at::kFloat), 1);
  const double tiny = std::numeric_limits<float>::denorm_min();
  EXPECT_EQ(ulps_between(-tiny, tiny, at::kFloat), 3);
  EXPECT_EQ(ulps_between(2.0, 1.0, at::kHalf), 1024);  // a binade of float16
  EXPECT_EQ(ulps_between(std::nan(""), std::nan(""), at::kHalf), 0);
  EXPECT_EQ(ulps_between(std::nan(""), 1.0, at::kHalf), std::numeric_limits<int64_t>::max());
  EXPECT_EQ(ulps_between(-std::numeric_limits<double>::max(), std::numeric_limits<double>::max(),
                         at::kDouble),
            std::numeric_limits<int64_t>::max());
}

TEST(ToleranceTest, LargestFiniteOfEachDtype) {
  EXPECT_EQ(largest_finite(at::kHalf), 65504.0);
  EXPECT_EQ(largest_finite(at::kFloat), std::numeric_limits<float>::max());
  EXPECT_GT(largest_finite(at::kBFloat16), 3.38e38);
  EXPECT_EQ(largest_finite(at::kDouble), std::numeric_limits<double>::max());
}

}  // namespace
}  // namespace kprop
