// Shrinking any case along its schema (docs/design.md §6): whoever made the case — a
// search, a fuzzer, a person writing a file — it shrinks the same way.
//
// A schema step changes one parameter toward its simplest value (a list loses elements or
// one element gets smaller; an integer moves toward its simplest; a flag or a choice
// becomes its simplest), then fits the parameters that depend on it. The greedy loop
// takes the first step that still fails the same way and starts over; it ends at a case
// that no single step makes smaller while still failing: 1-minimal.
#pragma once

#include <functional>
#include <vector>

#include "generators/schema.h"

namespace kprop {

// The simplest value first, then halfway points, then one less: a line from x toward
// `simplest`, as RapidCheck's towards(). The default steps of an integer.
std::vector<int64_t> towards(int64_t x, int64_t simplest);

// Steps of a size toward 1 along blocks of `width` (a vector width, a tile): the remainder
// alone (every whole block dropped), one block fewer, then towards(x, 1). A failure that
// needs a certain remainder keeps it while whole blocks go; towards() alone would lose it
// (at 15 columns of 8-wide blocks: 1, 8, 12 and 14 all lose the remainder of 7).
// For ParamSpec::shrinks.
std::function<std::vector<int64_t>(int64_t x, const Case&, size_t)> along_blocks(int64_t width);

// Every valid case one schema step simpler than `c`, in the schema's shrink order, then
// dtype (toward the first of `dtypes`) and distribution (toward normal). Pinned
// parameters (`fixed`) and the data seed never change.
std::vector<Case> shrink_steps(const Schema& schema, const Case& c,
                               const std::vector<DType>& dtypes,
                               const std::map<std::string, ParamValue>& fixed = {});

struct ShrinkRun {
  Case minimal;
  int64_t steps = 0;        // accepted smaller cases
  int64_t evaluations = 0;  // candidates tried
  double seconds = 0;
  bool budget_exhausted = false;  // the result may not be 1-minimal
};

// Greedy shrinking of a case for which `still_fails` is true.
ShrinkRun shrink_case(const Schema& schema, const Case& failing, const std::vector<DType>& dtypes,
                      const std::function<bool(const Case&)>& still_fails,
                      double budget_seconds,
                      const std::function<void(const ShrinkRun&)>& on_step = nullptr,
                      const std::map<std::string, ParamValue>& fixed = {});

// True when no schema step of `c` satisfies `still_fails` (what shrink_case promises).
bool is_one_minimal(const Schema& schema, const Case& c, const std::vector<DType>& dtypes,
                    const std::function<bool(const Case&)>& still_fails,
                    const std::map<std::string, ParamValue>& fixed = {});

}  // namespace kprop
