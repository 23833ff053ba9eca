#include "kernels/geglu/contract.h"

#include <vector>

namespace kprop::geglu {

namespace {

// The stride between consecutive rows of t viewed as [rows, cols], when its leading dims
// collapse into one row index (as a slice of a wider last dim does); throws otherwise.
int64_t row_stride(const at::Tensor& t, const char* name) {
  const int64_t cols = t.size(-1);
  TORCH_CHECK(cols <= 1 || t.stride(-1) == 1, "geglu: ", name,
              " must have stride 1 in its last dim");
  // Leading dims of size 1 take no part in the addressing; each other one must step over
  // whole rows of the next.
  std::vector<int64_t> sizes, strides;
  for (int64_t d = 0; d + 1 < t.dim(); ++d)
    if (t.size(d) != 1) {
      sizes.push_back(t.size(d));
      strides.push_back(t.stride(d));
    }
  if (sizes.empty()) return cols;
  for (size_t i = 0; i + 1 < sizes.size(); ++i)
    TORCH_CHECK(strides[i] == strides[i + 1] * sizes[i + 1], "geglu: the leading dims of ", name,
                " must flatten into rows");
  return strides.back();
}

}  // namespace

RowLayout check_args(const Args& args) {
  TORCH_CHECK(args.a.defined() && args.b.defined(), "geglu: a and b are required");
  TORCH_CHECK(args.a.dim() >= 1, "geglu: a must be [..., cols]");
  TORCH_CHECK(args.a.sizes() == args.b.sizes(), "geglu: b must have a's shape ", args.a.sizes(),
              ", got ", args.b.sizes());
  TORCH_CHECK(args.a.scalar_type() == args.b.scalar_type() && args.a.is_floating_point(),
              "geglu: a and b must share one floating dtype");
  TORCH_CHECK(args.num_cores >= 1, "geglu: num_cores must be >= 1");
  TORCH_CHECK(args.buffer_bytes >= 1, "geglu: buffer_bytes must be >= 1");
  RowLayout l;
  l.cols = args.a.size(-1);
  l.rows = l.cols == 0 ? 0 : args.a.numel() / l.cols;
  l.a_row_stride = row_stride(args.a, "a");
  l.b_row_stride = row_stride(args.b, "b");
  return l;
}

int64_t check_cotangent(const Args& args, const at::Tensor& dc) {
  TORCH_CHECK(dc.defined() && dc.sizes() == args.a.sizes(), "geglu: dc must have c's shape ",
              args.a.sizes());
  TORCH_CHECK(dc.scalar_type() == args.a.scalar_type(), "geglu: dc must have a's dtype");
  return row_stride(dc, "dc");
}

}  // namespace kprop::geglu
