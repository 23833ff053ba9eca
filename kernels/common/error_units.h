// Error units of a hand-derived magnitude (kernels whose bound adds errors of two kinds).
#pragma once

#include "generators/case.h"
#include "harness/model/random_tensor.h"
#include "harness/model/tolerance.h"

namespace kprop {

// gamma_k in the case's accumulation type and u_out, its dtype's unit roundoff. A bound
// with one rounded partial is (gamma_k + u_out) m: `magnitude` turns an absolute error
// gamma_k g + u_out u (accumulation, and partial results stored in the case's dtype) into
// that m, so that each part keeps its own unit.
struct Units {
  double gamma, u;
  Units(const Case& c, int64_t k) {
    const at::ScalarType out = scalar_type(c.dtype);
    gamma = gamma_bound(k, unit_roundoff(out == at::kDouble ? at::kDouble : at::kFloat));
    u = unit_roundoff(out);
  }
  at::Tensor magnitude(const at::Tensor& error) const { return error / (gamma + u); }
  at::Tensor magnitude(const at::Tensor& g, const at::Tensor& u_part) const {
    return magnitude(g * gamma + u_part * u);
  }
};

}  // namespace kprop
