#include "harness/identity.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace kprop {

std::vector<std::string> needs(const Schema& schema, const Case& c) {
  std::vector<std::string> out;
  for (const auto& spec : schema.params) {
    const auto it = c.params.find(spec.name);
    if (it == c.params.end() || it->second == spec.simplest) continue;
    const ParamValue& v = it->second;
    switch (spec.type) {
      case ParamType::flag: out.push_back(spec.name); break;
      case ParamType::choice: out.push_back(spec.name + "=" + to_text(v)); break;
      case ParamType::integers: {
        const auto n = std::get<std::vector<int64_t>>(v).size();
        if (n != std::get<std::vector<int64_t>>(spec.simplest).size())
          out.push_back(fmt::format("{} {}", n, spec.name));
        break;
      }
      case ParamType::integer: break;  // a size, not a switch: W = 3 or 4 is one defect
    }
  }
  return out;
}

std::string identity(const Schema& schema, const Case& minimal, const std::string& symptom) {
  const auto what = needs(schema, minimal);
  std::string id = fmt::format("{}/{}/{}", minimal.kernel, minimal.impl, symptom);
  if (!what.empty()) id += fmt::format(" {{{}}}", fmt::join(what, ", "));
  return id;
}

std::string symptom_of(const std::string& identity) {
  // kernel/impl/symptom {needs}: the impl may hold no '/', the symptom may hold none either.
  auto start = identity.find('/');
  start = start == std::string::npos ? 0 : identity.find('/', start + 1);
  std::string rest = start == std::string::npos ? identity : identity.substr(start + 1);
  const auto brace = rest.rfind(" {");
  return brace == std::string::npos ? rest : rest.substr(0, brace);
}

}  // namespace kprop
