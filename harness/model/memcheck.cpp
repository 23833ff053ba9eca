#include "harness/model/memcheck.h"

#include <fmt/format.h>

namespace kprop {

namespace {
thread_local std::vector<MemoryFinding> findings;
}

std::string to_string(MemoryFinding::Kind kind) {
  switch (kind) {
    case MemoryFinding::Kind::out_of_bounds_load: return "out-of-bounds load";
    case MemoryFinding::Kind::out_of_bounds_store: return "out-of-bounds store";
    case MemoryFinding::Kind::write_conflict: return "write conflict";
  }
  return "?";
}

std::string describe(const MemoryFinding& f) {
  return fmt::format("{} of {} at {} (extent {}) in {}, {} access{}", to_string(f.kind),
                     f.tensor, f.offset, f.extent, f.site, f.count, f.count == 1 ? "" : "es");
}

void fold(std::vector<MemoryFinding>& findings, const MemoryFinding& f) {
  for (auto& seen : findings)
    if (seen.kind == f.kind && seen.tensor == f.tensor && seen.site == f.site) {
      seen.count += f.count;
      return;
    }
  findings.push_back(f);
}

void MemcheckLog::record(MemoryFinding::Kind kind, const std::string& tensor, const char* site,
                         int64_t offset, int64_t extent) {
  for (auto& f : findings)
    if (f.kind == kind && f.tensor == tensor && f.site == site) {
      ++f.count;
      return;
    }
  findings.push_back({kind, tensor, site, offset, extent, 1});
}

std::vector<MemoryFinding> MemcheckLog::take() {
  std::vector<MemoryFinding> out;
  out.swap(findings);
  return out;
}

void MemcheckLog::clear() { findings.clear(); }

}  // namespace kprop
