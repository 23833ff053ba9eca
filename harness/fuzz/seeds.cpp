#include "harness/fuzz/seeds.h"

#include <fmt/format.h>

#include <filesystem>

#include "core/errors.h"
#include "harness/engine/corpus.h"
#include "harness/storage/atomic_file.h"
#include "harness/storage/case_file.h"

namespace kprop {

namespace {

uint64_t fnv1a64(const std::vector<uint8_t>& bytes) {
  uint64_t h = 0xcbf29ce484222325ULL;
  for (uint8_t b : bytes) h = (h ^ b) * 0x100000001b3ULL;
  return h;
}

}  // namespace

SeedsWritten write_seeds(const FuzzSpace& space, const std::vector<std::string>& corpus_paths,
                         const std::string& out_dir) {
  SeedsWritten out;
  for (const auto& path : case_files_under(corpus_paths)) {
    try {
      const CaseFile f = read_case_file(path);
      if (f.c.kernel != space.kernel) continue;  // another kernel's target seeds it
      const auto bytes = encode_fuzz_input(space, f.c);
      const std::string file =
          (std::filesystem::path(out_dir) / fmt::format("seed-{:016x}", fnv1a64(bytes))).string();
      write_file_atomically(file, std::string(bytes.begin(), bytes.end()));
      out.files.push_back(file);
    } catch (const CaseError& e) {
      out.skipped.push_back(fmt::format("{}: {}", path, e.what()));
    }
  }
  return out;
}

}  // namespace kprop
