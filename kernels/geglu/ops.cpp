#include "kernels/geglu/ops.h"

#include "harness/execution/dispatch.h"

namespace kprop::geglu {

at::Tensor geglu_forward(const std::string& op_namespace, const at::Tensor& a,
                         const at::Tensor& b, int64_t num_cores, int64_t buffer_bytes) {
  torch::jit::Stack stack{a, b, num_cores, buffer_bytes};
  call_boxed(op_namespace + "::geglu_fwd", stack, 1);
  return tensor_or_undefined(stack[0]);
}

std::pair<at::Tensor, at::Tensor> geglu_backward(const std::string& op_namespace,
                                                 const at::Tensor& dc, const at::Tensor& a,
                                                 const at::Tensor& b, int64_t num_cores,
                                                 int64_t buffer_bytes) {
  torch::jit::Stack stack{dc, a, b, num_cores, buffer_bytes};
  call_boxed(op_namespace + "::geglu_bwd", stack, 2);
  return {tensor_or_undefined(stack[0]), tensor_or_undefined(stack[1])};
}

}  // namespace kprop::geglu
