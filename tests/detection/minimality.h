// What every detection test asks of a minimal failure, whatever its kernel: 1-minimal (no
// single schema step, dtype steps toward the simplest dtype included, gives a smaller case
// that still shows the symptom), still showing it, and named by the identity the search
// gave it.
#pragma once

#include <gtest/gtest.h>

#include "generators/shrink.h"
#include "harness/engine/property.h"
#include "harness/engine/runner.h"
#include "harness/model/identity.h"
#include "harness/model/kernel.h"
#include "harness/presentation/report.h"

namespace kprop {

// `dtypes`: the dtypes the search shrank toward (its --dtype list); empty: those of the
// minimal case's property, as shrinking takes them (harness/engine/runner.cpp).
inline void expect_one_minimal(const Failure& f, std::vector<DType> dtypes = {}) {
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
  // The dtype steps, written out here rather than taken from shrink_steps (which the
  // loop above asks for none of): every dtype listed before the case's own is simpler,
  // and none may still show the symptom.
  if (dtypes.empty()) dtypes = find_property(m.property).dtypes();
  for (const DType d : dtypes) {
    if (d == m.dtype) break;
    Case simpler = m;
    simpler.dtype = d;
    if (!validate(schema, simpler).empty()) continue;
    const Verdict v = evaluate(simpler);
    EXPECT_FALSE(v.shows(f.symptom)) << "the simpler dtype " << to_string(d) << " shows "
                                     << f.symptom << ":\n" << format_case(simpler);
  }
}

}  // namespace kprop
