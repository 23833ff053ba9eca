// One task of the Ascend causal_conv1d backward: a chunk of BT rows x a block of BD
// channels. The parts every version shares live here — dx, dbias and the dweight terms
// inside the sequence, the routing of dht into dx, and the stores — and each version
// supplies the two parts that changed: the dweight terms that read the initial state
// (the "head rows") and the dh0 partial of a head chunk.
#pragma once

#include <algorithm>

#include "kernels/causal_conv1d/ascend_grid.h"

namespace kprop::causal_conv1d {

template <typename Acc>
class AscendBackward {
 public:
  AscendBackward(const Args& args, const at::Tensor& dy, const at::Tensor& dht,
                 bool clamp_to_window)
      : p_(args, dy, dht, clamp_to_window) {}
  virtual ~AscendBackward() = default;

  // Tasks run one after another in task order (task = chunk * blocks + block).
  BackwardResult run(const Args& args) {
    b_dx_.resize(p_.tiles.BT * p_.tiles.BD);
    b_db_.resize(p_.tiles.BD);
    int64_t task = 0;
    for (const Chunk& c : p_.chunks)
      for (int64_t i_d = 0; i_d < p_.num_d_blocks; ++i_d, ++task) run_task(c, i_d, task);
    return p_.finish(args);
  }

 protected:
  // dweight[W-1-i_w, d] terms that read h0 in a head chunk.
  virtual Acc head_rows_dw(const Chunk& c, int64_t i_w, int64_t d) const = 0;
  // Writes the head chunk's dh0 partial for channel block i_d.
  virtual void store_dh0(const Chunk& c, int64_t i_d, int64_t task) = 0;

  // Sequence row of local row r of chunk c.
  int64_t o_t(const Chunk& c, int64_t r) const { return c.i_t * p_.tiles.BT + r; }
  int64_t channel(int64_t i_d, int64_t j) const { return i_d * p_.tiles.BD + j; }
  int64_t dh0_offset(int64_t slot_row, int64_t d, int64_t column) const {
    return (slot_row * p_.D + d) * p_.W + column;
  }
  Acc h0(const Chunk& c, int64_t d, int64_t column, const char* site) const {
    return p_.initial_state.load(dh0_offset(c.n, d, column), site);
  }

  BackwardProblem<Acc> p_;

 private:
  Acc load_x(const Chunk& c, int64_t r, int64_t d) const {
    return o_t(c, r) < c.length ? p_.x.load((c.bos + o_t(c, r)) * p_.D + d, "x tile") : Acc(0);
  }

  // dy (times silu') shifted by i_w rows; both the tail-chunk masks and the block
  // pointers' boundary checks clip at T_len.
  Acc load_shifted_grad(const Chunk& c, int64_t r, int64_t i_w, int64_t d) const {
    const int64_t row = o_t(c, r) + i_w;
    return row < c.length ? p_.grad_pre(c.bos + row, d, "dy tile") : Acc(0);
  }

  void run_task(const Chunk& c, int64_t i_d, int64_t task) {
    const int64_t BT = p_.tiles.BT, BD = p_.tiles.BD, W = p_.W, D = p_.D;
    std::fill(b_dx_.begin(), b_dx_.end(), Acc(0));
    std::fill(b_db_.begin(), b_db_.end(), Acc(0));
    // Chunks that start before W take the head branch when there is a state to route.
    const bool head = p_.has_initial_state && c.i_t * BT < W;
    // Rows at or past T_len load only masked zeros and are never stored: leaving them
    // out changes no value and no memory finding, only the run time.
    const int64_t rows = std::min(BT, c.length - c.i_t * BT);

    for (int64_t i_w = 0; i_w < W; ++i_w)
      for (int64_t j = 0; j < BD; ++j) {
        const int64_t d = channel(i_d, j);
        const Acc w_tap = p_.tap(W - i_w - 1, d);
        Acc dw = 0;
        for (int64_t r = 0; r < rows; ++r) {
          const Acc g = load_shifted_grad(c, r, i_w, d);
          dw += g * load_x(c, r, d);
          if (i_w == 0) b_db_[j] += g;
          b_dx_[r * BD + j] += g * w_tap;
        }
        if (head) dw += head_rows_dw(c, i_w, d);
        p_.dw_slots.store((c.i_tg * W + (W - i_w - 1)) * D + d, dw, task, "dw store");
      }
    if (head) store_dh0(c, i_d, task);
    if (p_.has_bias)
      for (int64_t j = 0; j < BD; ++j)
        p_.db_slots.store(c.i_tg * D + channel(i_d, j), b_db_[j], task, "db store");
    if (p_.has_dht) route_dht(c, i_d);
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t j = 0; j < BD; ++j)
        p_.dx.store((c.bos + o_t(c, r)) * D + channel(i_d, j), b_dx_[r * BD + j], task,
                    "dx store");
  }

  // dx[t] += dht[j] for the rows t = T_len - W + j >= 0 that fall in this chunk.
  void route_dht(const Chunk& c, int64_t i_d) {
    const int64_t BT = p_.tiles.BT, W = p_.W;
    if (c.i_t * BT + BT < c.length - W) return;
    for (int64_t i_w = 0; i_w < W; ++i_w) {
      const int64_t target = c.length - W + i_w, local = target - c.i_t * BT;
      if (local < 0 || local >= BT || target < 0 || target >= c.length) continue;
      for (int64_t j = 0; j < p_.tiles.BD; ++j)
        b_dx_[local * p_.tiles.BD + j] +=
            p_.dht.load(dh0_offset(c.n, channel(i_d, j), i_w), "dht load");
    }
  }

  std::vector<Acc> b_dx_, b_db_;  // a task's dx and db tiles (on-chip buffers)
};

}  // namespace kprop::causal_conv1d
