// Calling any geglu implementation through the dispatcher: `<op_namespace>::geglu_fwd`
// and `<op_namespace>::geglu_bwd` (contract.h), boxed, so that kprop's own
// implementations (kprop_reference, kprop_torch_policy, kprop_rows, kprop_flat,
// kprop_flat_gelu_in_dtype, ...) and a library loaded from outside are called alike.
#pragma once

#include <ATen/ATen.h>

#include <cstdint>
#include <string>
#include <utility>

namespace kprop::geglu {

at::Tensor geglu_forward(const std::string& op_namespace, const at::Tensor& a,
                         const at::Tensor& b, int64_t num_cores, int64_t buffer_bytes);

// (da, db)
std::pair<at::Tensor, at::Tensor> geglu_backward(const std::string& op_namespace,
                                                 const at::Tensor& dc, const at::Tensor& a,
                                                 const at::Tensor& b, int64_t num_cores,
                                                 int64_t buffer_bytes);

}  // namespace kprop::geglu
