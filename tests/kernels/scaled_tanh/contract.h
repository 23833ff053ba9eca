// The scaled_tanh operator contract: y = tanh(x) * s (+ b), element-wise, with its
// schema strings, its arguments and the boxed calls through the dispatcher.
//
//   x [rows, cols]   s [rows, cols]   b [cols] (optional, added to every row)
//   forward  -> y [rows, cols]
//   backward (x, s, b, dy) -> dx = dy s (1 - tanh(x)^2), ds = dy tanh(x), db = sum over
//            rows of dy (an undefined tensor without b)
//
// A kernel that exists only to test kprop: nothing in harness/ knows it, so every
// property that runs on it shows that the harness is generic over kernels.
#pragma once

#include <ATen/ATen.h>

#include <string>

namespace kprop::scaled_tanh {

inline constexpr const char* kForwardSchema =
    "scaled_tanh_fwd(Tensor x, Tensor s, Tensor? b) -> Tensor y";
inline constexpr const char* kBackwardSchema =
    "scaled_tanh_bwd(Tensor x, Tensor s, Tensor? b, Tensor dy) -> "
    "(Tensor dx, Tensor ds, Tensor db)";

// The inputs of one call; an undefined b stands for None.
struct Args {
  at::Tensor x, s, b;
};

struct Gradients {
  at::Tensor dx, ds, db;
};

// `<op_namespace>::scaled_tanh_fwd` / `_bwd`, called boxed.
at::Tensor call_forward(const std::string& op_namespace, const Args& args);
Gradients call_backward(const std::string& op_namespace, const Args& args, const at::Tensor& dy);

// Shapes every implementation checks; throws c10::Error naming the argument at fault.
void check_args(const Args& args);
void check_cotangent(const Args& args, const at::Tensor& dy);

}  // namespace kprop::scaled_tanh
