// The float64 oracle on a device (harness/execution/device.h) evaluates the derived bounds
// and the comparisons as ATen operations instead of host loops (harness/model/host_values.h,
// verdict.cpp). This machine has no GPU, so evaluate_as_on_a_device() runs those ATen
// forms on the CPU, the operations a device runs: a formula or a comparison that differs
// between the two forms shows here as a different verdict.
#include <gtest/gtest.h>

#include <cmath>
#include <set>
#include <sstream>

#include "generators/choices.h"
#include "generators/draw.h"
#include "harness/engine/properties/calls.h"
#include "harness/engine/property.h"
#include "harness/model/host_values.h"
#include "harness/model/kernel.h"
#include "tests/as_on_a_device.h"

namespace kprop {
namespace {

void expect_near_relative(double a, double b, const std::string& what, double relative = 1e-12) {
  if (std::isinf(a) || std::isinf(b) || std::isnan(a) || std::isnan(b)) {
    EXPECT_TRUE(a == b || (std::isnan(a) && std::isnan(b))) << what << ": " << a << " vs " << b;
    return;
  }
  EXPECT_LE(std::abs(a - b), relative * std::max(std::abs(a), std::abs(b)) + 1e-300)
      << what << ": " << a << " vs " << b;
}

TEST(OracleForms, AGenericFormulaGivesTheLoopsValuesAsAtenOps) {
  const auto a = at::randn({5, 7}, at::kDouble), b = at::randn({5, 7}, at::kFloat);
  const auto formula = [](auto m, auto v) { return 3.5 * m + abs_of(v) * 1e-3 + 1e-30; };
  const auto loop = elementwise_float64(formula, a, b);
  at::Tensor aten;
  {
    AsOnADevice on;
    aten = elementwise_float64(formula, a, b);
    // A formula with no ATen form (a lambda of doubles) still answers, on host copies.
    EXPECT_TRUE(at::equal(elementwise_float64([](double x) { return -x; }, a), -a));
  }
  EXPECT_EQ(aten.scalar_type(), at::kDouble);
  EXPECT_TRUE(at::allclose(loop, aten, 1e-15, 0)) << (loop - aten).abs().max().item<double>();
}

// vs_reference on each kernel whose oracle runs on any device, for its row emulation, a
// planted variant and the reference, in every dtype: the same verdict and the same numbers
// in each row (the inputs drawn as ATen operations too).
struct FormsCase {
  std::string kernel;
  std::vector<std::string> impls;
  // Both forms compute each value by the same operations in the same order. Where they do
  // not (causal_conv1d's dw and db are summed in ATen's order; geglu's exp is ATen's
  // vectorised one, not glibc's), the reference moves by its own rounding: float64 cases,
  // whose bound is of that order, are left out, and an error of 1e-6 may move by 1e-15.
  bool same_operations = true;
};
class OracleFormsOf : public ::testing::TestWithParam<FormsCase> {};

TEST_P(OracleFormsOf, VsReferenceGivesTheSameVerdictsInBothForms) {
  const Kernel& kernel = find_kernel(GetParam().kernel);
  ASSERT_TRUE(kernel.oracle_runs_on_any_device());
  int verdicts = 0, failures = 0;
  for (const std::string& impl : GetParam().impls) {
    CaseSpace space;
    space.impl = impl;
    space.property = "vs_reference";
    space.dtypes = all_dtypes();
    if (!GetParam().same_operations)
      space.dtypes = {DType::float32, DType::bfloat16, DType::float16};
    space.size = 100;  // offset = 1 is drawn at full size only
    for (uint64_t seed = 1; seed <= 40; ++seed) {
      RandomChoices choices(seed);
      Case c = draw_case(kernel.schema(), choices, space);
      c.kernel = kernel.name();
      const Verdict loop = evaluate(c);
      Verdict aten;
      {
        AsOnADevice on;
        aten = evaluate(c);
      }
      SCOPED_TRACE(impl + " seed " + std::to_string(seed));
      ASSERT_EQ(to_string(loop.status), to_string(aten.status)) << loop.message << " | " << aten.message;
      ASSERT_EQ(loop.tensors.size(), aten.tensors.size());
      for (size_t i = 0; i < loop.tensors.size(); ++i) {
        const TensorError &l = loop.tensors[i], &a = aten.tensors[i];
        EXPECT_EQ(l.tensor, a.tensor);
        EXPECT_EQ(l.mismatches, a.mismatches) << l.tensor;
        EXPECT_EQ(l.index, a.index) << l.tensor;
        EXPECT_EQ(l.region, a.region) << l.tensor;
        const double relative = GetParam().same_operations ? 1e-12 : 1e-6;
        expect_near_relative(l.max_abs, a.max_abs, l.tensor + " max_abs", relative);
        expect_near_relative(l.max_rel, a.max_rel, l.tensor + " max_rel", relative);
        expect_near_relative(l.error_over_bound, a.error_over_bound, l.tensor + " error/bound",
                             relative);
        expect_near_relative(l.actual, a.actual, l.tensor + " actual");
        expect_near_relative(l.expected, a.expected, l.tensor + " expected");
      }
      ++verdicts;
      failures += loop.status == Verdict::Status::fail;
    }
  }
  EXPECT_EQ(verdicts, 40 * static_cast<int>(GetParam().impls.size()));
  EXPECT_GT(failures, 0) << "no failing verdict: the comparison of failures went untested";
}

INSTANTIATE_TEST_SUITE_P(
    Kernels, OracleFormsOf,
    ::testing::Values(FormsCase{"rms_norm", {"rows", "rows@offset", "reference"}},
                      FormsCase{"swiglu", {"rows", "rows@dsilu", "reference"}},
                      FormsCase{"layer_norm", {"rows", "rows@bf16", "reference"}},
                      FormsCase{"geglu", {"flat", "flat@gelu_in_dtype", "reference"}, false},
                      FormsCase{"causal_conv1d", {"tiled", "tiled@original", "reference"}, false}),
    [](const ::testing::TestParamInfo<FormsCase>& info) { return info.param.kernel; });

// The reference's outputs and gradients and the derived bounds themselves, tensor by
// tensor, in both forms: the same values to float64 rounding (an oracle whose device form
// sums in another order, as causal_conv1d's dw does, differs by ulps, not more).
TEST_P(OracleFormsOf, ReferenceAndBoundsHaveTheSameValuesInBothForms) {
  const Kernel& kernel = find_kernel(GetParam().kernel);
  Implementation reference;
  for (const auto& impl : kernel.implementations())
    if (impl.name == "reference") reference = impl;
  ASSERT_EQ(reference.name, "reference");
  int compared = 0;
  for (uint64_t seed = 1; seed <= 40; ++seed) {
    CaseSpace space;
    space.impl = "reference";
    space.property = "vs_reference";
    space.dtypes = all_dtypes();
    space.size = 100;
    RandomChoices choices(seed);
    Case c = draw_case(kernel.schema(), choices, space);
    c.kernel = kernel.name();
    if (kernel.refusal(c, "reference")) continue;
    std::ostringstream described;
    described << c;
    SCOPED_TRACE(described.str());
    auto both = [&](auto compute) {
      const NamedTensors loop = compute();
      AsOnADevice on;
      const NamedTensors aten = compute();
      ASSERT_EQ(loop.size(), aten.size());
      for (const auto& [name, l] : loop) {
        const at::Tensor a = aten.get(name);
        ASSERT_EQ(l.defined(), a.defined()) << name;
        if (!l.defined()) continue;
        ASSERT_EQ(l.sizes(), a.sizes()) << name;
        const at::Tensor ld = l.to(at::kDouble), ad = a.to(at::kDouble);
        EXPECT_TRUE(at::equal(ld.isnan(), ad.isnan())) << name;
        EXPECT_TRUE(at::equal(ld.isposinf(), ad.isposinf())) << name;
        EXPECT_TRUE(at::equal(ld.isneginf(), ad.isneginf())) << name;
        const at::Tensor finite = ld.isfinite();
        const at::Tensor diff = (ld - ad).abs().masked_fill(~finite, 0);
        const at::Tensor scale = ld.abs().masked_fill(~finite, 0).max().clamp_min(1e-300);
        EXPECT_LE((diff.max() / scale).item<double>(), 1e-12) << name;
        ++compared;
      }
    };
    Verdict verdict;
    const Calls calls(kernel, reference, verdict);
    const Problem p = kernel.materialize(c);
    const NamedTensors cot = random_cotangents(kernel, p, calls.forward(p));
    // A Calls of its own each time: one Calls computes a problem's reference once.
    auto fresh_reference = [&] { return Calls(kernel, reference, verdict).reference(p, cot); };
    both([&] { return fresh_reference(); });
    both([&] { return kernel.error_bounds(p, cot, fresh_reference(), {0}); });
    both([&] { return kernel.error_bounds(p, cot, fresh_reference(), {0, 1}); });
  }
  EXPECT_GT(compared, 40 * 3);
}

// Every kernel that says its oracle runs on any device is held to both forms above.
TEST(OracleForms, EveryKernelWhoseOracleMovesIsCovered) {
  const std::set<std::string> covered{"rms_norm", "swiglu", "layer_norm", "geglu",
                                      "causal_conv1d"};
  for (const auto& name : kernel_names()) {
    if (find_kernel(name).oracle_runs_on_any_device()) EXPECT_TRUE(covered.count(name)) << name;
  }
}

}  // namespace
}  // namespace kprop
