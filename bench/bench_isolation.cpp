// The cost of crash isolation (harness/execution/isolation.h): cases per second of an outside
// implementation run in kprop's own process vs in an isolated worker, the time to start
// a worker, and the cost of a case that crashes it (a fresh worker per crash).
//
//   bench_isolation [CASES=400] [KPROP] [TEST_KERNELS_PLUGIN] [MISBEHAVING_PLUGIN]
//
// The implementation is plugin_ok::scaled_tanh (tests/plugins/misbehaving.cpp: correct,
// never misbehaves) on the test kernel scaled_tanh, loaded as a plugin; the properties
// that apply to it (vs_reference, gradient). Two populations: small (the generator's
// default, at most 8 x 64) and large (at most 256 x 1024). Wall time; the best of 3
// rounds. Prints Markdown.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>

#include "harness/engine/property.h"
#include "harness/engine/runner.h"
#include "harness/execution/dispatch.h"
#include "harness/execution/isolation.h"
#include "harness/execution/own_executable.h"
#include "harness/execution/session.h"

namespace {

using Clock = std::chrono::steady_clock;

double since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

kprop::SearchOptions population(int64_t cases, bool large) {
  kprop::SearchOptions s;
  s.kernel = "scaled_tanh";
  s.impl = "plugin_ok::scaled_tanh";
  s.properties = {"vs_reference", "gradient"};
  s.cases = cases;
  s.seed = 1;
  s.shrink = false;
  if (large) s.limits = {{"max_rows", 256}, {"max_cols", 1024}};
  return s;
}

// Cases per second of the best of `rounds` searches (no failure stops them).
double rate(const kprop::SearchOptions& s, int rounds) {
  double best = 0;
  for (int i = 0; i < rounds; ++i) {
    const auto start = Clock::now();
    const kprop::SearchResult r = kprop::search(s);
    const double seconds = since(start);
    if (r.failure) fmt::print(stderr, "unexpected failure: {}\n", r.failure->identity);
    best = std::max(best, static_cast<double>(r.tally.cases) / seconds);
  }
  return best;
}

kprop::Case one_case(const std::string& impl, int64_t cols) {
  kprop::Case base;
  base.kernel = "scaled_tanh";
  base.impl = impl;
  base.property = "vs_reference";
  kprop::Case c = kprop::default_case(kprop::find_kernel("scaled_tanh").schema(), base);
  c.set("rows", int64_t{1});
  c.set("cols", cols);
  return c;
}

}  // namespace

int main(int argc, char** argv) {
  const int64_t cases = argc > 1 ? std::atoll(argv[1]) : 400;
  kprop::SessionSettings isolated;
  kprop::IsolationSettings& iso = isolated.isolation;
  iso.enabled = true;
  const auto built = [](const char* path) { return kprop::beside_own_executable(path).string(); };
  iso.command = {argc > 2 ? argv[2] : built(KPROP_EXECUTABLE)};
  const std::string kernels = argc > 3 ? argv[3] : built(KPROP_TEST_KERNELS_PLUGIN);
  const std::string misbehaving = argc > 4 ? argv[4] : built(KPROP_MISBEHAVING_PLUGIN);
  iso.libraries = {kernels, misbehaving};
  kprop::load_operator_library(kernels);
  kprop::load_operator_library(misbehaving);

  fmt::print("| population | in-process cases/s | isolated cases/s | isolated / in-process |\n");
  fmt::print("|---|---|---|---|\n");
  for (const bool large : {false, true}) {
    const auto s = population(cases, large);
    const double here = rate(s, 3);  // no session: in-process
    const kprop::Session session(isolated);
    kprop::evaluate(one_case("plugin_ok::scaled_tanh", 8));  // the worker is started
    const double there = rate(s, 3);
    fmt::print("| {} ({} cases) | {:.0f} | {:.0f} | {:.2f} |\n",
               large ? "large (<= 256 x 1024)" : "small (<= 8 x 64)", cases, here, there,
               there / here);
  }

  // A fresh worker: spawn, load libtorch and both plugins, answer "ready".
  const kprop::Session session(isolated);
  std::vector<double> starts, crashes;
  for (int i = 0; i < 10; ++i) {
    kprop::stop_isolated_worker();
    const auto before = kprop::isolation_stats();
    kprop::evaluate(one_case("plugin_ok::scaled_tanh", 8));
    const auto after = kprop::isolation_stats();
    starts.push_back(after.start_seconds - before.start_seconds);
    // A crashing case, then the worker started for the next one.
    const auto start = Clock::now();
    kprop::evaluate(one_case("crash_wide::scaled_tanh", 16));
    kprop::evaluate(one_case("plugin_ok::scaled_tanh", 8));
    crashes.push_back(since(start));
  }
  std::sort(starts.begin(), starts.end());
  std::sort(crashes.begin(), crashes.end());
  fmt::print("\n| | median | min | max |\n|---|---|---|---|\n");
  fmt::print("| worker start (spawn to ready), s | {:.3f} | {:.3f} | {:.3f} |\n", starts[5],
             starts[0], starts[9]);
  fmt::print("| a crashing case + the next case (fresh worker), s | {:.3f} | {:.3f} | {:.3f} |\n",
             crashes[5], crashes[0], crashes[9]);
  return 0;
}
