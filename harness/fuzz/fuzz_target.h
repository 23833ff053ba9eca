// What a libFuzzer target does with one input, apart from libFuzzer itself: decode the
// bytes into a Case (harness/fuzz/fuzz_input.h), check it with kprop's properties, and
// name any failure's defects (harness/engine/triage.h). A failure whose identities the corpus
// already holds is a sighting, counted, and the fuzzer goes on; a new identity is a
// finding, which the target's entry point reports and aborts on
// (harness/fuzz/targets/kernel_fuzzer.cpp).
//
// Options come from the environment, so that one binary serves every implementation
// and property, and from the binary's name, so that a fleet (ClusterFuzz) can run one
// copy per implementation:
//
//   KPROP_IMPL            implementation (default: the name's suffix, else the kernel's
//                         default); fuzz_causal_conv1d-tiled_clamped = tiled@clamped
//   KPROP_PROPERTY        one property (default: byte 0 of the input chooses)
//   KPROP_CORPUS          corpus folder whose identities are known (default: kprop_corpus
//                         beside the binary, else the source tree's corpus/, if present);
//                         KPROP_CORPUS= (empty) knows none
//   KPROP_LOAD            operator libraries to load first, ':'-separated
//   KPROP_REFUSALS        refusals an outside implementation declares, one per line (as
//                         kprop's --refusal): its errors holding one are not failures
//   KPROP_SHRINK_SECONDS  budget to shrink each symptom of a finding (default 10)
//   KPROP_HUNT            the name of one known defect (Kernel::known_defects()): the
//                         target checks that defect's property in its space, and only a
//                         failure showing it is a finding; others are learned and passed
//                         (as `kprop hunt`; the benchmark's time-to-find)
//   KPROP_SIGHTINGS       file to which sightings of known identities are appended, as
//                         lines "<count>\t<identity>" (kprop nightly sums them)
//   KPROP_MUTATION        how inputs are mutated (harness/fuzz/structured_mutator.h):
//                         bytes (default), mixed, structured, or one kind of mutation
//   KPROP_MAX_ELEMENTS    the largest tensor a case may have (the fuzz targets' default:
//                         2^20, small cases within libFuzzer's 2 GB rss limit)
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "harness/engine/runner.h"
#include "harness/fuzz/fuzz_input.h"

namespace kprop {

class Triage;

struct FuzzOptions {
  FuzzSpace space;
  std::set<std::string> known;  // identities the corpus holds
  std::string corpus;           // where they came from (for messages)
  double shrink_seconds = 10;
  std::string sightings_path;
  std::optional<KnownDefect> hunt;  // only this defect is a finding
};

// Options for a target of `kernel` whose binary is `program` (argv[0]), from the
// environment. Throws UsageError on a bad name.
FuzzOptions fuzz_options_from_environment(const std::string& kernel, const std::string& program,
                                          const std::string& source_corpus);

// The implementation a binary's name selects: "fuzz_causal_conv1d-tiled_clamped" with
// kernel causal_conv1d gives "tiled@clamped" (names with every character that is not a
// letter or digit written as '_'); empty when the name has no suffix.
std::string implementation_from_program_name(const std::string& kernel, const std::string& program);
std::string fuzz_target_name(const std::string& kernel, const std::string& impl);

struct FuzzStats {
  int64_t executions = 0, passed = 0, failed = 0, rejected = 0, skipped = 0, too_large = 0;
  int64_t known = 0;  // failures that showed only known identities
  int64_t passed_over = 0;  // new defects that are not the hunted one
  std::map<std::string, int64_t> sightings;   // identity -> failures that showed it
  std::map<std::string, int64_t> rejections;  // refusal -> cases refused with it
};

struct FuzzOutcome {
  Case c;
  Verdict verdict;
  bool interesting = true;     // false: rejected, skipped or too large (not worth keeping)
  std::vector<Failure> fresh;  // new defects, each shrunk; empty when nothing new failed
};

class FuzzTarget {
 public:
  explicit FuzzTarget(FuzzOptions options);
  ~FuzzTarget();

  FuzzOutcome run(const uint8_t* data, size_t size);
  const FuzzStats& stats() const { return stats_; }
  const FuzzOptions& options() const { return options_; }
  // Appends the sightings counted since the last flush to KPROP_SIGHTINGS (if set);
  // run() flushes every few seconds, the entry point before it exits or aborts.
  void flush_sightings();

 private:
  FuzzOptions options_;
  std::unique_ptr<Triage> triage_;
  FuzzStats stats_;
  std::map<std::string, int64_t> unflushed_;
  std::chrono::steady_clock::time_point last_flush_;
};

// What a finding prints before the target aborts: the signature and identity of each
// new defect, then its minimal case and the decoded case as case-file JSON (either
// saved as a .json file replays with `kprop replay`).
std::string finding_report(const FuzzOutcome& outcome);

}  // namespace kprop
