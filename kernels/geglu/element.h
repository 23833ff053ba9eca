// What one element of c, da and db is, rounded where the framework's policy rounds it
// (docs/design.md §4), or where a variant of the flatten-1D port rounds it instead. The
// emulations (rows.cpp, flat.cpp) compute every element through this one description,
// in the compute type Acc (float; double for float64 inputs), and Kernel names a
// deviation from the policy by the variant whose rounding reproduces it (info.cpp).
#pragma once

#include <ATen/ATen.h>

#include <utility>

#include "kernels/common/device_tensor.h"
#include "kernels/geglu/gelu.h"
#include "kernels/geglu/implementations.h"

namespace kprop::geglu {

template <typename Acc>
class Element {
 public:
  Element(at::ScalarType dtype, Variant variant) : dtype_(dtype), variant_(variant) {}

  Acc forward(Acc a, Acc b) const {
    // flat@fp32_product: the fp32 gelu times b, before any rounding to the dtype.
    if (variant_ == Variant::fp32_product) return round(gelu_fp32(a) * b);
    return round(gelu(a) * b);
  }

  // (da, db)
  std::pair<Acc, Acc> backward(Acc dc, Acc a, Acc b) const {
    // flat@bwd_no_roundtrip: db from the fp32 gelu, never rounded through the dtype.
    const Acc g = variant_ == Variant::bwd_no_roundtrip ? gelu_fp32(a) : gelu(a);
    const Acc db = round(dc * g);
    const Acc da = round(round(dc * b) * gelu_grad(a));
    return {da, db};
  }

 private:
  // The value rounded to the dtype, as a store and a load would leave it.
  Acc round(Acc v) const { return round_to(dtype_, v); }

  struct RoundToDtype {
    at::ScalarType dtype;
    Acc operator()(Acc v) const { return round_to(dtype, v); }
  };

  // flat@gelu_in_dtype evaluates gelu in the dtype; float64 inputs are computed in
  // float64 by every version of the kernel, so there it is the policy.
  bool gelu_in_dtype() const { return variant_ == Variant::gelu_in_dtype && dtype_ != at::kDouble; }

  // gelu(a) as the product and db use it: in fp32, rounded to the dtype (the policy), or,
  // in flat@gelu_in_dtype, every step in the dtype.
  Acc gelu(Acc a) const {
    if (gelu_in_dtype()) {
      const RoundToDtype r{dtype_};
      return GeluSteps<Acc, RoundToDtype>(a, r).gelu(r);
    }
    return round(gelu_fp32(a));
  }

  // gelu'(a) in fp32 (policy), or every step in the dtype (flat@gelu_in_dtype).
  Acc gelu_grad(Acc a) const {
    if (gelu_in_dtype()) {
      const RoundToDtype r{dtype_};
      return GeluSteps<Acc, RoundToDtype>(a, r).gelu_grad(a, r);
    }
    return gelu_grad_fp32(a);
  }

  at::ScalarType dtype_;
  Variant variant_;
};

}  // namespace kprop::geglu
