// Outputs with margins, for `guard` (harness/engine/properties/guard.cpp). While a
// GuardedAllocations lives, every CPU allocation (the outputs an implementation returns,
// the buffers it uses inside the call) is made with margins around it that hold 0xFF
// bytes (a NaN in every floating dtype) and are checked when it is freed and when the
// scope is asked about an output. A store past an output's end changes its margin; a read
// of the margin brings a NaN into the result.
// The CPU only: a device's memory comes from the framework's caching allocator, which
// cannot be replaced once it has started. There `guard` watches inputs and cotangents.
#pragma once

#include <string>
#include <vector>

#include "harness/model/memcheck.h"
#include "harness/model/named_tensors.h"

namespace kprop {

class GuardedAllocations {
 public:
  GuardedAllocations();   // installs the guarding allocator as the CPU's
  ~GuardedAllocations();  // puts back the one before
  GuardedAllocations(const GuardedAllocations&) = delete;
  GuardedAllocations& operator=(const GuardedAllocations&) = delete;

  // Stores outside `outputs` (made in this scope) and outside the buffers freed in it, as
  // the device memory checker reports them: "out-of-bounds store of dx ... past its end".
  std::vector<MemoryFinding> strays(const NamedTensors& outputs) const;
};

}  // namespace kprop
