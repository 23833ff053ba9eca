#include "harness/storage/verdict_json.h"

#include <fmt/format.h>

#include <cmath>
#include <limits>
#include <optional>
#include <stdexcept>

namespace kprop {

nlohmann::json number_json(double v) {
  if (std::isfinite(v)) return v;
  return fmt::format("{}", v);
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

}  // namespace kprop
