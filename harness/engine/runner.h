// Search and shrink, shared by the CLI, the tests and the benchmarks.
//
// search() draws cases from the kernel's schema (a deterministic stream from one seed),
// cycles through the properties, and stops at the first failure that shows a defect not
// yet known. Each symptom of a failure is shrunk on its own to a 1-minimal case that
// still shows it (generators/shrink.h): a smaller case may lose the other symptoms, but
// never the one it is shrunk for. The minimal case names the defect's identity
// (harness/model/identity.h); failures whose identities are all known are counted, not kept.
// Shrinking and naming one failure are harness/engine/diagnosis.h's; search() hands each failure
// to a triage (harness/engine/triage.h), which diagnoses it unless it is known.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "harness/engine/diagnosis.h"
#include "harness/model/verdict.h"

namespace kprop {

struct Tally {
  int64_t cases = 0, passed = 0, failed = 0, rejected = 0, skipped = 0;
  int64_t known = 0;  // failures that showed only known defects
  double seconds = 0;
  // The same counts for each property's cases (`seconds` unused): what a run over every
  // property says of each.
  std::map<std::string, Tally> by_property;
  void count(const Verdict& v);
  void count_known(const std::string& property);
  // Adds another run's counts and seconds (not its by_property): slices of one search.
  void add(const Tally& other);
};

struct SearchOptions {
  std::string kernel;
  std::string impl;
  std::vector<std::string> properties;  // empty: all of the kernel's, in turn
  std::vector<DType> dtypes;            // empty: each property's own
  int64_t cases = 1000;
  uint64_t seed = 0;
  int64_t first_case = 0;                    // resume a search: cases before it are not drawn
  std::map<std::string, int64_t> limits;     // the schema's limits (`--limit`)
  std::map<std::string, ParamValue> fixed;   // pinned parameters (`--set`)
  bool shrink = true;
  double shrink_seconds = 60;  // budget per symptom; the best case so far is kept
  // Identities already kept (the corpus): a failure showing only these is known, and the
  // search goes on — how a run looks past defects already in the corpus for new ones.
  std::set<std::string> known_identities;
  // Called after every case ("search"; "found" after the case that ends the search with a
  // new failure) and every accepted shrink step ("shrink"). Throwing from a "search" call
  // stops the search.
  std::function<void(const struct Tally&, const std::string& phase)> on_progress;
  std::shared_ptr<DiagnosisMemo> memo;  // shared by the searches of one hunt
};

struct SearchResult {
  Tally tally;
  std::optional<Failure> failure;  // the first new defect of the first failing case
  std::vector<Failure> failures;   // every new defect that case shows (failure first)
  std::map<std::string, int64_t> rejections;  // reason -> count
  // Cases outside what the implementation takes (harness/execution/takes.h): reason -> count.
  std::map<std::string, int64_t> not_taken;
  std::map<std::string, int64_t> sightings;   // known identity -> failures that showed it
};

SearchResult search(const SearchOptions& options);

// Searches past every failure that `wanted` does not accept, adding its identity to the
// known ones, until a wanted minimal failure turns up or the cases run out. `cases`
// counts every case drawn, `seconds` the time to the match.
struct HuntResult {
  std::optional<Failure> match;
  std::vector<Failure> others;  // distinct defects met on the way
  int64_t cases = 0;
  double seconds = 0;
};
HuntResult hunt(SearchOptions options, const std::function<bool(const Failure&)>& wanted);

// The seed of case `index` of a search with seed `seed`.
uint64_t case_seed(uint64_t seed, int64_t index);

// The space a search draws case `index` from (property, dtypes, size).
CaseSpace search_space(const SearchOptions& options, const std::string& property, int64_t index);

}  // namespace kprop
