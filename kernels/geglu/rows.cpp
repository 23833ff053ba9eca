// rows: the row-based device kernel (Liger-Kernel's geglu grid) on the CPU. One program
// per row; the row is covered in column blocks of min(next_pow2(cols), BLOCK) elements
// (grid.h), the last one masked at cols. Rows are addressed by their stride, so the fused
// layout (a and b the halves of one [..., 2·cols] projection) is read in place.
#include "kernels/geglu/grid.h"
#include "kernels/geglu/implementations.h"
#include "kernels/geglu/passes.h"

namespace kprop::geglu {

namespace {

// Calls visit(program, row, col) for every element, program by program.
template <typename Visit>
void for_each_row_element(const RowLayout& l, int64_t block, Visit visit) {
  for (int64_t row = 0; row < l.rows; ++row)
    for (int64_t col0 = 0; col0 < l.cols; col0 += block)
      for (int64_t lane = 0; lane < block && col0 + lane < l.cols; ++lane)
        visit(row, row, col0 + lane);
}

template <typename Acc>
at::Tensor forward(const Args& args) {
  const RowLayout l = check_args(args);
  ForwardPass<Acc> pass(args, l, Variant::correct);
  const int64_t block = rows_block(l.cols, args.buffer_bytes, args.a.scalar_type(), Pass::forward);
  for_each_row_element(l, block, [&](int64_t program, int64_t row, int64_t col) {
    pass.element(program, row * l.a_row_stride + col, row * l.b_row_stride + col,
                 row * l.cols + col);
  });
  return pass.result();
}

template <typename Acc>
Gradients backward(const Args& args, const at::Tensor& dc) {
  const RowLayout l = check_args(args);
  const int64_t dc_stride = check_cotangent(args, dc);
  BackwardPass<Acc> pass(args, dc, l, dc_stride, Variant::correct);
  const int64_t block = rows_block(l.cols, args.buffer_bytes, args.a.scalar_type(), Pass::backward);
  for_each_row_element(l, block, [&](int64_t program, int64_t row, int64_t col) {
    pass.element(program, row * dc_stride + col, row * l.a_row_stride + col,
                 row * l.b_row_stride + col, row * l.cols + col);
  });
  return pass.result();
}

}  // namespace

at::Tensor rows_forward(const Args& args) {
  return args.a.scalar_type() == at::kDouble ? forward<double>(args) : forward<float>(args);
}

Gradients rows_backward(const Args& args, const at::Tensor& dc) {
  return args.a.scalar_type() == at::kDouble ? backward<double>(args, dc)
                                             : backward<float>(args, dc);
}

}  // namespace kprop::geglu
