#include "harness/tensor_layouts.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace kprop {

at::Tensor transposed_storage(const at::Tensor& t) {
  TORCH_CHECK(t.dim() >= 2, "transposed_storage: rank ", t.dim(), " < 2");
  return t.transpose(-1, -2).contiguous().transpose(-1, -2);
}

at::Tensor stored_in_order(const at::Tensor& t, const std::vector<int64_t>& order) {
  TORCH_CHECK(static_cast<int64_t>(order.size()) == t.dim(), "stored_in_order: ", order.size(),
              " dimensions named for a tensor of rank ", t.dim());
  std::vector<int64_t> inverse(order.size());
  for (size_t i = 0; i < order.size(); ++i) inverse[static_cast<size_t>(order[i])] = static_cast<int64_t>(i);
  return t.permute(order).contiguous().permute(inverse);
}

at::Tensor inside_larger_buffer(const at::Tensor& t, double fill) {
  if (t.dim() == 0) return at::full({2}, fill, t.options()).narrow(0, 1, 1).copy_(t.reshape({1})).squeeze(0);
  std::vector<int64_t> padded = t.sizes().vec();
  padded.back() += 1;  // one element after each innermost row
  const int64_t rows_numel = c10::multiply_integers(padded);
  at::Tensor buffer = at::full({rows_numel + 1}, fill, t.options());  // + one before
  at::Tensor rows = buffer.narrow(0, 1, rows_numel).view(padded);
  at::Tensor slice = rows.narrow(-1, 0, t.size(-1));
  slice.copy_(t);
  return slice;
}

at::Tensor broadcast_first_element(const at::Tensor& t) {
  if (t.numel() == 0) return t;
  return t.reshape({-1}).narrow(0, 0, 1).clone().reshape({}).expand(t.sizes());
}

at::Tensor broadcast_first_slice(const at::Tensor& t) {
  TORCH_CHECK(t.dim() >= 1, "broadcast_first_slice: a scalar has no slices");
  if (t.numel() == 0) return t;
  return t.narrow(0, 0, 1).contiguous().expand(t.sizes());
}

at::Tensor same_layout_on(const at::Tensor& t, const c10::Device& device) {
  if (!t.defined()) return t;
  if (t.is_contiguous() && t.storage_offset() == 0) return t.to(device, /*non_blocking=*/false, /*copy=*/true);
  // The span of storage t addresses, from its start: copied whole, then viewed as t is.
  int64_t extent = t.storage_offset() + 1;
  for (int64_t d = 0; d < t.dim(); ++d) {
    if (t.size(d) == 0) return at::empty_strided(t.sizes(), t.strides(), t.options().device(device));
    extent += (t.size(d) - 1) * t.stride(d);
  }
  const at::Tensor span = t.as_strided({extent}, {1}, 0).to(device, false, /*copy=*/true);
  return span.as_strided(t.sizes(), t.strides(), t.storage_offset());
}

void write_into(const at::Tensor& t, const at::Tensor& values) {
  at::Tensor to = t, from = values.to(t.device());
  for (int64_t d = 0; d < t.dim(); ++d)
    if (t.stride(d) == 0 && t.size(d) > 1) {
      to = to.narrow(d, 0, 1);
      from = from.narrow(d, 0, 1);
    }
  to.copy_(from);
}

std::string describe_layout(const at::Tensor& t) {
  return fmt::format("sizes [{}] strides [{}] offset {}", fmt::join(t.sizes(), ", "),
                     fmt::join(t.strides(), ", "), t.storage_offset());
}

}  // namespace kprop
