#include "harness/model/host_values.h"

#include <ATen/Dispatch.h>

namespace kprop {

template <typename T>
at::Tensor tensor_of(const T* values, at::IntArrayRef sizes, at::ScalarType dtype) {
  auto t = at::empty(sizes, at::TensorOptions().dtype(dtype));
  const int64_t n = t.numel();
  AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, dtype, "tensor_of", [&] {
    scalar_t* out = t.data_ptr<scalar_t>();
    for (int64_t i = 0; i < n; ++i) out[i] = static_cast<scalar_t>(values[i]);
  });
  return t;
}

template <typename T>
void read_values(const at::Tensor& t, T* out) {
  const auto c = t.contiguous();
  const int64_t n = c.numel();
  AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, c.scalar_type(), "read_values", [&] {
    const scalar_t* in = c.data_ptr<scalar_t>();
    for (int64_t i = 0; i < n; ++i) out[i] = static_cast<T>(in[i]);
  });
}

at::Tensor in_accumulation_type(const at::Tensor& t) {
  return converted(t, t.scalar_type() == at::kDouble ? at::kDouble : at::kFloat);
}

bool& evaluate_as_on_a_device() {
  static bool on = false;
  return on;
}

bool evaluated_as_aten_ops(const at::Tensor& t) { return !t.is_cpu() || evaluate_as_on_a_device(); }

at::Tensor converted(const at::Tensor& t, at::ScalarType dtype) {
  if (!t.defined() || !t.is_floating_point() || !at::isFloatingType(dtype)) return t;
  if (t.scalar_type() == dtype) return t.contiguous();  // t itself when contiguous
  // ATen's copy kernel converts as the loop below does (static_cast): the same bits.
  if (evaluated_as_aten_ops(t)) return t.to(dtype).contiguous();
  const auto c = t.contiguous();
  auto out = at::empty(c.sizes(), at::TensorOptions().dtype(dtype));
  const int64_t n = c.numel();
  AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, c.scalar_type(), "converted", [&] {
    using in_t = scalar_t;
    const in_t* in = c.data_ptr<in_t>();
    AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, dtype, "converted", [&] {
      scalar_t* o = out.data_ptr<scalar_t>();
      for (int64_t i = 0; i < n; ++i) o[i] = static_cast<scalar_t>(in[i]);
    });
  });
  return out;
}

at::Tensor float64_of(const at::Tensor& t) { return converted(t, at::kDouble); }

template at::Tensor tensor_of<float>(const float*, at::IntArrayRef, at::ScalarType);
template at::Tensor tensor_of<double>(const double*, at::IntArrayRef, at::ScalarType);
template void read_values<float>(const at::Tensor&, float*);
template void read_values<double>(const at::Tensor&, double*);

}  // namespace kprop
