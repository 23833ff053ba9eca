// What a device memory checker would say about an emulated kernel run.
//
// The emulations load and store through DeviceTensor, which reports every access that
// the real kernel would make outside a tensor (compute-sanitizer's memcheck) and every
// element that two different tasks store to (its racecheck: on the device they run on
// different cores, so the surviving value depends on timing). The report is a side
// channel, as the sanitizer's is: operator schemas stay the same for every kernel.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace kprop {

struct MemoryFinding {
  enum class Kind { out_of_bounds_load, out_of_bounds_store, write_conflict };
  Kind kind;
  std::string tensor;  // e.g. "dy"
  std::string site;    // the access in the kernel, e.g. "dh0 row load"
  int64_t offset;      // first offending element offset
  int64_t extent;      // elements in the tensor
  int64_t count = 1;   // accesses folded into this finding
};

std::string to_string(MemoryFinding::Kind kind);
std::string describe(const MemoryFinding& f);

// Adds `f` to `findings`, or its count to the one of the same kind, tensor and site.
void fold(std::vector<MemoryFinding>& findings, const MemoryFinding& f);

// Per-thread log of findings, folded by (kind, tensor, site).
class MemcheckLog {
 public:
  static void record(MemoryFinding::Kind kind, const std::string& tensor, const char* site,
                     int64_t offset, int64_t extent);
  static std::vector<MemoryFinding> take();  // returns and clears
  static void clear();
};

}  // namespace kprop
