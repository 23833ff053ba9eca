// Other memory layouts of the same values. Real callers hand kernels tensors that are not
// fresh and contiguous: a transposed projection, a slice of a fused buffer, the stride-0
// gradient that `y.sum().backward()` gives. A kernel that reads with the wrong strides is
// right on every contiguous tensor and wrong on these (`layout`, harness/engine/properties/).
#pragma once

#include <ATen/ATen.h>

#include <string>
#include <vector>

#include "harness/model/named_tensors.h"

namespace kprop {

// t's values with its last two dimensions' storage swapped (strides of a transposed
// contiguous tensor); rank >= 2.
at::Tensor transposed_storage(const at::Tensor& t);

// t's values stored in dimension order `order` (outermost first, a permutation of t's
// dimensions): {1, 0, 2} keeps a [B, T, D] tensor time-major, as [T, B, D] in memory.
at::Tensor stored_in_order(const at::Tensor& t, const std::vector<int64_t>& order);

// t's values as a slice of a larger buffer: one element before it (a storage offset) and
// one after each innermost row (a row stride longer than the row), the rest `fill`.
at::Tensor inside_larger_buffer(const at::Tensor& t, const at::Scalar& fill);

// t's first element expanded to t's shape: every stride 0, as the gradient of a sum.
at::Tensor broadcast_first_element(const at::Tensor& t);
// t's first slice along dimension 0 expanded to t's shape (stride 0 in dimension 0), as a
// gradient broadcast over a batch; rank >= 1.
at::Tensor broadcast_first_slice(const at::Tensor& t);

// t's values as a contiguous slice of a larger buffer: `margin` elements before it, filled
// with `before`, and `margin` after it, filled with `after` (`guard` reads what a kernel
// does with memory around a tensor that is not its own).
at::Tensor between_margins(const at::Tensor& t, int64_t margin, const at::Scalar& before,
                           const at::Scalar& after);

// What a kernel that reads past a tensor must not find unnoticed: NaN for a floating
// dtype, the largest value for an integer one, true for bool.
at::Scalar guard_sentinel(at::ScalarType dtype);

// All of t's storage as a flat tensor of t's dtype: the memory it addresses and around it.
at::Tensor whole_storage(const at::Tensor& t);

// A copy of t on `device` (also the CPU) with t's sizes, strides and storage offset, and all
// of the storage around it as it was (Tensor::to copies a strided view densely, so a device
// kernel would never see a strided tensor, nor the margins `guard` puts around one).
// From the host to a CUDA device the copy goes through pinned memory (the caching host
// allocator's blocks, reused from case to case), one transfer the host does not wait for.
at::Tensor same_layout_on(const at::Tensor& t, const c10::Device& device);

// Each of `tensors` as same_layout_on copies it; one already on `device` as it is.
NamedTensors same_layouts_on(const NamedTensors& tensors, const c10::Device& device);

// Writes `values` (t's shape) into t's memory. A broadcast t (an expanded tensor) is
// written once per element it holds, from the first of the values that share it.
void write_into(const at::Tensor& t, const at::Tensor& values);

// "sizes [2, 3] strides [1, 2] offset 0", for messages.
std::string describe_layout(const at::Tensor& t);

}  // namespace kprop
