#include "harness/spec/autograd_backward.h"

#include <ATen/core/grad_mode.h>
#include <torch/csrc/autograd/autograd.h>

namespace kprop {

NamedTensors autograd_backward(const KernelSpec& spec, const OpFunction& forward,
                               const OpArgs& args) {
  at::AutoGradMode grad_mode(true);
  OpArgs leaves = args;
  std::vector<std::string> names;
  std::vector<at::Tensor> wrt;
  for (const auto& in : spec.inputs) {
    const at::Tensor t = args[in.name];
    if (!in.differentiable || !t.defined()) continue;
    at::Tensor leaf = t.detach().requires_grad_(true);
    leaves.set(in.name, leaf);
    names.push_back(in.name);
    wrt.push_back(leaf);
  }
  const NamedTensors outputs = forward(leaves);
  std::vector<at::Tensor> results, cotangents;
  for (const auto& out : spec.outputs) {
    const at::Tensor y = outputs.get(out.name), dy = args[grad_name(out.name)];
    if (!y.defined() || !dy.defined() || !y.requires_grad()) continue;
    results.push_back(y);
    cotangents.push_back(dy);
  }
  std::vector<at::Tensor> grads(wrt.size());
  if (!results.empty())
    grads = torch::autograd::grad(results, wrt, cotangents, /*retain_graph=*/false,
                                  /*create_graph=*/false, /*allow_unused=*/true);
  NamedTensors out;
  for (size_t i = 0; i < wrt.size(); ++i)
    out.set(grad_name(names[i]), grads[i].defined() ? grads[i].detach() : at::zeros_like(wrt[i]));
  return out;
}

}  // namespace kprop
