// Where implementations run (harness/execution/device.h) and where a run's time goes
// (harness/execution/call_profile.h). The CUDA path itself is exercised on the GPU machine
// (scripts/gpu.py); here: the settings, their errors, and that only outside
// implementations would move.
#include <ATen/Context.h>
#include <ATen/Functions.h>
#include <gtest/gtest.h>

#include "core/errors.h"
#include "generators/choices.h"
#include "generators/draw.h"
#include "harness/engine/properties/handed_tensors.h"
#include "harness/engine/property.h"
#include "harness/execution/call_profile.h"
#include "harness/execution/device.h"
#include "harness/execution/session.h"
#include "harness/model/kernel.h"
#include "harness/model/random_tensor.h"
#include "tests/reference_case.h"

namespace kprop {
namespace {

Case conv_case(const std::string& impl) {
  Case base;
  base.kernel = "causal_conv1d";
  base.impl = impl;
  base.property = "vs_reference";
  return default_case(find_kernel("causal_conv1d").schema(), base);
}

// A session on `device`, with the oracle on `oracle`: current until dropped.
std::unique_ptr<Session> on(const std::string& device, const std::string& oracle = "auto") {
  SessionSettings s;
  s.device = device;
  s.oracle_device = oracle;
  return std::make_unique<Session>(std::move(s));
}

TEST(DeviceTest, NamesAreCheckedAndCudaNeedsACudaLibtorch) {
  EXPECT_EQ(outside_device_name(), "cpu");  // no session: the defaults
  {
    const auto session = on("cpu");
    EXPECT_EQ(outside_device_name(), "cpu");
  }
  EXPECT_THROW(on("tpu"), UsageError);
  EXPECT_THROW(on(""), UsageError);
  if (!at::hasCUDA()) {
    try {
      on("cuda");
      FAIL() << "cuda accepted by a libtorch without CUDA";
    } catch (const UsageError& e) {
      EXPECT_NE(std::string(e.what()).find("no CUDA"), std::string::npos) << e.what();
    }
    EXPECT_EQ(outside_device_name(), "cpu");  // a refused session changes nothing
  }
}

// The innermost open session is current; closing it brings the one before back, and one
// that closes out of order leaves the others as they are.
TEST(DeviceTest, TheInnermostSessionIsCurrent) {
  auto outer = on("cpu", "cpu");
  EXPECT_FALSE(oracle_device_is_automatic());
  {
    const auto inner = on("cpu", "auto");
    EXPECT_TRUE(oracle_device_is_automatic());
    EXPECT_NE(Session::current().id(), outer->id());
  }
  EXPECT_FALSE(oracle_device_is_automatic());
  auto inner = on("cpu", "auto");
  outer.reset();  // the outer one closes first
  EXPECT_EQ(Session::current().id(), inner->id());
  inner.reset();
  EXPECT_TRUE(oracle_device_is_automatic());  // the defaults again
}

TEST(DeviceTest, OnlyOutsideImplementationsLeaveTheCpu) {
  {
    const auto session = on("cpu");
    EXPECT_TRUE(device_of(conv_case("tiled")).is_cpu());
    EXPECT_TRUE(device_of(conv_case("mine::causal_conv1d")).is_cpu());
  }
  if (at::hasCUDA()) {
    const auto session = on("cuda");
    EXPECT_TRUE(device_of(conv_case("tiled")).is_cpu());  // kprop's emulations are CPU code
    EXPECT_TRUE(device_of(conv_case("mine::causal_conv1d")).is_cuda());
    // A tensor made there compares equal to it: what is already on the device is handed
    // as it is, not copied (composition's graph buffers).
    EXPECT_TRUE(outside_device().has_index()) << outside_device_name();
    EXPECT_EQ(at::empty({1}, at::TensorOptions().device(outside_device())).device(),
              outside_device());
  }
}

TEST(DeviceTest, OracleDeviceNamesAreCheckedAndAutoFollowsTheImplementation) {
  EXPECT_THROW(on("cpu", "tpu"), UsageError);
  const Case c = conv_case("tiled");
  {
    const auto session = on("cpu", "cpu");
    EXPECT_TRUE(oracle_device_of(c, true).is_cpu());
  }
  {
    const auto session = on("cpu", "auto");
    EXPECT_TRUE(oracle_device_of(c, true).is_cpu());  // a built-in implementation: the CPU
  }
  if (at::hasCUDA()) {
    const auto session = on("cpu", "cuda");
    EXPECT_TRUE(oracle_device_of(c, true).is_cuda());
    EXPECT_TRUE(oracle_device_of(c, false).is_cpu()) << "an oracle with host loops moved";
  } else {
    EXPECT_THROW(on("cpu", "cuda"), UsageError);
  }
}

// Under auto a small problem keeps its oracle on the CPU; a large one, or any problem when
// the device is named, takes the device chosen.
TEST(DeviceTest, AutoKeepsTheOracleOfASmallProblemOnTheCpu) {
  const c10::Device gpu(c10::kCUDA, 0);  // a name only: nothing is allocated there
  {
    const auto session = on("cpu", "auto");
    EXPECT_TRUE(oracle_device_is_automatic());
    EXPECT_TRUE(oracle_device_for_size(gpu, 1000).is_cpu());
    EXPECT_TRUE(oracle_device_for_size(gpu, kSmallestProblemForADeviceOracle - 1).is_cpu());
    EXPECT_EQ(oracle_device_for_size(gpu, kSmallestProblemForADeviceOracle), gpu);
    EXPECT_TRUE(oracle_device_for_size(c10::Device(c10::kCPU), 1 << 20).is_cpu());
  }
  if (at::hasCUDA()) {
    const auto session = on("cpu", "cuda");
    EXPECT_FALSE(oracle_device_is_automatic());
    EXPECT_TRUE(oracle_device_for_size(gpu, 10).is_cuda()) << "a named device was overridden";
  }
}

// On the GPU machine: the oracle on the device gives the CPU oracle's verdicts, for each
// kernel whose oracle runs anywhere, its row emulation and a planted variant, in the dtypes below
// float64 (in float64 a bound is of the order of the reference's own rounding, which the
// device's order of summation changes).
TEST(DeviceTest, TheOracleOnTheDeviceGivesTheCpuOraclesVerdicts) {
  if (!at::hasCUDA()) GTEST_SKIP() << "no CUDA in this libtorch";
  int failures = 0, cases = 0;
  for (const auto& [name, impl] : std::vector<std::pair<std::string, std::string>>{
           {"rms_norm", "rows"}, {"rms_norm", "rows@offset"}, {"swiglu", "rows"},
           {"swiglu", "rows@dsilu"}, {"layer_norm", "rows"}, {"layer_norm", "rows@bf16"},
           {"geglu", "flat"}, {"geglu", "flat@gelu_in_dtype"}, {"causal_conv1d", "tiled"},
           {"causal_conv1d", "tiled@original"}}) {
    const Kernel& kernel = find_kernel(name);
    CaseSpace space;
    space.impl = impl;
    space.dtypes = {DType::float32, DType::bfloat16, DType::float16};
    space.size = 100;  // offset = 1 is drawn at full size only
    for (uint64_t seed = 1; seed <= 40; ++seed) {
      RandomChoices choices(seed);
      Case c = draw_case(kernel.schema(), choices, space);
      c.kernel = kernel.name();
      const Verdict host = [&] {
        const auto session = on("cpu", "cpu");
        return evaluate(c);
      }();
      const Verdict device = [&] {
        const auto session = on("cpu", "cuda");
        return evaluate(c);
      }();
      SCOPED_TRACE(name + " " + impl + " seed " + std::to_string(seed));
      ASSERT_EQ(to_string(host.status), to_string(device.status)) << host.message << " | " << device.message;
      ASSERT_EQ(host.tensors.size(), device.tensors.size());
      for (size_t i = 0; i < host.tensors.size(); ++i) {
        const TensorError &h = host.tensors[i], &d = device.tensors[i];
        EXPECT_EQ(h.mismatches, d.mismatches) << h.tensor;
        EXPECT_NEAR(h.error_over_bound, d.error_over_bound, 1e-6 * (1 + h.error_over_bound)) << h.tensor;
      }
      failures += host.status == Verdict::Status::fail;
      ++cases;
    }
  }
  EXPECT_EQ(cases, 400);
  EXPECT_GT(failures, 0) << "no failing verdict: the comparison of failures went untested";
}

// Inputs drawn on the device (harness/model/random_tensor.h) are the host's bits: every
// distribution and dtype, a large tensor among them (float32's roundings in doubt are
// a few per million elements), indices, and a kernel's whole problem.
TEST(DeviceTest, InputsDrawnOnTheDeviceAreTheHostsBits) {
  if (!at::hasCUDA()) GTEST_SKIP() << "no CUDA in this libtorch";
  const c10::Device cuda(c10::kCUDA, 0);
  const std::vector<std::vector<int64_t>> shapes = {{}, {0}, {7}, {3, 33}, {2048, 4096}};
  for (Distribution d : {Distribution::normal, Distribution::uniform, Distribution::heavy_tailed,
                         Distribution::small_integers})
    for (DType dtype : all_dtypes())
      for (const auto& shape : shapes)
        for (uint64_t seed : {1ULL, 0xFFFFFFFFFFFFFFFFULL}) {
          const auto device = random_tensor(shape, d, seed, 3, dtype, cuda);
          ASSERT_TRUE(device.is_cuda());
          ASSERT_TRUE(same_bits(random_tensor(shape, d, seed, 3, dtype), device.cpu()))
              << to_string(d) << " " << to_string(dtype) << " " << at::IntArrayRef(shape);
        }
  EXPECT_TRUE(at::equal(random_indices({64, 1000}, 131072, -100, 10, 5, 1),
                        random_indices({64, 1000}, 131072, -100, 10, 5, 1, cuda).cpu()));
  // Whole problems: drawn by the spec's inputs (rms_norm), by a materialize of the kernel's
  // own that draws scaled values (geglu) or adds host tensors (causal_conv1d's cu_seqlens).
  for (const std::string name : {"rms_norm", "geglu", "causal_conv1d"}) {
    const Kernel& kernel = find_kernel(name);
    for (uint64_t seed = 1; seed <= 20; ++seed) {
      const Case c = reference_case(kernel, seed);
      const Problem host = kernel.materialize(c), device = kernel.materialize_on(c, cuda);
      for (const auto& [input, t] : host.inputs) {
        const at::Tensor there = device.inputs.get(input);
        EXPECT_TRUE(t.defined() ? there.is_cuda() && same_bits(t, there.cpu()) : !there.defined())
            << name << " " << input << " seed " << seed;
      }
    }
  }
}

TEST(CallProfileTest, AnEvaluationCountsItsCallsAndItsReference) {
  CallProfile::reset();
  const Verdict v = evaluate(conv_case("tiled"));
  ASSERT_EQ(v.status, Verdict::Status::pass) << v.message;
  const auto t = CallProfile::totals();
  // vs_reference: one forward and one backward of the implementation, one reference pass
  // for the comparison (the error bounds run the reference on their own).
  EXPECT_EQ(t.count(CallProfile::Part::implementation), 2);
  EXPECT_GE(t.count(CallProfile::Part::reference), 1);
  EXPECT_EQ(t.count(CallProfile::Part::transfers), 0);  // nothing left the CPU
  EXPECT_GT(t.at(CallProfile::Part::implementation), 0.0);
  CallProfile::reset();
  EXPECT_EQ(CallProfile::totals().count(CallProfile::Part::implementation), 0);
}

}  // namespace
}  // namespace kprop
