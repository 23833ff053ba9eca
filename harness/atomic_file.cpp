#include "harness/atomic_file.h"

#include <fmt/format.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "generators/errors.h"

namespace kprop {

namespace fs = std::filesystem;

void write_file_atomically(const std::string& path, const std::string& content) {
  const fs::path target(path);
  std::error_code error;
  if (target.has_parent_path()) fs::create_directories(target.parent_path(), error);
  if (error)
    throw FileError(fmt::format("{}: cannot create its folder: {}", path, error.message()));
  const fs::path temp = target.string() + fmt::format(".tmp.{}", getpid());
  {
    std::ofstream out(temp, std::ios::trunc);
    out << content;
    out.flush();
    if (!out) {
      fs::remove(temp, error);
      throw FileError(fmt::format("{}: cannot be written", path));
    }
  }
  // Flush the data to disk before the rename makes it visible.
  if (FILE* fp = std::fopen(temp.c_str(), "r")) {
    fsync(fileno(fp));
    std::fclose(fp);
  }
  fs::rename(temp, target, error);
  if (error) {
    const std::string reason = error.message();
    fs::remove(temp, error);
    throw FileError(fmt::format("{}: cannot be replaced: {}", path, reason));
  }
}

}  // namespace kprop
