// Human-readable renderings of cases, verdicts and search results.
#pragma once

#include <string>

#include "harness/runner.h"

namespace kprop {

// The case, one field per line, as a kernel engineer would write it down.
std::string format_case(const Case& c);

// The per-tensor error table of a verdict (plus memory-checker findings).
std::string format_error_table(const Verdict& v);

// One line: cases, failures, rejections, rate.
std::string format_tally(const Tally& t);

}  // namespace kprop
