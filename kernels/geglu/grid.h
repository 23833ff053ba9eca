// The device kernels' grids and blocks, from the on-chip buffer (UB) budget: the one
// description that the emulations (rows.cpp, flat.cpp), the schema's edge values and the
// region names of failures read.
//
// A block of BLOCK elements keeps, per element, its inputs and outputs in the input dtype
// and its working values in the compute type (fp32; float64 for float64 inputs):
//   forward   a, b, c             + a and gelu in fp32       3 s + 2 w bytes
//   backward  dc, a, b, da, db    + a, gelu and gelu' in fp32  5 s + 3 w bytes
// BLOCK is the largest power of two whose block fits the budget (Triton's block sizes are
// powers of two); on an Ascend 910B the budget is the 192 KiB unified buffer.
//
//   rows  one program per row; block = min(next_pow2(cols), BLOCK); a row wider than
//         BLOCK is covered by a loop over column blocks
//   flat  the [rows·cols] elements as one 1-D range; grid = min(num_cores, cdiv(total,
//         BLOCK)); program p takes blocks p, p + grid, ... (grid-stride); the last block
//         is masked at total
#pragma once

#include <ATen/ATen.h>

#include <cstdint>

namespace kprop::geglu {

inline constexpr int64_t kAscend910bBufferBytes = 192 * 1024;

enum class Pass { forward, backward };

// Bytes one element takes in the buffer.
int64_t bytes_per_element(at::ScalarType dtype, Pass pass);

// The largest power of two of elements that fits `buffer_bytes`; throws c10::Error when not
// even one element fits (the real kernel would not compile).
int64_t buffer_block(int64_t buffer_bytes, at::ScalarType dtype, Pass pass);

// rows: the column block of a row.
int64_t rows_block(int64_t cols, int64_t buffer_bytes, at::ScalarType dtype, Pass pass);

// flat: BLOCK and the grid.
struct FlatGrid {
  int64_t block = 1, blocks = 0, programs = 0;
};
FlatGrid flat_grid(int64_t total, int64_t num_cores, int64_t buffer_bytes,
                   at::ScalarType dtype, Pass pass);

int64_t next_pow2(int64_t n);
int64_t cdiv(int64_t a, int64_t b);

}  // namespace kprop::geglu
