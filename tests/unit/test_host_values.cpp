// Host conversions without the dispatcher (harness/model/host_values.h): every value must
// be bit-identical to what ATen's .to() gives, or replays and fingerprints would drift.
#include <gtest/gtest.h>

#include <ATen/ATen.h>

#include <cstring>
#include <functional>
#include <limits>
#include <vector>

#include "harness/model/host_values.h"

namespace kprop {
namespace {

const at::ScalarType kFloating[] = {at::kDouble, at::kFloat, at::kBFloat16, at::kHalf};

// Values that stress rounding: halfway cases, subnormals, overflow in half, infinities.
at::Tensor awkward_values() {
  std::vector<double> v = {0.0,     -0.0,    1.0,         -1.5,        1.0 + 0x1p-9,
                           1.0 + 0x1p-12,    1.0 + 0x1p-24 + 0x1p-40, 65504.0, 65520.0,
                           1e6,     1e-6,    1e-40,       -1e-310,     3.0e38,
                           std::numeric_limits<double>::infinity(), 0.1, -2.7182818284590451};
  auto t = at::empty({static_cast<int64_t>(v.size())}, at::kDouble);
  std::copy(v.begin(), v.end(), t.data_ptr<double>());
  return t;
}

void expect_same_bits(const at::Tensor& a, const at::Tensor& b) {
  ASSERT_EQ(a.scalar_type(), b.scalar_type());
  ASSERT_EQ(a.sizes(), b.sizes());
  const auto ca = a.contiguous(), cb = b.contiguous();
  EXPECT_EQ(0, std::memcmp(ca.data_ptr(), cb.data_ptr(), ca.numel() * ca.element_size()))
      << a << "\nvs\n" << b;
}

TEST(HostValuesTest, ConvertedMatchesAtenToForEveryPairOfFloatingTypes) {
  const auto base = awkward_values();
  for (auto from : kFloating)
    for (auto to : kFloating) {
      SCOPED_TRACE(std::string(c10::toString(from)) + " -> " + c10::toString(to));
      const auto source = base.to(from);
      expect_same_bits(converted(source, to), source.to(to));
    }
}

TEST(HostValuesTest, TensorOfMatchesAtenToFromDoubleAndFloat) {
  const auto base = awkward_values().view({-1, 1});
  const auto as_float = base.to(at::kFloat);
  for (auto to : kFloating) {
    SCOPED_TRACE(c10::toString(to));
    expect_same_bits(tensor_of(base.data_ptr<double>(), base.sizes(), to), base.to(to));
    expect_same_bits(tensor_of(as_float.data_ptr<float>(), as_float.sizes(), to),
                     as_float.to(to));
  }
}

TEST(HostValuesTest, ReadValuesFollowsLogicalOrderOfNonContiguousTensors) {
  const auto t = at::arange(12, at::kFloat).view({3, 4}).t();  // not contiguous
  std::vector<double> out(12);
  read_values(t, out.data());
  const auto expected = t.contiguous();
  for (int64_t i = 0; i < 12; ++i) EXPECT_EQ(out[i], expected.data_ptr<float>()[i]);
}

TEST(HostValuesTest, Float64OfReturnsTheSameTensorWhenNothingIsToBeDone) {
  const auto t = at::ones({4}, at::kDouble);
  EXPECT_TRUE(float64_of(t).is_same(t));
  const auto ints = at::ones({4}, at::kLong);
  EXPECT_TRUE(float64_of(ints).is_same(ints));  // not floating: left alone
  EXPECT_FALSE(float64_of(at::Tensor()).defined());
}

TEST(HostValuesTest, ElementwiseAppliesTheFunctionPerElement) {
  const auto a = at::arange(6, at::kFloat).view({2, 3});
  const auto b = at::full({2, 3}, 0.5, at::kDouble);
  const auto r = elementwise_float64([](double x, double y) { return x * y + 1; }, a, b);
  EXPECT_EQ(r.scalar_type(), at::kDouble);
  EXPECT_EQ(r.sizes(), a.sizes());
  EXPECT_TRUE(at::equal(r, a.to(at::kDouble) * 0.5 + 1));
}

TEST(HostValuesTest, ElementwiseRefusesTensorsOfDifferentShapes) {
  EXPECT_THROW(elementwise_float64(std::plus<double>(), at::ones({3}), at::ones({4})),
               c10::Error);
  EXPECT_THROW(elementwise_float64(std::plus<double>(), at::ones({3}), at::Tensor()),
               c10::Error);
}

}  // namespace
}  // namespace kprop
