// Property evaluations per second, per property, on one core.
//
//   bench_throughput [CASES=2000] [IMPL=tiled]
//
// Two populations, both from the generator (at most 4 segments of typical length <= 16):
//   drawn  every case as drawn, including D = 256 (the device forward's BD without an
//          initial state) and cases the implementation rejects;
//   small  only the drawn cases with D = 32 and at most 16 rows in all.
// Each evaluation materializes the case, runs the implementation and the reference
// through the dispatcher, derives the error bounds and compares. Prints Markdown.
#include <fmt/format.h>

#include <ATen/Parallel.h>

#include <chrono>
#include <cstdlib>

#include "harness/kernel_info.h"
#include "harness/property.h"
#include "harness/runner.h"

int main(int argc, char** argv) {
  const int64_t cases = argc > 1 ? std::atoll(argv[1]) : 2000;
  const std::string impl = argc > 2 ? argv[2] : "tiled";
  const auto& kernel = kprop::find_kernel("causal_conv1d");
  at::set_num_threads(1);  // per core
  fmt::print("| property | impl | population | cases | evaluations/s | mean ms | passed | "
             "rejected | skipped |\n|---|---|---|---|---|---|---|---|---|\n");
  for (const auto& name : kernel.properties()) {
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
      kprop::Tally tally;
      const auto start = std::chrono::steady_clock::now();
      for (const auto& c : *set) tally.count(kprop::evaluate(c));
      const double s =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      fmt::print("| {} | {} | {} | {} | {:.0f} | {:.3f} | {} | {} | {} |\n", name, impl,
                 population, set->size(), set->size() / s, 1e3 * s / set->size(),
                 tally.passed, tally.rejected, tally.skipped);
    }
  }
  return 0;
}
