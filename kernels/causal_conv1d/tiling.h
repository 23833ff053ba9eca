// Tile sizes of VeOmni's Ascend causal_conv1d kernels, as functions of the hardware model.
//
// The Ascend kernels launch one program per vector core and walk a grid of
// (chunk of BT rows) x (block of BD channels) tasks. BT shrinks as cores grow, so that
// every core gets work; BD and the caps on BT keep a task's live tiles inside the
// on-chip unified buffer (UB). The formulas are the upstream ones; the buffer comments
// in the upstream file derive the caps from a 192 KiB UB with triple buffering.
#pragma once

#include <cstdint>

#include "kernels/causal_conv1d/implementations.h"

namespace kprop::causal_conv1d {

// The emulated device. 910B2C: 48 vector cores, 192 KiB unified buffer per core.
struct Device {
  int64_t vector_cores = 48;
  int64_t unified_buffer_bytes = 192 * 1024;
};

struct Tiles {
  int64_t BT;  // rows (time steps) per chunk
  int64_t BD;  // channels per block
};

int64_t cdiv(int64_t a, int64_t b);
int64_t next_pow2(int64_t n);  // smallest power of two >= n (1 for n <= 1)

// Forward kernel: BD = 32, BT <= 16 with an initial state; BD = 256, BT <= 32 without.
// `rows` is B * T, the packed row count.
Tiles forward_tiles(int64_t rows, bool has_initial_state, int64_t num_cores);

// Backward kernel as vendored: BD = 32, BT <= 8 with an initial state, BT <= 32 without.
// `clamp_to_window` is the later fix BT = max(BT, next_pow2(W)).
Tiles backward_tiles(int64_t rows, int64_t W, bool has_initial_state, int64_t num_cores,
                     bool clamp_to_window);

}  // namespace kprop::causal_conv1d
