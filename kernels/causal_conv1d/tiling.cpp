#include "kernels/causal_conv1d/tiling.h"

#include <algorithm>

namespace kprop::causal_conv1d {

int64_t cdiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

int64_t next_pow2(int64_t n) {
  int64_t p = 1;
  while (p < n) p <<= 1;
  return p;
}

// Rows per core, rounded up to a power of two; at least 16 rows are assumed so that tiny
// inputs still get a reasonable tile.
static int64_t rows_per_core(int64_t rows, int64_t num_cores) {
  return next_pow2(cdiv(std::max<int64_t>(16, rows), num_cores));
}

Tiles forward_tiles(int64_t rows, bool has_initial_state, int64_t num_cores) {
  if (has_initial_state) return {std::min<int64_t>(16, rows_per_core(rows, num_cores)), 32};
  return {std::min<int64_t>(32, rows_per_core(rows, num_cores)), 256};
}

Tiles backward_tiles(int64_t rows, int64_t W, bool has_initial_state, int64_t num_cores,
                     bool clamp_to_window) {
  const int64_t cap = has_initial_state ? 8 : 32;
  int64_t BT = std::min<int64_t>(cap, rows_per_core(rows, num_cores));
  if (clamp_to_window) BT = std::max<int64_t>(BT, next_pow2(W));
  return {BT, 32};
}

}  // namespace kprop::causal_conv1d
