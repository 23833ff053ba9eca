#include "harness/execution/own_executable.h"

namespace kprop {

std::filesystem::path own_executable() {
  std::error_code ec;
  auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? std::filesystem::path() : self;
}

std::filesystem::path beside_own_executable(const std::string& relative) {
  const std::filesystem::path path(relative);
  if (path.is_absolute()) return path;
  return own_executable().parent_path() / path;
}

}  // namespace kprop
