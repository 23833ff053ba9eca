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
