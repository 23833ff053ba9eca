#include "harness/storage/atomic_file.h"

#include <fmt/format.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "core/errors.h"

namespace kprop {

namespace fs = std::filesystem;

void write_file_atomically(const std::string& path, const std::string& content) {
  const fs::path target(path);
  std::error_code error;
  if (target.has_parent_path()) fs::create_directories(target.parent_path(), error);
  if (error)
    throw FileError(fmt::format("{}: cannot create its folder: {}", path, error.message()));
  const fs::path temp = temporary_file_name(target.string(), getpid());
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

std::string temporary_file_name(const std::string& path, long pid) {
  return fmt::format("{}.tmp.{}", path, pid);
}

namespace {

// The writer's pid of a temporary file name, or -1 when it is not one.
long writer_of(const std::string& name) {
  const auto at = name.rfind(".tmp.");
  if (at == std::string::npos || at + 5 >= name.size()) return -1;
  const std::string digits = name.substr(at + 5);
  if (digits.size() > 9 || digits.find_first_not_of("0123456789") != std::string::npos) return -1;
  return std::stol(digits);
}

bool still_runs(long pid) { return pid > 0 && (kill(static_cast<pid_t>(pid), 0) == 0 || errno == EPERM); }

}  // namespace

std::vector<std::string> remove_stale_temporary_files(const std::string& folder) {
  std::vector<std::string> removed;
  std::error_code ec;
  if (!fs::is_directory(folder, ec)) return removed;
  for (fs::recursive_directory_iterator it(folder, fs::directory_options::skip_permission_denied, ec),
       end;
       !ec && it != end; it.increment(ec)) {
    std::error_code entry_ec;
    if (!it->is_regular_file(entry_ec)) continue;
    const long pid = writer_of(it->path().filename().string());
    if (pid < 0 || still_runs(pid)) continue;
    if (fs::remove(it->path(), entry_ec)) removed.push_back(it->path().string());
  }
  return removed;
}

}  // namespace kprop
