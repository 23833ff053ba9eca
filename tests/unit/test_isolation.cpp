// What an implementation's exceptions, crashes and hangs become (harness/engine/property.h,
// harness/execution/isolation.h): a declared refusal is rejected, anything else a failure with its
// fault; outside implementations run in a worker process, which a crash, an exit or a
// hang does not take kprop down with.
//
// Needs the kprop executable and two plugins (KPROP_EXECUTABLE, KPROP_TEST_KERNELS_PLUGIN,
// KPROP_MISBEHAVING_PLUGIN, set by tests/CMakeLists.txt): the worker is kprop itself.
#include <gtest/gtest.h>

#include <chrono>
#include <memory>

#include "core/errors.h"
#include "harness/engine/property.h"
#include "harness/execution/dispatch.h"
#include "harness/execution/isolation.h"
#include "harness/execution/session.h"
#include "harness/model/identity.h"
#include "harness/model/kernel.h"
#include "harness/presentation/report.h"
#include "tests/scaled_tanh_case.h"

namespace kprop {
namespace {

Case conv_case(const std::string& impl, int64_t D, bool initial_state, int64_t W = 4) {
  Case base;
  base.kernel = "causal_conv1d";
  base.impl = impl;
  base.property = "vs_reference";
  Case c = default_case(find_kernel("causal_conv1d").schema(), base);
  c.set("D", D);
  c.set("initial_state", initial_state);
  c.set("W", W);
  return c;
}

// The misbehaving implementations, in this process (for the in-process judgement).
void load_misbehaving_plugin() {
  static const bool loaded = (load_operator_library(KPROP_MISBEHAVING_PLUGIN), true);
  (void)loaded;
}

SessionSettings isolated(double timeout = 10, std::vector<std::string> refusals = {}) {
  SessionSettings s;
  s.isolation.enabled = true;
  s.isolation.command = {KPROP_EXECUTABLE};
  s.isolation.libraries = {KPROP_TEST_KERNELS_PLUGIN, KPROP_MISBEHAVING_PLUGIN};
  s.isolation.case_timeout_seconds = timeout;
  s.refusals = std::move(refusals);
  return s;
}

SessionSettings refusing(std::vector<std::string> refusals) {
  SessionSettings s;
  s.refusals = std::move(refusals);
  return s;
}

class Isolation : public ::testing::Test {
 protected:
  void SetUp() override { load_misbehaving_plugin(); }
  void TearDown() override { session_.reset(); }
  // Runs what follows in a session of these settings (the one before it closed).
  void use(SessionSettings settings) {
    session_.reset();
    session_ = std::make_unique<Session>(std::move(settings));
  }
  void in_process() { session_.reset(); }

