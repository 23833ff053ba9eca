// The geglu operator contract (docs/design.md §4): c = gelu_tanh(a) · b, element-wise.
//
//   a, b          [..., cols], one shape and one floating dtype; the leading dims are
//                 flattened into rows. The last dim has stride 1; rows may lie apart (the
//                 fused layout: a and b are the two halves of one [..., 2·cols] projection)
//   num_cores     vector cores of the emulated device (flat's grid); devices ignore it
//   buffer_bytes  on-chip buffer (UB) budget that sizes the emulations' blocks
//   forward  -> c        contiguous, a's shape and dtype
//   backward (dc, a, b) -> (da, db), contiguous
//
// The C++ entry points that call any implementation through the dispatcher are in ops.h.
#pragma once

#include <ATen/ATen.h>

#include <cstdint>

namespace kprop::geglu {

inline constexpr const char* kForwardSchema =
    "geglu_fwd(Tensor a, Tensor b, int num_cores, int buffer_bytes) -> Tensor c";
inline constexpr const char* kBackwardSchema =
    "geglu_bwd(Tensor dc, Tensor a, Tensor b, int num_cores, int buffer_bytes) -> "
    "(Tensor da, Tensor db)";

struct Args {
  at::Tensor a, b;
  int64_t num_cores = 48;
  int64_t buffer_bytes = 192 * 1024;
};

struct Gradients {
  at::Tensor da, db;
};

// a and b as the kernels address them: `rows` rows of `cols` elements, row r of a at
// element offset r · a_row_stride from a's first element (likewise b).
struct RowLayout {
  int64_t rows = 0, cols = 0;
  int64_t a_row_stride = 0, b_row_stride = 0;
  int64_t total() const { return rows * cols; }
};

// Checks what every built-in implementation needs (throws c10::Error naming the argument)
// and returns the row layout.
RowLayout check_args(const Args& args);
// Checks dc against the arguments and returns the stride between its rows.
int64_t check_cotangent(const Args& args, const at::Tensor& dc);

}  // namespace kprop::geglu
