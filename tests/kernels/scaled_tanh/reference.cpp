// The float64 oracle: the contract's formulas as plain loops, nothing clever.
#include <cmath>

#include "kernels/common/host_values.h"
#include "tests/kernels/scaled_tanh/implementations.h"

namespace kprop::scaled_tanh {

namespace {

at::Tensor empty64(at::IntArrayRef sizes) {
  return at::empty(sizes, at::TensorOptions().dtype(at::kDouble));
}

}  // namespace

at::Tensor reference_forward(const Args& args) {
  check_args(args);
  const at::Tensor x = float64_of(args.x), s = float64_of(args.s), b = float64_of(args.b);
  const int64_t rows = x.size(0), cols = x.size(1);
  at::Tensor y = empty64({rows, cols});
  const double *px = x.data_ptr<double>(), *ps = s.data_ptr<double>();
  const double* pb = b.defined() ? b.data_ptr<double>() : nullptr;
  double* py = y.data_ptr<double>();
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) {
      const int64_t i = r * cols + c;
      py[i] = std::tanh(px[i]) * ps[i] + (pb ? pb[c] : 0.0);
    }
  return y;
}

Gradients reference_backward(const Args& args, const at::Tensor& dy_in) {
  check_args(args);
  check_cotangent(args, dy_in);
  const at::Tensor x = float64_of(args.x), s = float64_of(args.s), dy = float64_of(dy_in);
  const int64_t rows = x.size(0), cols = x.size(1);
  Gradients g{empty64({rows, cols}), empty64({rows, cols}), at::Tensor()};
  if (args.b.defined()) g.db = at::zeros({cols}, at::TensorOptions().dtype(at::kDouble));
  const double *px = x.data_ptr<double>(), *ps = s.data_ptr<double>(),
               *pdy = dy.data_ptr<double>();
  double *pdx = g.dx.data_ptr<double>(), *pds = g.ds.data_ptr<double>();
  double* pdb = g.db.defined() ? g.db.data_ptr<double>() : nullptr;
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) {
      const int64_t i = r * cols + c;
      const double t = std::tanh(px[i]);
      pdx[i] = pdy[i] * ps[i] * (1 - t * t);
      pds[i] = pdy[i] * t;
      if (pdb) pdb[c] += pdy[i];
    }
  return g;
}

}  // namespace kprop::scaled_tanh
