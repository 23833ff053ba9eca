// The grid of VeOmni's Ascend causal_conv1d kernels and the buffers of its backward.
//
// Both kernels walk tasks = chunks x channel blocks; a chunk is BT rows of one sequence.
// Rows are addressed in the flattened [B*T, D] view: a sequence starts at row `bos`.
// The backward writes partial dweight/dbias per chunk (slot i_tg) and partial dh0 per head
// chunk into buffers that the host then sums, exactly like causal_conv1d_bwd_impl.
#pragma once

#include <vector>

#include "kernels/causal_conv1d/contract.h"
#include "kernels/causal_conv1d/tiling.h"
#include "kernels/common/device_tensor.h"

namespace kprop::causal_conv1d {

struct Chunk {
  int64_t n;       // sequence (i_n)
  int64_t i_t;     // chunk index inside the sequence
  int64_t bos;     // first row of the sequence in the flattened [B*T] rows
  int64_t length;  // T_len
  int64_t i_tg;    // global chunk index: its dweight/dbias slot
};

// Chunks in the kernel's order: prepare_chunk_indices (packed) or batch-major (dense).
std::vector<Chunk> chunk_grid(const Args& args, int64_t BT);

// The Ascend forward with the given activation (the backward recomputes the
// pre-activation with "none"). Raises where the kernel raises (D % BD != 0).
at::Tensor ascend_forward_output(const Args& args, const std::string& activation);

template <typename Acc>
Acc sigmoid(Acc v) {
  return Acc(1) / (Acc(1) + std::exp(-v));
}

// Inputs, tiles, grid and output buffers of one backward call.
template <typename Acc>
struct BackwardProblem {
  int64_t B, T, D, W;
  bool silu, has_bias, has_initial_state, has_dht;
  Tiles tiles;
  std::vector<Chunk> chunks;
  int64_t num_d_blocks;

  DeviceTensor<Acc> x, weight, initial_state, y, dy, dht;  // weight is [D, W]
  DeviceTensor<Acc> dx, dw_slots, db_slots, dh0_slots;     // dw_slots [NT, W, D], db_slots [NT, D]

  // Sets up tiles (raising like causal_conv1d_bwd_impl), the grid and the buffers; the
  // dh0 slot buffer is the caller's: see allocate_dh0_slots.
  BackwardProblem(const Args& args, const at::Tensor& dy, const at::Tensor& dht,
                  bool clamp_to_window);
  // dh0 partials: a zeroed [slots, N, D, W] buffer in `storage`.
  void allocate_dh0_slots(int64_t slots, at::ScalarType storage);

  // g at an absolute row: dy, or with silu dy * s * (1 + y * (1 - s)), s = sigmoid(y),
  // in the kernel's order of operations. The kernel recomputes g for every tap that
  // reads it; g depends only on dy and y at that element, so under silu it is computed
  // once per element up front (the same values). A load outside dy still reaches the
  // memory checker.
  Acc grad_pre(int64_t row, int64_t d, const char* site) const {
    const int64_t offset = row * D + d;
    if (silu && offset >= 0 && offset < dy.numel()) return silu_grad_[offset];
    return grad_pre_at(offset, site);
  }
  Acc tap(int64_t k, int64_t d) const { return weight.load(d * W + k, "weight tile"); }

  int64_t num_sequences;
  // Sums the slots on the host (fp32, or float64) and casts like the upstream impl.
  BackwardResult finish(const Args& args) const;

 private:
  Acc grad_pre_at(int64_t offset, const char* site) const {
    const Acc g = dy.load(offset, site);
    if (!silu) return g;
    const Acc v = y.load(offset, site), s = sigmoid(v);
    return g * s * (Acc(1) + v * (Acc(1) - s));
  }
  std::vector<Acc> silu_grad_;  // g of every element of dy, under silu
};

}  // namespace kprop::causal_conv1d
