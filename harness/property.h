// A property: a relation an implementation must satisfy on every case, checked on one
// case at a time. Properties know nothing of any kernel; they use its KernelInfo.
#pragma once

#include <string>
#include <vector>

#include "harness/implementations.h"
#include "harness/kernel_info.h"
#include "harness/verdict.h"

namespace kprop {

class Property {
 public:
  virtual ~Property() = default;
  virtual std::string name() const = 0;
  virtual std::string about() const = 0;
  // The dtypes this property draws cases in (e.g. finite differences: float64 only).
  virtual std::vector<DType> dtypes() const = 0;
  // Checks one case. Implementation errors propagate as c10::Error (see evaluate()).
  virtual Verdict check(const KernelInfo& kernel, const Implementation& impl,
                        const Case& c) const = 0;
  // The cases of the calls this property makes on `c` (a metamorphic relation calls the
  // implementation on parts of the case): where a failure is localized, by comparing
  // each call on its own with the reference (harness/runner.h).
  virtual std::vector<Case> calls(const KernelInfo&, const Case& c) const { return {c}; }
};

const Property& find_property(const std::string& name);  // throws UsageError
std::vector<std::string> property_names();

// Validates and runs case `c` (its kernel, implementation and property): a case that is
// impossible throws CaseError; an implementation that raises gives a rejected verdict.
Verdict evaluate(const Case& c);

}  // namespace kprop
