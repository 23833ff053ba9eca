// Small host tensors to and from plain arrays, converting element by element.
//
// kprop evaluates thousands of tiny cases per second. On tensors of a few hundred
// elements an ATen op is almost all overhead (dispatch, TensorIterator, a fresh
// allocation: about 2.5 µs for a `.to(kDouble)` here), so the conversions that every
// evaluation makes go through these loops instead. Each element converts exactly as
// ATen's copy kernel converts it (static_cast through c10's Half and BFloat16), so the
// values are bit-identical to `.to()`'s.
//
// Tensors on a device (the float64 oracle there: docs/oracle_device.md) take ATen's own
// operations instead: one kernel launch per op is cheap there, a copy to the host is not.
#pragma once

#include <ATen/ATen.h>

#include <array>
#include <cmath>
#include <type_traits>
#include <utility>

#include "harness/model/formula.h"

namespace kprop {

// A new contiguous tensor of `dtype` (a floating type) holding values[0 .. numel).
template <typename T>
at::Tensor tensor_of(const T* values, at::IntArrayRef sizes, at::ScalarType dtype);

// Copies t's values (any layout, a floating type), converted to T, into out[0 .. numel).
template <typename T>
void read_values(const at::Tensor& t, T* out);

// True where host_values evaluates `t` with ATen operations: a tensor on a device, or any
// tensor while evaluate_as_on_a_device() is set (tests compare the two forms on the CPU).
bool evaluated_as_aten_ops(const at::Tensor& t);
bool& evaluate_as_on_a_device();


// t's values as a contiguous float64 tensor: t itself when it already is one, t unchanged
// when it is undefined or not floating point.
at::Tensor float64_of(const at::Tensor& t);

// t's values as a contiguous tensor of `dtype`: t itself when it already is one.
at::Tensor converted(const at::Tensor& t, at::ScalarType dtype);

// t's values as a contiguous tensor of the type a kernel accumulates t's dtype in: float64
// for float64, float32 for the rest (a row kernel loads its row whatever the layout, so its
// sums keep one order).
at::Tensor in_accumulation_type(const at::Tensor& t);

}  // namespace kprop

namespace kprop {

namespace detail {
template <typename F, size_t N, size_t... I>
void elementwise_loop(F& f, const std::array<const double*, N>& in, double* out, int64_t n,
                      std::index_sequence<I...>) {
  for (int64_t i = 0; i < n; ++i) out[i] = f(in[I][i]...);
}

// The host loop of elementwise_float64 (its inputs checked there).
template <typename F, typename... Tensors>
at::Tensor elementwise_on_host(F& f, const Tensors&... inputs) {
  const std::array<at::Tensor, sizeof...(Tensors)> in{float64_of(inputs)...};
  std::array<const double*, sizeof...(Tensors)> data{};
  for (size_t k = 0; k < in.size(); ++k) data[k] = in[k].template data_ptr<double>();
  auto out = at::empty(in[0].sizes(), at::TensorOptions().dtype(at::kDouble));
  elementwise_loop(f, data, out.template data_ptr<double>(), out.numel(),
                   std::index_sequence_for<Tensors...>{});
  return out;
}
}  // namespace detail

// out[i] = f(a[i], b[i], ...) over float64 copies of same-shaped tensors: one loop and
// one allocation where a chain of ATen ops would allocate and dispatch per operation.
// On a device, f applied to the float64 tensors themselves when it takes tensors (a
// generic lambda), else the loop on host copies, the result copied back.
template <typename F, typename... Tensors>
at::Tensor elementwise_float64(F f, const Tensors&... inputs) {
  const std::array<at::Tensor, sizeof...(Tensors)> all{inputs...};
  for (const auto& t : all)
    TORCH_CHECK(t.defined() && t.sizes() == all[0].sizes(),
                "elementwise_float64: inputs must be defined and of one shape");
  if (!(... || evaluated_as_aten_ops(inputs))) return detail::elementwise_on_host(f, inputs...);
  if constexpr (std::is_invocable_v<F, decltype(float64_of(inputs))...>) {
    return at::Tensor(f(float64_of(inputs)...)).to(at::kDouble).contiguous();
  } else {
    return detail::elementwise_on_host(f, inputs.cpu()...).to(all[0].device());
  }
}

}  // namespace kprop
