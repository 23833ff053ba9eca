// Seeds for a fuzzer's working corpus: every case file of the corpus that the target's
// space can draw, encoded as the bytes that decode to it (harness/fuzz/fuzz_input.h). A
// fuzzer starts from the defects kprop already knows and mutates them into new ones.
#pragma once

#include <string>
#include <vector>

#include "harness/fuzz/fuzz_input.h"

namespace kprop {

struct SeedsWritten {
  std::vector<std::string> files;    // written (or already there with the same bytes)
  std::vector<std::string> skipped;  // "<case file>: why", e.g. another kernel's case
};

// Writes one file per encodable case under `out_dir`, named by a hash of its bytes (the
// same case twice is one seed), atomically.
SeedsWritten write_seeds(const FuzzSpace& space, const std::vector<std::string>& corpus_paths,
                         const std::string& out_dir);

}  // namespace kprop
