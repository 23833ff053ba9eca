#include "kernels/causal_conv1d/problem.h"

namespace kprop::causal_conv1d {

std::vector<Span> spans(const Shape& s) {
  std::vector<Span> out;
  int64_t bos = 0;
  for (size_t n = 0; n < s.lengths.size(); ++n) {
    if (s.layout == Layout::dense) {
      out.push_back({static_cast<int64_t>(n), 0, s.lengths[n]});
    } else {
      out.push_back({0, bos, s.lengths[n]});
      bos += s.lengths[n];
    }
  }
  return out;
}

at::Tensor rows(const at::Tensor& t, const Span& s, int64_t from, int64_t to) {
  return t[s.batch].narrow(0, s.bos + from, to - from);
}

at::Tensor assemble(const Shape& s, const std::vector<at::Tensor>& blocks) {
  return s.layout == Layout::dense ? at::stack(blocks, 0) : at::cat(blocks, 0).unsqueeze(0);
}

namespace {
at::Tensor cu_seqlens_of(const Shape& s) {
  auto cu = at::zeros({s.num_sequences() + 1}, at::kLong);
  auto* p = cu.data_ptr<int64_t>();
  for (int64_t n = 0; n < s.num_sequences(); ++n) p[n + 1] = p[n] + s.lengths[n];
  return cu;
}
}  // namespace

Problem make_problem(const Case& c, const at::Tensor& x, const at::Tensor& w,
                     const at::Tensor& b, const at::Tensor& h0) {
  const Shape s = conv_shape(c);
  Problem p{c, {}};
  p.inputs.set("x", x);
  p.inputs.set("w", w);
  p.inputs.set("b", b);
  p.inputs.set("h0", h0);
  p.inputs.set("cu_seqlens", s.layout == Layout::packed ? cu_seqlens_of(s) : at::Tensor());
  return p;
}

Args args_of(const Problem& p) {
  Args a;
  a.x = p.inputs.get("x");
  a.weight = p.inputs.get("w");
  a.bias = p.inputs.get("b");
  a.initial_state = p.inputs.get("h0");
  a.cu_seqlens = p.inputs.get("cu_seqlens");
  a.activation = p.c.choice("activation");
  a.num_cores = p.c.integer("num_cores");
  return a;
}

}  // namespace kprop::causal_conv1d
