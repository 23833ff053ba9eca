// The whole call and the same call split in two with the state handed on, both with the
// implementation under test, the loss on the later part only. Shared by the `chunked`
// property and by sweeps that measure chunked against whole.
#pragma once

#include <optional>

#include "harness/engine/properties/calls.h"
#include "harness/model/sequence_family.h"

namespace kprop {

struct ChunkedRun {
  ChunkedProblem problem;
  NamedTensors cotangents;  // of the whole call: zero on the earlier part
  NamedTensors whole;       // outputs and gradients of the whole call
  NamedTensors joined;      // the two parts' outputs and gradients in the whole's layout
};

// std::nullopt where the kernel cannot split this problem (nothing continues).
std::optional<ChunkedRun> run_chunked(const Kernel& kernel, const Calls& calls,
                                      const Problem& whole);

}  // namespace kprop
