#include "generators/param.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cerrno>
#include <cctype>
#include <cstdlib>

namespace kprop {

std::string to_string(ParamType t) {
  switch (t) {
    case ParamType::integer: return "integer";
    case ParamType::flag: return "flag";
    case ParamType::choice: return "choice";
    case ParamType::integers: return "integer list";
  }
  return "?";
}

ParamType type_of(const ParamValue& v) { return static_cast<ParamType>(v.index()); }

std::string to_text(const ParamValue& v) {
  switch (type_of(v)) {
    case ParamType::integer: return std::to_string(std::get<int64_t>(v));
    case ParamType::flag: return std::get<bool>(v) ? "true" : "false";
    case ParamType::choice: return std::get<std::string>(v);
    case ParamType::integers: return fmt::format("{}", fmt::join(std::get<std::vector<int64_t>>(v), ","));
  }
  return "?";
}

std::optional<int64_t> parse_integer(const std::string& text) {
  if (text.empty() || std::isspace(static_cast<unsigned char>(text[0]))) return std::nullopt;
  errno = 0;
  char* end = nullptr;
  const long long value = std::strtoll(text.c_str(), &end, 10);
  if (errno == ERANGE || end != text.c_str() + text.size()) return std::nullopt;
  return static_cast<int64_t>(value);
}

std::optional<uint64_t> parse_unsigned(const std::string& text) {
  if (text.empty() || !std::isdigit(static_cast<unsigned char>(text[0]))) return std::nullopt;
  errno = 0;
  char* end = nullptr;
  const unsigned long long value = std::strtoull(text.c_str(), &end, 10);
  if (errno == ERANGE || end != text.c_str() + text.size()) return std::nullopt;
  return static_cast<uint64_t>(value);
}

}  // namespace kprop
