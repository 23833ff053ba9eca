// One parameter value of a case: an integer, a flag, a choice (by name) or a list of
// integers. The schema (generators/schema.h) says which type each parameter has.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace kprop {

enum class ParamType { integer, flag, choice, integers };

using ParamValue = std::variant<int64_t, bool, std::string, std::vector<int64_t>>;

std::string to_string(ParamType t);
ParamType type_of(const ParamValue& v);

// The text form used by summaries, `--set NAME=VALUE` and sweeps: 4, true, silu, 1,7.
std::string to_text(const ParamValue& v);

// The whole of `text` as a decimal integer, or nothing (no overflow, no trailing junk).
std::optional<int64_t> parse_integer(const std::string& text);
std::optional<uint64_t> parse_unsigned(const std::string& text);

}  // namespace kprop
