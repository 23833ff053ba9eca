#include "harness/execution/layout_variants.h"

#include <algorithm>

#include "harness/model/tensor_layouts.h"

namespace kprop {

namespace {
// What lies around a slice: finite, and far from any value kprop draws, so that a read
// with the wrong strides changes the result (`guard` looks for reads past the end). Around
// indices, an index no tensor has (guard_sentinel: the largest int64).
constexpr double kAroundSlice = 1000.0;
at::Scalar around_slice(const at::Tensor& t) {
  return t.is_floating_point() ? at::Scalar(kAroundSlice) : guard_sentinel(t.scalar_type());
}
bool declared_indices(const Kernel& kernel, const std::string& name) {
  const auto names = kernel.index_inputs();
  return std::find(names.begin(), names.end(), name) != names.end();
}
}  // namespace

std::vector<std::string> layout_names(const Kernel& kernel) {
  std::vector<std::string> names{"transposed", "offset", "stride-0", "expanded"};
  for (const auto& s : kernel.storage_orders()) names.push_back(s.name);
  return names;
}

std::vector<LayoutVariant> layout_variants(const Kernel& kernel, const std::string& name,
                                           const at::Tensor& t, bool cotangent) {
  std::vector<LayoutVariant> out;
  if (!t.defined() || t.numel() == 0 || !(t.is_floating_point() || declared_indices(kernel, name)))
    return out;
  if (t.dim() >= 2 && t.size(-1) > 1 && t.size(-2) > 1)
    out.push_back({"transposed", true, transposed_storage});
  out.push_back({"offset", true, [](const at::Tensor& x) { return inside_larger_buffer(x, around_slice(x)); }});
  if (cotangent && t.numel() > 1) {
    out.push_back({"stride-0", false, broadcast_first_element});
    if (t.dim() >= 2 && t.size(0) > 1) out.push_back({"expanded", false, broadcast_first_slice});
  }
  for (const auto& s : kernel.storage_orders())
    if (s.tensor == name || (cotangent && grad_name(s.tensor) == name))
      if (static_cast<int64_t>(s.order.size()) == t.dim())
        out.push_back({s.name, true, [order = s.order](const at::Tensor& x) {
                         return stored_in_order(x, order);
                       }});
  return out;
}

}  // namespace kprop
