#include "tests/kernels/scaled_tanh/contract.h"

#include "kernels/common/dispatch.h"

namespace kprop::scaled_tanh {

namespace {

void push_inputs(torch::jit::Stack& stack, const Args& args) {
  stack.emplace_back(args.x);
  stack.emplace_back(args.s);
  stack.emplace_back(args.b.defined() ? c10::IValue(args.b) : c10::IValue());
}

}  // namespace

at::Tensor call_forward(const std::string& op_namespace, const Args& args) {
  torch::jit::Stack stack;
  push_inputs(stack, args);
  call_boxed(op_namespace + "::scaled_tanh_fwd", stack, 1);
  return tensor_or_undefined(stack[0]);
}

Gradients call_backward(const std::string& op_namespace, const Args& args, const at::Tensor& dy) {
  torch::jit::Stack stack;
  push_inputs(stack, args);
  stack.emplace_back(dy);
  call_boxed(op_namespace + "::scaled_tanh_bwd", stack, 3);
  return {tensor_or_undefined(stack[0]), tensor_or_undefined(stack[1]),
          tensor_or_undefined(stack[2])};
}

void check_args(const Args& a) {
  TORCH_CHECK(a.x.defined() && a.x.dim() == 2, "scaled_tanh: x must be [rows, cols]");
  TORCH_CHECK(a.s.defined() && a.s.sizes() == a.x.sizes(),
              "scaled_tanh: s must have x's shape [rows, cols]");
  TORCH_CHECK(!a.b.defined() || (a.b.dim() == 1 && a.b.size(0) == a.x.size(1)),
              "scaled_tanh: b must be [cols]");
}

void check_cotangent(const Args& a, const at::Tensor& dy) {
  TORCH_CHECK(dy.defined() && dy.sizes() == a.x.sizes(),
              "scaled_tanh: dy must have y's shape [rows, cols]");
}

}  // namespace kprop::scaled_tanh
