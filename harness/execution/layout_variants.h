// The layouts `layout` (harness/engine/properties/layout.cpp) hands a kernel's tensors in, by
// name, for that property and for the declarations that restrict them (Takes::layouts):
//   transposed  the last two dimensions' storage swapped (rank >= 2)
//   offset      a slice of a larger buffer: a storage offset and rows longer than a row
//   stride-0    a cotangent that is one value broadcast, as `y.sum().backward()` gives
//   expanded    a cotangent that is one slice broadcast along its first dimension
//   ...         a storage order the kernel declares (Kernel::storage_orders)
// Each holds the contiguous tensor's values, except the two broadcasts: they are new
// values, so the property compares them with the same values made contiguous. Indices the
// kernel's spec declares (TensorSpec::indices) take the same layouts; around their offset
// slice lies an index no tensor has (guard_sentinel), where a floating tensor has 1000.
// Other integer tensors keep their layout.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "harness/model/kernel.h"

namespace kprop {

struct LayoutVariant {
  std::string name;
  bool keeps_values = true;
  std::function<at::Tensor(const at::Tensor&)> make;
};

// Every layout name of `kernel`, the generic ones first.
std::vector<std::string> layout_names(const Kernel& kernel);

// The layouts of `t`, kprop's tensor `name` (an input; a cotangent "dy" when `cotangent`),
// that differ from its contiguous layout: transposed where both of its last two dimensions
// are longer than 1, offset where it has an element, the broadcasts for a cotangent of
// more than one element (expanded where its first dimension is), and the storage orders
// the kernel declares for it (or, for a cotangent, for its output).
std::vector<LayoutVariant> layout_variants(const Kernel& kernel, const std::string& name,
                                           const at::Tensor& t, bool cotangent);

}  // namespace kprop
