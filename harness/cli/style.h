// Terminal styling: colour only when stdout is a terminal and NO_COLOR is unset.
#pragma once

#include <string>

namespace kprop {

bool colour_enabled();
std::string red(const std::string& s);
std::string green(const std::string& s);
std::string yellow(const std::string& s);
std::string bold(const std::string& s);

}  // namespace kprop
