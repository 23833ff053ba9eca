// The toy implementation: what a hand-vectorized CPU kernel looks like. Inputs and
// outputs stay in the input dtype; math is fp32 (at::opmath_type: float64 for float64
// inputs, so that the float64-only gradient property can check it). Each row is covered
// by whole 8-wide blocks, then by one masked 8-wide step whose lanes come from a table.
//
// The two planted defects are code paths of this one kernel, as a real regression is:
//   toy@tail  a typo in the mask table: the entry for a remainder of 7 columns is 0x3F,
//             so the last lane is never written (forward and backward share the loop, so
//             the gradient check, which compares the two, cannot see it)
//   toy@bias  the block step adds the bias, then its fused epilogue adds it again; the
//             remainder step adds it once, so only columns in whole blocks are wrong
#include <ATen/Dispatch.h>
#include <ATen/OpMathType.h>

#include <array>
#include <cmath>
#include <vector>

#include "tests/kernels/scaled_tanh/columns.h"
#include "tests/kernels/scaled_tanh/implementations.h"

namespace kprop::scaled_tanh {

namespace {

using LaneMasks = std::array<uint8_t, kVectorWidth>;

// Lanes of the remainder step, by the remainder's width: lane k is on when bit k is set.
constexpr LaneMasks kRemainderLanes{0x00, 0x01, 0x03, 0x07, 0x0F, 0x1F, 0x3F, 0x7F};
// The same table with toy@tail's typo in its last entry.
constexpr LaneMasks kRemainderLanesWithTypo{0x00, 0x01, 0x03, 0x07, 0x0F, 0x1F, 0x3F, 0x3F};

const LaneMasks& remainder_lanes(Variant variant) {
  return variant == Variant::tail_mask_typo ? kRemainderLanesWithTypo : kRemainderLanes;
}

// Calls f(col, in_block) for every column of a row that the kernel's lanes cover.
template <typename F>
void for_each_lane(int64_t cols, const LaneMasks& lanes, F f) {
  const int64_t blocks_end = block_columns(cols);
  for (int64_t c0 = 0; c0 < blocks_end; c0 += kVectorWidth)
    for (int64_t lane = 0; lane < kVectorWidth; ++lane) f(c0 + lane, true);
  const uint8_t mask = lanes[static_cast<size_t>(cols - blocks_end)];
  for (int64_t lane = 0; lane < kVectorWidth; ++lane)
    if ((mask >> lane) & 1) f(blocks_end + lane, false);
}

void check_dtypes(const Args& a, const at::Tensor& dy = at::Tensor()) {
  const auto dtype = a.x.scalar_type();
  TORCH_CHECK(a.s.scalar_type() == dtype && (!a.b.defined() || a.b.scalar_type() == dtype) &&
                  (!dy.defined() || dy.scalar_type() == dtype),
              "scaled_tanh (toy): every tensor must have x's dtype");
}

}  // namespace

at::Tensor toy_forward(Variant variant, const Args& args) {
  check_args(args);
  check_dtypes(args);
  const at::Tensor x = args.x.contiguous(), s = args.s.contiguous();
  const at::Tensor b = args.b.defined() ? args.b.contiguous() : at::Tensor();
  const int64_t rows = x.size(0), cols = x.size(1);
  // Zeros: a lane the mask leaves out reads back as 0, the same on every run.
  at::Tensor y = at::zeros_like(x);
  AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, x.scalar_type(), "scaled_tanh_fwd", [&] {
    using acc_t = at::opmath_type<scalar_t>;
    const scalar_t *px = x.data_ptr<scalar_t>(), *ps = s.data_ptr<scalar_t>();
    const scalar_t* pb = b.defined() ? b.data_ptr<scalar_t>() : nullptr;
    scalar_t* py = y.data_ptr<scalar_t>();
    for (int64_t r = 0; r < rows; ++r)
      for_each_lane(cols, remainder_lanes(variant), [&](int64_t c, bool in_block) {
        const int64_t i = r * cols + c;
        acc_t v = std::tanh(static_cast<acc_t>(px[i])) * static_cast<acc_t>(ps[i]);
        if (pb) {
          v += static_cast<acc_t>(pb[c]);
          // toy@bias: the block step's fused epilogue adds the bias a second time.
          if (variant == Variant::bias_twice && in_block) v += static_cast<acc_t>(pb[c]);
        }
        py[i] = static_cast<scalar_t>(v);
      });
  });
  return y;
}

Gradients toy_backward(Variant variant, const Args& args, const at::Tensor& dy_in) {
  check_args(args);
  check_cotangent(args, dy_in);
  check_dtypes(args, dy_in);
  const at::Tensor x = args.x.contiguous(), s = args.s.contiguous(), dy = dy_in.contiguous();
  const int64_t rows = x.size(0), cols = x.size(1);
  Gradients g{at::zeros_like(x), at::zeros_like(x), at::Tensor()};
  if (args.b.defined()) g.db = at::zeros({cols}, x.options());
  AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, x.scalar_type(), "scaled_tanh_bwd", [&] {
    using acc_t = at::opmath_type<scalar_t>;
    const scalar_t *px = x.data_ptr<scalar_t>(), *ps = s.data_ptr<scalar_t>(),
                   *pdy = dy.data_ptr<scalar_t>();
    scalar_t *pdx = g.dx.data_ptr<scalar_t>(), *pds = g.ds.data_ptr<scalar_t>();
    // db sums a column over the rows in fp32 and is rounded once at the end.
    std::vector<acc_t> db(g.db.defined() ? static_cast<size_t>(cols) : 0, acc_t(0));
    for (int64_t r = 0; r < rows; ++r)
      for_each_lane(cols, remainder_lanes(variant), [&](int64_t c, bool) {
        const int64_t i = r * cols + c;
        const acc_t t = std::tanh(static_cast<acc_t>(px[i]));
        const acc_t d = static_cast<acc_t>(pdy[i]);
        pdx[i] = static_cast<scalar_t>(d * static_cast<acc_t>(ps[i]) * (acc_t(1) - t * t));
        pds[i] = static_cast<scalar_t>(d * t);
        if (!db.empty()) db[static_cast<size_t>(c)] += d;
      });
    if (!db.empty()) {
      scalar_t* pdb = g.db.data_ptr<scalar_t>();
      for (int64_t c = 0; c < cols; ++c) pdb[c] = static_cast<scalar_t>(db[static_cast<size_t>(c)]);
    }
  });
  return g;
}

}  // namespace kprop::scaled_tanh
