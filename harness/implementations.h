// Implementations by name. Every implementation is an operator pair
// `<namespace>::<kernel>_fwd/_bwd`; a name resolves to its namespace.
//
//   reference          kprop_reference      the float64 oracle
//   tiled              kprop_tiled          kprop's own device tiling, correct
//   tiled@<state>      kprop_tiled_<state>  a historical state of the device kernel
//   <ns>::<kernel>     <ns>                 any registered library, e.g. one loaded with --load
#pragma once

#include <string>
#include <vector>

namespace kprop {

struct Implementation {
  std::string name;          // as the user writes it
  std::string op_namespace;  // where its operators live
  std::string about;
};

// Built-in implementations of a kernel, the reference first.
std::vector<Implementation> builtin_implementations(const std::string& kernel);

// Resolves a name; throws UsageError listing the known names when it is neither built in
// nor a `ns::kernel` whose operators are registered.
Implementation resolve_implementation(const std::string& kernel, const std::string& name);

}  // namespace kprop
