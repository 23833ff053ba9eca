// Rounding-error bounds (docs/design.md §5), from which every tolerance is derived.
//
// A sum of K terms computed in floating point with unit roundoff u differs from the
// exact sum by at most gamma_K * sum|terms|, gamma_K = K u / (1 - K u) (Higham, Accuracy
// and Stability of Numerical Algorithms, §3.1). Storing a result in a narrower dtype
// adds u_out * |result|. kprop takes these worst-case bounds for verdicts, so that a
// correct kernel can never fail, and reports every error as a multiple of its bound;
// the probabilistic lambda * sqrt(K) * u of Higham & Mary is reported beside it as the
// size of error a correct kernel typically shows.
#pragma once

#include <ATen/ATen.h>

#include <cstdint>

namespace kprop {

// Unit roundoff of a dtype: 2^-53, 2^-24, 2^-8 (bfloat16), 2^-11 (float16).
double unit_roundoff(at::ScalarType dtype);

// gamma_K = K u / (1 - K u); infinite when K u >= 1.
double gamma_bound(int64_t k, double u);

// lambda * sqrt(K) * u with lambda = 1: the typical (not worst) error of a K-term sum.
double probabilistic_bound(int64_t k, double u);

// Smallest positive normal number of a dtype: errors below it are flushed-subnormal noise.
double smallest_normal(at::ScalarType dtype);

// Largest finite number of a dtype (65504 for float16): past it a value rounds to infinity.
double largest_finite(at::ScalarType dtype);

// Distance between x and y in units in the last place of `dtype`: how many values of the
// dtype lie between them, counted across zero (+0 and -0 are one apart). x and y must be
// values of the dtype; a NaN against anything else is infinitely far (INT64_MAX).
int64_t ulps_between(double x, double y, at::ScalarType dtype);

// Element-wise bound for a value computed as a K-term sum in `accumulate` precision and
// stored to `output` dtype: gamma_K(u_acc) * magnitude + u_out * |value|, plus u_out *
// magnitude for each partial sum rounded to `output` on the way, plus the output dtype's
// smallest normal. `magnitude` is the sum of |terms| (tensors: same shape, float64).
at::Tensor sum_error_bound(const at::Tensor& magnitude, const at::Tensor& value, int64_t k,
                           at::ScalarType accumulate, at::ScalarType output,
                           int rounded_partials = 0);

}  // namespace kprop
