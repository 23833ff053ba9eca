#include "harness/model/tensor_layouts.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <limits>

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

at::Tensor inside_larger_buffer(const at::Tensor& t, const at::Scalar& fill) {
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

at::Tensor between_margins(const at::Tensor& t, int64_t margin, const at::Scalar& before,
                           const at::Scalar& after) {
  at::Tensor buffer = at::empty({margin + t.numel() + margin}, t.options());
  buffer.narrow(0, 0, margin).fill_(before);
  buffer.narrow(0, margin + t.numel(), margin).fill_(after);
  return buffer.narrow(0, margin, t.numel()).view(t.sizes()).copy_(t);
}

at::Scalar guard_sentinel(at::ScalarType dtype) {
  if (at::isFloatingType(dtype)) return at::Scalar(std::numeric_limits<double>::quiet_NaN());
  switch (dtype) {
    case at::kBool: return at::Scalar(true);
    case at::kByte: return at::Scalar(int64_t{std::numeric_limits<uint8_t>::max()});
    case at::kChar: return at::Scalar(int64_t{std::numeric_limits<int8_t>::max()});
    case at::kShort: return at::Scalar(int64_t{std::numeric_limits<int16_t>::max()});
    case at::kInt: return at::Scalar(int64_t{std::numeric_limits<int32_t>::max()});
    default: return at::Scalar(std::numeric_limits<int64_t>::max());
  }
}

at::Tensor whole_storage(const at::Tensor& t) {
  const auto n = static_cast<int64_t>(t.storage().nbytes()) / t.element_size();
  return at::empty({0}, t.options()).set_(t.storage(), 0, {n}, {1});
}

namespace {

// `flat` (a contiguous tensor) on `device`: from the host to CUDA staged in pinned memory,
// so that the copy is a DMA the host goes on from.
at::Tensor copied_to(const at::Tensor& flat, const c10::Device& device) {
  if (flat.is_cpu() && device.is_cuda() && flat.numel() > 0)
    return flat.pin_memory().to(device, /*non_blocking=*/true, /*copy=*/true);
  return flat.to(device, /*non_blocking=*/false, /*copy=*/true);
}

}  // namespace

at::Tensor same_layout_on(const at::Tensor& t, const c10::Device& device) {
  if (!t.defined()) return t;
  const bool plain = t.is_contiguous() && t.storage_offset() == 0 &&
                     t.storage().nbytes() == t.nbytes();
  if (plain) return copied_to(t, device);
  const at::Tensor storage = copied_to(whole_storage(t), device);
  return storage.as_strided(t.sizes(), t.strides(), t.storage_offset());
}

NamedTensors same_layouts_on(const NamedTensors& tensors, const c10::Device& device) {
  NamedTensors out;
  for (const auto& [name, t] : tensors)
    out.set(name, t.defined() && t.device() == device ? t : same_layout_on(t, device));
  return out;
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
