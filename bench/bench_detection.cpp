// Time to detect: how many cases and seconds kprop needs to find, and then to shrink,
// each known defect of a kernel's historical states and variants, from a cold start.
//
//   bench_detection [SEEDS=20] [MAX_CASES=5000] [KERNEL...=every kernel]
//
// Per kernel (causal_conv1d: the historical Ascend states; geglu: the variants of the
// flatten-1D port), the implementations its known defects name:
// Part 1, first failure: for each such implementation x property, the median over SEEDS
// seeds of the cases and seconds to the first failure and to its minimal case.
// Part 2, known defects: for each known defect and each state that has it, the median
// cases and seconds until a minimal failure shows that defect (kprop's hunt: failures of
// other defects are shrunk, set aside and the search goes on), and how often it was found.
// Prints Markdown.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <map>
#include <vector>

#include "harness/engine/runner.h"
#include "harness/model/identity.h"
#include "harness/model/kernel.h"

namespace {

double median(std::vector<double> v) {
  if (v.empty()) return NAN;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// The implementations the kernel's known defects name, in the order they first appear.
std::vector<std::string> defective_implementations(const kprop::Kernel& kernel) {
  std::vector<std::string> out;
  for (const auto& d : kernel.known_defects())
    for (const auto& impl : d.impls)
      if (std::find(out.begin(), out.end(), impl) == out.end()) out.push_back(impl);
  return out;
}

void bench_kernel(const kprop::Kernel& kernel, int seeds, int64_t max_cases) {
  const std::vector<std::string> states = defective_implementations(kernel);
  const std::vector<std::string> properties = kernel.properties();
  fmt::print("# {}\n\n", kernel.name());
  fmt::print("## First failure, per state and property (median over {} seeds)\n\n", seeds);
  fmt::print("| state | property | found | cases | s to failure | s to minimal | "
             "most common identity |\n|---|---|---|---|---|---|---|\n");
  for (const auto& impl : states)
    for (const auto& property : properties) {
      std::vector<double> cases, to_fail, to_min;
      std::map<std::string, int> signatures;
      for (int s = 0; s < seeds; ++s) {
        kprop::SearchOptions o;
        o.kernel = kernel.name();
        o.impl = impl;
        o.properties = {property};
        o.cases = max_cases;
        o.seed = 1000 + s;
        const auto start = std::chrono::steady_clock::now();
        const auto r = kprop::search(o);
        if (!r.failure) continue;
        cases.push_back(r.failure->case_number);
        to_fail.push_back(r.failure->seconds_to_find);
        // Every new defect of the failing case is shrunk before search() returns.
        to_min.push_back(
            std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
        ++signatures[r.failure->identity];
      }
      std::string common = "-";
      int best = 0;
      for (const auto& [sig, n] : signatures)
        if (n > best) best = n, common = sig.substr(sig.find('/', sig.find('/') + 1) + 1);
      // (identities read kernel/impl/symptom {needs}: the table shows symptom {needs})
      fmt::print("| {} | {} | {}/{} | {} | {:.3f} | {:.3f} | {} |\n", impl, property,
                 cases.size(), seeds, median(cases), median(to_fail), median(to_min), common);
    }

  fmt::print("\n## Known defects (median over {} seeds; hunt past other failures)\n\n", seeds);
  // s to find: until the first case that shrinks to this defect was drawn (other defects
  // met before it already shrunk and set aside); s to minimal adds its own shrinking.
  fmt::print("| defect | state | property | found | cases | s to find | s shrinking | "
             "s to minimal | example minimal case |\n|---|---|---|---|---|---|---|---|---|\n");
  for (const auto& defect : kernel.known_defects())
    for (const auto& impl : defect.impls) {
      std::vector<double> cases, seconds, to_find, shrinking;
      std::string example = "-";
      for (int s = 0; s < seeds; ++s) {
        kprop::SearchOptions o;
        o.kernel = kernel.name();
        o.impl = impl;
        o.properties = {defect.property};
        o.limits = defect.limits;
        o.cases = max_cases;
        o.seed = 1000 + s;
        const auto h =
            kprop::hunt(o, [&](const kprop::Failure& f) { return kprop::shows(defect, f); });
        if (!h.match) continue;
        cases.push_back(h.cases);
        seconds.push_back(h.seconds);
        to_find.push_back(h.seconds - h.match->shrunk->seconds);
        shrinking.push_back(h.match->shrunk->seconds);
        if (example == "-") example = kprop::summary(kernel.schema(), h.match->minimal());
      }
      fmt::print("| {} | {} | {} | {}/{} | {} | {:.3f} | {:.3f} | {:.3f} | {} |\n", defect.name,
                 impl, defect.property, cases.size(), seeds, median(cases), median(to_find),
                 median(shrinking), median(seconds), example);
    }
  fmt::print("\n");
}

}  // namespace

int main(int argc, char** argv) {
  const int seeds = argc > 1 ? std::atoi(argv[1]) : 20;
  const int64_t max_cases = argc > 2 ? std::atoll(argv[2]) : 5000;
  std::vector<std::string> kernels(argv + std::min(argc, 3), argv + argc);
  if (kernels.empty()) kernels = kprop::kernel_names();
  for (const auto& name : kernels) bench_kernel(kprop::find_kernel(name), seeds, max_cases);
  return 0;
}
