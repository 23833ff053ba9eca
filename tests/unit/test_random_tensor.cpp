// Tensor contents from a seed (harness/model/random_tensor.h): deterministic, independent per
// stream, rounded to the requested dtype, and distributed as each Distribution says.
#include <gtest/gtest.h>

#include <ATen/ATen.h>

#include <cmath>
#include <set>
#include <vector>

#include "harness/engine/properties/handed_tensors.h"
#include "harness/model/kernel.h"
#include "harness/model/random_tensor.h"
#include "tests/as_on_a_device.h"
#include "tests/reference_case.h"

namespace kprop {
namespace {

const Distribution kAll[] = {Distribution::normal, Distribution::uniform,
                             Distribution::heavy_tailed, Distribution::small_integers};

std::vector<double> values(const at::Tensor& t) {
  const auto d = t.to(at::kDouble).contiguous();
  return std::vector<double>(d.data_ptr<double>(), d.data_ptr<double>() + d.numel());
}

struct Moments {
  double mean, stddev, kurtosis;  // kurtosis: E[(x - mean)^4] / var^2 (3 for a normal)
};
Moments moments(const std::vector<double>& v) {
  double mean = 0;
  for (double x : v) mean += x;
  mean /= v.size();
  double m2 = 0, m4 = 0;
  for (double x : v) {
    const double d = (x - mean) * (x - mean);
    m2 += d;
    m4 += d * d;
  }
  m2 /= v.size();
  m4 /= v.size();
  return {mean, std::sqrt(m2), m4 / (m2 * m2)};
}

TEST(RandomTensorTest, SameSeedAndStreamGiveIdenticalTensors) {
  for (Distribution d : kAll)
    for (DType dtype : {DType::float64, DType::float32, DType::bfloat16, DType::float16}) {
      const auto a = random_tensor({3, 17, 5}, d, 1234, 2, dtype);
      const auto b = random_tensor({3, 17, 5}, d, 1234, 2, dtype);
      EXPECT_TRUE(at::equal(a, b)) << to_string(d) << " " << to_string(dtype);
    }
}

// SplitMix64 as published (Steele, Lea, Flood 2014), seeded per stream the way
// random_tensor documents: replay of stored cases depends on these numbers never changing.
struct SplitMix64 {
  uint64_t state;
  uint64_t next() {
    uint64_t z = (state += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
  }
};
SplitMix64 stream_rng(uint64_t seed, uint64_t stream) {
  return SplitMix64{seed ^ (0xD1B54A32D192ED03ULL * (stream + 1))};
}

TEST(RandomTensorTest, ValuesArePinnedToSplitMix64) {
  for (uint64_t seed : std::vector<uint64_t>{0, 1, 0xDEADBEEFull, 1ull << 63})
    for (uint64_t stream : std::vector<uint64_t>{0, 1, 3}) {
      auto rng = stream_rng(seed, stream);
      const auto ints = values(random_tensor({50}, Distribution::small_integers, seed, stream,
                                             DType::float64));
      for (size_t i = 0; i < ints.size(); ++i)
        ASSERT_EQ(ints[i], static_cast<double>(rng.next() % 7) - 3.0) << seed << "/" << stream;
      rng = stream_rng(seed, stream);
      const auto uni =
          values(random_tensor({50}, Distribution::uniform, seed, stream, DType::float64));
      for (size_t i = 0; i < uni.size(); ++i)
        ASSERT_EQ(uni[i], 2.0 * (static_cast<double>(rng.next() >> 11) * 0x1.0p-53) - 1.0);
    }
  // Shape does not matter: the stream fills elements in order.
  const auto flat = random_tensor({24}, Distribution::normal, 99, 3, DType::float64);
  const auto shaped = random_tensor({2, 3, 4}, Distribution::normal, 99, 3, DType::float64);
  EXPECT_TRUE(at::equal(flat, shaped.reshape({24})));
}

TEST(RandomTensorTest, ShorterTensorIsPrefixOfLonger) {
  for (Distribution d : kAll) {
    const auto small = random_tensor({10}, d, 5, 1, DType::float64);
    const auto big = random_tensor({1000}, d, 5, 1, DType::float64);
    EXPECT_TRUE(at::equal(small, big.narrow(0, 0, 10))) << to_string(d);
  }
}

TEST(RandomTensorTest, DifferentStreamsAndSeedsDiffer) {
  for (Distribution d : kAll) {
    const auto base = random_tensor({64}, d, 7, 0, DType::float64);
    for (uint64_t stream : std::vector<uint64_t>{1, 2, 3, 100}) {
      const auto other = random_tensor({64}, d, 7, stream, DType::float64);
      EXPECT_FALSE(at::equal(base, other)) << to_string(d) << " stream " << stream;
      // Not merely shifted or mostly equal: most elements differ.
      const double same = at::eq(base, other).to(at::kDouble).mean().item<double>();
      EXPECT_LT(same, d == Distribution::small_integers ? 0.4 : 0.01) << to_string(d);
    }
    for (uint64_t seed : std::vector<uint64_t>{8, 0, 1ull << 40}) {
      const auto other = random_tensor({64}, d, seed, 0, DType::float64);
      EXPECT_FALSE(at::equal(base, other)) << to_string(d) << " seed " << seed;
    }
  }
  // Streams of one seed are pairwise distinct as well (the per-input streams of a case).
  std::vector<at::Tensor> streams;
  for (uint64_t s = 0; s < 8; ++s)
    streams.push_back(random_tensor({32}, Distribution::normal, 11, s, DType::float64));
  for (size_t i = 0; i < streams.size(); ++i)
    for (size_t j = i + 1; j < streams.size(); ++j)
      EXPECT_FALSE(at::equal(streams[i], streams[j])) << i << " vs " << j;
  // Different distributions from one seed and stream differ.
  EXPECT_FALSE(at::equal(random_tensor({64}, Distribution::normal, 7, 0, DType::float64),
                         random_tensor({64}, Distribution::uniform, 7, 0, DType::float64)));
}

TEST(RandomTensorTest, DtypeConversionRoundsTheFloat64Draw) {
  EXPECT_EQ(scalar_type(DType::float64), at::kDouble);
  EXPECT_EQ(scalar_type(DType::float32), at::kFloat);
  EXPECT_EQ(scalar_type(DType::bfloat16), at::kBFloat16);
  EXPECT_EQ(scalar_type(DType::float16), at::kHalf);
  for (Distribution d : kAll) {
    const auto wide = random_tensor({2, 50}, d, 3, 4, DType::float64);
    EXPECT_EQ(wide.scalar_type(), at::kDouble);
    EXPECT_EQ(wide.sizes(), at::IntArrayRef({2, 50}));
    for (DType dtype : {DType::float32, DType::bfloat16, DType::float16}) {
      const auto narrow = random_tensor({2, 50}, d, 3, 4, dtype);
      EXPECT_EQ(narrow.scalar_type(), scalar_type(dtype));
      EXPECT_EQ(narrow.sizes(), at::IntArrayRef({2, 50}));
      EXPECT_TRUE(at::equal(narrow, wide.to(scalar_type(dtype))))
          << to_string(d) << " " << to_string(dtype);
    }
  }
  // float64 draws use more bits than float32 holds (53-bit uniforms, Box-Muller).
  const auto wide = random_tensor({100}, Distribution::normal, 3, 4, DType::float64);
  EXPECT_FALSE(at::equal(wide, wide.to(at::kFloat).to(at::kDouble)));
}

TEST(RandomTensorTest, SmallIntegersAreIntegersInRangeWithEveryValue) {
  for (DType dtype : {DType::float64, DType::float32, DType::bfloat16, DType::float16}) {
    const auto v = values(random_tensor({1000}, Distribution::small_integers, 17, 0, dtype));
    std::set<double> seen;
    for (double x : v) {
      ASSERT_EQ(x, std::round(x)) << to_string(dtype);
      ASSERT_GE(x, -3);
      ASSERT_LE(x, 3);
      seen.insert(x);
    }
    EXPECT_EQ(seen, (std::set<double>{-3, -2, -1, 0, 1, 2, 3})) << to_string(dtype);
  }
  // Roughly uniform over the 7 values.
  const auto v = values(random_tensor({70000}, Distribution::small_integers, 1, 0, DType::float64));
  std::vector<int64_t> count(7, 0);
  for (double x : v) ++count[static_cast<int>(x) + 3];
  for (int k = 0; k < 7; ++k) EXPECT_NEAR(count[k], 10000, 500) << "value " << k - 3;
}

TEST(RandomTensorTest, UniformIsInMinusOneToOne) {
  const auto v = values(random_tensor({100000}, Distribution::uniform, 21, 0, DType::float64));
  double lo = 1, hi = -1;
  for (double x : v) {
    lo = std::min(lo, x);
    hi = std::max(hi, x);
  }
  EXPECT_GE(lo, -1.0);
  EXPECT_LT(hi, 1.0);
  EXPECT_LT(lo, -0.999);  // fills the interval
  EXPECT_GT(hi, 0.999);
  const Moments m = moments(v);
  EXPECT_NEAR(m.mean, 0.0, 0.01);
  EXPECT_NEAR(m.stddev, std::sqrt(1.0 / 3.0), 0.01);
  // Each tenth of the interval gets its share.
  std::vector<int64_t> bins(10, 0);
  for (double x : v) ++bins[std::min<int64_t>(9, static_cast<int64_t>((x + 1) * 5))];
  for (int b = 0; b < 10; ++b) EXPECT_NEAR(bins[b], 10000, 500) << "bin " << b;
}

TEST(RandomTensorTest, NormalHasMeanZeroAndUnitDeviation) {
  const auto v = values(random_tensor({100000}, Distribution::normal, 22, 0, DType::float64));
  const Moments m = moments(v);
  EXPECT_NEAR(m.mean, 0.0, 0.015);   // standard error 0.003
  EXPECT_NEAR(m.stddev, 1.0, 0.015);
  EXPECT_NEAR(m.kurtosis, 3.0, 0.15);
  // About 68% within one deviation, 95% within two.
  int64_t one = 0, two = 0;
  for (double x : v) {
    one += std::abs(x) < 1;
    two += std::abs(x) < 2;
  }
  EXPECT_NEAR(one / 1e5, 0.6827, 0.01);
  EXPECT_NEAR(two / 1e5, 0.9545, 0.005);
}

TEST(RandomTensorTest, HeavyTailedIsFiniteWithLargerKurtosis) {
  const auto heavy = values(random_tensor({100000}, Distribution::heavy_tailed, 23, 0, DType::float64));
  const auto normal = values(random_tensor({100000}, Distribution::normal, 23, 0, DType::float64));
  for (double x : heavy) ASSERT_TRUE(std::isfinite(x));
  const Moments h = moments(heavy), n = moments(normal);
  EXPECT_NEAR(h.mean, 0.0, 0.05);
  // Student t with 3 degrees of freedom: variance 3, infinite kurtosis.
  EXPECT_GT(h.kurtosis, 2 * n.kurtosis) << h.kurtosis << " vs " << n.kurtosis;
  EXPECT_GT(h.stddev, 1.2);
  double largest = 0;
  for (double x : heavy) largest = std::max(largest, std::abs(x));
  EXPECT_GT(largest, 10.0);  // a normal almost never goes past 5
  // Still finite in the narrow dtypes.
  for (DType dtype : {DType::float32, DType::bfloat16, DType::float16}) {
    const auto t = random_tensor({100000}, Distribution::heavy_tailed, 23, 0, dtype);
    EXPECT_TRUE(at::isfinite(t).all().item<bool>()) << to_string(dtype);
  }
}

// ---- drawn as ATen operations (on a device; here on the CPU, as a device would) --------

// Every distribution and dtype, odd sizes and empty ones, many seeds and streams: the ATen
// form gives the host's bits (its log, sin and cos are not glibc's here either).
TEST(RandomTensorTest, TheAtenFormGivesTheHostsBits) {
  const std::vector<std::vector<int64_t>> shapes = {{}, {0}, {1}, {7}, {3, 33}, {4096, 65}};
  int compared = 0;
  for (Distribution d : kAll)
    for (DType dtype : {DType::float64, DType::float32, DType::bfloat16, DType::float16})
      for (const auto& shape : shapes)
        for (uint64_t seed : {1ULL, 0xFFFFFFFFFFFFFFFFULL, 3760397857400410563ULL}) {
          const auto host = random_tensor(shape, d, seed, 5, dtype);
          at::Tensor aten;
          {
            AsOnADevice on;
            aten = random_tensor(shape, d, seed, 5, dtype);
          }
          ASSERT_TRUE(same_bits(host, aten)) << to_string(d) << " " << to_string(dtype) << " "
                                             << at::IntArrayRef(shape) << " seed " << seed;
          ++compared;
        }
  EXPECT_EQ(compared, 4 * 4 * 6 * 3);
  for (int special : {0, 30, 100}) {
    const auto host = random_indices({5, 77}, 32000, -100, special, 9, 2);
    at::Tensor aten;
    {
      AsOnADevice on;
      aten = random_indices({5, 77}, 32000, -100, special, 9, 2);
    }
    EXPECT_TRUE(at::equal(host, aten)) << special;
  }
}

// On the meta device a problem has its shapes and dtypes and nothing else: what decides
// where a problem's oracle runs before anything is drawn (harness/engine/properties/calls.h).
TEST(RandomTensorTest, EveryKernelsProblemsOnTheMetaDeviceHaveTheirShapes) {
  const c10::Device meta(c10::kMeta);
  int compared = 0;
  for (const auto& name : kernel_names()) {
    const Kernel& kernel = find_kernel(name);
    for (uint64_t seed = 1; seed <= 8; ++seed) {
      const Case c = reference_case(kernel, seed);
      const Problem host = kernel.materialize(c), shapes = kernel.materialize_on(c, meta);
      ASSERT_EQ(host.inputs.size(), shapes.inputs.size()) << name;
      for (const auto& [input, t] : host.inputs) {
        const at::Tensor m = shapes.inputs.get(input);
        ASSERT_EQ(t.defined(), m.defined()) << name << " " << input;
        if (!t.defined()) continue;
        EXPECT_TRUE(m.is_meta()) << name << " " << input;
        EXPECT_EQ(t.sizes(), m.sizes()) << name << " " << input;
        EXPECT_EQ(t.scalar_type(), m.scalar_type()) << name << " " << input;
        ++compared;
      }
    }
  }
  EXPECT_GT(compared, 8 * 20);
}

// A scale applied in float64 before the rounding: the same bits in both forms too, and the
// host's values times the scale, rounded once.
TEST(RandomTensorTest, ScaledValuesHaveTheHostsBitsInBothForms) {
  for (Distribution d : kAll)
    for (DType dtype : {DType::float64, DType::float32, DType::bfloat16, DType::float16})
      for (double scale : {1.0, 3.0, 1000.0, 1e-3}) {
        const auto host = scaled_random_tensor({65, 257}, d, scale, 11, 4, dtype);
        at::Tensor aten;
        {
          AsOnADevice on;
          aten = scaled_random_tensor({65, 257}, d, scale, 11, 4, dtype);
        }
        const auto once = (random_tensor({65, 257}, d, 11, 4, DType::float64) * scale)
                              .to(scalar_type(dtype));
        SCOPED_TRACE(to_string(d) + " " + to_string(dtype) + " scale " + std::to_string(scale));
        EXPECT_TRUE(same_bits(host, once));
        EXPECT_TRUE(same_bits(host, aten));
      }
}

// Every kernel's problems drawn as a device draws them (its spec's inputs, or a materialize
// of its own given the device) hold the host's bits.
TEST(RandomTensorTest, EveryKernelsProblemsDrawnAsOnADeviceAreTheHostsBits) {
  int compared = 0;
  for (const auto& name : kernel_names()) {
    const Kernel& kernel = find_kernel(name);
    for (uint64_t seed = 1; seed <= 8; ++seed) {
      const Case c = reference_case(kernel, seed);
      const Problem host = kernel.materialize(c);
      Problem aten;
      {
        AsOnADevice on;
        aten = kernel.materialize_on(c, c10::kCPU);
      }
      ASSERT_EQ(host.inputs.size(), aten.inputs.size()) << name;
      for (const auto& [input, t] : host.inputs) {
        const at::Tensor a = aten.inputs.get(input);
        EXPECT_TRUE(t.defined() ? a.defined() && same_bits(t, a) : !a.defined())
            << name << " " << input << " seed " << seed;
        ++compared;
      }
    }
  }
  EXPECT_GT(compared, 8 * 20);
}

// Values a little off the host's round as the host's do: where the tolerance leaves the
// rounding in doubt, the host's element is taken. Off by up to 2^-30 (far more than any
// library's log differs), most of float32's roundings stay certain and some are in doubt.
TEST(RandomTensorTest, ValuesInDoubtAreTakenFromTheHost) {
  const int64_t n = 200000;
  const auto exact = random_tensor({n}, Distribution::normal, 77, 1, DType::float64);
  const auto noise = random_tensor({n}, Distribution::uniform, 78, 1, DType::float64);
  const auto off = exact * (1.0 + noise * 0x1.0p-30);
  const double* host = exact.data_ptr<double>();
  int64_t asked = 0;
  const auto rounded = rounded_as_the_host(off, at::kFloat, [&](int64_t i) {
    ++asked;
    return host[i];
  }, 0x1.0p-29);
  EXPECT_TRUE(same_bits(rounded, exact.to(at::kFloat)));
  EXPECT_GT(asked, n / 100) << "the test's noise should put many roundings in doubt";
  EXPECT_LT(asked, n / 4);
  // Without the host's elements, the noise would have changed some roundings.
  EXPECT_FALSE(at::equal(off.to(at::kFloat), exact.to(at::kFloat)));
  EXPECT_THROW(rounded_as_the_host(off, at::kDouble, [&](int64_t i) { return host[i]; }),
               c10::Error);
}

}  // namespace
}  // namespace kprop
