// The backward of a forward written in ATen ops, by libtorch autograd: the reference's
// backward when its spec gives none, an implementation's when it gives none (so what is
// tested is what autograd makes of its forward), and what a kernel declared from Python
// gets for its reference.
#pragma once

#include "harness/spec/kernel_spec.h"

namespace kprop {

// Gradients "d" + input of `forward` at `args` for the cotangents among `args` ("dy"),
// with respect to the spec's differentiable inputs that `args` holds. An input the outputs
// do not depend on gets a zero gradient.
NamedTensors autograd_backward(const KernelSpec& spec, const OpFunction& forward,
                               const OpArgs& args);

}  // namespace kprop
