#include "harness/presentation/report_numbers.h"

#include <fmt/format.h>

#include <cmath>

namespace kprop {

std::string number(double v) {
  if (v == 0) return "0";
  if (!std::isfinite(v)) return fmt::format("{}", v);
  return fmt::format("{:.3g}", v);
}

std::string rtol_text(double rtol) {
  if (rtol == 0) return "0";
  // The nudge keeps log10(0.01) = -1.99999... from landing in the decade below.
  const int exponent = static_cast<int>(std::floor(std::log10(rtol) + 1e-12));
  const double mantissa = rtol / std::pow(10.0, exponent);
  if (std::abs(mantissa - std::round(mantissa)) > 1e-9) return fmt::format("{:g}", rtol);
  if (exponent == 0) return fmt::format("{}", std::lround(mantissa));
  return fmt::format("{}e{}", std::lround(mantissa), exponent);
}

std::string count_of(int64_t n, const std::string& noun) {
  return fmt::format("{} {}{}", n, noun, n == 1 ? "" : "s");
}

}  // namespace kprop
