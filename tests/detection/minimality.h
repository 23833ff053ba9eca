// What every detection test asks of a minimal failure, whatever its kernel: 1-minimal (no
// single schema step gives a smaller case that still shows the symptom), still showing
// it, and named by the identity the search gave it.
#pragma once

#include <gtest/gtest.h>

#include "generators/shrink.h"
#include "harness/identity.h"
#include "harness/kernel_info.h"
#include "harness/property.h"
#include "harness/report.h"
#include "harness/runner.h"

namespace kprop {

inline void expect_one_minimal(const Failure& f) {
  ASSERT_TRUE(f.shrunk);
  EXPECT_FALSE(f.shrunk->budget_exhausted);
  const Case& m = f.minimal();
  const Schema& schema = find_kernel(m.kernel).schema();
  const Verdict again = evaluate(m);
  EXPECT_TRUE(again.shows(f.symptom)) << again.signature();
  EXPECT_EQ(identity(schema, m, f.symptom), f.identity);
  for (const Case& smaller : shrink_steps(schema, m, {m.dtype})) {
    const Verdict v = evaluate(smaller);
    EXPECT_FALSE(v.shows(f.symptom)) << "a smaller case shows " << f.symptom << ":\n"
                                     << format_case(smaller);
  }
}

}  // namespace kprop
