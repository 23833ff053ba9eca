#include "harness/report.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <limits>
#include <stdexcept>

#include "harness/kernel_info.h"
#include "harness/reports/report_numbers.h"

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

nlohmann::json verdict_to_json(const Verdict& v) {
  nlohmann::json tensors = nlohmann::json::array();
  for (const auto& t : v.tensors)
    tensors.push_back({{"tensor", t.tensor},
                       {"check", t.check},
                       {"setting", t.setting},
                       {"region", t.region},
                       {"index", t.index},
                       {"actual", number_json(t.actual)},
                       {"expected", number_json(t.expected)},
                       {"max_abs", number_json(t.max_abs)},
                       {"max_rel", number_json(t.max_rel)},
                       {"error_over_bound", number_json(t.error_over_bound)},
                       {"mismatches", t.mismatches},
                       {"elements", t.elements},
                       {"located", t.located},
                       {"deviation", t.deviation},
                       {"max_ulps", t.max_ulps},
                       {"rounding_point", t.rounding_point},
                       {"passed", t.passed()}});
  nlohmann::json memory = nlohmann::json::array();
  for (const auto& m : v.memory)
    memory.push_back({{"kind", to_string(m.kind)},
                      {"tensor", m.tensor},
                      {"site", m.site},
                      {"offset", m.offset},
                      {"extent", m.extent},
                      {"count", m.count}});
  nlohmann::json out{{"status", to_string(v.status)}, {"kernel", v.kernel},     {"impl", v.impl},
                     {"property", v.property},       {"message", v.message},   {"signature", v.signature()},
                     {"tensors", tensors},           {"memory", memory}};
  if (v.fault) out["fault"] = {{"kind", to_string(v.fault.kind)}, {"detail", v.fault.detail}};
  return out;
}

namespace {

// number_json's inverse: "inf", "-inf" and "nan" come back as numbers.
double number_from_json(const nlohmann::json& j) {
  if (j.is_number()) return j.get<double>();
  const auto s = j.get<std::string>();
  if (s == "inf") return std::numeric_limits<double>::infinity();
  if (s == "-inf") return -std::numeric_limits<double>::infinity();
  if (s == "nan" || s == "-nan") return std::numeric_limits<double>::quiet_NaN();
  throw std::runtime_error(fmt::format("verdict: '{}' is not a number", s));
}

}  // namespace

Verdict verdict_from_json(const nlohmann::json& j) {
  try {
    Verdict v;
    const auto status = j.at("status").get<std::string>();
    bool known = false;
    for (auto st : {Verdict::Status::pass, Verdict::Status::fail, Verdict::Status::rejected,
                    Verdict::Status::skipped})
      if (to_string(st) == status) v.status = st, known = true;
    if (!known) throw std::runtime_error("verdict: unknown status '" + status + "'");
    v.kernel = j.at("kernel").get<std::string>();
    v.impl = j.at("impl").get<std::string>();
    v.property = j.at("property").get<std::string>();
    v.message = j.at("message").get<std::string>();
    for (const auto& t : j.at("tensors")) {
      TensorError e;
      e.tensor = t.at("tensor").get<std::string>();
      e.check = t.at("check").get<std::string>();
      e.setting = t.value("setting", std::string());
      e.region = t.at("region").get<std::string>();
      e.index = t.at("index").get<std::vector<int64_t>>();
      e.actual = number_from_json(t.at("actual"));
      e.expected = number_from_json(t.at("expected"));
      e.max_abs = number_from_json(t.at("max_abs"));
      e.max_rel = number_from_json(t.at("max_rel"));
      e.error_over_bound = number_from_json(t.at("error_over_bound"));
      e.mismatches = t.at("mismatches").get<int64_t>();
      e.elements = t.at("elements").get<int64_t>();
      e.located = t.value("located", true);
      e.deviation = t.value("deviation", std::string());
      e.max_ulps = t.value("max_ulps", int64_t{0});
      e.rounding_point = t.value("rounding_point", std::string());
      v.tensors.push_back(std::move(e));
    }
    for (const auto& m : j.at("memory")) {
      const auto kind_name = m.at("kind").get<std::string>();
      std::optional<MemoryFinding::Kind> kind;
      for (auto k : {MemoryFinding::Kind::out_of_bounds_load, MemoryFinding::Kind::out_of_bounds_store,
                     MemoryFinding::Kind::write_conflict})
        if (to_string(k) == kind_name) kind = k;
      if (!kind) throw std::runtime_error("verdict: unknown memory finding '" + kind_name + "'");
      v.memory.push_back({*kind, m.at("tensor").get<std::string>(), m.at("site").get<std::string>(),
                          m.at("offset").get<int64_t>(), m.at("extent").get<int64_t>(),
                          m.at("count").get<int64_t>()});
    }
    if (j.contains("fault")) {
      const auto kind = parse_fault_kind(j["fault"].at("kind").get<std::string>());
      if (!kind) throw std::runtime_error("verdict: unknown fault kind");
      v.fault = {*kind, j["fault"].at("detail").get<std::string>()};
    }
    return v;
  } catch (const nlohmann::json::exception& e) {
    throw std::runtime_error(fmt::format("verdict: {}", e.what()));
  }
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
