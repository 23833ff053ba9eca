// Every tensor handed to an implementation comes back unchanged
// (harness/engine/properties/handed_tensors.h): test-only variants of scaled_tanh that write over
// x in their forward or dx over dy in their backward
// (tests/kernels/scaled_tanh_variants/overwrites.cpp) return only right values, and fail
// on the tensor and the call they wrote over; declared, the same writes pass.
#include <gtest/gtest.h>

#include <limits>

#include "core/errors.h"
#include "harness/engine/properties/handed_tensors.h"
#include "harness/engine/property.h"
#include "harness/execution/takes.h"
#include "harness/model/kernel.h"
#include "harness/presentation/report.h"
#include "tests/scaled_tanh_case.h"

namespace kprop {
namespace {

Case tanh_case(const std::string& impl, const std::string& property) {
  return ::tanh_case(impl, 9, property, 11);
}

bool passed(const Verdict& v, const std::string& tensor) {
  for (const auto& t : v.tensors)
    if (t.tensor == tensor && !t.exact() && !t.passed()) return false;
  return true;
}

TEST(HandedTensors, SameBitsComparesBitsNotValues) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const at::Tensor a = at::tensor({1.0, nan, 0.0});
  EXPECT_TRUE(same_bits(a, a.clone()));  // a NaN handed in comes back as itself
  EXPECT_FALSE(same_bits(a, at::tensor({1.0, nan, -0.0})));  // -0 is not 0
  EXPECT_FALSE(same_bits(a.to(at::kBFloat16), at::tensor({1.0, nan, 1.0}).to(at::kBFloat16)));
}

TEST(HandedTensors, AForwardThatWritesOverAnInputFailsNamingItAndTheCall) {
  for (const std::string property : {"vs_reference", "gradient"}) {
    const Verdict v = evaluate(tanh_case("kprop_variant_x_overwritten::scaled_tanh", property));
    ASSERT_TRUE(v.failed()) << property;
    ASSERT_FALSE(v.symptoms().empty());
    EXPECT_EQ(v.symptoms()[0].rfind("x overwritten by the forward", 0), 0u) << v.symptoms()[0];
    EXPECT_EQ(v.symptoms().size(), 1u) << format_error_table(v);  // its y is right
  }
}

TEST(HandedTensors, ABackwardThatWritesOverItsCotangentFailsAndItsResultsStayRight) {
  const Verdict v = evaluate(tanh_case("kprop_variant_dy_overwritten::scaled_tanh", "vs_reference"));
  ASSERT_TRUE(v.failed());
  ASSERT_EQ(v.symptoms().size(), 1u) << format_error_table(v);
  EXPECT_EQ(v.symptoms()[0].rfind("dy overwritten by the backward", 0), 0u) << v.symptoms()[0];
  // It returns dy's buffer as dx: restoring dy must not change the dx it returned.
  EXPECT_TRUE(passed(v, "dx")) << format_error_table(v);
}

TEST(HandedTensors, ADeclaredOverwriteIsHandedACopyAndPasses) {
  declare_takes("scaled_tanh", "kprop_variant_x_overwritten::scaled_tanh", Takes{{}, {}, {}, {}, {}, {"x"}});
  declare_takes("scaled_tanh", "kprop_variant_dy_overwritten::scaled_tanh", Takes{{}, {}, {}, {}, {}, {"dy"}});
  for (const std::string property : {"vs_reference", "gradient"}) {
    const Verdict x = evaluate(tanh_case("kprop_variant_x_overwritten::scaled_tanh", property));
    EXPECT_FALSE(x.failed()) << property << ": " << format_error_table(x);
    const Verdict dy = evaluate(tanh_case("kprop_variant_dy_overwritten::scaled_tanh", property));
    EXPECT_FALSE(dy.failed()) << property << ": " << format_error_table(dy);
  }
  declare_takes("scaled_tanh", "kprop_variant_x_overwritten::scaled_tanh", Takes{});
  declare_takes("scaled_tanh", "kprop_variant_dy_overwritten::scaled_tanh", Takes{});
}

TEST(HandedTensors, TheCorrectToyPassesAndAnUnknownOverwriteIsAUsageError) {
  EXPECT_FALSE(evaluate(tanh_case("toy", "vs_reference")).failed());
  try {
    declare_takes("scaled_tanh", "toy", Takes{{}, {}, {}, {}, {}, {"z"}});
    FAIL() << "declared";
  } catch (const UsageError& e) {
    EXPECT_STREQ(e.what(), "kernel scaled_tanh, implementation toy: takes overwrites: 'z' is no "
                           "input or cotangent of scaled_tanh (it has x, s, b, dy)");
  }
}

}  // namespace
}  // namespace kprop
