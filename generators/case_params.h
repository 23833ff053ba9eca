// Case parameters by name, for the command line (`--set W=4`, sweeps over `W` and
// `tail`). Names follow the case file's fields; a few derived ones exist for sweeps:
//   length  every sequence has this length      tail  the last sequence's length
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "generators/case.h"

namespace kprop {

// Sets parameter `name` of `c` from its text form; throws CaseError naming the parameter.
void set_param(Case& c, const std::string& name, const std::string& value);

// The parameter's current value as text (for tables and axis labels).
std::string get_param(const Case& c, const std::string& name);

std::vector<std::string> param_names();

// The whole of `text` as a decimal integer, or nothing.
std::optional<int64_t> parse_integer(const std::string& text);

}  // namespace kprop
