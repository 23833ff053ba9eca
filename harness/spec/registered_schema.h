// The schema of kprop's operator `<kernel>_fwd` or `_bwd` as kprop registered it for the
// kernel's reference, without the namespace: what a library registers an implementation of
// its own with. The schema is written in one place, the kernel's spec; this reads it back.
// Header-only, so that a plugin linking libtorch alone can call it once kprop's kernels are
// registered (from its TORCH_LIBRARY_FRAGMENT block, say):
//   m.def(kprop::registered_schema("causal_conv1d_fwd").c_str());
#pragma once

#include <ATen/core/dispatch/Dispatcher.h>

#include <string>

namespace kprop {

inline std::string registered_schema(const std::string& op) {
  const auto& handle =
      c10::Dispatcher::singleton().findSchemaOrThrow(("kprop_reference::" + op).c_str(), "");
  const std::string text = c10::toString(handle.schema());
  return text.substr(text.find("::") + 2);
}

}  // namespace kprop
