// A causal_conv1d call as kprop materializes it: where each sequence lies in x, the
// tensors of a case, and the contract's arguments of a problem. Shared by the Kernel
// (info.cpp) and the sequence family (sequences.cpp).
#pragma once

#include <vector>

#include "harness/model/kernel.h"
#include "kernels/causal_conv1d/contract.h"
#include "kernels/causal_conv1d/shape.h"

namespace kprop::causal_conv1d {

// Where one sequence of a case lies in x: x[batch, bos : bos + length].
struct Span {
  int64_t batch, bos, length;
};

std::vector<Span> spans(const Shape& s);

// Rows [from, to) of sequence `s` of an x-shaped tensor: [to - from, D].
at::Tensor rows(const at::Tensor& t, const Span& s, int64_t from, int64_t to);

// An x-shaped tensor in the layout of `s` from per-sequence blocks [L_n, D].
at::Tensor assemble(const Shape& s, const std::vector<at::Tensor>& blocks);

// A problem of case `c` with the given tensors (cu_seqlens derived from the case).
Problem make_problem(const Case& c, const at::Tensor& x, const at::Tensor& w,
                     const at::Tensor& b, const at::Tensor& h0);

Args args_of(const Problem& p);

}  // namespace kprop::causal_conv1d
