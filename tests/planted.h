// What every test of a kernel's planted defects checks: the search finds the defect the
// kernel declares for the implementation, shrinks it to a 1-minimal case, and the correct
// implementation passes that very case.
#pragma once

#include <gtest/gtest.h>

#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "generators/shrink.h"
#include "harness/engine/diagnosis.h"
#include "harness/engine/property.h"
#include "harness/model/kernel.h"
#include "harness/presentation/report.h"

namespace kprop {

// The known defect `kernel` declares for `impl` alone.
inline const KnownDefect& known_defect_of(const std::string& kernel, const std::string& impl) {
  static std::map<std::string, std::vector<KnownDefect>> declared;
  auto it = declared.find(kernel);
  if (it == declared.end()) it = declared.emplace(kernel, find_kernel(kernel).known_defects()).first;
  for (const auto& d : it->second)
    if (d.impls == std::vector<std::string>{impl}) return d;
  throw std::runtime_error("no known defect of " + kernel + "/" + impl);
}

// `f`, a finding of `d`: it shows the defect, its case is 1-minimal for its symptom, and
// `correct` passes that case.
inline void expect_minimal_finding(const KnownDefect& d, const Failure& f,
                                   const std::string& correct) {
  const Case& m = f.minimal();
  const std::string text = format_case(m);
  EXPECT_TRUE(shows(d, f)) << f.identity << "\n" << text;
  const auto shows_symptom = [&](const Case& c) { return evaluate(c).shows(f.symptom); };
  EXPECT_TRUE(is_one_minimal(find_kernel(m.kernel).schema(), m,
                             find_property(m.property).dtypes(), shows_symptom))
      << text;
  Case fixed = m;
  fixed.impl = correct;
  EXPECT_EQ(evaluate(fixed).status, Verdict::Status::pass) << text;
}

}  // namespace kprop
