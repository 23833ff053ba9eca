// Property evaluations per second, per property, on one core.
//
//   bench_throughput [CASES=2000] [REPEATS=5] [IMPL=default] [PROPERTY=all]
//                    [KERNEL=causal_conv1d]
//
// IMPL `default` is the kernel's default implementation (causal_conv1d: tiled; geglu:
// flat). Two populations, both from the generator:
//   causal_conv1d (at most 4 segments of typical length <= 16)
//     drawn  every case as drawn, including D = 256 (the device forward's BD without an
//            initial state) and cases the implementation rejects;
//     small  only the drawn cases with D = 32 and at most 16 rows in all.
//   geglu (the schema's default limits: rows <= 8, cols <= 64 but for block edges)
//     drawn  every case as drawn;
//     small  only the drawn cases of at most 64 elements.
// Each evaluation materializes the case, runs the implementation and the reference
// through the dispatcher, derives the error bounds and compares. Prints Markdown.
//
// The rate is measured in thread CPU time, so that it is per core, and each population
// is evaluated REPEATS times, round-robin over all populations. On the shared 2-core
// machine the same run is up to 1.6x slower when neighbours are busy (CPU time included),
// so the table gives the best round — the machine's speed with the least interference, as
// Python's timeit reports its minimum — and the median beside it.
#include <fmt/format.h>

#include <ATen/Parallel.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <ctime>
#include <functional>
#include <map>
#include <numeric>

#include "generators/draw.h"
#include "harness/engine/property.h"
#include "harness/engine/runner.h"
#include "harness/model/kernel.h"

namespace {

double thread_cpu_seconds() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

// One population of cases of one property, evaluated once per round.
struct Population {
  std::string property, name;
  std::vector<kprop::Case> cases;
  std::vector<double> rates;  // evaluations per CPU second, one per round
  kprop::Tally tally;         // of the last round (every round gives the same verdicts)

  void evaluate_once() {
    kprop::Tally t;
    const double start = thread_cpu_seconds();
    for (const auto& c : cases) t.count(kprop::evaluate(c));
    rates.push_back(static_cast<double>(cases.size()) / (thread_cpu_seconds() - start));
    tally = t;
  }
  double best() const { return *std::max_element(rates.begin(), rates.end()); }
  double median() const {
    auto sorted = rates;
    std::sort(sorted.begin(), sorted.end());
    return sorted[sorted.size() / 2];
  }
};

// What a kernel's populations draw, and which drawn cases count as small.
struct Space {
  std::map<std::string, int64_t> limits;
  std::function<bool(const kprop::Case&)> small;
};

Space space_of(const std::string& kernel) {
  if (kernel == "causal_conv1d")
    return {{{"max_segments", 4}, {"max_length", 16}}, [](const kprop::Case& c) {
              const auto& lengths = c.integers("lengths");
              const int64_t total = std::accumulate(lengths.begin(), lengths.end(), int64_t{0});
              return c.integer("D") == 32 && total <= 16;
            }};
  return {{}, [](const kprop::Case& c) {
            return c.integer("batch") * c.integer("rows") * c.integer("cols") <= 64;
          }};
}

}  // namespace

int main(int argc, char** argv) {
  const int64_t cases = argc > 1 ? std::atoll(argv[1]) : 2000;
  const int repeats = argc > 2 ? std::max(1, std::atoi(argv[2])) : 5;
  const std::string only = argc > 4 ? argv[4] : "all";
  const auto& kernel = kprop::find_kernel(argc > 5 ? argv[5] : "causal_conv1d");
  const std::string asked = argc > 3 ? argv[3] : "default";
  const std::string impl = asked == "default" ? kernel.default_implementation() : asked;
  const Space bench_space = space_of(kernel.name());
  at::set_num_threads(1);  // per core
  fmt::print("| property | impl | population | cases | evaluations/s (best) | median | "
             "mean ms (best) | passed | rejected | skipped |\n"
             "|---|---|---|---|---|---|---|---|---|---|\n");
  std::vector<Population> populations;
  for (const auto& name : kernel.properties()) {
    if (only != "all" && only != name) continue;
    kprop::CaseSpace space;
    space.impl = impl;
    space.property = name;
    space.dtypes = kprop::find_property(name).dtypes();
    space.limits = bench_space.limits;
    space.size = 50;
    Population drawn{name, "drawn", {}, {}, {}}, small{name, "small", {}, {}, {}};
    for (int64_t i = 0; small.cases.size() < static_cast<size_t>(cases); ++i) {
      kprop::RandomChoices choices(kprop::case_seed(7, i));
      const auto c = kprop::draw_case(kernel.schema(), choices, space);
      if (static_cast<int64_t>(drawn.cases.size()) < cases) drawn.cases.push_back(c);
      if (bench_space.small(c)) small.cases.push_back(c);
    }
    populations.push_back(std::move(drawn));
    populations.push_back(std::move(small));
  }
  // Round-robin, so that every population sees the machine in the same states.
  for (int r = 0; r < repeats; ++r)
    for (auto& p : populations) p.evaluate_once();

  double small_seconds = 0;  // the mix: one small case of each property in turn
  int64_t small_cases = 0;
  for (const auto& p : populations) {
    const double rate = p.best();
    fmt::print("| {} | {} | {} | {} | {:.0f} | {:.0f} | {:.3f} | {} | {} | {} |\n", p.property,
               impl, p.name, p.cases.size(), rate, p.median(), 1e3 / rate, p.tally.passed,
               p.tally.rejected, p.tally.skipped);
    if (p.name == "small") {
      small_seconds += static_cast<double>(p.cases.size()) / rate;
      small_cases += static_cast<int64_t>(p.cases.size());
    }
  }
  const char* counts[] = {"", "one", "two", "three", "four", "five", "six", "seven"};
  const size_t n = kernel.properties().size();
  if (only == "all")
    fmt::print("| all {}, equally often | {} | small | {} | {:.0f} | | {:.3f} | | | |\n",
               n < 8 ? counts[n] : std::to_string(n).c_str(), impl, small_cases,
               small_cases / small_seconds, 1e3 * small_seconds / small_cases);
  return 0;
}
