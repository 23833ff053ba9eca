// Property evaluations per second, per property, on one core.
//
//   bench_throughput [CASES=2000] [REPEATS=5] [IMPL=tiled] [PROPERTY=all]
//
// Two populations, both from the generator (at most 4 segments of typical length <= 16):
//   drawn  every case as drawn, including D = 256 (the device forward's BD without an
//          initial state) and cases the implementation rejects;
//   small  only the drawn cases with D = 32 and at most 16 rows in all.
// Each evaluation materializes the case, runs the implementation and the reference
// through the dispatcher, derives the error bounds and compares. Prints Markdown.
//
// The rate is measured in thread CPU time, so that it is per core, and each population
// is evaluated REPEATS times. On the shared 2-core machine the same run is up to 1.6x
// slower when neighbours are busy (CPU time included), so the table gives the best
// repeat — the machine's speed with the least interference, as Python's timeit reports
// its minimum — and the median beside it.
#include <fmt/format.h>

#include <ATen/Parallel.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <ctime>

#include "harness/kernel_info.h"
#include "harness/property.h"
#include "harness/runner.h"

namespace {

double thread_cpu_seconds() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

struct Measurement {
  std::vector<double> rates;  // evaluations per CPU second, one per repeat
  kprop::Tally tally;         // of the last repeat (every repeat gives the same verdicts)
  double median() {
    std::sort(rates.begin(), rates.end());
    return rates[rates.size() / 2];
  }
  double best() const { return *std::max_element(rates.begin(), rates.end()); }
};

Measurement measure(const std::vector<kprop::Case>& cases, int repeats) {
  Measurement m;
  for (int r = 0; r < repeats; ++r) {
    kprop::Tally tally;
    const double start = thread_cpu_seconds();
    for (const auto& c : cases) tally.count(kprop::evaluate(c));
    m.rates.push_back(static_cast<double>(cases.size()) / (thread_cpu_seconds() - start));
    m.tally = tally;
  }
  return m;
}

}  // namespace

int main(int argc, char** argv) {
  const int64_t cases = argc > 1 ? std::atoll(argv[1]) : 2000;
  const int repeats = argc > 2 ? std::max(1, std::atoi(argv[2])) : 5;
  const std::string impl = argc > 3 ? argv[3] : "tiled";
  const std::string only = argc > 4 ? argv[4] : "all";
  const auto& kernel = kprop::find_kernel("causal_conv1d");
  at::set_num_threads(1);  // per core
  fmt::print("| property | impl | population | cases | evaluations/s (best) | median | "
             "mean ms (best) | passed | rejected | skipped |\n"
             "|---|---|---|---|---|---|---|---|---|---|\n");
  double small_seconds = 0;  // the mix: one small case of each property in turn
  int64_t small_cases = 0;
  for (const auto& name : kernel.properties()) {
    if (only != "all" && only != name) continue;
    const auto& property = kprop::find_property(name);
    kprop::CaseSpace space;
    space.impl = impl;
    space.property = name;
    space.dtypes = property.dtypes();
    space.max_segments = 4;
    space.max_length = 16;
    std::vector<kprop::Case> drawn, small;
    for (int64_t i = 0; small.size() < static_cast<size_t>(cases); ++i) {
      const auto c = kernel.draw(space, kprop::case_seed(7, i), 50).value();
      if (static_cast<int64_t>(drawn.size()) < cases) drawn.push_back(c);
      if (c.D == 32 && c.total_length() <= 16) small.push_back(c);
    }
    for (const auto& [population, set] : {std::pair{"drawn", &drawn}, {"small", &small}}) {
      auto m = measure(*set, repeats);
      const double rate = m.best();
      fmt::print("| {} | {} | {} | {} | {:.0f} | {:.0f} | {:.3f} | {} | {} | {} |\n", name,
                 impl, population, set->size(), rate, m.median(), 1e3 / rate, m.tally.passed,
                 m.tally.rejected, m.tally.skipped);
      if (std::string(population) == "small") {
        small_seconds += static_cast<double>(set->size()) / rate;
        small_cases += static_cast<int64_t>(set->size());
      }
    }
  }
  if (only == "all")
    fmt::print("| all five, equally often | {} | small | {} | {:.0f} | | {:.3f} | | | |\n", impl,
               small_cases, small_cases / small_seconds, 1e3 * small_seconds / small_cases);
  return 0;
}
