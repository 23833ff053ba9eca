// The nightly run: the libFuzzer targets (in fork mode, as child processes) alongside
// kprop's random searches, for a time budget; every finding replayed, shrunk, named and
// kept in the corpus unless its identity is there already (docs/design.md §6, §11).
//
// Everything it has reported is on disk first: a finding's case file is written (through
// a rename) before it is printed, and `DIR/state.json` (rewritten the same way) records
// which fuzzer artifacts were processed and where each search got to. Killed at any
// moment, it loses nothing it reported and leaves no partial file; run again with the
// same DIR, it resumes from the fuzzers' working corpora (DIR/work/<target>/), processes
// the artifacts it had not, and goes on with the searches where they stopped.
//
//   DIR/work/<target>/       libFuzzer's working corpus, seeded from the corpus
//   DIR/artifacts/<target>/  crash-*, timeout-*, oom-* inputs found by libFuzzer
//   DIR/logs/<target>.log    libFuzzer's output
//   DIR/sightings/<target>   known identities the target met ("<count>\t<identity>")
//   DIR/unreproduced/        artifacts that do not fail outside the fuzzer, as case files
//   DIR/summary.md, .json    what the run found
//
// A shard of a run (`--shard I/N`, harness/nightly/shard.h) does its share of the fuzz
// targets and search cases in DIR/shard-<I+1>-of-<N>/, with the layout above, and keeps its
// findings in that folder's corpus/ (the corpus it seeds from is only read): `kprop corpus
// merge` makes one corpus of them (harness/nightly/merge.h), and the fuzzing corpora it
// merges into DIR/work/<target>/ seed the shards' fuzzers on the next night.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "harness/engine/runner.h"
#include "harness/nightly/fuzzer_process.h"
#include "harness/nightly/run_state.h"
#include "harness/nightly/shard.h"

namespace kprop {

struct NightlyConfig {
  std::vector<std::string> kernels;    // empty: every kernel with a fuzz target
  std::vector<std::string> impls;      // empty: every built-in implementation
  std::vector<std::string> libraries;  // operator libraries the targets load (KPROP_LOAD)
  std::vector<std::string> imports;    // Python modules: outside implementations are then
                                       // searched, not fuzzed (as without --load libraries)
  std::vector<std::string> refusals;   // what outside implementations declare they refuse
  double budget_seconds = 8 * 3600;
  int jobs = 1;                        // processes at once: fuzzers, and one for searches
  std::string corpus = "corpus";       // seeds the fuzzers; its identities are known
  std::string keep_in;                 // where findings are kept; "": the corpus
  std::string out;
  Shard shard;                         // this run's share of the work
  std::string seed_work;               // earlier nights' merged fuzzing corpora (DIR/work)
  std::string fuzzers;                 // folder of the fuzz_<kernel> binaries
  std::string fallback_fuzzers;        // where a target `fuzzers` lacks is looked for; "": none
  uint64_t seed = 0;                   // of the searches
  double shrink_seconds = 30;          // per symptom
  double input_timeout_seconds = 30;   // libFuzzer's -timeout
  int64_t rss_limit_mb = 4096;         // libFuzzer's -rss_limit_mb
  std::function<void(const std::string&)> say;  // progress and findings, one line each
  std::function<bool()> interrupted;            // polled; true stops the run cleanly
};

struct NightlyTarget {
  std::string name, kernel, impl;
  FuzzerStats stats;
  int64_t artifacts = 0;  // artifact files it left
  double seconds = 0;     // wall time it ran
};

struct NightlySearch {
  std::string kernel, impl, property;
  Tally tally;
};

struct NightlyResult {
  std::vector<NightlyFinding> findings;       // new identities (this run and earlier ones)
  std::map<std::string, int64_t> sightings;   // known identity -> failures that showed it
  std::vector<NightlyTarget> targets;
  std::vector<NightlySearch> searches;
  std::vector<std::string> unreproduced;      // artifact: why
  double seconds = 0;
  bool interrupted = false;
  bool default_failed = false;  // a default implementation failed (new or known)
};

// Throws UsageError for a bad configuration (no fuzz target for a kernel, an unknown
// implementation) and FileError for an output folder that cannot be written.
NightlyResult run_nightly(const NightlyConfig& config);

// DIR/summary.md and DIR/summary.json, written atomically.
void write_nightly_summary(const NightlyConfig& config, const NightlyResult& result);
std::string nightly_summary_markdown(const NightlyConfig& config, const NightlyResult& result);
// What summary.json holds (the result the Python API's kprop.nightly returns).
std::string nightly_summary_json(const NightlyConfig& config, const NightlyResult& result);

}  // namespace kprop
