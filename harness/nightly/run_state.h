// What a nightly run keeps on disk: DIR/state.json, rewritten atomically after every
// artifact it processes and every search slice. A run into the same DIR resumes from it,
// and `kprop corpus merge` reads it to count what a shard has done so far, whether the
// shard finished, still runs, or was killed (harness/nightly/merge.h).
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "generators/case.h"
#include "harness/engine/runner.h"

namespace kprop {

struct NightlyFinding {
  std::string identity;
  std::string file;       // the case file kept
  std::string found_by;   // "libFuzzer fuzz_causal_conv1d-tiled_clamped" or "search ..."
  std::string artifact;   // the fuzzer's input file, if libFuzzer found it
  std::string signature;  // of the minimal case
  Case minimal;
  bool default_impl = false;  // the implementation is a default one (reference or default)
};

struct RunState {
  std::set<std::string> processed;           // fuzzer artifacts: "<target>/<file name>"
  std::vector<NightlyFinding> findings;      // new identities, in the order found
  // Per search, "<kernel>/<impl>/<property>": the next case it draws, and its counts.
  std::map<std::string, int64_t> positions;
  std::map<std::string, Tally> tallies;
  std::map<std::string, int64_t> sightings;  // known identity -> failures (searches, artifacts)
  struct Target {
    std::string kernel, impl;
  };
  std::map<std::string, Target> targets;     // the fuzz targets it runs, by name
  double seconds = 0;                        // of every run into DIR so far
  std::string host;                          // the run that last wrote it
  int64_t pid = 0;
  int shard_index = 0, shard_count = 1;
};

// This machine's name: what a state records of the host that wrote it, and what a reader
// compares it with to tell a shard that runs here from one elsewhere.
std::string this_host();

// The state at `path`; an empty one when there is none. Throws FileError when the file is
// not a nightly state, naming it. A state written before a field existed reads it empty.
RunState read_run_state(const std::string& path);
void write_run_state(const std::string& path, const RunState& state);

}  // namespace kprop
