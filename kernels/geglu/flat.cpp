// flat: the flatten-1D grid-stride device kernel (the Ascend rewrite) on the CPU, and
// its variants (implementations.h), each a code path of this one kernel:
//   - the [rows·cols] elements form one 1-D range cut into blocks of BLOCK (grid.h);
//     grid = min(num_cores, cdiv(total, BLOCK)); program p takes blocks p, p + grid, ...;
//     the last block is masked at total;
//   - element i lies in row i / cols, column i % cols, and a and b are read at their row
//     strides — except in flat@assumes_contiguous, written for contiguous inputs, which
//     reads a[i] and b[i]: right for contiguous tensors, the wrong elements in every row
//     but the first of the fused layout;
//   - the rounding variants (gelu_in_dtype, fp32_product, bwd_no_roundtrip) differ in
//     what one element computes (element.h).
#include "kernels/geglu/grid.h"
#include "kernels/geglu/implementations.h"
#include "kernels/geglu/passes.h"

namespace kprop::geglu {

namespace {

// Calls visit(program, i) for every element index i < total, program by program.
template <typename Visit>
void for_each_flat_element(const FlatGrid& g, int64_t total, Visit visit) {
  for (int64_t program = 0; program < g.programs; ++program)
    for (int64_t block = program; block < g.blocks; block += g.programs)
      for (int64_t lane = 0; lane < g.block && block * g.block + lane < total; ++lane)
        visit(program, block * g.block + lane);
}

// Where element i of a tensor with rows `row_stride` apart is read.
int64_t offset(Variant variant, const RowLayout& l, int64_t row_stride, int64_t i) {
  if (variant == Variant::assumes_contiguous) return i;
  return (i / l.cols) * row_stride + i % l.cols;
}

template <typename Acc>
at::Tensor forward(Variant variant, const Args& args) {
  const RowLayout l = check_args(args);
  ForwardPass<Acc> pass(args, l, variant);
  const FlatGrid g = flat_grid(l.total(), args.num_cores, args.buffer_bytes,
                               args.a.scalar_type(), Pass::forward);
  for_each_flat_element(g, l.total(), [&](int64_t program, int64_t i) {
    pass.element(program, offset(variant, l, l.a_row_stride, i),
                 offset(variant, l, l.b_row_stride, i), i);
  });
  return pass.result();
}

template <typename Acc>
Gradients backward(Variant variant, const Args& args, const at::Tensor& dc) {
  const RowLayout l = check_args(args);
  const int64_t dc_stride = check_cotangent(args, dc);
  BackwardPass<Acc> pass(args, dc, l, dc_stride, variant);
  const FlatGrid g = flat_grid(l.total(), args.num_cores, args.buffer_bytes,
                               args.a.scalar_type(), Pass::backward);
  for_each_flat_element(g, l.total(), [&](int64_t program, int64_t i) {
    pass.element(program, offset(variant, l, dc_stride, i), offset(variant, l, l.a_row_stride, i),
                 offset(variant, l, l.b_row_stride, i), i);
  });
  return pass.result();
}

}  // namespace

at::Tensor flat_forward(Variant variant, const Args& args) {
  return args.a.scalar_type() == at::kDouble ? forward<double>(variant, args)
                                             : forward<float>(variant, args);
}

Gradients flat_backward(Variant variant, const Args& args, const at::Tensor& dc) {
  return args.a.scalar_type() == at::kDouble ? backward<double>(variant, args, dc)
                                             : backward<float>(variant, args, dc);
}

}  // namespace kprop::geglu
