// gtest parameter names may hold only letters, digits and '_'.
#pragma once

#include <cctype>
#include <string>

namespace kprop {

inline std::string test_name(std::string name) {
  for (auto& ch : name)
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  return name;
}

}  // namespace kprop
