// Where implementations run (harness/execution/device.h) and where a run's time goes
// (harness/execution/call_profile.h). The CUDA path itself is exercised on the GPU machine
// (scripts/gpu.py); here: the settings, their errors, and that only outside
// implementations would move.
#include <ATen/Context.h>
#include <ATen/Functions.h>
#include <gtest/gtest.h>

#include "generators/errors.h"
#include "harness/engine/property.h"
#include "harness/execution/call_profile.h"
#include "harness/execution/device.h"
#include "harness/model/kernel_info.h"

namespace kprop {
namespace {

Case conv_case(const std::string& impl) {
  Case base;
  base.kernel = "causal_conv1d";
  base.impl = impl;
  base.property = "vs_reference";
  return default_case(find_kernel("causal_conv1d").schema(), base);
}

TEST(DeviceTest, NamesAreCheckedAndCudaNeedsACudaLibtorch) {
  EXPECT_NO_THROW(set_outside_device("cpu"));
  EXPECT_EQ(outside_device_name(), "cpu");
  EXPECT_THROW(set_outside_device("tpu"), UsageError);
  EXPECT_THROW(set_outside_device(""), UsageError);
  if (!at::hasCUDA()) {
    try {
      set_outside_device("cuda");
      FAIL() << "cuda accepted by a libtorch without CUDA";
    } catch (const UsageError& e) {
      EXPECT_NE(std::string(e.what()).find("no CUDA"), std::string::npos) << e.what();
    }
    EXPECT_EQ(outside_device_name(), "cpu");  // a refused setting changes nothing
  }
}

TEST(DeviceTest, OnlyOutsideImplementationsLeaveTheCpu) {
  set_outside_device("cpu");
  EXPECT_TRUE(device_of(conv_case("tiled")).is_cpu());
  EXPECT_TRUE(device_of(conv_case("mine::causal_conv1d")).is_cpu());
  if (at::hasCUDA()) {
    set_outside_device("cuda");
    EXPECT_TRUE(device_of(conv_case("tiled")).is_cpu());  // kprop's emulations are CPU code
    EXPECT_TRUE(device_of(conv_case("mine::causal_conv1d")).is_cuda());
    // A tensor made there compares equal to it: what is already on the device is handed
    // as it is, not copied (composition's graph buffers).
    EXPECT_TRUE(outside_device().has_index()) << outside_device_name();
    EXPECT_EQ(at::empty({1}, at::TensorOptions().device(outside_device())).device(),
              outside_device());
    set_outside_device("cpu");
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
