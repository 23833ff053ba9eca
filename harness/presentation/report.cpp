#include "harness/presentation/report.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <limits>
#include <stdexcept>

#include "harness/model/kernel.h"
#include "harness/presentation/report_numbers.h"

namespace kprop {

std::string format_case(const Case& c) {
  std::string s;
  s += fmt::format("  {:<18} {}\n", "kernel", c.kernel);
  s += fmt::format("  {:<18} {}\n", "impl", c.impl);
  s += fmt::format("  {:<18} {}\n", "property", c.property);
  // Every parameter the kernel's schema declares, in its order.
  for (const auto& spec : find_kernel(c.kernel).schema().params) {
    const auto it = c.params.find(spec.name);
    if (it != c.params.end()) s += fmt::format("  {:<18} {}\n", spec.name, to_text(it->second));
  }
  s += fmt::format("  {:<18} {}\n", "dtype", to_string(c.dtype));
  s += fmt::format("  {:<18} seed {} ({})\n", "data", c.seed, to_string(c.distribution));
  if (c.cotangents != Cotangents::random)
    s += fmt::format("  {:<18} {}\n", "cotangents", to_string(c.cotangents));
  return s;
}

// An exactness check's row: how far, and the rounding point the kernel names.
static std::string deviation_note(const TensorError& t) {
  return fmt::format("  <-- {} ({} ulp{}{})", t.deviation, t.max_ulps, t.max_ulps == 1 ? "" : "s",
                     t.rounding_point.empty() ? "" : ": " + t.rounding_point);
}

std::string format_error_table(const Verdict& v) {
  std::string s = fmt::format("  {:<28} {:<24} {:>9} {:>9} {:>10} {:>9}  {:<16} {:>11} {:>11}\n",
                              "tensor", "region", "max abs", "max rel", "err/bound",
                              "bad", "worst at", "actual", "expected");
  for (const auto& t : v.tensors)
    s += fmt::format("  {:<28} {:<24} {:>9} {:>9} {:>10} {:>9}  {:<16} {:>11} {:>11}{}\n",
                     t.label(), t.region, number(t.max_abs), number(t.max_rel),
                     number(t.error_over_bound), fmt::format("{}/{}", t.mismatches, t.elements),
                     fmt::format("{}", t.index), number(t.actual), number(t.expected),
                     t.passed() ? "" : t.exact() ? deviation_note(t) : "  <-- FAIL");
  for (const auto& m : v.memory) s += "  memcheck: " + describe(m) + "\n";
  return s;
}

std::string format_tally(const Tally& t) {
  const int64_t all = t.cases + t.known;
  return fmt::format("{} cases: {} passed, {} failed, {} known failures, {} rejected, "
                     "{} skipped in {:.2f} s ({:.0f} cases/s)",
                     all, t.passed, t.failed, t.known, t.rejected, t.skipped, t.seconds,
                     t.seconds > 0 ? all / t.seconds : 0.0);
}

std::string format_property_tallies(const Tally& t) {
  if (t.by_property.size() < 2) return "";
  std::string s;
  for (const auto& [property, p] : t.by_property)
    s += fmt::format("  {}: {} cases: {} passed, {} failed, {} known failures, {} rejected, "
                     "{} skipped\n",
                     property, p.cases + p.known, p.passed, p.failed, p.known, p.rejected, p.skipped);
  return s;
}

std::string format_call_profile(const CallProfile::Totals& p, double total_seconds) {
  using Part = CallProfile::Part;
  const double rest = total_seconds - p.at(Part::implementation) - p.at(Part::transfers) -
                      p.at(Part::reference);
  return fmt::format("time: implementation {:.2f} s ({} calls), transfers to its device {:.2f} s, "
                     "float64 reference {:.2f} s, the rest (drawing, inputs, comparisons, "
                     "shrinking) {:.2f} s",
                     p.at(Part::implementation), p.count(Part::implementation),
                     p.at(Part::transfers), p.at(Part::reference), std::max(rest, 0.0));
}

nlohmann::json tally_to_json(const Tally& t) {
  nlohmann::json j = {{"cases", t.cases + t.known}, {"passed", t.passed},   {"failed", t.failed},
                      {"known", t.known},           {"rejected", t.rejected}, {"skipped", t.skipped},
                      {"seconds", t.seconds}};
  if (!t.by_property.empty()) {
    nlohmann::json by = nlohmann::json::object();
    for (const auto& [property, p] : t.by_property) {
      nlohmann::json counts = tally_to_json(p);
      counts.erase("seconds");
      by[property] = counts;
    }
    j["by_property"] = by;
  }
  return j;
}

}  // namespace kprop
