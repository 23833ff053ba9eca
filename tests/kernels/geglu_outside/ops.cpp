// A geglu implementation from outside kprop, as a user would write one with ATen ops and
// load it with `--load PLUGIN --impl mine_geglu::geglu`: gelu in fp32 (ATen's own tanh
// formula, not kprop's), rounded, times b; the backward as autograd computes it. It has
// the operator contract's schema (kernels/geglu/contract.h) and nothing of kprop's.
#include <ATen/ATen.h>
#include <torch/library.h>

namespace {

at::Tensor gelu_rounded(const at::Tensor& a) {
  return at::gelu(a.to(at::kFloat), "tanh").to(a.scalar_type());
}

at::Tensor forward(const at::Tensor& a, const at::Tensor& b, int64_t, int64_t) {
  return gelu_rounded(a) * b;
}

std::tuple<at::Tensor, at::Tensor> backward(const at::Tensor& dc, const at::Tensor& a,
                                            const at::Tensor& b, int64_t, int64_t) {
  const auto dgelu = dc * b;  // mul's backward, rounded to the dtype
  const auto da = at::gelu_backward(dgelu.to(at::kFloat), a.to(at::kFloat), "tanh");
  return {da.to(a.scalar_type()), dc * gelu_rounded(a)};
}

}  // namespace

TORCH_LIBRARY(mine_geglu, m) {
  m.def("geglu_fwd(Tensor a, Tensor b, int num_cores, int buffer_bytes) -> Tensor c");
  m.def("geglu_bwd(Tensor dc, Tensor a, Tensor b, int num_cores, int buffer_bytes) -> "
        "(Tensor da, Tensor db)");
  m.impl("geglu_fwd", forward);
  m.impl("geglu_bwd", backward);
}
