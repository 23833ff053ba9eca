// Rounding errors carried through a chain of operations, element by element
// (docs/design.md §5, for chains rather than one call).
//
// Every value of a low-precision chain is `exact + error`, where `exact` is the float64
// chain's value. A Bounded holds, per element, the exact value and two sizes of its error:
//   worst    a rigorous bound: |low-precision value - exact| <= worst, given that each
//            step computes as its model says (below), and
//   typical  what such an error usually is: accumulation errors and input errors that add
//            up over a length-K reduction grow like sqrt(K), not K (Higham & Mary's
//            probabilistic bound with lambda = 1; over millions of elements the largest
//            error is several times it).
// Worst-case steps keep every second-order term: a product of factors with errors e_i is
// bounded by prod(|f_i| + e_i) - prod|f_i|, a rounding of z by u (|exact| + error) — so
// the bound holds without a "first order" caveat. Exact inputs carry no error.
//
// The magnitude sums a bound needs (sum_k |a_ik| |b_kj|) are themselves matmuls. They run
// as bf16 matmuls with fp32 accumulation (fast where the chain's own matmuls are: GPUs and
// CPUs with AVX512-BF16; float64 matmuls through a reference BLAS take minutes at module
// shapes), with their inputs rounded up and their results inflated by
// (1 + 2^-7) / (1 - gamma_K(2^-24)), so that they stay upper bounds.
#pragma once

#include <ATen/ATen.h>

#include <vector>

namespace kprop {

struct Bounded {
  at::Tensor value;    // exact (float64 chain)
  at::Tensor worst;    // float64, same shape; undefined: an exact input
  at::Tensor typical;  // float64, same shape; undefined: an exact input

  bool is_exact() const { return !worst.defined(); }
  // |value| + worst: the largest magnitude the low-precision value may have.
  at::Tensor worst_magnitude() const;
  at::Tensor typical_magnitude() const;
};

// An input of the chain, the same in every computation (e.g. weights drawn in bf16).
Bounded exact_input(const at::Tensor& value);

// An upper bound on a @ b for non-negative 2-D a [M, K] and b [K, N], float64 (see the
// header comment for how it is computed).
at::Tensor magnitude_matmul(const at::Tensor& a, const at::Tensor& b);

// C = A @ B (2-D) as a framework matmul computes it: products accumulated with unit
// roundoff u_acc (fp32 accumulation: the products of two bf16 values are exact in fp32),
// the result rounded once to unit roundoff u_out. `product` is the float64 chain's A @ B.
//   worst   = mm(e_A (1 + g) + g |A|, |B| + e_B) + (1 + g) mm(|A|, e_B)     g = gamma_K(u_acc)
//             + u_out (|C| + that) + smallest normal
//   typical = sqrt(mm(t_A^2, B^2) + mm(A^2, t_B^2)) + sqrt(K) u_acc mm(|A| + t_A, |B| + t_B)
//             + u_out |C|
Bounded matmul_error(const at::Tensor& product, const Bounded& a, const Bounded& b,
                     double u_acc, double u_out, double smallest_normal);

// The unit roundoff ATen's matmul of `dtype` on `device` accumulates with, probed once per
// process: fp32's when a sum of 2^(t+1) ones (t: the dtype's significand bits) comes out
// exact, the dtype's own otherwise. Where a bf16 or fp16 matmul accumulates in its own
// dtype (libtorch 1.13's CPU gemm without AVX-512: 512 bf16 ones sum to 256), an fp32
// bound would call the framework itself broken.
double matmul_accumulation(at::ScalarType dtype, const c10::Device& device);

// The sum of `terms` (each with its error), rounded once to unit roundoff u_out.
Bounded rounded_sum(const at::Tensor& sum, const std::vector<Bounded>& terms, double u_out,
                    double smallest_normal);

// The product of `factors` (each with its error) as computed, before any rounding:
// worst = prod(|f| + e) - prod|f|, typical likewise with t. `value` is the exact product.
Bounded product_error(const at::Tensor& value, const std::vector<Bounded>& factors);

// x rounded to unit roundoff u: worst + u (|x| + worst), typical + u |x|.
Bounded rounded(const Bounded& x, double u);

}  // namespace kprop
