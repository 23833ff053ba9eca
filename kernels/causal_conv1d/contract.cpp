#include "kernels/causal_conv1d/contract.h"

#include "harness/execution/dispatch.h"

namespace kprop::causal_conv1d {

namespace {

c10::IValue optional_tensor(const at::Tensor& t) {
  return t.defined() ? c10::IValue(t) : c10::IValue();
}

// The argument prefix shared by forward and backward.
void push_common(torch::jit::Stack& stack, const Args& args) {
  stack.emplace_back(args.x);
  stack.emplace_back(args.weight);
  stack.emplace_back(optional_tensor(args.bias));
  stack.emplace_back(optional_tensor(args.initial_state));
  stack.emplace_back(optional_tensor(args.cu_seqlens));
  stack.emplace_back(args.activation);
}

}  // namespace

ForwardResult call_forward(const std::string& op_namespace, const Args& args) {
  torch::jit::Stack stack;
  push_common(stack, args);
  stack.emplace_back(args.num_cores);
  call_boxed(op_namespace + "::causal_conv1d_fwd", stack, 2);
  return {tensor_or_undefined(stack[0]), tensor_or_undefined(stack[1])};
}

BackwardResult call_backward(const std::string& op_namespace, const Args& args,
                             const at::Tensor& dy, const at::Tensor& dht) {
  torch::jit::Stack stack;
  push_common(stack, args);
  stack.emplace_back(dy);
  stack.emplace_back(optional_tensor(dht));
  stack.emplace_back(args.num_cores);
  call_boxed(op_namespace + "::causal_conv1d_bwd", stack, 4);
  return {tensor_or_undefined(stack[0]), tensor_or_undefined(stack[1]),
          tensor_or_undefined(stack[2]), tensor_or_undefined(stack[3])};
}

std::vector<Sequence> sequences(const Args& args) {
  std::vector<Sequence> out;
  const int64_t B = args.x.size(0), T = args.x.size(1);
  if (args.cu_seqlens.defined()) {
    auto cu = args.cu_seqlens.to(at::kCPU).to(at::kLong).contiguous();
    const int64_t* p = cu.data_ptr<int64_t>();
    for (int64_t n = 0; n + 1 < cu.numel(); ++n) out.push_back({0, p[n], p[n + 1] - p[n]});
  } else {
    for (int64_t b = 0; b < B; ++b) out.push_back({b, 0, T});
  }
  return out;
}

void check_args(const Args& args) {
  TORCH_CHECK(args.x.defined() && args.x.dim() == 3, "causal_conv1d: x must be [B, T, D]");
  TORCH_CHECK(args.weight.defined() && args.weight.dim() == 2 &&
                  args.weight.size(0) == args.x.size(2),
              "causal_conv1d: weight must be [D, W] with D = x.size(2)");
  const int64_t D = args.x.size(2), W = args.weight.size(1);
  TORCH_CHECK(W >= 1, "causal_conv1d: W must be >= 1");
  TORCH_CHECK(!args.bias.defined() || (args.bias.dim() == 1 && args.bias.size(0) == D),
              "causal_conv1d: bias must be [D]");
  TORCH_CHECK(args.activation == "none" || args.activation == "silu" ||
                  args.activation == "swish",
              "causal_conv1d: activation must be none, silu or swish, got '",
              args.activation, "'");
  int64_t N = args.x.size(0);
  if (args.cu_seqlens.defined()) {
    TORCH_CHECK(args.x.size(0) == 1, "causal_conv1d: packed mode (cu_seqlens) needs B = 1");
    TORCH_CHECK(args.cu_seqlens.dim() == 1 && args.cu_seqlens.numel() >= 2,
                "causal_conv1d: cu_seqlens must be [N+1] with N >= 1");
    TORCH_CHECK(args.cu_seqlens.scalar_type() == at::kInt ||
                    args.cu_seqlens.scalar_type() == at::kLong,
                "causal_conv1d: cu_seqlens must be int32 or int64");
    auto cu = args.cu_seqlens.to(at::kCPU).to(at::kLong).contiguous();
    const int64_t* p = cu.data_ptr<int64_t>();
    N = cu.numel() - 1;
    TORCH_CHECK(p[0] == 0, "causal_conv1d: cu_seqlens[0] must be 0, got ", p[0]);
    for (int64_t n = 0; n < N; ++n)
      TORCH_CHECK(p[n + 1] > p[n], "causal_conv1d: cu_seqlens must increase strictly; "
                  "segment ", n, " has length ", p[n + 1] - p[n]);
    TORCH_CHECK(p[N] == args.x.size(1), "causal_conv1d: cu_seqlens must end at T = ",
                args.x.size(1), ", got ", p[N]);
  } else {
    TORCH_CHECK(args.x.size(1) >= 1, "causal_conv1d: T must be >= 1");
  }
  if (args.initial_state.defined())
    TORCH_CHECK(args.initial_state.dim() == 3 && args.initial_state.size(0) == N &&
                    args.initial_state.size(1) == D && args.initial_state.size(2) == W,
                "causal_conv1d: initial_state must be [N, D, W] = [", N, ", ", D, ", ", W,
                "]");
  TORCH_CHECK(args.num_cores >= 1, "causal_conv1d: num_cores must be >= 1");
}

}  // namespace kprop::causal_conv1d
