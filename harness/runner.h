// Search and shrink, shared by the CLI, the tests and the benchmarks.
//
// search() draws cases from the kernel's generator (a deterministic stream from one
// seed), cycles through the properties, and stops at the first failure. shrink() then
// walks RapidCheck's shrink tree of that case greedily, accepting a smaller case only
// when it fails with the same signature: the minimal case is a case of the same bug,
// never of another one met on the way (as Hypothesis keeps the failure's origin).
#pragma once

#include <rapidcheck/Shrinkable.h>

#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "harness/verdict.h"

namespace kprop {

struct Tally {
  int64_t cases = 0, passed = 0, failed = 0, rejected = 0, skipped = 0;
  int64_t known = 0;  // failures whose signature was already known (not searched further)
  double seconds = 0;
  void count(const Verdict& v);
};

struct SearchOptions {
  std::string kernel = "causal_conv1d";
  std::string impl = "tiled";
  std::vector<std::string> properties;  // empty: all of the kernel's, in turn
  std::vector<DType> dtypes;            // empty: each property's own
  int64_t cases = 1000;
  uint64_t seed = 0;
  int64_t first_case = 0;               // resume a search: cases before it are not drawn
  int64_t max_segments = 8;
  int64_t max_length = 64;
  bool shrink = true;
  double shrink_seconds = 60;           // budget; the best case so far is kept
  // Failures with these signatures are counted as known and the search goes on: how a
  // run looks past defects already in the corpus for new ones.
  std::set<std::string> known_signatures;
  // Called after every case and every accepted shrink step.
  std::function<void(const Tally&, const std::string& phase)> on_progress;
};

struct ShrinkResult {
  Case minimal;
  Verdict verdict;
  // The minimal case's node in the shrink tree: none of its shrinks fails the same way.
  std::optional<rc::Shrinkable<Case>> tree;
  int64_t steps = 0;        // accepted smaller cases
  int64_t evaluations = 0;  // candidates tried
  double seconds = 0;
  bool budget_exhausted = false;
};

struct Failure {
  int64_t case_number = 0;  // 1-based: cases drawn until this one
  Case found;
  Verdict found_verdict;
  double seconds_to_find = 0;
  std::optional<ShrinkResult> shrunk;
  const Case& minimal() const { return shrunk ? shrunk->minimal : found; }
  const Verdict& verdict() const { return shrunk ? shrunk->verdict : found_verdict; }
};

struct SearchResult {
  Tally tally;
  std::optional<Failure> failure;
  std::map<std::string, int64_t> rejections;  // reason -> count
};

SearchResult search(const SearchOptions& options);

// Searches past every failure that `wanted` does not accept, shrinking each and adding
// its signature to the known ones, until a wanted minimal failure turns up or the cases
// run out. `cases` counts every case drawn, `seconds` the time to the match.
struct HuntResult {
  std::optional<Failure> match;
  std::vector<Failure> others;  // distinct failures met on the way
  int64_t cases = 0;
  double seconds = 0;
};
HuntResult hunt(SearchOptions options, const std::function<bool(const Failure&)>& wanted);

ShrinkResult shrink(const rc::Shrinkable<Case>& failing, const Verdict& verdict,
                    double budget_seconds,
                    const std::function<void(const ShrinkResult&)>& on_step = nullptr);

// The seed of case `index` of a search with seed `seed`.
uint64_t case_seed(uint64_t seed, int64_t index);

}  // namespace kprop
