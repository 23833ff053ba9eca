// The built-in causal_conv1d implementations, as plain C++ functions. ops.cpp registers
// each of them as a TORCH_LIBRARY operator pair; the harness only ever calls them
// through the dispatcher.
#pragma once

#include "kernels/causal_conv1d/contract.h"

namespace kprop::causal_conv1d {

// The oracle: plain float64 loops over docs/design.md §3's formulas; on a device, the same
// formulas as ATen operations over all rows. Takes any floating dtype, returns float64.
ForwardResult reference_forward(const Args& args);
BackwardResult reference_backward(const Args& args, const at::Tensor& dy, const at::Tensor& dht);

// The Ascend forward kernel and final-state kernel on the CPU: tiles and grid of VeOmni's
// _ascend/triton/convolution.py, storage precision of the inputs, fp32 accumulation
// (float64 throughout for float64 inputs). The forward never changed across the
// historical states, so every tiled implementation shares it.
ForwardResult tiled_forward(const Args& args);

// kprop's own backward on the Ascend grid and tiles: correct for every BT, W and packing.
BackwardResult tiled_backward(const Args& args, const at::Tensor& dy, const at::Tensor& dht);

// The historical states of the Ascend backward, each the code path of that version.
enum class Revision {
  original,  // as vendored: BT unclamped, head rows and dh0 rows masked by channel only
  clamped,   // + BT = max(BT, next_pow2(W)); refuses W > 8
  fixed,     // + o_t < T_len in mask_head_rows and in the dh0 row loads
};
BackwardResult historical_backward(Revision revision, const Args& args, const at::Tensor& dy,
                                   const at::Tensor& dht);

}  // namespace kprop::causal_conv1d
