// a, b and dc in the emulated device's memory (kernels/common/device_tensor.h), addressed
// as the kernels address them: element offsets from the tensor's first element, rows
// `row_stride` apart. The device memory holds the span of storage from the first to the
// last element, so a kernel that steps rows wrongly reads the other half of a fused
// projection, as it would on the device, rather than being stopped at the view's edge.
#pragma once

#include <string>
#include <utility>

#include "kernels/common/device_tensor.h"
#include "kernels/geglu/contract.h"

namespace kprop::geglu {

template <typename Acc>
DeviceTensor<Acc> device_rows(std::string name, const at::Tensor& t, const RowLayout& l,
                              int64_t row_stride) {
  const int64_t span = l.rows == 0 ? 0 : (l.rows - 1) * row_stride + l.cols;
  return DeviceTensor<Acc>(std::move(name), t.as_strided({span}, {1}, t.storage_offset()));
}

// The outputs: contiguous [rows · cols] buffers in the input dtype, NaN until stored.
template <typename Acc>
DeviceTensor<Acc> device_output(std::string name, const RowLayout& l, at::ScalarType dtype) {
  return DeviceTensor<Acc>::allocate(std::move(name), {l.total()}, dtype, /*zeroed=*/false);
}

}  // namespace kprop::geglu
