// The causal_conv1d operator contract (docs/design.md §3): the schema every implementation
// registers, the tensors it takes and returns, and the boxed calls through the
// dispatcher that the harness uses for all of them alike.
//
// Layouts follow flash-linear-attention and VeOmni's Ascend port:
//   x [B, T, D]         packed mode: B = 1 and cu_seqlens [N+1]; dense mode: N = B
//   weight [D, W]       bias [D] (optional)
//   initial_state h0 [N, D, W]   column c holds input position c - W; column 0 is unread
//   final_state [N, D, W]        the last W inputs (missing ones taken from h0 or zero)
//   activation "none" | "silu" | "swish"
//   num_cores           tiling hint for emulations; device kernels ignore it
// Backward returns (dx, dweight, dbias, dinitial_state); dbias and dinitial_state are
// undefined tensors when bias or initial_state is absent.
#pragma once

#include <ATen/ATen.h>

#include <string>

namespace kprop::causal_conv1d {

inline constexpr const char* kForwardSchema =
    "causal_conv1d_fwd(Tensor x, Tensor weight, Tensor? bias, Tensor? initial_state, "
    "Tensor? cu_seqlens, str activation, int num_cores) -> (Tensor y, Tensor final_state)";
inline constexpr const char* kBackwardSchema =
    "causal_conv1d_bwd(Tensor x, Tensor weight, Tensor? bias, Tensor? initial_state, "
    "Tensor? cu_seqlens, str activation, Tensor dy, Tensor? dht, int num_cores) -> "
    "(Tensor dx, Tensor dweight, Tensor dbias, Tensor dinitial_state)";

// The arguments of one call; undefined tensors stand for None.
struct Args {
  at::Tensor x, weight, bias, initial_state, cu_seqlens;
  std::string activation = "none";
  int64_t num_cores = 48;
};

struct ForwardResult {
  at::Tensor y, final_state;
};

struct BackwardResult {
  at::Tensor dx, dweight, dbias, dinitial_state;
};

// Calls `<op_namespace>::causal_conv1d_fwd` / `_bwd` through the dispatcher (boxed, so
// that any C++ signature a user registered with works).
ForwardResult call_forward(const std::string& op_namespace, const Args& args);
BackwardResult call_backward(const std::string& op_namespace, const Args& args,
                             const at::Tensor& dy, const at::Tensor& dht);

// Sequence boundaries of a call: from cu_seqlens (packed) or from B and T (dense).
struct Sequence {
  int64_t batch;  // index into x's first dimension
  int64_t bos;    // first row of the sequence inside x[batch]
  int64_t length;
};
std::vector<Sequence> sequences(const Args& args);

// Shape and value checks shared by every built-in implementation. Throws c10::Error
// naming the argument at fault.
void check_args(const Args& args);

}  // namespace kprop::causal_conv1d
