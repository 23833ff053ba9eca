// Implementations by name. Every implementation is an operator pair
// `<namespace>::<kernel>_fwd/_bwd`; a name resolves to its namespace.
//
//   <built-in name>    as the kernel's Kernel lists them (e.g. reference, tiled)
//   <ns>::<kernel>     <ns>     any registered library, e.g. one loaded with --load
#pragma once

#include <string>
#include <vector>

#include "harness/model/kernel.h"

namespace kprop {

// Built-in implementations of a kernel, the reference first.
std::vector<Implementation> builtin_implementations(const std::string& kernel);

// Built into kprop (its Kernel lists it), not loaded from outside.
bool is_builtin_implementation(const std::string& kernel, const std::string& impl);

// Whether `name` has the form of an implementation from outside, `ns::kernel` with `ns` an
// identifier, registered or not.
bool is_outside_implementation_name(const std::string& kernel, const std::string& name);

// Resolves a name; throws UsageError listing the known names when it is neither built in
// nor a `ns::kernel` whose operators are registered.
Implementation resolve_implementation(const std::string& kernel, const std::string& name);

}  // namespace kprop
