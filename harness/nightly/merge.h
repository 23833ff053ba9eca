// `kprop corpus merge`: the findings of many nightly shards (or of any corpus folders)
// become one corpus, one defect one file, with one summary of what the shards did.
//
// A shard keeps its findings in its own folder (DIR/corpus/, harness/nightly/nightly.h),
// each case file written whole through a rename; the merge copies each identity the
// corpus lacks, the same way, and counts every other copy of it as a sighting. It only
// reads the shards: run it while they still write (a file appears whole or not at all;
// what arrives later is merged by the next run) or after one was killed (its state.json
// and files say what it had done). Run twice, it copies nothing the second time and says
// the same. The fuzz targets' working corpora are merged by libFuzzer itself (-merge=1):
// the inputs that add coverage, into OUT/work/<target>/, where the next sharded run seeds
// its fuzzers from.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "harness/engine/runner.h"
#include "harness/nightly/fuzzer_process.h"

namespace kprop {

struct MergeConfig {
  // A shard's folder (holds state.json), a sharded run's folder (holds shard-*-of-*/), or
  // a folder of case files.
  std::vector<std::string> sources;
  std::string into = "corpus";   // the corpus the findings go to
  std::string out;               // summary.md/.json and work/<target>/; "" writes none
  std::string fuzzers, fallback_fuzzers;  // where fuzz_<kernel> is, as for nightly
  std::function<void(const std::string&)> say;
};

struct MergedShard {
  std::string folder;
  std::string state;     // "finished", "interrupted", "running", "stopped early" (killed)
  double seconds = 0;    // of its runs so far
  int64_t executions = 0, exec_per_second = 0;  // its fuzz targets', summed
  int64_t cases = 0;     // its searches'
  int64_t findings = 0;  // case files in its corpus
};

struct MergedFinding {
  std::string identity;
  std::string file;                  // in the corpus merged into
  std::vector<std::string> found_in; // the folders whose case file holds it
  std::string outcome;               // "added", "already in the corpus"
};

struct MergedTarget {
  std::string name, kernel, impl;
  int64_t shards = 0, executions = 0, exec_per_second = 0;
  int64_t inputs_before = -1, inputs_after = -1;  // OUT/work/<target>/ around -merge=1; -1: not merged
};

struct MergeResult {
  std::vector<MergedShard> shards;
  std::vector<MergedFinding> findings;        // by identity
  std::map<std::string, int64_t> sightings;   // identity -> failures that showed it again
  std::vector<MergedTarget> targets;
  std::map<std::string, Tally> searches;      // "<kernel>/<impl>/<property>", summed
  std::vector<std::string> unreadable;        // case files skipped: path: why
  int64_t added = 0;                          // files written into the corpus
};

// Where the summary goes when --out is not given: the sharded run's folder a source names
// (nightly/ for nightly/ or nightly/shard-*), when they all name one; else "".
std::string default_merge_out(const std::vector<std::string>& sources);

// Throws UsageError for a source that is not a folder, FileError for a corpus or output
// folder that cannot be written.
MergeResult merge_nightly_outputs(const MergeConfig& config);

std::string merge_summary_markdown(const MergeConfig& config, const MergeResult& r);
std::string merge_summary_json(const MergeConfig& config, const MergeResult& r);

}  // namespace kprop
