// The SearchOptions of a test's search: a kernel, an implementation, the number of cases
// and the seed, optionally the properties (default: all of the kernel's, in turn) and the
// generator's limits.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "harness/engine/runner.h"

namespace kprop {

inline SearchOptions search_options(const std::string& kernel, const std::string& impl,
                                    int64_t cases, uint64_t seed,
                                    std::vector<std::string> properties = {},
                                    std::map<std::string, int64_t> limits = {}) {
  SearchOptions o;
  o.kernel = kernel;
  o.impl = impl;
  o.properties = std::move(properties);
  o.cases = cases;
  o.seed = seed;
  o.limits = std::move(limits);
  return o;
}

}  // namespace kprop
