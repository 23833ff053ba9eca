#pragma once
// A case of the test kernel scaled_tanh (tests/kernels/scaled_tanh/): the schema's
// defaults with 2 rows and `cols` columns, for tests that call its implementations.
#include <string>

#include "generators/schema.h"
#include "harness/model/kernel.h"

inline kprop::Case tanh_case(const std::string& impl, int64_t cols,
                             const std::string& property = "vs_reference", uint64_t seed = 7) {
  kprop::Case base;
  base.kernel = "scaled_tanh";
  base.impl = impl;
  base.property = property;
  base.seed = seed;
  kprop::Case c = kprop::default_case(kprop::find_kernel("scaled_tanh").schema(), base);
  c.set("rows", int64_t{2});
  c.set("cols", cols);
  return c;
}
