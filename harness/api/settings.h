// A run's kernel and its case settings as written: `NAME=VALUE` parameters pinned for every
// case (--set) and `NAME=N` generator limits (--limit), checked against the kernel's schema.
// Every front writes them so (the CLI's flags, the Python API's dicts).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "generators/param.h"

namespace kprop {

// The kernel a run names, or the registry's default when it names none (an unknown name
// is a UsageError listing the known ones).
std::string kernel_or_default(const std::string& kernel);
// `NAME=VALUE` settings checked against the kernel's schema; NAME=N limits likewise. A bad
// one is a UsageError naming it.
std::map<std::string, ParamValue> parse_settings(const std::string& kernel,
                                                 const std::vector<std::string>& settings);
std::map<std::string, int64_t> parse_limits(const std::string& kernel,
                                            const std::vector<std::string>& limits);

}  // namespace kprop
