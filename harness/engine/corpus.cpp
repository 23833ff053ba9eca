#include "harness/engine/corpus.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>

#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include <cerrno>

#include "core/errors.h"
#include "harness/engine/property.h"
#include "harness/execution/implementations.h"
#include "harness/model/identity.h"
#include "harness/model/kernel.h"
#include "harness/storage/atomic_file.h"
#include "harness/storage/fingerprint.h"

namespace kprop {

namespace fs = std::filesystem;

std::vector<std::string> case_files_under(const std::vector<std::string>& paths) {
  std::vector<std::string> files;
  for (const auto& p : paths) {
    // A symlink loop, an unreadable folder, a name too long: a CaseError naming the path,
    // never a filesystem_error that ends the command unexplained.
    try {
      std::error_code ec;
      const auto status = fs::status(p, ec);
      if (ec && ec != std::errc::no_such_file_or_directory)
        throw CaseError(fmt::format("{}: cannot be read: {}", p, ec.message()));
      if (fs::is_directory(status)) {
        for (fs::recursive_directory_iterator it(p), end; it != end; ++it) {
          if (it->path().extension() != ".json") continue;
          // An entry that cannot be inspected (a symlink loop) is listed, so that reading
          // it names its fault and the other files still replay.
          std::error_code entry_ec;
          if (it->is_regular_file(entry_ec) || entry_ec) files.push_back(it->path().string());
        }
      } else if (fs::is_regular_file(status)) {
        files.push_back(p);
      } else if (fs::exists(status)) {
        throw CaseError(fmt::format("{}: not a file or folder", p));
      } else {
        throw CaseError(fmt::format("{}: no such file or folder", p));
      }
    } catch (const fs::filesystem_error& e) {
      const std::string at = e.path1().empty() ? p : e.path1().string();
      throw CaseError(fmt::format("{}: cannot be read: {}", at, e.code().message()));
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

std::map<std::string, std::string> corpus_identities(const std::string& dir) {
  std::map<std::string, std::string> found;
  if (!fs::is_directory(dir)) return found;
  for (const auto& path : case_files_under({dir})) {
    try {
      const CaseFile f = read_case_file(path);
      if (!f.identity.empty()) found.emplace(f.identity, path);
    } catch (const CaseError&) {
      // A broken file holds no identity.
    } catch (const UsageError&) {
      // Nor does a case of a kernel this build does not have.
    }
  }
  return found;
}

std::optional<std::string> find_identity(const std::string& dir, const std::string& identity) {
  const auto found = corpus_identities(dir);
  const auto it = found.find(identity);
  if (it == found.end()) return std::nullopt;
  return it->second;
}

CaseFile describe_failure(const Failure& f, nlohmann::json provenance, std::string notes) {
  CaseFile out;
  out.c = f.minimal();
  out.signature = f.verdict().signature();
  out.identity = f.identity;
  out.inputs_fingerprint = inputs_fingerprint(find_kernel(out.c.kernel).materialize(out.c));
  out.provenance = std::move(provenance);
  out.notes = std::move(notes);
  std::vector<std::string> impls;
  for (const auto& impl : builtin_implementations(out.c.kernel)) impls.push_back(impl.name);
  if (std::find(impls.begin(), impls.end(), out.c.impl) == impls.end())
    impls.push_back(out.c.impl);
  for (const auto& impl : impls) {
    Case other = out.c;
    other.impl = impl;
    out.expect[impl] = evaluate(other).status;
  }
  return out;
}

std::string corpus_file_name(const CaseFile& f) {
  std::string tensor = f.identity.empty() ? f.signature.substr(f.signature.rfind('/') + 1)
                                          : symptom_of(f.identity);
  tensor = tensor.substr(0, tensor.find_first_of(" ,;["));
  std::string name = fmt::format("{}-{}-{}", f.c.impl, f.c.property, tensor);
  for (auto& ch : name)
    if (!isalnum(static_cast<unsigned char>(ch)) && ch != '-') ch = '_';
  return fmt::format("{}-{:08x}.json", name,
                     static_cast<uint32_t>(std::hash<std::string>{}(
                         f.identity.empty() ? f.signature : f.identity)));
}

Kept keep(const std::string& dir, const CaseFile& f, const std::string& name) {
  if (!f.identity.empty())
    if (auto existing = find_identity(dir, f.identity)) return {*existing, false, ""};
  const std::string path =
      (fs::path(dir) / f.c.kernel / (name.empty() ? corpus_file_name(f) : name)).string();
  write_case_file(path, f);
  return {path, true, ""};
}

Kept try_keep(const std::string& dir, const CaseFile& f, const std::string& name) {
  try {
    return keep(dir, f, name);
  } catch (const FileError& e) {
    return {"", false, e.what()};
  } catch (const CaseError& e) {  // write_case_file's FileError, renamed
    return {"", false, e.what()};
  } catch (const fs::filesystem_error& e) {
    return {"", false, e.what()};
  }
}

std::vector<std::string> prepare_corpus(const std::string& dir) {
  // The nearest folder that exists: where the first write would create the rest.
  fs::path existing = fs::absolute(fs::path(dir)).lexically_normal();
  std::error_code ec;
  while (!fs::exists(existing, ec) && existing.has_parent_path() &&
         existing != existing.parent_path())
    existing = existing.parent_path();
  if (!fs::is_directory(existing, ec))
    throw FileError(fmt::format("corpus folder {}: cannot be written: {} is not a folder", dir,
                                existing.string()));
  // A probe file says more than access(): read-only mounts, quotas, ACLs.
  const fs::path probe = existing / fmt::format(".kprop-write-test.{}", getpid());
  const int fd = open(probe.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0)
    throw FileError(fmt::format("corpus folder {}: cannot be written: {}: {}", dir,
                                existing.string(), strerror(errno)));
  close(fd);
  unlink(probe.c_str());
  return remove_stale_temporary_files(dir);
}

}  // namespace kprop
