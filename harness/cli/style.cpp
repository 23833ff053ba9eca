#include "harness/cli/style.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>

namespace kprop {

bool colour_enabled() {
  static const bool enabled = isatty(fileno(stdout)) && std::getenv("NO_COLOR") == nullptr;
  return enabled;
}

static std::string wrap(const char* code, const std::string& s) {
  return colour_enabled() ? std::string("\033[") + code + "m" + s + "\033[0m" : s;
}

std::string red(const std::string& s) { return wrap("31", s); }
std::string green(const std::string& s) { return wrap("32", s); }
std::string yellow(const std::string& s) { return wrap("33", s); }
std::string bold(const std::string& s) { return wrap("1", s); }

}  // namespace kprop
