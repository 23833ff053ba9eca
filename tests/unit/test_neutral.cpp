// `neutral` (harness/engine/properties/neutral.cpp): an optional input left out equals its neutral
// value passed. A forward whose path without a bias drops a term
// (tests/kernels/scaled_tanh_variants/path_without_bias.cpp) stays within y's bound in
// bfloat16, so the reference comparison passes it there; this property finds it, naming
// the result and the input left out.
#include <gtest/gtest.h>

#include "harness/engine/property.h"
#include "harness/model/kernel.h"
#include "harness/presentation/report.h"
#include "tests/scaled_tanh_case.h"

namespace kprop {
namespace {

Case many(const std::string& impl, const std::string& property, DType dtype, bool bias) {
  Case c = tanh_case(impl, 16, property, 4);
  c.set("rows", int64_t{64});  // some of its x below 1/16
  c.set("bias", bias);
  c.dtype = dtype;
  return c;
}

TEST(Neutral, APathWithoutBiasThatDropsATermDiffersFromAZeroBias) {
  const char* impl = "kprop_variant_path_without_bias::scaled_tanh";
  for (bool bias : {false, true}) {
    const Verdict reference = evaluate(many(impl, "vs_reference", DType::bfloat16, bias));
    EXPECT_FALSE(reference.failed()) << bias << "\n" << format_error_table(reference);
    const Verdict v = evaluate(many(impl, "neutral", DType::bfloat16, bias));
    ASSERT_TRUE(v.failed()) << format_error_table(v);
    ASSERT_EQ(v.symptoms().size(), 1u) << v.signature();
    EXPECT_EQ(v.symptoms()[0].rfind("y differs from b 0 passed", 0), 0u) << v.symptoms()[0];
  }
}

TEST(Neutral, TheCorrectToyGivesTheSameBitsWithoutABiasAndWithAZeroOne) {
  for (DType dtype : {DType::float32, DType::bfloat16, DType::float16}) {
    const Verdict v = evaluate(many("toy", "neutral", dtype, false));
    EXPECT_EQ(v.status, Verdict::Status::pass) << v.message;
    ASSERT_FALSE(v.tensors.empty());
    EXPECT_EQ(v.tensors[0].check, "without b");
  }
}

TEST(Neutral, AKernelWithoutNeutralValuesIsSkippedSayingSo) {
  Case c = default_case(find_kernel("geglu").schema(), Case{});
  c.kernel = "geglu";
  c.impl = "flat";
  c.property = "neutral";
  const Verdict v = evaluate(c);
  EXPECT_EQ(v.status, Verdict::Status::skipped);
  EXPECT_EQ(v.message, "geglu declares no neutral values of optional inputs");
}

}  // namespace
}  // namespace kprop
