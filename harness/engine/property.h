// A property: a relation an implementation must satisfy on every case, checked on one
// case at a time. Properties know nothing of any kernel; they use its Kernel.
#pragma once

#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "harness/execution/implementations.h"
#include "harness/model/kernel.h"
#include "harness/model/verdict.h"

namespace kprop {

// The implementation under test raised (a c10::Error, any other exception). evaluate()
// judges it: a refusal the implementation declares ("D must be divisible by BD", as the
// real kernel raises where its preconditions fail) gives a rejected verdict, any other
// error a failure with the fault "raised". Errors of kprop's own code outside the
// implementation's calls propagate.
struct ImplementationRefused : std::runtime_error {
  using std::runtime_error::runtime_error;
};

class Property {
 public:
  virtual ~Property() = default;
  virtual std::string name() const = 0;
  virtual std::string about() const = 0;
  // The dtypes this property draws cases in (e.g. finite differences: float64 only).
  virtual std::vector<DType> dtypes() const = 0;
  // Checks one case. Implementation errors propagate as c10::Error (see evaluate()).
  virtual Verdict check(const Kernel& kernel, const Implementation& impl,
                        const Case& c) const = 0;
  // The cases of the calls this property makes on `c` (a metamorphic relation calls the
  // implementation on parts of the case): where a failure is localized, by comparing
  // each call on its own with the reference (harness/engine/diagnosis.h).
  virtual std::vector<Case> calls(const Kernel&, const Case& c) const { return {c}; }
  // True when the check runs an implementation that does not take the case's dtype in a
  // dtype it takes instead (harness/execution/takes.h): such a case is run, not rejected.
  virtual bool adapts_dtype() const { return false; }
};

// A verdict for `c` before any check.
Verdict open_verdict(const Kernel& kernel, const Case& c);

// The registry of properties: each file of harness/engine/properties/ registers its own at load
// time (`static const bool registered = register_property(...)`); false when one of that
// name is there already (a library loaded twice), as for kernels (core/registry.h).
bool register_property(std::unique_ptr<Property> property);
const Property& find_property(const std::string& name);  // throws UsageError
std::vector<std::string> property_names();                // sorted

// What a run tests: a kernel, one of its implementations and a property, resolved once
// (resolve_target), so that no case of the run looks any of them up again.
struct Target {
  const Kernel* kernel = nullptr;
  Implementation implementation;
  const Property* property = nullptr;
  bool builtin = true;  // one of the kernel's own implementations, not a loaded library's
};
// Throws UsageError naming what is unknown.
Target resolve_target(const std::string& kernel, const std::string& implementation,
                      const std::string& property);
// The target a case names (its kernel, implementation and property).
Target target_of(const Case& c);

// Validates and runs case `c` of `target` (c names the same kernel, implementation and
// property): a case that is impossible throws CaseError. An implementation that raises
// gives a rejected verdict when the error is a refusal it declares (declared_refusal()),
// else a failure with the fault "raised". An implementation from outside (NS::kernel of a
// loaded library) runs in a child process while the session isolates
// (harness/execution/isolation.h): a crash, a hang or an exit is then a failure too, and
// kprop goes on. While the session cuts the run short on an interrupt
// (harness/execution/session.h) every case is skipped at once. A case outside what the
// implementation declares it takes (harness/execution/takes.h) is skipped with kNotTaken +
// why.
Verdict evaluate(const Target& target, const Case& c);
// The same for a case alone: its target resolved first.
Verdict evaluate(const Case& c);
inline constexpr const char* kNotTaken = "not taken: ";

// ATen's own refusal of a dtype ("\"sigmoid_cpu\" not implemented for 'Half'": libtorch
// 1.13 has no float16 sigmoid, exp or addmm on the CPU): the platform cannot run the
// case, whichever implementation calls the op, so it is a refusal, never a defect. The
// refusal's text, or nothing.
std::optional<std::string> platform_refusal(const std::string& message);

// The refusal that an error `message` of `c`'s implementation on `c` is, if any: the
// platform's (platform_refusal()); for a built-in implementation its kernel's
// Kernel::refusal(c, impl) when the message holds it; for an outside one the first text
// the session declares (--refusal) that the message holds.
std::optional<std::string> declared_refusal(const Target& target, const Case& c,
                                            const std::string& message);
std::optional<std::string> declared_refusal(const Case& c, const std::string& message);

}  // namespace kprop