 private:
  std::unique_ptr<Session> session_;
};

// causal_conv1d's tiled implementations declare what they raise on (D % BD, W > 8 after
// the clamp); such a case is rejected, as before.
TEST_F(Isolation, DeclaredRefusalOfABuiltinIsRejected) {
  const Verdict stateless = evaluate(conv_case("tiled", 96, false));
  EXPECT_EQ(stateless.status, Verdict::Status::rejected) << stateless.message;
  EXPECT_EQ(stateless.message, "D must be divisible by BD (D = 96, BD = 256)");
  EXPECT_FALSE(stateless.fault);
  const Verdict odd = evaluate(conv_case("tiled@fixed", 33, true));
  EXPECT_EQ(odd.status, Verdict::Status::rejected) << odd.message;
  const Verdict wide = evaluate(conv_case("tiled@clamped", 32, true, 9));
  EXPECT_EQ(wide.status, Verdict::Status::rejected) << wide.message;
  EXPECT_NE(wide.message.find("W > 8 is not supported"), std::string::npos) << wide.message;
  // The reference takes them all; the vendored state takes W = 9.
  EXPECT_EQ(evaluate(conv_case("reference", 96, false)).status, Verdict::Status::pass);
  EXPECT_NE(evaluate(conv_case("tiled@original", 32, true, 9)).status, Verdict::Status::rejected);
}

// A refusal is declared for a case and a message: the same message on a case the
// implementation takes, or another message on a refused case, is not one.
TEST_F(Isolation, DeclaredRefusalNeedsTheCaseAndTheMessage) {
  const std::string message = "D must be divisible by BD (D = 96, BD = 256)";
  EXPECT_EQ(declared_refusal(conv_case("tiled", 96, false), message), "D must be divisible by BD");
  EXPECT_EQ(declared_refusal(conv_case("tiled", 256, false), message), std::nullopt);
  EXPECT_EQ(declared_refusal(conv_case("tiled", 96, false), "index out of range"), std::nullopt);
  EXPECT_EQ(declared_refusal(conv_case("reference", 96, false), message), std::nullopt);
  EXPECT_EQ(declared_refusal(conv_case("tiled@clamped", 32, true, 9), "W > 8 is not supported"),
            "W > 8 is not supported");
  EXPECT_EQ(declared_refusal(conv_case("tiled@original", 32, true, 9), "W > 8 is not supported"),
            std::nullopt);
  EXPECT_EQ(declared_refusal(tanh_case("toy", 16), "anything"), std::nullopt);
}

// ATen's "not implemented for <dtype>" is the platform's refusal, for every implementation
// (found by the fuzz targets of swiglu, cross_entropy and fused_linear_cross_entropy:
// their float16 references raised it under libtorch 1.13 on the CPU, and were "defects").
TEST_F(Isolation, ThePlatformsMissingKernelIsARefusal) {
  const std::string message = "\"sigmoid_cpu\" not implemented for 'Half'";
  EXPECT_EQ(platform_refusal("raised: " + message + " (at a.py:3)"), message);
  EXPECT_EQ(platform_refusal("index 3 is out of bounds"), std::nullopt);
  EXPECT_EQ(declared_refusal(conv_case("reference", 96, false), message), message);
  EXPECT_EQ(declared_refusal(tanh_case("toy", 16), message), message);
  // The case that found it: swiglu's reference in float16 is refused where the platform
  // lacks the op, and checked where it has it (libtorch 2.x).
  Case c;
  c.kernel = "swiglu";
  c.impl = "reference";
  c.property = "vs_reference";
  c.dtype = DType::float16;
  c.seed = 1;
  c.params = {{"rows", int64_t{1}}, {"cols", int64_t{1}}};
  EXPECT_NE(evaluate(c).status, Verdict::Status::fail) << evaluate(c).message;
}

// An outside implementation declares nothing unless told: what it raises is a failure
// whose symptom is "exception" (never the message, which names the call and the size).
TEST_F(Isolation, AnUndeclaredExceptionIsAFailure) {
  const Verdict v = evaluate(tanh_case("throw_wide::scaled_tanh", 16));
  EXPECT_EQ(v.status, Verdict::Status::fail);
  EXPECT_EQ(v.fault.kind, Fault::Kind::raised);
  EXPECT_EQ(v.message.rfind("raised: misbehaving scaled_tanh: refuses this case (forward call ", 0), 0u)
      << v.message;
  EXPECT_EQ(v.symptoms(), std::vector<std::string>{"exception"});
  EXPECT_EQ(v.signature(), "scaled_tanh/throw_wide::scaled_tanh/vs_reference/exception");
  EXPECT_EQ(evaluate(tanh_case("throw_wide::scaled_tanh", 15)).status, Verdict::Status::pass);

  use(refusing({"refuses this case"}));
  const Verdict declared = evaluate(tanh_case("throw_wide::scaled_tanh", 16));
  EXPECT_EQ(declared.status, Verdict::Status::rejected);
  EXPECT_FALSE(declared.fault);
  use(refusing({"some other refusal"}));
  EXPECT_EQ(evaluate(tanh_case("throw_wide::scaled_tanh", 16)).status, Verdict::Status::fail);
}

// The worker answers what the process itself would: the same verdict, error table included.
TEST_F(Isolation, WorkerAnswersTheInProcessVerdict) {
  for (const std::string property : {"vs_reference", "gradient", "chunked"}) {
    const Case c = tanh_case("plugin_ok::scaled_tanh", 9, property);
    const Verdict here = evaluate(c);
    use(isolated());
    const int64_t before = isolation_stats().cases;
    const Verdict there = evaluate(c);
    EXPECT_EQ(isolation_stats().cases, before + 1);
    in_process();
    EXPECT_EQ(verdict_to_json(there).dump(), verdict_to_json(here).dump()) << property;
  }
}

// Built-in implementations stay in-process for speed, isolation or not.
TEST_F(Isolation, BuiltinsStayInProcess) {
  use(isolated());
  const int64_t before = isolation_stats().cases;
  EXPECT_EQ(evaluate(tanh_case("toy", 9)).status, Verdict::Status::pass);
  EXPECT_EQ(evaluate(conv_case("tiled", 96, false)).status, Verdict::Status::rejected);
  EXPECT_EQ(isolation_stats().cases, before);
}

// A crash, an exit and a hang each become a failure with their reason, and the next case
// runs in a fresh worker.
TEST_F(Isolation, CrashExitAndHangAreFailures) {
  use(isolated(1.0));
  const int64_t started = isolation_stats().workers_started;
  const Verdict crash = evaluate(tanh_case("crash_wide::scaled_tanh", 16));
  EXPECT_EQ(crash.status, Verdict::Status::fail);
  EXPECT_EQ(crash.fault.kind, Fault::Kind::crashed);
  EXPECT_EQ(crash.message, "crashed with SIGSEGV");
  EXPECT_EQ(crash.signature(), "scaled_tanh/crash_wide::scaled_tanh/vs_reference/crash (SIGSEGV)");
  EXPECT_TRUE(crash.shows("crash (SIGSEGV)"));
  EXPECT_EQ(symptom_of(identity(find_kernel("scaled_tanh").schema(), tanh_case("crash_wide::scaled_tanh", 16),
                                crash.symptoms()[0])),
            "crash (SIGSEGV)");

  EXPECT_EQ(evaluate(tanh_case("crash_wide::scaled_tanh", 15)).status, Verdict::Status::pass);

  const Verdict exited = evaluate(tanh_case("exit_wide::scaled_tanh", 16));
  EXPECT_EQ(exited.message, "exited with code 3");
  EXPECT_EQ(exited.symptoms(), std::vector<std::string>{"exit (code 3)"});

  const auto start = std::chrono::steady_clock::now();
  const Verdict hang = evaluate(tanh_case("hang_wide::scaled_tanh", 16));
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(hang.status, Verdict::Status::fail);
  EXPECT_EQ(hang.message, "timed out after 1 s");
  EXPECT_EQ(hang.symptoms(), std::vector<std::string>{"hang (timeout)"});
  EXPECT_LT(seconds, 5.0);

  const Verdict raised = evaluate(tanh_case("throw_wide::scaled_tanh", 16));
  EXPECT_EQ(raised.symptoms(), std::vector<std::string>{"exception"});
  EXPECT_EQ(evaluate(tanh_case("plugin_ok::scaled_tanh", 16)).status, Verdict::Status::pass);
  // One worker at the start, one after each crash, exit and hang (the exception keeps it).
  EXPECT_EQ(isolation_stats().workers_started, started + 4);
}

// The worker judges refusals as the process would: the declared texts go with it.
TEST_F(Isolation, RefusalsReachTheWorker) {
  use(isolated(10, {"refuses this case"}));
  EXPECT_EQ(evaluate(tanh_case("throw_wide::scaled_tanh", 16)).status, Verdict::Status::rejected);
}

}  // namespace
}  // namespace kprop
