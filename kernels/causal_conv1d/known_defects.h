// The defects of the historical Ascend states that kprop knows, each as a predicate on a
// minimal failure: which implementation has it, which property exposes it, and what its
// shrunk case looks like. Detection tests, the benchmark and the corpus all use this one
// list, so "found" means the same everywhere.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "harness/runner.h"

namespace kprop::causal_conv1d {

struct KnownDefect {
  std::string name;                // e.g. "dh0 over-count"
  std::string summary;             // what goes wrong and why, in one sentence
  std::vector<std::string> impls;  // implementations that have it
  std::string property;            // the property that hunts it
  int64_t max_segments = 8;        // a tighter space where that isolates it
  bool reported_upstream;          // false: first found by kprop
  // Does this minimal failure show the defect?
  std::function<bool(const Failure&)> shows;
};

const std::vector<KnownDefect>& known_defects();

}  // namespace kprop::causal_conv1d
