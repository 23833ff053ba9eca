#include "harness/model/identity.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace kprop {

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
