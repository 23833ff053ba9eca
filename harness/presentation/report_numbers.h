// Numbers as kprop's tables and JSON write them.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>

#include "harness/storage/verdict_json.h"  // number_json

namespace kprop {

// Three significant digits; 0 as "0", non-finite as "inf" / "nan".
std::string number(double v);

// An rtol as engineers write it: 0, 1e-2, 5e-3, 0.25.
std::string rtol_text(double rtol);

// "1 case", "3 cases".
std::string count_of(int64_t n, const std::string& noun);

}  // namespace kprop
